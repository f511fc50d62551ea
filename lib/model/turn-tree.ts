/**
 * Pure: a session's turns as a tree. A record's `turn` is the turn's serial in
 * its session, given in the order prompts came (1, 2, 3, …), and never reused.
 * Without a rewind each turn follows the one before it, and serial and
 * position agree. When the user rewinds the conversation inside the agent,
 * the next turn continues from an earlier one: the checkpoint where git-ckpt
 * noticed carries `rewind.parent`, the serial of the turn the conversation
 * now continues from (0: from before the first prompt). The turns after that
 * parent on the old branch are left behind.
 *
 * People count turns on a branch, not serials: `turn:N` is the Nth prompt of
 * the current branch, `turn:N~K` the Nth prompt of the branch that was
 * current K rewinds ago.
 */
import { turnTitleKey, type CheckpointRecord } from './ledger.js';

export interface TurnTree {
  /** The branch that ends at a turn: serials, root first. */
  pathTo(leaf: number): number[];
  /** Branches, newest first: `branches[0]` is the current one, `branches[k]` the one current k rewinds ago (serials, root first). */
  branches: number[][];
  /** The turns the rewinds left behind: each rewind's marker turn, its parent, the serials it left and where the first stood. */
  rewinds: { turn: number; parent: number; left: number[]; firstPosition: number; record: CheckpointRecord }[];
}

/** Pure: the turn tree of one session, from its records in ledger order. */
export function turnTree(records: readonly CheckpointRecord[], session: string): TurnTree {
  const parents: Record<number, number> = {};
  const markers: { turn: number; parent: number; record: CheckpointRecord }[] = [];
  let newest = 0;
  for (const r of records) {
    if (r.session !== session || r.turn === null) continue;
    newest = Math.max(newest, r.turn);
    // A turn's first marker counts: a later event of the same turn repeats what the first one saw.
    if (r.rewind && parents[r.turn] === undefined && r.rewind.parent < r.turn) {
      parents[r.turn] = r.rewind.parent;
      markers.push({ turn: r.turn, parent: r.rewind.parent, record: r });
    }
  }
  const pathTo = (leaf: number) => branchTo(leaf, parents);
  // Each rewind left the branch that ended at the turn before its marker turn.
  const branches = [pathTo(newest), ...[...markers].reverse().map((m) => pathTo(m.turn - 1))];
  const rewinds = markers.map((m) => ({ ...m, ...turnsLeft(pathTo(m.turn - 1), m.parent) }));
  return { pathTo, branches, rewinds };
}

/** Pure: the turns of a branch after `parent` (0: all of them), and the position of the first. */
export function turnsLeft(branch: readonly number[], parent: number): { left: number[]; firstPosition: number } {
  const keep = parent === 0 ? 0 : branch.indexOf(parent) + 1;
  return { left: branch.slice(keep), firstPosition: keep + 1 };
}

/** Pure: the branch that ends at `leaf`, from the parents the rewinds gave (serial → serial; the others follow the turn before). */
export function branchTo(leaf: number, parents: Readonly<Record<string, number>>): number[] {
  const path: number[] = [];
  for (let t = leaf; t > 0; t = parents[t] ?? t - 1) path.push(t);
  return path.reverse();
}

/** Pure: the serial of the Nth turn of branch `back` (0: the current one), or undefined. */
export function serialAt(tree: TurnTree, position: number, back = 0): number | undefined {
  return tree.branches[back]?.[position - 1];
}

/**
 * Pure: how people name a serial: its position on the newest branch that holds
 * it, `N` on the current branch and `N~K` on the one current K rewinds ago.
 * @public (tests use it)
 */
export function turnLabel(tree: TurnTree, serial: number): string {
  for (let back = 0; back < tree.branches.length; back++) {
    const at = tree.branches[back]!.indexOf(serial);
    if (at >= 0) return back === 0 ? String(at + 1) : `${at + 1}~${back}`;
  }
  return String(serial);
}

/** Pure: the label of each turn of the sessions whose records hold a rewind (keyed as turn titles are). */
/** Pure: how people name a session's turn (its serial) among `turnLabels`: `2`, or `2~1` on a branch a rewind left. */
export function labelOfTurn(labels: Readonly<Record<string, string>>, session: string | null, serial: number): string {
  return (session === null ? undefined : labels[turnTitleKey(session, serial)]) ?? String(serial);
}

export function turnLabels(records: readonly CheckpointRecord[]): Record<string, string> {
  const labels: Record<string, string> = {};
  const sessions = new Set(records.filter((r) => r.rewind && r.session !== null).map((r) => r.session!));
  for (const session of sessions) {
    const tree = turnTree(records, session);
    const serials = new Set(records.filter((r) => r.session === session && r.turn !== null).map((r) => r.turn!));
    for (const serial of serials) labels[turnTitleKey(session, serial)] = turnLabel(tree, serial);
  }
  return labels;
}
