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

/** What a journal or an operation record may say a file was or becomes: a file, an executable or a symlink (or null: absent). */
const FILE_MODES = new Set(['100644', '100755', '120000']);

/** Pure: why a stored entry (a journal's, an operation record's) is unusable, or undefined; null (absent) is fine. */
export function fileEntryProblem(e: unknown, isId: (oid: unknown) => boolean): string | undefined {
  if (e === null) return undefined;
  if (typeof e !== 'object') return 'entry is not an object';
  const { mode, oid } = e as TreeEntry;
  if (!FILE_MODES.has(mode)) return `bad mode ${JSON.stringify(mode)}`;
  if (!isId(oid)) return 'bad object id';
  return undefined;
}

/** One path an operation changed: its entry before and after (null: absent). */
export type PathChange = [path: string, before: TreeEntry | null, after: TreeEntry | null];

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
