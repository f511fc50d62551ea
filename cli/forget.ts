/**
 * git ckpt forget: checkpoints, a session, everything older than a date, or
 * paths from every checkpoint, removed from the store for good. Like gc it
 * applies at once; --dry-run says first what goes and the bytes it frees.
 */
import type { Command } from 'commander';
import type { ForgetReport } from '../lib/retain/forget.js';
import { argsOf, openWorkspace, printJson, repeatable, type GlobalArgs } from './common.js';
import { dim, formatBytes, relativeAge, shortId, yellow } from './format.js';
import { previewOptions } from './operation.js';
import { sessionWords } from '../lib/model/share-plan.js';
import { optionWords } from '../lib/model/text.js';

interface ForgetArgs extends GlobalArgs {
  ckpt?: string[];
  session?: string;
  before?: string;
  path?: string[];
  dryRun?: boolean;
  json?: boolean;
}

const SHOWN = 20;

export function define(command: Command): Command {
  return previewOptions(
    command
      .description('remove checkpoints, a session, what is older than a date, or paths from every checkpoint, from the store for good')
      .argument('[ckpt...]', 'checkpoint addresses (id prefix, latest, latest~N, turn:N)')
      .option('--session <id>', 'every checkpoint of this agent session (a unique prefix)')
      .option(
        '--before <date>',
        'every checkpoint older than this: 2024-05-01, 2024-05-01T14:30, @<unix seconds>, or an age (90m, 12h, 30d, 2w)',
      )
      .option('--path <pattern>', 'remove what this gitignore pattern matches from every checkpoint (repeatable)', repeatable)
      .usage('<ckpt>... | --session <id> | --before <date> | --path <pattern>... [--dry-run] [--json]'),
  ).action((...params) => runForget(argsOf<ForgetArgs>(params)));
}

async function runForget(argv: ForgetArgs): Promise<void> {
  const report = await openWorkspace(argv).forget(
    { checkpoints: argv.ckpt, session: argv.session, before: argv.before, paths: argv.path },
    { dryRun: argv.dryRun },
  );
  if (argv.json) printJson(report);
  else process.stdout.write(`${forgetText(report).join('\n')}\n`);
}

const WHY: Record<ForgetReport['dropped'][number]['why'], string> = {
  named: 'named',
  session: 'in the session',
  before: 'older than the date',
  guard: 'its guard goes, so it could not be undone',
};

/** Pure: the human report. */
function forgetText(r: ForgetReport): string[] {
  const out: string[] = [];
  const would = (done: string, planned: string) => (r.dryRun ? planned : done);
  if (r.resumed) out.push('finishing a forget that was interrupted');
  if (r.selection.kind === 'paths') {
    out.push(
      r.paths.length
        ? `${would('removed', 'would remove')} ${r.paths.length} path${r.paths.length === 1 ? '' : 's'} from every checkpoint that held ${r.paths.length === 1 ? 'it' : 'them'}`
        : `no checkpoint holds ${r.selection.patterns.join(', ')}${r.indexChanged ? '; the shadow index did' : ''}`,
    );
    for (const p of r.paths.slice(0, SHOWN))
      out.push(`  ${p.path}  ${dim(`(${p.checkpoints} checkpoint${p.checkpoints === 1 ? '' : 's'})`)}`);
    if (r.paths.length > SHOWN) out.push(`  … and ${r.paths.length - SHOWN} more`);
    for (const p of r.stillStored.slice(0, SHOWN)) out.push(`  still stored: ${p} ${dim('(a kept path holds the same bytes)')}`);
  } else {
    out.push(`${would('dropped', 'would drop')} ${r.dropped.length} checkpoint${r.dropped.length === 1 ? '' : 's'}`);
    for (const d of r.dropped.slice(0, SHOWN))
      out.push(`  ${shortId(d.id)}  ${dim(relativeAge(d.time).padEnd(15))} ${d.session ?? '-'}  ${d.kind}  ${dim(`(${WHY[d.why]})`)}`);
    if (r.dropped.length > SHOWN) out.push(`  … and ${r.dropped.length - SHOWN} more`);
  }
  const versions = r.content.reduce((n, c) => n + c.versions, 0);
  if (versions) {
    const names = r.content.slice(0, 5).map((c) => c.path);
    out.push(
      `content that ${would('left', 'would leave')} the store: ${versions} file version${versions === 1 ? '' : 's'} (${names.join(', ')}${r.content.length > names.length ? ', …' : ''})`,
    );
  }
  out.push(
    `checkpoints: ${r.rewritten.length} ${would('rewritten', 'to rewrite')}${r.rewritten.length ? ' (their old ids still resolve)' : ''}, ${r.kept} kept`,
  );
  if (r.texts)
    out.push(
      `texts that named ${r.paths.length === 1 ? 'it' : 'them'} (a command, a message, a prompt's title): ${r.texts} record${r.texts === 1 ? '' : 's'} ${would('rewritten', 'to rewrite')}, the text replaced by a mark`,
    );
  for (const f of r.fetchedDropped)
    out.push(
      `fetched: ${would('dropped', 'would drop')} ${f.checkpoints} checkpoint${f.checkpoints === 1 ? '' : 's'} of ${f.session ?? 'a chain of no session'} (from ${f.remotes.join(', ')}; a later git ckpt fetch brings ${f.checkpoints === 1 ? 'it' : 'them'} back while the remote holds ${f.checkpoints === 1 ? 'it' : 'them'})`,
    );
  for (const f of r.fetchedHolding)
    out.push(
      yellow(
        `  still stored: fetched checkpoints of ${f.session} hold ${r.paths.length === 1 ? 'it' : 'them'} too (${f.checkpoints}; another store's history, kept): git ckpt forget ${optionWords('--session', f.session)} drops them`,
      ),
    );
  for (const c of r.shared) {
    const named = sessionWords(c.session);
    for (const remote of c.remotes)
      out.push(
        yellow(
          `still on ${remote.label} (${remote.url}): session ${c.session ?? '(no session)'} as it was pushed; git ckpt unpush ${named} deletes its ref there (the host keeps the objects until it purges them), then git ckpt push ${named} sends it as it is now`,
        ),
      );
    for (const file of c.bundles)
      out.push(yellow(`still in ${file}, a bundle this store made: delete it (git ckpt bundle create makes one without it)`));
  }
  // A run's size is measured after the repack; a dry run's is the same pack counted, not written.
  const approx = r.dryRun ? '~' : '';
  const change =
    r.bytesAfter <= r.bytesBefore
      ? `${approx}${formatBytes(r.bytesBefore - r.bytesAfter)} freed`
      : `${approx}${formatBytes(r.bytesAfter - r.bytesBefore)} more: the objects kept ${would('were', 'are')} written into one new pack with its index, and the ledger keeps the former ids; on a store this small that costs more than what ${would('left', 'leaves')}`;
  out.push(
    `store: ${formatBytes(r.bytesBefore)} → ${approx}${formatBytes(r.bytesAfter)} (${change}; ${r.objects} object${r.objects === 1 ? '' : 's'} ${would('removed', 'to remove')}${r.leftovers ? `, ${r.leftovers} of them leftovers no checkpoint needed` : ''})`,
  );
  if (r.forgottenFile)
    out.push(
      `${would('not', 'would not be')} captured again: the patterns are kept in ${r.forgottenFile}${r.dryRun ? '' : ' (delete a line there to capture its files again)'}`,
    );
  out.push(
    r.dryRun
      ? `dry run, nothing was changed; to forget for good (there is no undo): ${r.command}`
      : 'forgotten for good (there is no undo)',
  );
  return out;
}
