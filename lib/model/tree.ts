/**
 * Pure: the data every layer shares: a tree entry (mode and blob), what a
 * path should become, a tree-to-tree change, what the disk holds at a path,
 * and the actions a plan counts.
 */

export interface TreeEntry {
  /** git mode: 100644, 100755, 120000 (symlink) or 160000 (gitlink). */
  mode: string;
  oid: string;
}

/** What a path should become: an entry, or absent. */
export type Want = TreeEntry | null;

export type DiskKind = 'file' | 'symlink' | 'dir' | 'missing' | 'other';

export interface DiskFact {
  kind: DiskKind;
  /** The first ancestor that is not a real directory (a symlink, a file …). */
  blocker?: { path: string; kind: DiskKind };
  /** Non-directory entries below a directory that stands where a file is wanted. */
  dirFiles?: string[];
  /** Uncaptured content standing where something is wanted, as a tree entry (compared, never written). */
  entry?: TreeEntry;
}

export type Action = 'restore' | 'recreate' | 'delete' | 'unchanged' | 'skip';

export type ActionCounts = Record<Action, number>;

export const GITLINK = '160000';
export const SYMLINK = '120000';

export function sameEntry(a: TreeEntry | undefined | null, b: TreeEntry | undefined | null): boolean {
  if (!a || !b) return !a && !b;
  return a.mode === b.mode && a.oid === b.oid;
}

/** One path of a tree-to-tree diff: its entry before and after (null when absent). */
export interface TreeChange {
  path: string;
  before: TreeEntry | null;
  after: TreeEntry | null;
}
