/**
 * Pure: a three-way revert's plan from git's merge result: what each path
 * must become, and why, in words: `reverted` where the result is what the
 * path held before the reverted change, `merged, keeping later edits` where
 * later edits stay, and each conflict with its line ranges or why it is whole.
 */
import { withExtraFiles, type Plan, type PlannedFile } from './restore-plan.js';
import { sameEntry, type TreeChange, type TreeEntry, type Want } from '../model/tree.js';
import { shortId } from '../model/short-ids.js';

/** One conflicted path: its line ranges in the present file, or why it conflicts whole. */
export interface RevertConflict {
  path: string;
  /** 1-based inclusive line ranges of the present file that overlap the reverted change. */
  ranges: [number, number][];
  /** Set when the file conflicts whole (binary, symlink, mode, deleted on one side, file versus directory). */
  whole?: string;
  /** The checkpoint whose revert conflicted here. */
  checkpoint: string;
}

/** Pure: every path whose merge result differs from the live tree, with the entry it must become. */
export function revertWant(live: ReadonlyMap<string, TreeEntry>, result: ReadonlyMap<string, TreeEntry>): Map<string, Want> {
  const want = new Map<string, Want>();
  for (const p of new Set([...live.keys(), ...result.keys()]))
    if (!sameEntry(live.get(p) ?? null, result.get(p) ?? null)) want.set(p, result.get(p) ?? null);
  return want;
}

/**
 * Pure: the reconciled plan labelled: each write says whether it is a clean
 * revert or a merge, each conflict its ranges (kept, or with markers), and the
 * paths the reverted changes touched that need nothing count as unchanged.
 */
export function labelRevertPlan(input: {
  merged: Plan;
  want: ReadonlyMap<string, Want>;
  /** Each reverted checkpoint's own change, newest first. */
  changes: readonly (readonly TreeChange[])[];
  conflicts: readonly RevertConflict[];
  markers: boolean;
}): Plan {
  const { merged, want, conflicts } = input;
  // What each path held before the oldest reverted change to it: a result equal to it is a clean revert.
  const original = new Map<string, TreeEntry | null>();
  for (const changes of input.changes) for (const c of changes) original.set(c.path, c.before);
  const conflicted = new Map(conflicts.map((c) => [c.path, c]));
  const files = merged.files.map((f): PlannedFile => {
    const conflict = conflicted.get(f.path);
    if (conflict)
      return {
        ...f,
        reason:
          input.markers && !conflict.whole
            ? `conflict markers written: ${conflictText(conflict)}`
            : `conflict: ${conflictText(conflict)}; the other reverted changes to it were applied`,
      };
    if (f.action === 'skip' || f.action === 'unchanged') return f;
    const before = original.get(f.path);
    const clean = before !== undefined && sameEntry(want.get(f.path) ?? null, before);
    return { ...f, reason: clean ? 'reverted' : 'merged, keeping later edits' };
  });
  const kept = conflicts
    .filter((c) => !want.has(c.path))
    .map((c): PlannedFile => ({ path: c.path, action: 'skip', reason: `conflict: ${conflictText(c)}; left as it is` }));
  const settled = [...original.keys()]
    .filter((p) => !want.has(p) && !conflicted.has(p) && !conflicts.some((c) => p.startsWith(`${c.path}/`)))
    .map((p): PlannedFile => ({ path: p, action: 'unchanged' }));
  return withExtraFiles({ ...merged, files }, [...firstPerPath(kept), ...settled], []);
}

/** Pure: a conflict in words: its line ranges in the present file, or why it is whole. */
function conflictText(c: RevertConflict): string {
  if (c.whole) return `${c.whole} (reverting ${shortId(c.checkpoint)})`;
  const ranges = c.ranges.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
  return `line${c.ranges.length === 1 && c.ranges[0]![0] === c.ranges[0]![1] ? '' : 's'} ${ranges} changed since (reverting ${shortId(c.checkpoint)})`;
}

/** The first conflict per path (a range revert can meet one path in several steps). */
function firstPerPath(files: PlannedFile[]): PlannedFile[] {
  const seen = new Set<string>();
  return files.filter((f) => !seen.has(f.path) && seen.add(f.path));
}

/**
 * A tree held in memory while a revert walks its steps: its entries, and how many entries each
 * folder holds (so "is there a folder here" costs a lookup, not a scan).
 */
export class TreeInMemory {
  readonly entries: Map<string, TreeEntry>;
  private readonly folders = new Map<string, number>();

  constructor(entries: ReadonlyMap<string, TreeEntry>) {
    this.entries = new Map(entries);
    for (const p of this.entries.keys()) this.count(p, 1);
  }

  hasFolder(folder: string): boolean {
    return folder === '' || (this.folders.get(folder) ?? 0) > 0;
  }

  set(p: string, entry: TreeEntry | null): void {
    const had = this.entries.has(p);
    if (entry) this.entries.set(p, entry);
    else this.entries.delete(p);
    if (had !== (entry !== null)) this.count(p, entry ? 1 : -1);
  }

  private count(p: string, by: number): void {
    for (let slash = p.lastIndexOf('/'); slash > 0; slash = p.lastIndexOf('/', slash - 1)) {
      const folder = p.slice(0, slash);
      this.folders.set(folder, (this.folders.get(folder) ?? 0) + by);
    }
  }
}

/**
 * Pure: a step's revert when git's three-way merge (base: the checkpoint, ours: the present,
 * theirs: its parent) can only give one answer, so no git process is needed: every path the
 * checkpoint changed is still as it left it (the merge takes the parent's side there, and the
 * present's everywhere else); no path was both added and deleted by it (git's rename detection
 * has no pair to find); and each path it gives back lands in a folder the present still has and
 * not on a folder (no directory rename or file/folder clash for git to decide). The entries to
 * set, or undefined when git must merge. Tested against git's merge in test/revert.test.mjs.
 */
export function quickRevert(present: TreeInMemory, changes: readonly TreeChange[]): Map<string, TreeEntry | null> | undefined {
  const added = changes.some((c) => !c.before);
  const deleted = changes.some((c) => !c.after);
  if (added && deleted) return undefined;
  const result = new Map<string, TreeEntry | null>();
  for (const c of changes) {
    if (!sameEntry(present.entries.get(c.path) ?? null, c.after)) return undefined;
    if (!c.after) {
      const slash = c.path.lastIndexOf('/');
      if (!present.hasFolder(slash < 0 ? '' : c.path.slice(0, slash)) || present.hasFolder(c.path)) return undefined;
    }
    result.set(c.path, c.before);
  }
  return result;
}
