/** git ckpt ui: the web timeline on 127.0.0.1, until interrupted. */
import type { Command } from 'commander';
import { CkptError } from '../lib/model/errors.js';
import { argsOf, nonNegativeInt, startDir, type GlobalArgs } from './common.js';

interface UiArgs extends GlobalArgs {
  port?: string;
  open?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('a web timeline of sessions, turns and tool calls, with diffs, restore with preview, and undo (on 127.0.0.1)')
    .option('--port <n>', 'the port (default: a free one)')
    .option('--no-open', 'do not open a browser (print the URL only, e.g. over SSH)')
    .action((...params) => runUi(argsOf<UiArgs>(params)));
}

async function runUi(argv: UiArgs): Promise<void> {
  const port = nonNegativeInt('port', argv.port) ?? 0;
  if (port > 65535) throw new CkptError('usage', `--port takes a port from 0 to 65535 (0: a free one), not ${port}`);
  const { startUiServer } = await import('../lib/surfaces/ui-server.js');
  const server = await startUiServer({ cwd: startDir(argv), port });
  process.stdout.write(`git ckpt ui: ${server.url}\n(Ctrl-C to stop; the URL carries this run's token)\n`);
  if (argv.open !== false) {
    const { default: open } = await import('open');
    // A browser that cannot be started is not an error: the URL is printed.
    await open(server.url).catch(() => undefined);
  }
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  await server.close();
}
