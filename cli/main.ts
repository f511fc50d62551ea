#!/usr/bin/env node
/**
 * git-ckpt's entry point. The hook path is on an agent's critical path (every
 * tool call waits for it), so `git-ckpt hook …` loads only what a hook needs,
 * from one pre-bundled CommonJS file (scripts/bundle.mjs); the agents' hook
 * script starts that file directly. `--version` and completion
 * load no parser; every other command loads the application and its own module.
 */
const args = process.argv.slice(2);
// No agent asks for help: `hook --help` goes to the parser, which prints it.
if (args[0] === 'hook' && !args.includes('--help') && !args.includes('-h')) {
  let hook: { runHookCommand(args: string[]): Promise<void> };
  try {
    const { createRequire } = await import('node:module');
    hook = createRequire(import.meta.url)('./hook.cjs') as typeof hook;
  } catch {
    // dist/cli/ of a build without the bundles (tsc alone); a URL, so that the CLI's bundle leaves it out.
    hook = (await import(new URL('./hook.js', import.meta.url).href)) as typeof hook;
  }
  await hook.runHookCommand(args.slice(1));
} else if ((args[0] === '--version' || args[0] === 'version') && args.slice(1).every((a) => a === '--json')) {
  // A version check (scripts, installers) starts like `node -e 0` plus one `git version`: no parser.
  await (await import('./version.js')).printVersion(args.includes('--json'));
} else if (args[0] === '__complete') {
  // Every <TAB> runs this: no parser, just the build-time command table and the ledger.
  await (await import('./completion.js')).runComplete(args.slice(1));
} else {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    process.stderr.write(`git-ckpt: needs Node.js 20.19 or newer (this is ${process.version})\n`);
    process.exit(1);
  }
  (await import('./app.js')).runCli();
}
