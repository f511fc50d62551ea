/**
 * Following a rewind of the conversation inside the agent: read what the
 * agent's transcript gained since the last hook (its adapter's `transcript`
 * says what it means), and, once a rewind is seen, what the workspace still
 * holds of the turns left behind (model/rewind-plan.ts). Everything here fails
 * open: a transcript that cannot be read costs one line in hook.log, never
 * the agent's time past its budget, and never a checkpoint.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { HookEvent } from './hook-payload.js';
import type { Workspace } from '../workspace.js';
import type { CheckpointRecord, ForkMark, RewindMark } from '../model/ledger.js';
import {
  completeLines,
  copiedFrom,
  emptyIndex,
  forkedTurn,
  type ForkSource,
  type RewindVerdict,
  type TranscriptIndex,
} from '../model/rewind-detect.js';
import {
  leftBehindAddress,
  leftTurnsText,
  rewindOutcome,
  rewindScope,
  type RewindOutcome,
  type RewindScope,
} from '../model/rewind-plan.js';
import type { SessionState } from '../model/turns.js';
import { treeChanges, type RepoAccess } from '../git/objects.js';
import type { StoreContext } from '../store/context.js';
import { writeFileAtomic, type StorePaths } from '../store/store.js';
import { readTranscriptFrom, withinTime } from './transcript.js';
import { displayPath } from '../model/paths.js';
import { readLedger } from '../model/ledger.js';
import { branchTo, turnLabel, turnTree } from '../model/turn-tree.js';
import { readSessionState, sessionIds, updateSessionState } from '../store/sessions.js';
import { shortSession } from '../model/short-ids.js';
import { shellLine } from './resume-plan.js';
import { snapshotLocked } from '../capture/snapshot.js';
import { adapterOf, agentTitle, fileToolKind } from './registry.js';

/** One hook reads at most this much of a transcript; the rest waits for the next one. */
const READ_MAX_BYTES = 8 * 1024 * 1024;

function indexFile(paths: StorePaths, session: string): string {
  return path.join(paths.transcripts, `${createHash('sha256').update(session).digest('hex').slice(0, 32)}.json`);
}

/** A session's saved index, as the last hook left it (undefined: none, or not one). */
function savedIndex(file: string): TranscriptIndex | undefined {
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as TranscriptIndex;
    return Number.isInteger(saved.offset) && saved.labels && saved.prompts ? saved : undefined;
  } catch {
    return undefined;
  }
}

function saveIndex(paths: StorePaths, file: string, index: TranscriptIndex): void {
  mkdirSync(paths.transcripts, { recursive: true, mode: 0o700 });
  writeFileAtomic(file, JSON.stringify(index));
}

/** The agent's transcript reader (rewindCheckDue names only agents that have one). */
function readerOf(agent: string) {
  const spec = adapterOf(agent).transcript;
  if (!spec) throw new Error(`${agent} has no transcript reader`);
  return spec;
}

/** The session's index to read on from (none yet, or torn: the transcript is read from its start). */
function loadIndex(file: string, agent: string, transcript: string): TranscriptIndex {
  const saved = savedIndex(file);
  if (saved && saved.agent === agent) {
    if (saved.file === transcript) return { ...emptyIndex(agent, transcript), ...saved };
    // The agent went on in another file (a new segment): what its adapter says still holds.
    const carried = readerOf(agent).carryOver?.(saved);
    if (carried) return { ...emptyIndex(agent, transcript), ...carried };
  }
  return emptyIndex(agent, transcript);
}

/**
 * Pure: the agent whose transcript this event reads for a rewind before its turn (once a turn, and only at
 * the phases its adapter names: when the agent has written what tells a rewind), or null.
 * @public (tests use it)
 */
export function rewindCheckDue(
  event: { agent: string; phase: string; subagent: unknown; transcript: string | null },
  turn: number | null,
  checked: number,
): string | null {
  if (turn === null || turn <= checked || event.subagent || !event.transcript) return null;
  const readsAt: readonly string[] | undefined = adapterOf(event.agent).transcript?.readsAt;
  return readsAt?.includes(event.phase) ? event.agent : null;
}

interface RewindRead {
  verdict: RewindVerdict | { pending: true };
  problem?: string;
  /** The index as saved (when the transcript was read), and its file. */
  index?: TranscriptIndex;
  file?: string;
}

/**
 * Read the transcript's new lines into the session's index and say whether
 * the turn `turn` continues from an earlier turn than the one before it.
 * `branch` is the session's current branch before this turn (serials).
 */
async function readRewind(
  paths: StorePaths,
  event: HookEvent,
  agent: string,
  state: SessionState,
  turn: number,
  branch: readonly number[],
  withinMs: number,
): Promise<RewindRead> {
  const transcript = event.transcript!;
  const file = indexFile(paths, event.session!);
  let index = loadIndex(file, agent, transcript);
  try {
    const read = await withinTime(readTranscriptFrom(transcript, index.offset, READ_MAX_BYTES), withinMs);
    // Shorter than what was read: the file was rewritten, and its lines are read anew.
    if (read.from !== index.offset)
      index = { ...emptyIndex(agent, transcript), turnStarts: index.turnStarts ?? {}, forkChecked: index.forkChecked };
    const { lines, bytes } = completeLines(read.chunk);
    const { index: next, verdict } = readerOf(agent).read({ ...index, offset: read.from + bytes }, lines, {
      turn,
      branch,
      turnKeys: state.turnKeys,
    });
    saveIndex(paths, file, next);
    return { verdict, index: next, file };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { verdict: { rewound: false } };
    const why = code ? `cannot be read (${code})` : (err as Error).message;
    return {
      verdict: { rewound: false },
      problem: `transcript ${JSON.stringify(transcript)} ${why}; a rewind inside the agent was not looked for`,
    };
  }
}

/**
 * Under the workspace lock, after the event's own snapshot (`tree`: the
 * workspace now): read the transcript for a rewind before turn `turn`, and
 * when there was one, record it on a checkpoint of its own (the tree
 * unchanged: `log` shows the rewind where it happened) and say what it left.
 */
export async function noticeRewindLocked(
  ctx: StoreContext,
  event: HookEvent,
  agent: string,
  turn: number,
  state: SessionState,
  tree: string,
  budget: { readMs: number; left: () => number },
  note: (text: string) => void,
): Promise<RewindFinding | undefined> {
  const session = event.session!;
  // The branch from the session's state; from the ledger only for a state written before it kept one.
  let records = state.rewindParents === null ? readLedger(ctx.paths.ledger).records : undefined;
  const known = state.rewindParents ?? Object.fromEntries(turnTree(records!, session).rewinds.map((r) => [r.turn, r.parent]));
  const branch = branchTo(turn - 1, known);
  const read = await readRewind(ctx.paths, event, agent, state, turn, branch, budget.readMs);
  if (read.problem) note(read.problem);
  if (read.index && !read.index.forkChecked) await followFork(ctx, event, turn, state, read.index, read.file!, budget.left, note);
  const checked = (parent?: number) =>
    updateSessionState(ctx.paths.dir, session, (s) => ({
      state: {
        ...s,
        rewindChecked: Math.max(s.rewindChecked, turn),
        rewindParents: { ...(s.rewindParents ?? known), ...(parent === undefined ? {} : { [turn]: parent }) },
      },
    }));
  // Claude's prompt line may come later in the turn: its end is the last event that asks.
  if (!('rewound' in read.verdict) || !read.verdict.rewound) {
    if (!('pending' in read.verdict) || event.phase === 'turn-end') await checked();
    return undefined;
  }
  records ??= readLedger(ctx.paths.ledger).records;
  const finding = await rewindFinding(ctx, records, session, turn, read.verdict.parent, tree);
  note(
    `conversation rewound to before turn ${finding.scope.firstPosition} (${leftTurnsText(finding.scope)} left behind, ${finding.outcome.mark.kind}); ${finding.outcome.restorable.length} path(s) still differ`,
  );
  await markConversation(
    ctx,
    event,
    turn,
    `conversation rewound to before turn ${finding.scope.firstPosition}`,
    {
      rewind: finding.outcome.mark,
    },
    budget.left,
  );
  // Only once it is marked: a mark the budget stopped is tried again by the turn's next event (Claude's).
  await checked(read.verdict.parent);
  return finding;
}

/**
 * A checkpoint of its own for what git-ckpt noticed of the conversation (a rewind, a fork), the tree
 * unchanged: `log` shows it where it happened, and its trailers keep it for `fsck --rebuild-ledger`.
 */
async function markConversation(
  ctx: StoreContext,
  event: HookEvent,
  turn: number,
  text: string,
  mark: { rewind: RewindMark } | { fork: ForkMark },
  left: () => number,
): Promise<void> {
  await snapshotLocked(ctx, {
    kind: 'turn',
    message: `${event.agent}: ${text}`,
    session: event.session!,
    turn,
    hook: {
      agent: event.agent,
      phase: 'rewind' in mark ? 'rewind' : 'fork',
      agentTurn: event.turnKey ?? undefined,
      transcript: event.transcript ?? undefined,
      ...mark,
    },
    force: true,
    timeBudgetMs: Math.max(1, left()),
  });
}

/**
 * Once a session: a fork of another one (marked in its lines, or found by the lines it copied) is
 * linked to it by a checkpoint of its own (the tree unchanged). Nothing of the workspace is touched:
 * the fork starts from the files as they are.
 */
async function followFork(
  ctx: StoreContext,
  event: HookEvent,
  turn: number,
  state: SessionState,
  index: TranscriptIndex,
  file: string,
  left: () => number,
  note: (text: string) => void,
): Promise<void> {
  const session = event.session!;
  let source = index.fork ?? undefined;
  if (!source) {
    // A fork that leaves no mark in the lines: its session start said so, and its first lines are the other session's.
    if (!state.forked || !adapterOf(index.agent).transcript?.forkByCopiedLines) return;
    if (Object.keys(index.labels).length === 0) return; // nothing of the transcript written yet
    source = await copiedForkSource(ctx.paths, session, index, left);
    if (!source) note('this session is a fork of one git-ckpt never read: it is not linked');
  }
  if (source && source.session !== session) {
    const serial = forkedTurn(
      source,
      savedIndex(indexFile(ctx.paths, source.session)),
      readSessionState(ctx.paths.dir, source.session)?.turnKeys ?? {},
    );
    const records = readLedger(ctx.paths.ledger).records;
    const position = serial === undefined ? undefined : turnLabel(turnTree(records, source.session), serial);
    const text = `forked from session ${shortSession(source.session)}${position === undefined ? '' : ` after its turn ${position}`}`;
    note(`this session is ${text}`);
    await markConversation(ctx, event, turn, text, { fork: { session: source.session, turn: serial ?? null } }, left);
  }
  saveIndex(ctx.paths, file, { ...index, forkChecked: true });
}

/**
 * The session of the same agent a fork's first lines were copied from: among the sessions git-ckpt keeps state for,
 * those whose index knows the fork's first line, each read on to its transcript's end first (the fork may
 * reach past the last line its own hooks read); the one that holds most of them, and of equals one that is
 * no fork itself (a sibling fork holds the same lines).
 */
async function copiedForkSource(
  paths: StorePaths,
  own: string,
  fork: TranscriptIndex,
  left: () => number,
): Promise<ForkSource | undefined> {
  const first = Object.keys(fork.labels)[0]!;
  let best: { session: string; lines: number; forked: boolean; last: string } | undefined;
  for (const session of sessionIds(paths.dir).reverse()) {
    if (session === own || left() <= 0) continue;
    const file = indexFile(paths, session);
    let index = savedIndex(file);
    if (index?.agent !== fork.agent || index.labels[first] === undefined) continue;
    const state = readSessionState(paths.dir, session);
    try {
      const read = await withinTime(readTranscriptFrom(index.file, index.offset, READ_MAX_BYTES), Math.min(TRANSCRIPT_READ_MS, left()));
      if (read.from === index.offset) {
        const { lines, bytes } = completeLines(read.chunk);
        const turnKeys = state?.turnKeys ?? {};
        index = readerOf(fork.agent).read({ ...index, offset: read.from + bytes }, lines, { turn: 0, branch: [], turnKeys }).index;
        saveIndex(paths, file, index);
      }
    } catch {
      /* what was read before still tells */
    }
    const copied = copiedFrom(fork, index);
    const forked = state?.forked ?? false;
    if (copied && (!best || copied.lines > best.lines || (copied.lines === best.lines && best.forked && !forked)))
      best = { session, forked, ...copied };
  }
  return best && { session: best.session, message: best.last };
}

/** A local transcript's tail reads in milliseconds; a stalled one must not eat the hook's budget. */
const TRANSCRIPT_READ_MS = 1000;

/** What the rewind left, worked out under the workspace lock from the ledger and the workspace's tree now. */
export interface RewindFinding {
  scope: RewindScope;
  outcome: RewindOutcome;
}

/**
 * What the workspace (its tree `now`) still holds of the turns a rewind at
 * turn `turn` back to `parent` left behind, and who last changed each path.
 */
async function rewindFinding(
  ctx: StoreContext,
  records: readonly CheckpointRecord[],
  session: string,
  turn: number,
  parent: number,
  now: string,
): Promise<RewindFinding> {
  const scope = rewindScope(records, session, turn, parent, ctx.location.root, fileToolKind);
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.location.root };
  if (!scope.before || !scope.end) {
    return { scope, outcome: rewindOutcome(scope, session, parent, { now: [], ended: [], uncaptured: new Set(), writer: new Map() }) };
  }
  const differs = await treeChanges(repo, scope.before.tree, now);
  const ended = await treeChanges(repo, scope.before.tree, scope.end.tree);
  const latest = records.at(-1)!;
  const uncaptured = new Set((latest.tree === now ? [] : await treeChanges(repo, latest.tree, now)).map((c) => c.path));
  const { writer, firstWriter } = await writers(repo, records, scope.since, new Set(differs.map((c) => c.path)));
  return { scope, outcome: rewindOutcome(scope, session, parent, { now: differs, ended, uncaptured, writer, firstWriter }) };
}

/**
 * The newest and the oldest record among `since` that changed each path (its own path list, or git's diff
 * when the list was cut): who last changed it, and who made it.
 */
async function writers(
  repo: RepoAccess,
  records: readonly CheckpointRecord[],
  since: readonly CheckpointRecord[],
  wanted: Set<string>,
): Promise<{ writer: Map<string, CheckpointRecord>; firstWriter: Map<string, CheckpointRecord> }> {
  const writer = new Map<string, CheckpointRecord>();
  const firstWriter = new Map<string, CheckpointRecord>();
  const byId = new Map(records.map((r) => [r.id, r]));
  for (const r of since) {
    let changed: readonly { path: string }[] = r.paths;
    if (r.changed > r.paths.length) {
      const parentTree = r.parent ? (byId.get(r.parent)?.tree ?? r.parentTree) : undefined;
      changed = parentTree ? await treeChanges(repo, parentTree, r.tree) : r.paths;
    }
    for (const c of changed) {
      if (!wanted.has(c.path)) continue;
      if (!firstWriter.has(c.path)) firstWriter.set(c.path, r);
      writer.set(c.path, r);
    }
  }
  return { writer, firstWriter };
}

/** At most this many paths are named in a message. */
const NAMED = 3;

function named(paths: readonly string[]): string {
  const shown = paths.slice(0, NAMED).map(displayPath).join(', ');
  return paths.length > NAMED ? `${shown} and ${paths.length - NAMED} more` : shown;
}

function files(n: number): string {
  return `${n} file${n === 1 ? '' : 's'}`;
}

/** At most this many paths are put in a command line a message names; past it, the command reviews them all. */
const COMMAND_PATHS = 10;

/** What the user is told after a rewind (`restored`: what followRewind=auto brought back, when it did). */
function rewindMessage(
  finding: RewindFinding,
  agentName: string,
  session: string,
  restored?: { count: number; failed: number },
): string | null {
  const { scope, outcome } = finding;
  const turns = leftTurnsText(scope);
  const head = `git-ckpt: conversation rewound to before turn ${scope.firstPosition}`;
  const keptNote = outcome.kept.length
    ? `; left as they are, changed by something else since: ${named(outcome.kept.map((k) => `${k.path} (${k.why})`))}`
    : '';
  if (restored) {
    const missed = outcome.mark.kind === 'code' ? `, which ${agentName}'s rewind did not put back` : '';
    const failed = restored.failed ? ` (${restored.failed} could not be written: git ckpt status)` : '';
    const attributed = new Set(outcome.attributed);
    const unsure = outcome.restorable.filter((p) => !attributed.has(p));
    const address = leftBehindAddress(scope.firstPosition, session);
    const command =
      unsure.length <= COMMAND_PATHS
        ? shellLine(['git', 'ckpt', 'restore', address, '--', ...unsure])
        : `${shellLine(['git', 'ckpt', 'restore', address, '--dry-run'])} (then without --dry-run, with the paths you choose after --)`;
    const left = unsure.length
      ? `; left for you, changed while a tool call of ${turns} ran but not made by it for certain (it may be your own edit): ${named(unsure)}: ${command}`
      : '';
    return `${head}: restored ${files(restored.count)} of ${turns}${missed}: ${named(outcome.attributed)}${failed}${left}${keptNote}; git ckpt undo brings ${turns}'s files back`;
  }
  if (outcome.restorable.length === 0) return outcome.kept.length ? `${head}${keptNote}` : null;
  const shell = outcome.mark.shell ? `, ${outcome.mark.shell} of them only by the shell` : '';
  const what =
    outcome.mark.kind === 'code'
      ? `${agentName} put back its own edits; the workspace still has what it missed of ${turns} (${files(outcome.restorable.length)}${shell})`
      : `the workspace still has ${turns}'s changes (${files(outcome.restorable.length)}${shell})`;
  return `${head}; ${what}: ${named(outcome.restorable)}: git ckpt restore ${leftBehindAddress(scope.firstPosition, session)}${keptNote}`;
}

/** Whether followRewind=auto restores: only after a rewind that put back the agent's own edits, and only what the agent made for certain. */
function autoRestores(finding: RewindFinding): boolean {
  return finding.outcome.mark.kind === 'code' && finding.outcome.attributed.length > 0;
}

/**
 * After the lock is released: follow the rewind as ckpt.followRewind says,
 * and return the line the user is told (none with `off`, or when nothing of
 * the turns left behind is in the workspace).
 */
export async function followRewind(
  ws: Workspace,
  event: HookEvent,
  finding: RewindFinding,
  note: (text: string) => void,
): Promise<{ rewindNotice?: string }> {
  const settings = await ws.settings();
  if (settings.followRewind === 'off') return {};
  let restored: { count: number; failed: number } | undefined;
  if (settings.followRewind === 'auto' && autoRestores(finding)) {
    try {
      // The normal transaction: a guard first, a journal, and `git ckpt undo` to bring them back, with what the
      // agent's own rewind put back (`rewound`: the turns' end), so that undo brings those turns back whole.
      const report = await ws.scannedInFull().restore(finding.scope.before!.id, {
        paths: finding.outcome.attributed,
        deleteNew: true,
        rewound: finding.scope.end!.id,
      });
      const { counts } = report;
      restored = { count: counts.restore + counts.recreate + counts.delete, failed: counts.failed };
      note(
        `followRewind=auto: restored ${restored.count} path(s) to ${finding.scope.before!.id.slice(0, 12)} (record ${report.record ?? '-'})`,
      );
    } catch (err) {
      note(`followRewind=auto: the restore was not made: ${(err as Error).message}`);
    }
  }
  const message = rewindMessage(finding, agentTitle(event.agent), event.session!, restored);
  return message ? { rewindNotice: message } : {};
}
