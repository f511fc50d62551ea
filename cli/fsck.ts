/** git ckpt fsck: degraded checkpoints, orphan objects, store size, unreadable ledger lines; --rebuild-ledger. */
import type { Command } from 'commander';
import { argsOf, openWorkspace, printJson, warn, type GlobalArgs } from './common.js';
import { formatBytes, shortId, yellow } from './format.js';

interface FsckArgs extends GlobalArgs {
  json?: boolean;
  rebuildLedger?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('check the store deeply; --rebuild-ledger recovers the ledger from the checkpoint commits')
    .option('--json', 'print one JSON object')
    .option('--rebuild-ledger', 'rebuild ledger.jsonl from the commits (the old one is kept as a backup)')
    .action((...params) => runFsck(argsOf<FsckArgs>(params)));
}

async function runFsck(argv: FsckArgs): Promise<void> {
  const ws = openWorkspace(argv);
  if (argv.rebuildLedger) {
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
  warn([...report.unreadableLines, ...report.fetchedWarnings]);
  const out = [
    `${report.checkpoints} checkpoint(s)${report.fetched ? ` and ${report.fetched} fetched from other stores` : ''}, store ${formatBytes(report.storeBytes)}`,
  ];
  for (const id of report.degraded)
    out.push(yellow(`⚠ degraded ${shortId(id)}: missing ${report.missing[id]!.map((m) => shortId(m)).join(', ')}`));
  out.push(report.degraded.length ? `${report.degraded.length} checkpoint(s) degraded` : 'no checkpoint degraded');
  out.push(`${report.orphans} orphan object(s)${report.orphans ? ' (git ckpt gc removes them)' : ''}`);
  for (const ref of report.lostExports) out.push(`export chain ${ref}: its commits are gone; the next push or bundle makes it again`);
  if (report.unreadableLines.length)
    out.push(
      `${report.unreadableLines.length} ledger line(s) could not be read (git ckpt fsck --rebuild-ledger recovers the ledger from the commits)`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
  if (report.degraded.length || report.unreadableLines.length) process.exitCode = 1;
}
