/**
 * The index stamp: the shadow index's own stat data (nanosecond mtime, size,
 * inode) and the tree written from it, so a no-change snapshot skips
 * write-tree. It keeps its own bigint stamp rather than the store's statStamp:
 * git rewrites the index within one millisecond, and only the nanoseconds tell.
 */
import { readFileSync, statSync } from 'node:fs';
import { writeFileAtomic, type StorePaths } from '../store/store.js';

function indexStamp(paths: StorePaths): string | undefined {
  try {
    const st = statSync(paths.indexFile, { bigint: true });
    return `${st.mtimeNs}:${st.size}:${st.ino}`;
  } catch {
    return undefined;
  }
}

export interface Stamp {
  tree: string;
  /** When the index's stat data was last refreshed (ms since the epoch). */
  refreshed: number;
  /** When the index was last written by staging files (ms since the epoch). */
  staged: number;
}

/** The tree the index held after the last snapshot, if the index has not changed since. */
export function readStamp(paths: StorePaths): Stamp | undefined {
  try {
    const [stamp, tree, refreshed, staged] = readFileSync(paths.indexStamp, 'utf8').trim().split(' ');
    if (stamp && tree && stamp === indexStamp(paths)) return { tree, refreshed: Number(refreshed) || 0, staged: Number(staged) || 0 };
  } catch {
    /* no stamp */
  }
  return undefined;
}

export function writeStamp(paths: StorePaths, tree: string, times: { refreshed: number; staged: number }): void {
  const stamp = indexStamp(paths);
  if (stamp) writeFileAtomic(paths.indexStamp, `${stamp} ${tree} ${times.refreshed} ${times.staged}\n`);
}

/**
 * Whether an unchanged snapshot should refresh the index's stat data. Files
 * staged in the same instant the index was written are "racily clean", and so
 * is a file rewritten with the same bytes (`git stash && git stash pop`, a
 * build): every later scan re-hashes them, and no snapshot rewrites the index
 * because nothing changed. So: once, a little after files were staged, and at
 * most every REFRESH_EVERY_MS otherwise.
 */
export function refreshDue(stamp: Pick<Stamp, 'refreshed' | 'staged'> | undefined, now: number): boolean {
  if (!stamp) return true;
  if (stamp.staged > stamp.refreshed) return now - stamp.staged > RACY_SETTLE_MS;
  return now - stamp.refreshed > REFRESH_EVERY_MS;
}

/** Past this, files staged at the index's last write are no longer racy against a new write. */
const RACY_SETTLE_MS = 1500;

const REFRESH_EVERY_MS = 30_000;
