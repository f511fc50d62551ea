/** git ckpt fsck: degraded checkpoints, orphan objects, store size, unreadable ledger lines; --rebuild-ledger. */
import type { Argv, CommandModule } from 'yargs';
import { openWorkspace, printJson, warn, type GlobalArgs } from './common.js';
import { formatBytes, shortId, yellow } from './format.js';

interface FsckArgs extends GlobalArgs {
  json?: boolean;
  'rebuild-ledger'?: boolean;
}

export const fsckCommand: CommandModule<GlobalArgs, FsckArgs> = {
  command: 'fsck',
  describe: 'check the store deeply; --rebuild-ledger recovers the ledger from the checkpoint commits',
  builder: (yargs: Argv<GlobalArgs>) =>
    yargs.option('json', { type: 'boolean', describe: 'print one JSON object' }).option('rebuild-ledger', {
      type: 'boolean',
      describe: 'rebuild ledger.jsonl from the commits (the old one is kept as a backup)',
    }) as Argv<FsckArgs>,
  async handler(argv) {
    const ws = openWorkspace(argv);
    if (argv['rebuild-ledger']) {
      const rebuilt = await ws.rebuildLedger();
      if (argv.json) printJson(rebuilt);
      else
        process.stdout.write(
          `recovered ${rebuilt.recovered} checkpoint record(s) from their commits${rebuilt.backup ? `; the previous ledger is kept as ${rebuilt.backup}` : ''}\n`,
        );
      return;
    }
    const report = await ws.fsck();
    if (argv.json) {
      printJson(report);
      return;
    }
    warn(report.unreadableLines);
    const out = [`${report.checkpoints} checkpoint(s), store ${formatBytes(report.storeBytes)}`];
    for (const id of report.degraded)
      out.push(yellow(`⚠ degraded ${shortId(id)}: missing ${report.missing[id]!.map((m) => shortId(m)).join(', ')}`));
    out.push(report.degraded.length ? `${report.degraded.length} checkpoint(s) degraded` : 'no checkpoint degraded');
    out.push(`${report.orphans} orphan object(s)${report.orphans ? ' (git ckpt gc removes them)' : ''}`);
    if (report.unreadableLines.length)
      out.push(
        `${report.unreadableLines.length} ledger line(s) could not be read (git ckpt fsck --rebuild-ledger recovers the ledger from the commits)`,
      );
    process.stdout.write(`${out.join('\n')}\n`);
    if (report.degraded.length || report.unreadableLines.length) process.exitCode = 1;
  },
};
