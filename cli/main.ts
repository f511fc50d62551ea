#!/usr/bin/env node
/**
 * git-ckpt's entry point. The hook path is on an agent's critical path (every
 * tool call waits for it), so `git-ckpt hook …` loads only what a hook needs;
 * every other command loads the yargs application.
 */
const args = process.argv.slice(2);
if (args[0] === 'hook') {
  const { runHookCommand } = await import('./hook.js');
  await runHookCommand(args.slice(1));
} else {
  await import('./app.js');
}
