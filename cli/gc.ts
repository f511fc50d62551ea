/** git ckpt gc: apply the retention policy (ckpt.keep, ckpt.maxAge, ckpt.maxBytes) and reclaim the space. */
import { Option, type Command } from 'commander';
import { previewOptions } from './operation.js';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { dim, formatBytes, relativeAge, shortId } from './format.js';

interface GcArgs extends GlobalArgs {
  dryRun?: boolean;
  json?: boolean;
  auto?: boolean;
}

export function define(command: Command): Command {
  return previewOptions(command.description('drop checkpoints the retention policy lets go, pack what is kept, remove debris'))
    .addOption(new Option('--auto', 'started by a snapshot in the background: quiet').hideHelp())
    .action((...params) => runGc(argsOf<GcArgs>(params)));
}

async function runGc(argv: GcArgs): Promise<void> {
  const report = await openWorkspace(argv).gc({ dryRun: argv.dryRun });
  if (argv.json) {
    printJson(report);
    return;
  }
  if (argv.auto) return;
  const out: string[] = [];
  const verb = report.dryRun ? 'would drop' : 'dropped';
  const byRule = new Map<string, number>();
  for (const d of report.dropped) byRule.set(d.rule, (byRule.get(d.rule) ?? 0) + 1);
  out.push(
    `${verb} ${report.dropped.length} checkpoint${report.dropped.length === 1 ? '' : 's'}${byRule.size ? ` (${[...byRule].map(([rule, n]) => `${n} by ckpt.${rule}`).join(', ')})` : ''}; ${report.kept} kept`,
  );
  if (report.dryRun)
    for (const d of report.dropped.slice(0, 20))
      out.push(`  ${shortId(d.id)}  ${dim(relativeAge(d.time).padEnd(15))} ${d.session ?? '-'}  ckpt.${d.rule}`);
  if (report.dryRun && report.dropped.length > 20) out.push(`  … and ${report.dropped.length - 20} more`);
  for (const p of report.protected) out.push(dim(`  kept ${shortId(p.id)}: ${p.why}`));
  out.push(
    `store: ${formatBytes(report.bytesBefore)} → ${report.dryRun ? '~' : ''}${formatBytes(report.bytesAfter)} (quota ${formatBytes(report.maxBytes)})${report.dryRun ? '' : `; ${report.packsBefore} pack(s) and ${report.looseBefore} loose object(s) → ${report.packsAfter} pack(s)`}`,
  );
  if (report.debris.length)
    out.push(`${report.dryRun ? 'would remove' : 'removed'} ${report.debris.length} leftover(s) of killed processes`);
  process.stdout.write(`${out.join('\n')}\n`);
}
