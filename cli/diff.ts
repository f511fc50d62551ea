/** git ckpt diff: between two checkpoints, or a checkpoint and the live workspace. */
import type { Command } from 'commander';
import { argsOf, openWorkspace, workspacePaths, type GlobalArgs } from './common.js';
import { useColor } from './format.js';
import { diffFormat } from './show.js';

interface DiffArgs extends GlobalArgs {
  from?: string;
  to?: string;
  stat?: boolean;
  nameStatus?: boolean;
  binary?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('diff two checkpoints, or a checkpoint (default latest) against the workspace')
    .argument('[from]', 'checkpoint (default: latest)')
    .argument('[to]', 'checkpoint (default: the live workspace)')
    .option('--stat', 'a diffstat')
    .option('--name-status', 'paths with A/M/D')
    .option('--binary', "binary files as git's binary patch, not one line with their sizes")
    .action((...params) => runDiff(argsOf<DiffArgs>(params)));
}

async function runDiff(argv: DiffArgs): Promise<void> {
  const ws = openWorkspace(argv);
  const paths = argv['--']?.length ? workspacePaths(ws, argv, argv['--'].map(String)) : undefined;
  const text = await ws.diff({
    from: argv.from === undefined ? undefined : String(argv.from),
    to: argv.to === undefined ? undefined : String(argv.to),
    format: diffFormat(argv, 'patch'),
    color: useColor(),
    binary: argv.binary,
    paths,
  });
  process.stdout.write(text);
}
