/**
 * The ledger: an append-only file with one JSON record per checkpoint. Each line
 * is written with a single append, so concurrent readers see whole lines or a
 * torn last line, which is skipped with a warning like any corrupt line.
 * Every id read back is validated: a tampered line never reaches git's argv.
 */
import { closeSync, fstatSync, openSync, readSync, appendFileSync, readFileSync, fsyncSync } from 'node:fs';
import { CkptError } from './errors.js';
import { unsafePathReason } from './paths.js';
import { isObjectId } from './oid.js';
import { fileEntryProblem, type ActionCounts, type PathChange } from './tree.js';

export const LEDGER_SCHEMA = 1;

export type CheckpointKind = 'manual' | 'pre' | 'post' | 'turn' | 'watch' | 'guard' | OperationKind;
export type OperationKind = 'restore' | 'revert' | 'undo';
export const OPERATION_KINDS: readonly OperationKind[] = ['restore', 'revert', 'undo'];
const CHECKPOINT_KINDS: readonly CheckpointKind[] = ['manual', 'pre', 'post', 'turn', 'watch', 'guard', ...OPERATION_KINDS];
/** The kinds a person or a harness may give a snapshot; guards and operation records are the engine's own. */
/** `watch`: taken by `git ckpt watch` after a quiet period of changes. */
export type UserKind = 'manual' | 'pre' | 'post' | 'turn' | 'watch';
export const USER_KINDS: readonly UserKind[] = ['manual', 'pre', 'post', 'turn', 'watch'];

/**
 * What a restore, revert or undo did. Its record is a checkpoint of the
 * workspace right after the operation, whose parent is the guard: `show` of it
 * is exactly the operation's effect, and undo reverses guard → it.
 */
export interface OperationInfo {
  /** restore: the checkpoint restored; revert: the checkpoint reverted; undo: the operation record undone. */
  target: string;
  /** The checkpoint holding the state just before the operation. */
  guard: string;
  /** The journal that carried the operation. */
  journal: string;
  counts: ActionCounts & { failed: number };
  /** Per-file failures (at most SKIPPED_KEPT). */
  failures: { path: string; error: string }[];
  leftovers: number;
  /** The paths the operation was limited to, when it was. */
  paths?: string[];
  /** Whether it was completed by `restore --continue`. */
  continued?: boolean;
  /** A restore made by `restore --abort`: the interrupted operation's paths back to its guard. */
  aborted?: boolean;
  /** Paths recovery left as it found them (changed since the interruption): its undo leaves them too. */
  leftAlone?: string[];
  /** A revert of several checkpoints (a turn range, a session): their ids, newest first. */
  reverted?: string[];
  /**
   * A restore that followed a rewind inside the agent (followRewind=auto): the last checkpoint of the turns
   * left behind. Its undo brings those turns' files back, what the agent's own rewind had put back too.
   */
  rewound?: string;
  /**
   * What the operation changed that its record cannot show: a file it wrote that the record's capture does
   * not take (ignored now: it restored a file a rule ignores today), or one it deleted that its guard never
   * took. Undo reverses these too, so it returns to the state before the operation, not to its guard's view
   * of it. At most UNRECORDED_KEPT; `unrecordedCount` says when there were more (undo leaves those).
   */
  unrecorded?: PathChange[];
  unrecordedCount?: number;
}

/** Changes an operation record keeps that its tree cannot show (see OperationInfo.unrecorded). */
export const UNRECORDED_KEPT = 2000;

export interface SkippedPath {
  path: string;
  reason:
    | 'too-large'
    | 'secret'
    | 'forgotten'
    | 'new-directory-too-many-files'
    | 'unreadable'
    | 'path-too-long'
    | 'name-not-utf8'
    | 'nested-repo-without-commit';
  /** Size in bytes (too-large) or file count (directories). */
  size?: number;
}

/** The key of a turn's title (the first line of its prompt) in a map of titles. */
export function turnTitleKey(session: string, turn: number): string {
  return `${session}\0${turn}`;
}

export interface ChangedPath {
  path: string;
  status: 'A' | 'M' | 'D' | 'T';
}

export interface CheckpointRecord {
  v: number;
  id: string;
  parent: string | null;
  tree: string;
  /** Milliseconds since the epoch. */
  time: number;
  session: string | null;
  turn: number | null;
  step: number | null;
  tool: string | null;
  kind: CheckpointKind;
  message: string;
  stats: { added: number; modified: number; deleted: number };
  /** Bytes of content that this checkpoint added or changed (uncompressed). */
  bytes: number;
  /** The first changed paths (at most PATHS_KEPT), for log without a git call. */
  paths: ChangedPath[];
  /** Total number of changed paths. */
  changed: number;
  skipped: SkippedPath[];
  /** Number of skipped paths, when `skipped` was cut. */
  skippedCount: number;
  /**
   * The ignore rules outside the tree this checkpoint was taken with (the exclude file, the global
   * excludes), by their id in the store; absent in checkpoints recorded before records named them.
   */
  rules?: string;
  /** Restore, revert and undo records only. */
  op?: OperationInfo;
  /** The tree of a parent gc dropped: what this checkpoint's change (its revert) is computed against. */
  parentTree?: string;
  /** Hook checkpoints: the agent, the hook phase, the agent's tool-call id and a one-line summary of the tool input. */
  agent?: string;
  phase?: string;
  call?: string;
  input?: string;
  /** A tool call that failed, and the first line of its error (redacted). */
  failed?: boolean;
  error?: string;
  /** The subagent that made the tool call. */
  subagent?: { id: string; type: string | null };
  /** The agent's own turn id (Claude prompt_id, Codex turn_id, Cursor generation_id) and its transcript. */
  agentTurn?: string;
  transcript?: string;
  /** The turn's title: the first line of the user's prompt (redacted), on the turn's first checkpoint. */
  prompt?: string;
  /**
   * The ids this checkpoint had before `forget` rewrote the chain, oldest
   * first: an address or a record naming one of them still finds it.
   */
  formerIds?: string[];
  /** The first checkpoint of a turn that followed a rewind inside the agent (see turn-tree.ts). */
  rewind?: RewindMark;
  /** The checkpoint where a session that is a fork of another was first seen (Claude's --fork-session or /branch, Codex's fork). */
  fork?: ForkMark;
  /** A checkpoint fetched from another machine's store (`git ckpt fetch`, `bundle import`): where it came from. */
  origin?: CheckpointOrigin;
  /**
   * A post the daemon captured after answering it: it may hold changes made after the event arrived (a path
   * changed before and after, a file made later in a folder it scanned, a full scan). Absent when it holds none.
   */
  mayIncludeLater?: true;
}

export interface CheckpointOrigin {
  /** The remote's name in this store (`bundle` for an imported bundle). */
  remote: string;
  /** The shared workspace and the writer (one store) that pushed it, as their refs name them. */
  ws: string;
  writer: string;
  /** Its id in the store it was taken in. */
  source: string;
}

/** The ids `share init` mints for a shared workspace and a writer: 12 hex digits. */
export function isShareId(v: unknown): v is string {
  return typeof v === 'string' && /^[0-9a-f]{12}$/.test(v);
}

/** A remote's name in a store: what its refs under refs/ckpt-remote/ are named after. */
export function isRemoteLabel(v: unknown): v is string {
  return typeof v === 'string' && /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(v);
}

/** What the user did inside the agent, as the workspace showed it when git-ckpt noticed. */
export type RewindKind = 'conversation' | 'code' | 'unknown';
export const REWIND_KINDS: readonly RewindKind[] = ['conversation', 'code', 'unknown'];

export interface RewindMark {
  /** The serial of the turn the conversation now continues from; 0: from before the first prompt. */
  parent: number;
  /**
   * `conversation`: the agent kept the files as the turns left behind made them; `code`: it put back
   * what its own file tools wrote (what it missed, the shell's changes, is still there); `unknown`: the
   * workspace does not tell (no file tool wrote in those turns).
   */
  kind: RewindKind;
  /** Paths that still differed from before the first turn left behind, and how many of them only the shell wrote. */
  pending: number;
  shell: number;
}

/** Where a forked session's conversation came from: the session, and the serial of its last turn the fork holds. */
export interface ForkMark {
  session: string;
  /** null: the fork's point is not known here (the other session's transcript was never read by git-ckpt). */
  turn: number | null;
}

/** What a hook event adds to its checkpoint's record. */
export type HookFields = Required<Pick<CheckpointRecord, 'agent' | 'phase'>> &
  Pick<CheckpointRecord, 'call' | 'input' | 'failed' | 'error' | 'subagent' | 'agentTurn' | 'transcript' | 'prompt' | 'rewind' | 'fork'>;

/** The record's text fields that come from an agent's payload. */
const HOOK_TEXT_FIELDS = ['agent', 'phase', 'call', 'input', 'error', 'agentTurn', 'transcript', 'prompt'] as const;

export const PATHS_KEPT = 20;
export const SKIPPED_KEPT = 200;

/**
 * What a capture left out that the checkpoint before it (`before`) did not also leave out for the
 * same reason. A path left out the same way every time (a secret, a file over the limit) is
 * reported by the capture that first leaves it out, and `status` keeps listing it; a list cut at
 * SKIPPED_KEPT proves nothing past its end, so a path past it counts as new.
 */
export function newlySkipped(now: SkippedPath[], before: Pick<CheckpointRecord, 'skipped' | 'skippedCount'> | undefined): SkippedPath[] {
  if (!before || before.skippedCount > before.skipped.length) return now;
  const known = new Set(before.skipped.map((s) => `${s.reason}\0${s.path}`));
  return now.filter((s) => !known.has(`${s.reason}\0${s.path}`));
}

export interface LedgerRead {
  records: CheckpointRecord[];
  /** One line per unreadable ledger line (torn, corrupt, tampered, or from a newer schema). */
  warnings: string[];
  /** Highest schema version met (a store written by a newer git-ckpt). */
  newestSchema: number;
}

function nullableString(v: unknown): v is string | null {
  return v === null || typeof v === 'string';
}
function nullableInt(v: unknown): v is number | null {
  return v === null || (Number.isInteger(v) && (v as number) >= 0);
}

/** Pure: validate one parsed line. Returns the reason it is unusable, or undefined. */
export function recordProblem(r: Partial<CheckpointRecord>): string | undefined {
  if (typeof r !== 'object' || r === null) return 'not an object';
  if (!Number.isInteger(r.v)) return 'no schema version';
  if (!isObjectId(r.id)) return 'bad id';
  if (!(r.parent === null || isObjectId(r.parent))) return 'bad parent';
  if (!isObjectId(r.tree)) return 'bad tree';
  if (!Number.isFinite(r.time)) return 'bad time';
  if (!CHECKPOINT_KINDS.includes(r.kind as CheckpointKind)) return 'bad kind';
  if (!nullableString(r.session) || !nullableString(r.tool) || typeof r.message !== 'string') return 'bad text field';
  if (!nullableInt(r.turn) || !nullableInt(r.step)) return 'bad turn or step';
  const s = r.stats;
  if (!s || !Number.isInteger(s.added) || !Number.isInteger(s.modified) || !Number.isInteger(s.deleted)) return 'bad stats';
  if (!Array.isArray(r.paths) || !Array.isArray(r.skipped)) return 'bad path lists';
  for (const key of HOOK_TEXT_FIELDS) {
    if (r[key] !== undefined && typeof r[key] !== 'string') return `bad ${key}`;
  }
  if (r.failed !== undefined && typeof r.failed !== 'boolean') return 'bad failed';
  if (r.mayIncludeLater !== undefined && r.mayIncludeLater !== true) return 'bad mayIncludeLater';
  if (r.subagent !== undefined) {
    const a = r.subagent as { id?: unknown; type?: unknown } | null;
    if (!a || typeof a !== 'object' || typeof a.id !== 'string' || !nullableString(a.type)) return 'bad subagent';
  }
  const isOperation = OPERATION_KINDS.includes(r.kind as OperationKind);
  if (isOperation !== (r.op !== undefined)) return 'operation record without operation details';
  if (r.op !== undefined) {
    const op = r.op;
    if (typeof op !== 'object' || op === null) return 'bad operation';
    if (!isObjectId(op.target) || !isObjectId(op.guard)) return 'bad operation ids';
    if (typeof op.journal !== 'string' || !/^[0-9a-f]{1,64}$/.test(op.journal)) return 'bad journal id';
    if (typeof op.counts !== 'object' || op.counts === null || !Array.isArray(op.failures)) return 'bad operation counts';
    if (op.reverted !== undefined && (!Array.isArray(op.reverted) || !op.reverted.every(isObjectId))) return 'bad reverted ids';
    if (op.rewound !== undefined && !isObjectId(op.rewound)) return 'bad rewound id';
    if (
      op.leftAlone !== undefined &&
      (!Array.isArray(op.leftAlone) || op.leftAlone.some((p) => typeof p !== 'string' || unsafePathReason(p)))
    )
      return 'bad left-alone paths';
    if (op.unrecorded !== undefined) {
      if (!Array.isArray(op.unrecorded) || op.unrecorded.length > UNRECORDED_KEPT) return 'bad unrecorded changes';
      for (const c of op.unrecorded as unknown[]) {
        if (!Array.isArray(c) || c.length !== 3 || typeof c[0] !== 'string' || unsafePathReason(c[0])) return 'bad unrecorded change';
        if (fileEntryProblem(c[1], isObjectId) ?? fileEntryProblem(c[2], isObjectId)) return 'bad unrecorded change';
      }
    }
  }
  if (r.parentTree !== undefined && !isObjectId(r.parentTree)) return 'bad parent tree';
  if (r.rules !== undefined && (typeof r.rules !== 'string' || !/^[0-9a-f]{24}$/.test(r.rules))) return 'bad rules id';
  if (r.formerIds !== undefined && (!Array.isArray(r.formerIds) || !r.formerIds.every(isObjectId))) return 'bad former ids';
  if (r.rewind !== undefined) {
    const w = r.rewind as Partial<RewindMark> | null;
    if (
      !w ||
      typeof w !== 'object' ||
      !nullableInt(w.parent) ||
      w.parent === null ||
      !REWIND_KINDS.includes(w.kind as RewindKind) ||
      !Number.isInteger(w.pending) ||
      !Number.isInteger(w.shell) ||
      r.turn === null ||
      w.parent >= r.turn
    )
      return 'bad rewind';
  }
  if (r.fork !== undefined) {
    const f = r.fork as Partial<ForkMark> | null;
    if (!f || typeof f !== 'object' || typeof f.session !== 'string' || f.session === '' || f.session === r.session || !nullableInt(f.turn))
      return 'bad fork';
  }
  if (r.origin !== undefined) {
    const o = r.origin as Partial<CheckpointOrigin> | null;
    if (!o || typeof o !== 'object' || !isRemoteLabel(o.remote) || !isShareId(o.ws) || !isShareId(o.writer) || !isObjectId(o.source))
      return 'bad origin';
  }
  return undefined;
}

/** Pure: parse ledger text. @public (tests use it) */
export function parseLedger(text: string): LedgerRead {
  const records: CheckpointRecord[] = [];
  const warnings: string[] = [];
  let newestSchema = 0;
  const lines = text.split('\n');
  const lastIndex = text.endsWith('\n') ? lines.length - 1 : lines.length;
  for (let i = 0; i < lastIndex; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    let parsed: Partial<CheckpointRecord>;
    try {
      parsed = JSON.parse(line) as Partial<CheckpointRecord>;
    } catch {
      warnings.push(`ledger line ${i + 1}: ${i === lines.length - 1 ? 'torn last line' : 'not JSON'}, skipped`);
      continue;
    }
    if (Number.isInteger(parsed?.v)) newestSchema = Math.max(newestSchema, parsed.v!);
    if (Number.isInteger(parsed?.v) && parsed.v! > LEDGER_SCHEMA) {
      warnings.push(`ledger line ${i + 1}: written by a newer git-ckpt (schema ${parsed.v}), skipped`);
      continue;
    }
    const problem = recordProblem(parsed);
    if (problem) {
      warnings.push(`ledger line ${i + 1}: ${problem}, skipped`);
      continue;
    }
    const record = parsed as CheckpointRecord;
    record.bytes ??= 0;
    record.changed ??= record.paths.length;
    record.skippedCount ??= record.skipped.length;
    records.push(record);
  }
  return { records, warnings, newestSchema };
}

export function readLedger(file: string): LedgerRead {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], warnings: [], newestSchema: 0 };
    throw new CkptError('store', `cannot read ledger ${file}: ${(err as Error).message}`);
  }
  return parseLedger(text);
}

/**
 * The latest valid record, reading only the file's tail: a snapshot on a long
 * ledger should not parse thousands of lines. Falls back to the whole file when
 * the tail holds no valid record.
 */
export function readLatest(file: string): { record?: CheckpointRecord; newestSchema: number } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { newestSchema: 0 };
    throw new CkptError('store', `cannot read ledger ${file}: ${(err as Error).message}`);
  }
  try {
    const size = fstatSync(fd).size;
    // A few records' worth first (every hook reads this); more only when the tail holds no valid one.
    for (const span of [16 * 1024, 256 * 1024]) {
      const want = Math.min(size, span);
      const buf = Buffer.alloc(want);
      readSync(fd, buf, 0, want, size - want);
      let text = buf.toString('utf8');
      if (want < size) text = text.slice(text.indexOf('\n') + 1);
      const tail = parseLedger(text);
      const record = tail.records.at(-1);
      if (record) return { record, newestSchema: tail.newestSchema };
      if (want === size) break;
    }
  } finally {
    closeSync(fd);
  }
  const all = readLedger(file);
  return { record: all.records.at(-1), newestSchema: all.newestSchema };
}

/** Refuse to write to a store that a newer git-ckpt has written. */
export function assertWritableSchema(newestSchema: number): void {
  if (newestSchema > LEDGER_SCHEMA) {
    throw new CkptError(
      'store',
      `this store was written by a newer git-ckpt (ledger schema ${newestSchema}, this version writes ${LEDGER_SCHEMA}); upgrade git-ckpt to write to it`,
    );
  }
}

export function appendRecord(file: string, record: CheckpointRecord): void {
  // Validated on write with the reader's own check: a record the reader would drop never lands.
  const problem = recordProblem(record);
  if (problem) throw new CkptError('internal', `refusing to write a ledger record that would not read back (${problem})`);
  const fd = openSync(file, 'a+', 0o600);
  try {
    // A torn last line (a writer killed mid-write) must not swallow this record.
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const torn = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 10;
    // One write call per line: appends from other processes cannot interleave inside it.
    appendFileSync(fd, `${torn ? '\n' : ''}${JSON.stringify(record)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
