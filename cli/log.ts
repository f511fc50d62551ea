/** git ckpt log: checkpoints, newest first. */
import type { Argv, CommandModule } from 'yargs';
import type { CheckpointRecord } from '../lib/ledger.js';
import { nonNegativeInt, openWorkspace, printJson, warn, type GlobalArgs } from './common.js';
import { attribution, cyan, dim, firstPaths, relativeAge, shortId, statsText, yellow } from './format.js';

interface LogArgs extends GlobalArgs {
  n?: number;
  session?: string;
  all?: boolean;
  oneline?: boolean;
  stat?: boolean;
  json?: boolean;
}

export function jsonRecord(r: CheckpointRecord): Record<string, unknown> {
  return { ...r, degraded: false };
}

function line(r: CheckpointRecord, oneline: boolean): string {
  const who = [attribution(r), r.tool ?? '', dim(r.kind)].filter(Boolean).join(' ');
  if (oneline) return `${yellow(shortId(r.id))} ${who} ${statsText(r)} ${r.message || firstPaths(r)}`;
  return `${yellow(shortId(r.id))}  ${dim(relativeAge(r.time).padEnd(15))} ${who}  ${statsText(r)}  ${firstPaths(r)}${r.message ? `  ${cyan(r.message)}` : ''}`;
}

export const logCommand: CommandModule<GlobalArgs, LogArgs> = {
  command: 'log',
  describe: 'list checkpoints, newest first',
  builder: (yargs: Argv<GlobalArgs>) =>
    yargs
      .option('n', { alias: 'max-count', type: 'number', describe: 'show at most N checkpoints' })
      .option('session', { type: 'string', describe: "only this session's checkpoints" })
      .option('all', { type: 'boolean', describe: 'every session (the default)' })
      .option('oneline', { type: 'boolean', describe: 'one short line per checkpoint' })
      .option('stat', { type: 'boolean', describe: 'list the changed paths of each checkpoint' })
      .option('json', { type: 'boolean', describe: 'print a JSON array of records' })
      .conflicts('session', 'all') as Argv<LogArgs>,
  handler(argv) {
    const ws = openWorkspace(argv);
    const limit = nonNegativeInt('n', argv.n);
    const { records, total, warnings } = ws.list({ session: argv.all ? undefined : argv.session, limit });
    warn(warnings);
    if (argv.json) {
      printJson(records.map(jsonRecord));
      return;
    }
    if (total === 0) {
      process.stdout.write('no checkpoints yet\n');
      return;
    }
    for (const r of records) {
      process.stdout.write(`${line(r, Boolean(argv.oneline))}\n`);
      if (argv.stat) {
        for (const p of r.paths) process.stdout.write(`    ${p.status} ${p.path}\n`);
        if (r.changed > r.paths.length) process.stdout.write(`    … ${r.changed - r.paths.length} more\n`);
      }
    }
    if (total > records.length) {
      const older = total - records.length;
      process.stdout.write(dim(`${older} older checkpoint${older === 1 ? '' : 's'}\n`));
    }
  },
};
