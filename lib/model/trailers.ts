/**
 * Pure: a checkpoint's metadata as `Ckpt-*` trailers of its commit message, and
 * back. The writer and the parser live together so that every field the ledger
 * keeps can be recovered by `fsck --rebuild-ledger` (a round-trip test holds
 * them to it). The message and every trailer value are flattened to one line,
 * and only the last paragraph is read back as trailers: text from a payload or a
 * `-m` message can neither forge another trailer nor start a trailer block.
 */
import {
  LEDGER_SCHEMA,
  OPERATION_KINDS,
  recordProblem,
  REWIND_KINDS,
  type CheckpointKind,
  type CheckpointRecord,
  type OperationKind,
  type RewindKind,
} from './ledger.js';
import { isObjectId } from './oid.js';
import { oneLine } from './text.js';

export const CHECKPOINT_AUTHOR = { name: 'git-ckpt', email: 'git-ckpt@localhost.invalid' };

/** Trailer values are one line (see oneLine); ids and names at most this long, texts at most TEXT_MAX. */
const VALUE_MAX = 200;
const TEXT_MAX = 500;

/** Text fields kept as trailers, with their trailer names. */
const TEXT_TRAILERS = [
  ['Agent', 'agent'],
  ['Phase', 'phase'],
  ['Call', 'call'],
  ['Input', 'input'],
  ['Error', 'error'],
  ['Agent-Turn', 'agentTurn'],
  ['Transcript', 'transcript'],
  ['Prompt', 'prompt'],
] as const;

type RecordMeta = Omit<CheckpointRecord, 'id' | 'tree' | 'parent' | 'v'>;

/** Pure: the commit message, with the metadata as trailers. */
export function commitMessage(record: RecordMeta): string {
  const trailers: string[] = [`Ckpt-Kind: ${record.kind}`, `Ckpt-Time: ${record.time}`];
  if (record.session !== null) trailers.push(`Ckpt-Session: ${oneLine(record.session, VALUE_MAX)}`);
  if (record.turn !== null) trailers.push(`Ckpt-Turn: ${record.turn}`);
  if (record.step !== null) trailers.push(`Ckpt-Step: ${record.step}`);
  if (record.tool !== null) trailers.push(`Ckpt-Tool: ${oneLine(record.tool, VALUE_MAX)}`);
  trailers.push(`Ckpt-Stats: +${record.stats.added} ~${record.stats.modified} -${record.stats.deleted}`);
  if (record.op) trailers.push(`Ckpt-Target: ${record.op.target}`, `Ckpt-Guard: ${record.op.guard}`);
  for (const [name, field] of TEXT_TRAILERS) {
    const value = record[field];
    if (value) trailers.push(`Ckpt-${name}: ${oneLine(value, TEXT_MAX)}`);
  }
  if (record.failed) trailers.push('Ckpt-Failed: true');
  if (record.mayIncludeLater) trailers.push('Ckpt-May-Include-Later: true');
  if (record.subagent)
    trailers.push(
      `Ckpt-Subagent: ${oneLine(record.subagent.id, VALUE_MAX)}${record.subagent.type ? ` ${oneLine(record.subagent.type, VALUE_MAX)}` : ''}`,
    );
  if (record.formerIds?.length) trailers.push(`Ckpt-Former-Ids: ${record.formerIds.join(' ')}`);
  if (record.rewind) {
    const w = record.rewind;
    trailers.push(`Ckpt-Rewind: parent=${w.parent} kind=${w.kind} pending=${w.pending} shell=${w.shell}`);
  }
  // The session last: an id is one line but may hold spaces.
  if (record.fork) trailers.push(`Ckpt-Fork: turn=${record.fork.turn ?? '-'} session=${oneLine(record.fork.session, VALUE_MAX)}`);
  return `${oneLine(record.message || `${record.kind} checkpoint`, TEXT_MAX)}\n\n${trailers.join('\n')}\n`;
}

/** A commit's raw text read: its tree, first parent, author line, subject, and its `Ckpt-*` trailers by name. */
export interface CommitText {
  tree: string | undefined;
  parent: string | null;
  author: string;
  subject: string;
  trailers: Map<string, string>;
}

/** Pure: a commit's raw text (`cat-file commit`) read into its parts. */
export function readCommitText(raw: string): CommitText {
  const split = raw.indexOf('\n\n');
  const header = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split + 2);
  let tree: string | undefined;
  let parent: string | null = null;
  let author = '';
  for (const line of header.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ') && parent === null) parent = line.slice(7);
    else if (line.startsWith('author ')) author = line;
  }
  const trailers = new Map<string, string>();
  // git's trailer block: the last paragraph, never the subject.
  const paragraphs = body.replace(/\s+$/, '').split(/\n[ \t]*\n/);
  const trailerBlock = paragraphs.length > 1 ? paragraphs.at(-1)! : '';
  for (const line of trailerBlock.split('\n')) {
    const m = /^Ckpt-([A-Za-z-]+): (.*)$/.exec(line);
    if (m) trailers.set(m[1]!, m[2]!);
  }
  return { tree, parent, author, subject: body.split('\n')[0] ?? '', trailers };
}

/** Whether a commit is git-ckpt's own (its fixed author). */
export function isCheckpointAuthor(author: string): boolean {
  return author.includes(`<${CHECKPOINT_AUTHOR.email}>`);
}

/** Pure: a ledger record from a checkpoint commit's raw text, or undefined when it is not one of ours. */
export function recordFromCommit(id: string, raw: string): CheckpointRecord | undefined {
  const { tree, parent, author, subject, trailers } = readCommitText(raw);
  if (!tree || !isCheckpointAuthor(author)) return undefined;
  const kind = trailers.get('Kind') as CheckpointKind | undefined;
  const time = Number(trailers.get('Time'));
  if (!kind || !Number.isFinite(time)) return undefined;
  const int = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);
  const stats = /^\+(\d+) ~(\d+) -(\d+)$/.exec(trailers.get('Stats') ?? '');
  const record: CheckpointRecord = {
    v: LEDGER_SCHEMA,
    id,
    parent,
    tree,
    time,
    session: trailers.get('Session') ?? null,
    turn: int(trailers.get('Turn')),
    step: int(trailers.get('Step')),
    tool: trailers.get('Tool') ?? null,
    kind,
    message: subject,
    stats: { added: Number(stats?.[1] ?? 0), modified: Number(stats?.[2] ?? 0), deleted: Number(stats?.[3] ?? 0) },
    bytes: 0,
    paths: [],
    changed: stats ? Number(stats[1]) + Number(stats[2]) + Number(stats[3]) : 0,
    skipped: [],
    skippedCount: 0,
  };
  for (const [name, field] of TEXT_TRAILERS) {
    const v = trailers.get(name);
    if (v !== undefined) record[field] = v;
  }
  if (trailers.get('Failed') === 'true') record.failed = true;
  if (trailers.get('May-Include-Later') === 'true') record.mayIncludeLater = true;
  const subagent = /^(\S+)(?: (.+))?$/.exec(trailers.get('Subagent') ?? '');
  if (subagent) record.subagent = { id: subagent[1]!, type: subagent[2] ?? null };
  const former = (trailers.get('Former-Ids') ?? '').split(' ').filter(isObjectId);
  if (former.length) record.formerIds = former;
  const rewind = /^parent=(\d+) kind=([a-z]+) pending=(\d+) shell=(\d+)$/.exec(trailers.get('Rewind') ?? '');
  if (rewind && REWIND_KINDS.includes(rewind[2] as RewindKind))
    record.rewind = { parent: Number(rewind[1]), kind: rewind[2] as RewindKind, pending: Number(rewind[3]), shell: Number(rewind[4]) };
  const fork = /^turn=(\d+|-) session=(.+)$/.exec(trailers.get('Fork') ?? '');
  if (fork) record.fork = { session: fork[2]!, turn: fork[1] === '-' ? null : Number(fork[1]) };
  if (OPERATION_KINDS.includes(kind as OperationKind)) {
    const target = trailers.get('Target');
    const guard = trailers.get('Guard');
    if (!isObjectId(target) || !isObjectId(guard)) return undefined;
    record.op = {
      target,
      guard,
      journal: '0',
      counts: { restore: 0, recreate: 0, delete: 0, unchanged: 0, skip: 0, failed: 0 },
      failures: [],
      leftovers: 0,
    };
  }
  return recordProblem(record) ? undefined : record;
}
