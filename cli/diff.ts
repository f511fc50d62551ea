/** git ckpt diff: between two checkpoints, or a checkpoint and the live workspace. */
import type { Argv, CommandModule } from 'yargs';
import { openWorkspace, workspacePaths, type GlobalArgs } from './common.js';
import { useColor } from './format.js';
import { diffFormat } from './show.js';

interface DiffArgs extends GlobalArgs {
  from?: string;
  to?: string;
  stat?: boolean;
  'name-status'?: boolean;
  '--'?: string[];
}

export const diffCommand: CommandModule<GlobalArgs, DiffArgs> = {
  command: 'diff [from] [to]',
  describe: 'diff two checkpoints, or a checkpoint (default latest) against the workspace',
  builder: (yargs: Argv<GlobalArgs>) =>
    yargs
      .positional('from', { type: 'string', describe: 'checkpoint (default: latest)' })
      .positional('to', { type: 'string', describe: 'checkpoint (default: the live workspace)' })
      .option('stat', { type: 'boolean', describe: 'a diffstat' })
      .option('name-status', { type: 'boolean', describe: 'paths with A/M/D' }) as Argv<DiffArgs>,
  async handler(argv) {
    const ws = openWorkspace(argv);
    const paths = argv['--']?.length ? workspacePaths(ws, argv, argv['--'].map(String)) : undefined;
    const text = await ws.diff({
      from: argv.from === undefined ? undefined : String(argv.from),
      to: argv.to === undefined ? undefined : String(argv.to),
      format: diffFormat(argv, 'patch'),
      color: useColor(),
      paths,
    });
    process.stdout.write(text);
  },
};
