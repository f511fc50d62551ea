/** git ckpt log: checkpoints, newest first. */
import { SHORT_SESSION_LENGTH, shortSession } from '../lib/model/short-ids.js';
import { Option, type Command } from 'commander';
import type { CheckpointRecord } from '../lib/model/ledger.js';
import { argsOf, nonNegativeInt, openWorkspace, printJson, warn, type GlobalArgs } from './common.js';
import { turnTitleKey } from '../lib/model/ledger.js';
import { labelOfTurn } from '../lib/model/turn-tree.js';
import { checkpointView, type TurnNames } from '../lib/surfaces/views.js';
import { attribution, cyan, dim, firstPaths, red, relativeAge, shortId, statsText, yellow } from './format.js';

interface LogArgs extends GlobalArgs {
  maxCount?: string;
  session?: string;
  turn?: string;
  all?: boolean;
  oneline?: boolean;
  stat?: boolean;
  json?: boolean;
}

function line(r: CheckpointRecord, oneline: boolean, degraded: string | undefined, turnLabel: string | undefined): string {
  const subagent = r.subagent ? cyan(`[subagent ${r.subagent.type ?? shortSession(r.subagent.id)}]`) : '';
  // A failure the agent gave no text for is recorded as 'failed': `✗ failed`, not `✗ failed: failed`.
  const reason = r.error && r.error.trim().toLowerCase() !== 'failed' ? `: ${r.error}` : '';
  const failed = r.failed ? red(`✗ failed${reason}`) : '';
  const from = r.origin ? cyan(`[from ${r.origin.remote}/${r.origin.writer.slice(0, 6)}]`) : '';
  const who = [degraded ? yellow('⚠ degraded') : '', from, attribution(r, turnLabel), subagent, r.tool ?? '', dim(r.kind), failed]
    .filter(Boolean)
    .join(' ');
  if (oneline) return `${yellow(shortId(r.id))} ${who} ${statsText(r)} ${r.message || firstPaths(r)}`;
  return `${yellow(shortId(r.id))}  ${dim(relativeAge(r.time).padEnd(15))} ${who}  ${statsText(r)}  ${firstPaths(r)}${r.message ? `  ${cyan(r.message)}` : ''}`;
}

function groupHeader(r: CheckpointRecord, names: TurnNames): string {
  if (r.session === null) return '── outside any agent session ──';
  const who = r.agent ? ` (${r.agent})` : '';
  const key = r.turn !== null ? turnTitleKey(r.session, r.turn) : undefined;
  const title = key ? names.titles[key] : undefined;
  const label = r.turn === null ? '' : labelOfTurn(names.labels, r.session, r.turn);
  // A turn a rewind inside the agent left behind is named on its old branch: `turn 3~1`.
  const left = label.includes('~') ? ' (left by a rewind)' : '';
  const turn =
    r.turn !== null ? ` · turn ${label}${left}${title ? ` “${title}”` : ''} (before it: turn:${label}@${shortSession(r.session)})` : '';
  const from = r.origin ? ` from ${r.origin.remote} (writer ${r.origin.writer})` : '';
  const fork = names.forks?.[r.session];
  const forked = fork
    ? ` forked from ${shortSession(fork.session)}${fork.turn === null ? '' : ` after its turn ${labelOfTurn(names.labels, fork.session, fork.turn)}`}`
    : '';
  return `── session ${r.session.length > SHORT_SESSION_LENGTH ? `${shortSession(r.session)}…` : r.session}${who}${from}${forked}${turn} ──`;
}

export function define(command: Command): Command {
  return command
    .description('list checkpoints, newest first')
    .option('-n, --max-count <n>', 'show at most N checkpoints')
    .option('--session <id>', "only this session's checkpoints (a unique prefix of its id)")
    .option('--turn <n>', "only this turn's checkpoints (with --session, or in every session)")
    .addOption(new Option('--all', 'every session (the default)').conflicts('session'))
    .option('--oneline', 'one short line per checkpoint')
    .option('--stat', 'list the changed paths of each checkpoint')
    .option('--json', 'print a JSON array of records')
    .action((...params) => runLog(argsOf<LogArgs>(params)));
}

async function runLog(argv: LogArgs): Promise<void> {
  const ws = openWorkspace(argv);
  const limit = nonNegativeInt('max-count', argv.maxCount);
  const turn = nonNegativeInt('turn', argv.turn);
  const listed = await ws.list({ session: argv.all ? undefined : argv.session, turn, limit });
  const { records, total, warnings } = listed;
  warn(warnings);
  const degraded = await ws.degraded();
  if (argv.json) {
    // Every record of a turn shows its title, not only the first one, which carries it in the ledger.
    printJson(records.map((r) => checkpointView(r, listed, Boolean(degraded[r.id]))));
    return;
  }
  if (total === 0) {
    process.stdout.write('no checkpoints yet\n');
    return;
  }
  let group: string | undefined;
  const grouped = !argv.oneline && records.some((r) => r.session !== null);
  for (const r of records) {
    // Agent sessions read as a story: a header whenever the session or the turn changes.
    const key = groupHeader(r, listed);
    if (grouped && key !== group) {
      process.stdout.write(`${dim(key)}\n`);
      group = key;
    }
    process.stdout.write(
      `${line(r, Boolean(argv.oneline), degraded[r.id], r.turn !== null ? labelOfTurn(listed.labels, r.session, r.turn) : undefined)}\n`,
    );
    if (argv.stat) {
      for (const p of r.paths) process.stdout.write(`    ${p.status} ${p.path}\n`);
      if (r.changed > r.paths.length) process.stdout.write(`    … ${r.changed - r.paths.length} more\n`);
    }
  }
  const count = Object.keys(degraded).length;
  if (count)
    process.stdout.write(yellow(`${count} checkpoint(s) degraded: their objects are missing from the store (see git ckpt fsck)\n`));
  if (total > records.length) {
    const older = total - records.length;
    process.stdout.write(dim(`${older} older checkpoint${older === 1 ? '' : 's'}\n`));
  }
}
