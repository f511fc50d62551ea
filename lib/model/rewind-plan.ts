/**
 * Pure: what a rewind inside the agent left in the workspace, and what
 * following it would restore. The I/O that feeds it (tree diffs, who last
 * changed each path) is agents/rewind.ts.
 *
 * B is the state before the first turn left behind, E the state those turns
 * ended with, T the workspace now. The agent's own rewind may have put back
 * what its file tools wrote ("code and conversation"): those paths are at B
 * again, and what still differs is what it missed, the shell's changes. Or it
 * kept the files ("conversation only"): they are as E has them.
 */
import path from 'node:path';
import type { CheckpointRecord, RewindKind, RewindMark } from './ledger.js';
import type { TreeChange } from './tree.js';
import { turnsLeft, turnTree } from './turn-tree.js';

/** Whether an agent's tool is one whose writes the agent's own rewind puts back, and how its input names them. */
export type FileToolKind = (agent: string | null, tool: string) => 'path' | 'patch' | null;

export interface RewindScope {
  /** Serials of the turns left behind, oldest first, and where the first of them stood on its branch. */
  left: number[];
  firstPosition: number;
  /** B: the checkpoint holding the state before the first turn left behind (null: those turns changed nothing). */
  before: CheckpointRecord | null;
  /** E: the last checkpoint of the turns left behind that their own work made (not a session start between turns). */
  end: CheckpointRecord | null;
  /**
   * Paths the agent's file tools named in their input in those turns (a record with no input: the paths
   * its post changed, as far as the record lists them).
   */
  fileToolPaths: Set<string>;
  /** Records after B, oldest first: where each differing path was last changed. */
  since: CheckpointRecord[];
}

/**
 * Pure: the workspace paths a file tool's input summary names (hook-payload's `summarizeInput`): the path
 * (absolute, or relative to the workspace), or a patch's `A x, M y, D z` list. None when it names none
 * it can be sure of (a summary cut short, a path outside the workspace).
 */
function namedByInput(kind: 'path' | 'patch', input: string, root: string): string[] {
  const inWorkspace = (p: string) => {
    const rel = path.isAbsolute(p) ? path.relative(root, p) : path.normalize(p);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) && !rel.endsWith('…') ? [rel.split(path.sep).join('/')] : [];
  };
  if (kind === 'patch') return input.split(', ').flatMap((item) => (/^[AMDR] ./.test(item) ? inWorkspace(item.slice(2).trim()) : []));
  return inWorkspace(input);
}

/**
 * Pure: the turns a rewind at turn `turn` back to turn `parent` left behind, and the checkpoints around them.
 * `root` (the workspace) reads the paths the file tools' inputs name; `fileTool` tells them (registry.ts).
 */
export function rewindScope(
  records: readonly CheckpointRecord[],
  session: string,
  turn: number,
  parent: number,
  root: string,
  fileTool: FileToolKind,
): RewindScope {
  const tree = turnTree(records, session);
  const { left, firstPosition } = turnsLeft(tree.pathTo(turn - 1), parent);
  const leftSet = new Set(left);
  const ofLeft = records.filter((r) => r.session === session && r.turn !== null && leftSet.has(r.turn));
  const first = ofLeft[0];
  let before: CheckpointRecord | null = null;
  if (first) {
    const opens = first.kind === 'pre' || first.kind === 'turn' || first.phase === 'turn-start' || first.phase === 'pre';
    before = opens ? first : (records.find((r) => r.id === first.parent) ?? null);
  }
  const fileToolPaths = new Set<string>();
  // What the file tool was asked to write, not what its post captured: a hand edit made while it ran is in that post too.
  for (const r of ofLeft) {
    const kind = r.kind === 'post' && r.tool !== null ? fileTool(r.agent ?? null, r.tool) : null;
    if (kind === null) continue;
    const named = r.input ? namedByInput(kind, r.input, root) : r.paths.map((p) => p.path);
    for (const p of named) fileToolPaths.add(p);
  }
  const at = before ? records.indexOf(before) : -1;
  return {
    left,
    firstPosition,
    before,
    // What a resumed process's session start captured is the agent's restore between turns, not the turns' work.
    end: ofLeft.filter((r) => r.phase !== 'session-start' && r.phase !== 'turn-start').at(-1) ?? null,
    fileToolPaths,
    since: at < 0 ? [] : records.slice(at + 1),
  };
}

export interface RewindOutcome {
  mark: RewindMark;
  /** Paths to bring back to B: each last changed by a tool call of the turns left behind. */
  restorable: string[];
  /**
   * Of those, the ones followRewind=auto restores, which it can put down to the agent: named by a file
   * tool's input, made by those turns (absent from B, first seen in a post of theirs), or gone now (putting
   * B's back overwrites nothing). The others, files a shell call's post found changed (a hand edit made
   * while it ran is in that post too), are the user's to restore.
   */
  attributed: string[];
  /** Paths that differ from B but that something else changed since, with what. */
  kept: { path: string; why: string }[];
}

/**
 * Pure: the outcome, from the differences between B and the workspace now
 * (`now`), between B and E (`ended`), the paths changed since the last
 * checkpoint (`uncaptured`), and the record that last changed each differing
 * path (`writer`).
 */
export function rewindOutcome(
  scope: RewindScope,
  session: string,
  parent: number,
  input: {
    now: readonly TreeChange[];
    ended: readonly TreeChange[];
    uncaptured: ReadonlySet<string>;
    writer: ReadonlyMap<string, CheckpointRecord>;
    /** The oldest record since B that changed each differing path (what made a path B lacks). */
    firstWriter?: ReadonlyMap<string, CheckpointRecord>;
  },
): RewindOutcome {
  const left = new Set(scope.left);
  const differs = new Map(input.now.map((c) => [c.path, c]));
  const restorable: string[] = [];
  const attributed: string[] = [];
  const kept: RewindOutcome['kept'] = [];
  const byLeftCall = (r: CheckpointRecord | undefined) =>
    r !== undefined && r.session === session && r.turn !== null && left.has(r.turn) && r.kind === 'post';
  for (const change of input.now) {
    const writer = input.writer.get(change.path);
    if (input.uncaptured.has(change.path)) kept.push({ path: change.path, why: 'changed since the last checkpoint' });
    else if (!writer) kept.push({ path: change.path, why: 'changed before the turns left behind' });
    else if (byLeftCall(writer)) {
      restorable.push(change.path);
      const made = change.before === null && byLeftCall(input.firstWriter?.get(change.path));
      if (scope.fileToolPaths.has(change.path) || made || change.after === null) attributed.push(change.path);
    } else if (writer.session !== null && writer.session !== session)
      kept.push({ path: change.path, why: 'changed since by another session' });
    else kept.push({ path: change.path, why: 'changed since by you or another program' });
  }
  const written = input.ended.filter((c) => scope.fileToolPaths.has(c.path));
  let kind: RewindKind = 'unknown';
  if (written.length > 0) {
    const same = (a: TreeChange['after'], b: TreeChange['after']) => a?.oid === b?.oid && a?.mode === b?.mode;
    if (written.every((c) => !differs.has(c.path))) kind = 'code';
    else if (written.every((c) => differs.has(c.path) && same(differs.get(c.path)!.after, c.after))) kind = 'conversation';
  }
  const shell = restorable.filter((p) => !scope.fileToolPaths.has(p)).length;
  return { mark: { parent, kind, pending: restorable.length, shell }, restorable, attributed, kept };
}

/** Pure: the address of the state before the first turn a rewind left behind, while that rewind is the latest. */
export function leftBehindAddress(firstPosition: number, session: string): string {
  return `turn:${firstPosition}~1@${session.slice(0, 8)}`;
}

/** Pure: "turn 2" or "turns 2–3", on the branch the rewind left. */
export function leftTurnsText(scope: Pick<RewindScope, 'left' | 'firstPosition'>): string {
  const last = scope.firstPosition + scope.left.length - 1;
  return scope.left.length === 1 ? `turn ${scope.firstPosition}` : `turns ${scope.firstPosition}–${last}`;
}

/** A rewind inside the agent whose turns left behind still show in the workspace, as `status` and the web page tell it. */
export interface PendingRewind {
  session: string;
  agent: string | null;
  time: number;
  /** "turn 2" or "turns 2–3", on the branch the rewind left. */
  turns: string;
  /** Where the conversation went back to: before this turn. */
  beforeTurn: number;
  kind: RewindKind;
  pending: number;
  shell: number;
  /** The address of the state before the first turn left behind. */
  address: string;
}

/** How long a rewind's notice is shown. */
const NOTICE_MS = 24 * 3600 * 1000;

/**
 * Pure: each session's latest rewind that left changes in the workspace,
 * unless a restore, revert or undo came after it (the user acted) or it is a
 * day old.
 */
export function pendingRewinds(records: readonly CheckpointRecord[], now: number): PendingRewind[] {
  const out: PendingRewind[] = [];
  let lastOperation = -1;
  records.forEach((r, i) => {
    if (r.op !== undefined) lastOperation = i;
  });
  const sessions = new Set(records.filter((r) => r.rewind && r.session !== null).map((r) => r.session!));
  for (const session of sessions) {
    const tree = turnTree(records, session);
    const latest = tree.rewinds.at(-1);
    if (!latest?.record.rewind || latest.record.rewind.pending === 0) continue;
    if (records.indexOf(latest.record) < lastOperation || now - latest.record.time > NOTICE_MS) continue;
    const first = latest.firstPosition;
    const scope = { left: latest.left, firstPosition: first };
    out.push({
      session,
      agent: latest.record.agent ?? null,
      time: latest.record.time,
      turns: leftTurnsText(scope),
      beforeTurn: first,
      kind: latest.record.rewind.kind,
      pending: latest.record.rewind.pending,
      shell: latest.record.rewind.shell,
      address: leftBehindAddress(first, session),
    });
  }
  return out;
}
