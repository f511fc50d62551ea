/** git ckpt log: checkpoints, newest first. */
import { sessionLabel, shortSession } from '../lib/model/short-ids.js';
import { splitForeignSession } from '../lib/model/share-plan.js';
import { Option, type Command } from 'commander';
import type { CheckpointRecord } from '../lib/model/ledger.js';
import { argsOf, nonNegativeInt, openWorkspace, printJson, warn, type GlobalArgs } from './common.js';
import { turnTitleKey } from '../lib/model/ledger.js';
import { labelOfTurn } from '../lib/model/turn-tree.js';
import { checkpointView, type TurnNames } from '../lib/surfaces/views.js';
import { foldGuards, recordsIn, type ListEntry } from '../lib/model/operation-groups.js';
import { displayPath } from '../lib/model/paths.js';
import { plainStats } from '../lib/inspect/describe.js';
import {
  attribution,
  bold,
  cyan,
  dim,
  displayWidth,
  firstPaths,
  fitToTerminal,
  red,
  relativeAge,
  shortId,
  statsText,
  yellow,
} from './format.js';

interface LogArgs extends GlobalArgs {
  maxCount?: string;
  session?: string;
  turn?: string;
  all?: boolean;
  oneline?: boolean;
  stat?: boolean;
  json?: boolean;
}

/** `--oneline`: one line per checkpoint, each saying whose it is (no headers to say it). */
function onelineText(r: CheckpointRecord, degraded: string | undefined, turnLabel: string | undefined): string {
  const subagent = r.subagent ? cyan(`[subagent ${r.subagent.type ?? shortSession(r.subagent.id)}]`) : '';
  const failed = r.failed ? red(`✗ failed${failureReason(r)}`) : '';
  const from = r.origin ? cyan(`[from ${r.origin.remote}/${r.origin.writer.slice(0, 6)}]`) : '';
  const who = [degraded ? yellow('⚠ degraded') : '', from, attribution(r, turnLabel), subagent, r.tool ?? '', dim(r.kind), failed]
    .filter(Boolean)
    .join(' ');
  return `${yellow(shortId(r.id))} ${who} ${statsText(r)} ${r.message || firstPaths(r)}`;
}

/** A failure the agent gave no text for is recorded as 'failed': `✗ failed`, not `✗ failed: failed`. */
function failureReason(r: CheckpointRecord): string {
  return r.error && r.error.trim().toLowerCase() !== 'failed' ? `: ${r.error}` : '';
}

const PHASE_WORDS: Record<string, string> = {
  'turn-start': 'turn start',
  'turn-end': 'turn end',
  'session-start': 'session start',
  'subagent-end': 'subagent end',
};

/**
 * What a row says the checkpoint is, short: `#2 Bash` for the capture after a tool call, `before #2 Bash`
 * for the one before it, `turn end`, `manual`, `guard`; an operation's own words (`restore to 8ad5f277 ·
 * guard a815b8ea`). The session and turn are the headers'; the agent and phase are not repeated.
 */
function whoText(entry: ListEntry<CheckpointRecord>, marks: string[]): string {
  const r = entry.record;
  if (r.op) {
    // An undo's guard is the record it undoes (nothing changed since): said once.
    const guard = r.op.guard === r.op.target ? '' : ` · guard ${shortId(r.op.guard)}`;
    const captured = entry.guard && entry.guard.changed > 0 ? ` (${plainStats(entry.guard)})` : '';
    const after = guard + captured;
    return [r.message || r.kind, ...marks].join(' ') + (after ? dim(after) : '');
  }
  const hook = r.kind === 'pre' || r.kind === 'post' || r.kind === 'turn';
  const what = hook ? (r.tool ?? (r.phase ? (PHASE_WORDS[r.phase] ?? r.phase) : r.kind)) : r.tool;
  return [r.kind === 'pre' ? 'before' : '', r.step !== null ? `#${r.step}` : '', what ?? '', hook ? '' : dim(r.kind), ...marks]
    .filter(Boolean)
    .join(' ');
}

/** A hook checkpoint's message without the agent, phase and tool the row already says (`claude turn-end` says nothing more). */
function ownWords(r: CheckpointRecord): string {
  let text = r.message;
  for (const said of [r.agent, r.phase, r.tool]) {
    if (said && (text === said || text.startsWith(`${said} `) || text.startsWith(`${said}:`)))
      text = text.slice(said.length).replace(/^:?\s*/, '');
  }
  return text;
}

/** The end of a row: what the agent ran (its input), or a checkpoint's message; a failure's text. */
function whatText(r: CheckpointRecord): string {
  if (r.op) return '';
  const text = r.agent ? (r.input ?? ownWords(r)) : r.message;
  const reason = r.failed ? failureReason(r).slice(2) : '';
  return [cyan(text), reason ? red(reason) : ''].filter(Boolean).join(dim(' · '));
}

/** Pad to `columns` as the terminal counts them (colour codes take none). */
function pad(text: string, columns: number): string {
  return text + ' '.repeat(Math.max(0, columns - displayWidth(text)));
}

/** A column no wider than this pads the others: a long one (a subagent, an operation) spills past it instead. */
const WHO_COLUMNS = 24;

interface Row {
  entry: ListEntry<CheckpointRecord>;
  age: string;
  who: string;
}

/** The rows' lines, their columns lined up: id, age, what it is, `+A ~M -D`, paths, what ran. */
function rowLines(rows: Row[], indent: string): Map<Row, string> {
  const ageWidth = Math.max(0, ...rows.map((row) => row.age.length));
  const whoWidths = rows.map((row) => displayWidth(row.who)).filter((w) => w <= WHO_COLUMNS);
  const whoWidth = Math.max(0, ...whoWidths);
  const lines = new Map<Row, string>();
  for (const row of rows) {
    const r = row.entry.record;
    const cells = [
      yellow(shortId(r.id)),
      dim(row.age.padEnd(ageWidth)),
      pad(row.who, whoWidth),
      statsText(r),
      [firstPaths(r), whatText(r)].filter(Boolean).join('  '),
    ];
    lines.set(row, `${indent}${cells.join('  ').trimEnd()}`);
  }
  return lines;
}

function sessionHeader(r: CheckpointRecord & { session: string }, names: TurnNames): string {
  const who = r.agent ? ` (${r.agent})` : '';
  const from = r.origin ? ` from ${r.origin.remote} (writer ${r.origin.writer})` : '';
  const fork = names.forks?.[r.session];
  const forked = fork
    ? ` forked from ${shortSession(fork.session)}${fork.turn === null ? '' : ` after its turn ${labelOfTurn(names.labels, fork.session, fork.turn)}`}`
    : '';
  // A fetched session is shown by the id its store gave it, then where it came from; its hint names it whole.
  const id = r.origin ? (splitForeignSession(r.session)?.session ?? r.session) : r.session;
  return `── session ${sessionLabel(id)}${who}${from}${forked} ──`;
}

function turnHeader(r: CheckpointRecord & { session: string }, names: TurnNames): string {
  if (r.turn === null) return 'before the first prompt';
  const key = turnTitleKey(r.session, r.turn);
  const title = names.titles[key];
  const label = labelOfTurn(names.labels, r.session, r.turn);
  // A turn a rewind inside the agent left behind is named on its old branch: `turn 3~1`.
  const left = label.includes('~') ? ' (left by a rewind)' : '';
  return `turn ${label}${left}${title ? ` ${cyan(`“${title}”`)}` : ''} ${dim(`(before it: turn:${label}@${shortSession(r.session)})`)}`;
}

export function define(command: Command): Command {
  return command
    .summary('list checkpoints, newest first')
    .description(
      "list checkpoints, newest first, under a header per agent session and turn; a restore, revert or undo is one line with its guard. On a terminal each line is cut to its width (COLUMNS, else the terminal's) with …; into a pipe or a file, never",
    )
    .option('-n, --max-count <n>', 'show at most N checkpoints (an operation and its guard are one)')
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
  const session = argv.all ? undefined : argv.session;
  // -n counts checkpoints for --json and --oneline (a line each), and entries for people (an operation with its guard is one).
  const human = !argv.json && !argv.oneline;
  const listed = await ws.list({ session, turn, limit: human ? undefined : limit });
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
  const out = (text: string) => process.stdout.write(`${fitToTerminal(text)}\n`);
  const stat = (r: CheckpointRecord) => {
    if (!argv.stat) return;
    for (const p of r.paths) out(`    ${p.status} ${displayPath(p.path)}`);
    if (r.changed > r.paths.length) out(`    … ${r.changed - r.paths.length} more`);
  };
  let shown = records.length;
  if (argv.oneline) {
    for (const r of records) {
      out(onelineText(r, degraded[r.id], r.turn !== null ? labelOfTurn(listed.labels, r.session, r.turn) : undefined));
      stat(r);
    }
  } else {
    const all = foldGuards(records);
    const entries = limit === undefined ? all : all.slice(0, limit);
    shown = recordsIn(entries);
    const now = Date.now();
    const rows: Row[] = entries.map((entry) => {
      const r = entry.record;
      const marks = [
        degraded[r.id] ? yellow('⚠ degraded') : '',
        // A fetched session's header says where it came from; a row outside any session says it itself.
        r.origin && r.session === null ? cyan(`[from ${r.origin.remote}/${r.origin.writer.slice(0, 6)}]`) : '',
        r.subagent ? cyan(`[subagent ${r.subagent.type ?? shortSession(r.subagent.id)}]`) : '',
        r.failed ? red('✗ failed') : '',
      ].filter(Boolean);
      return { entry, age: relativeAge(r.time, now), who: whoText(entry, marks) };
    });
    // Agent sessions read as a story, newest first: a header when the session changes, and under it one when the turn does.
    const grouped = rows.some((row) => row.entry.record.session !== null);
    const lines = rowLines(rows, grouped ? '  ' : '');
    let sessionKey: string | undefined;
    let turnKey: string | undefined;
    for (const row of rows) {
      const r = row.entry.record;
      if (grouped) {
        const header = r.session === null ? '── outside any agent session ──' : sessionHeader({ ...r, session: r.session }, listed);
        if (header !== sessionKey) {
          out(bold(header));
          sessionKey = header;
          turnKey = undefined;
        }
        if (r.session !== null) {
          const heading = turnHeader({ ...r, session: r.session }, listed);
          if (heading !== turnKey) {
            out(heading);
            turnKey = heading;
          }
        }
      }
      out(lines.get(row)!);
      stat(r);
    }
  }
  const count = Object.keys(degraded).length;
  if (count) out(yellow(`${count} checkpoint(s) degraded: their objects are missing from the store (see git ckpt fsck)`));
  if (total > shown) {
    const older = total - shown;
    out(dim(`${older} older checkpoint${older === 1 ? '' : 's'}`));
  }
}
