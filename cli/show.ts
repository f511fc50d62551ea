/** git ckpt show: a checkpoint's header, then git's own diff from its parent. */
import type { Command } from 'commander';
import type { DiffFormat } from '../lib/workspace.js';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { attribution, bold, relativeAge, skippedLines, statsText, yellow, useColor } from './format.js';
import { checkpointView } from '../lib/surfaces/views.js';

interface ShowArgs extends GlobalArgs {
  ckpt?: string;
  stat?: boolean;
  nameStatus?: boolean;
  patch?: boolean;
  binary?: boolean;
  json?: boolean;
}

export function diffFormat(argv: { stat?: boolean; nameStatus?: boolean; patch?: boolean }, fallback: DiffFormat): DiffFormat {
  if (argv.nameStatus) return 'name-status';
  if (argv.stat && argv.patch) return 'patch-with-stat';
  if (argv.stat) return 'stat';
  if (argv.patch) return 'patch';
  return fallback;
}

export function define(command: Command): Command {
  return command
    .description('show a checkpoint and what changed since the one before it')
    .argument('[ckpt]', 'checkpoint: hex prefix, latest or latest~N (default: latest)')
    .option('--stat', 'a diffstat')
    .option('--name-status', 'paths with A/M/D')
    .option('-p, --patch', 'the patch')
    .option('--binary', "binary files as git's binary patch, not one line with their sizes")
    .option('--json', 'the record and the diff as JSON')
    .action((...params) => runShow(argsOf<ShowArgs>(params)));
}

async function runShow(argv: ShowArgs): Promise<void> {
  const ws = openWorkspace(argv);
  const format = diffFormat(argv, 'patch-with-stat');
  const address = argv.ckpt ?? argv['--']?.[0] ?? 'latest';
  const { record, diff, base } = await ws.show(String(address), { format, color: useColor() && !argv.json, binary: argv.binary });
  const view = checkpointView(record, await ws.list({ limit: 0 }));
  if (argv.json) {
    printJson({ ...view, diff, ...(base ? { base } : {}) });
    return;
  }
  const out: string[] = [];
  out.push(`${yellow(`checkpoint ${record.id}`)}`);
  if (record.parent) out.push(`Parent:  ${record.parent}`);
  if (base) out.push(`Diff:    from ${base.id ?? 'nothing'} (${base.reason})`);
  out.push(`Date:    ${new Date(record.time).toISOString()} (${relativeAge(record.time)})`);
  if (record.origin)
    out.push(
      `Origin:  fetched from ${record.origin.remote}, writer ${record.origin.writer}, workspace ${record.origin.ws}; its id there ${record.origin.source}`,
    );
  out.push(
    `Kind:    ${record.kind}${record.tool ? `  Tool: ${record.tool}` : ''}${attribution(record, view.turnLabel ?? undefined) ? `  ${attribution(record, view.turnLabel ?? undefined)}` : ''}`,
  );
  if (record.agent)
    out.push(`Agent:   ${record.agent}${record.phase ? ` (${record.phase})` : ''}${record.call ? `  Call: ${record.call}` : ''}`);
  if (record.input) out.push(`Input:   ${record.input}`);
  if (record.mayIncludeLater)
    out.push('Note:    may include changes made after the post was answered (a file changed by the call and again after it)');
  if (view.fork)
    out.push(`Fork:    of session ${view.fork.session}${view.fork.turnLabel ? `, after its turn ${view.fork.turnLabel}` : ''}`);
  if (record.op) out.push(`${record.kind[0]!.toUpperCase()}${record.kind.slice(1)}: target ${record.op.target}, guard ${record.op.guard}`);
  out.push(`Changes: ${statsText(record)}`);
  if (record.message) out.push('', `    ${bold(record.message)}`);
  const skipped = skippedLines(record);
  if (skipped.length) out.push('', ...skipped.map((l) => `    ${l}`));
  process.stdout.write(`${out.join('\n')}\n\n${diff}`);
}
