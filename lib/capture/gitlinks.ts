/**
 * The shadow index's gitlinks (nested repositories), and those whose folder is
 * no longer a repository (a vendored clone whose .git was removed): git reports
 * no change for such a gitlink and lists nothing below it, so its files would
 * never be captured. The list is cached against the tree the index holds (the
 * index stamp's) and carried from checkpoint to checkpoint by their diffs, so a
 * snapshot spawns no git for it in the steady state.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gitCall, type StoreContext } from '../store/context.js';
import { tryLstat } from './disk.js';
import { readStamp } from './index-stamp.js';
import { parseStageEntry } from '../store/packs.js';
import { isUtf8Path } from '../model/paths.js';
import { GITLINK, type TreeChange } from '../model/tree.js';
import { git, splitZ } from '../git/runner.js';
import { writeFileAtomic, type StorePaths } from '../store/store.js';

interface GitlinkCache {
  tree: string;
  paths: string[];
}

function readCache(paths: StorePaths): GitlinkCache | undefined {
  try {
    const value = JSON.parse(readFileSync(paths.gitlinks, 'utf8')) as Partial<GitlinkCache>;
    if (typeof value.tree === 'string' && Array.isArray(value.paths) && value.paths.every((p) => typeof p === 'string'))
      return { tree: value.tree, paths: value.paths };
  } catch {
    /* none yet */
  }
  return undefined;
}

function writeCache(paths: StorePaths, cache: GitlinkCache): void {
  try {
    writeFileAtomic(paths.gitlinks, JSON.stringify(cache));
  } catch {
    /* recomputed next time */
  }
}

/** The nested repositories the last checkpoints held, from the cache alone (no git call; empty when there is none). */
export function cachedGitlinks(paths: StorePaths): string[] {
  return readCache(paths)?.paths ?? [];
}

/** The gitlinks the index holds: cached while the index still holds the stamped tree, else one `ls-files -s`. */
async function indexGitlinks(ctx: StoreContext, signal: AbortSignal): Promise<string[]> {
  // A scratch index is a copy of the shadow index made just now: the same entries.
  const indexFile = ctx.scratch?.indexFile ?? ctx.paths.indexFile;
  if (!existsSync(indexFile)) return [];
  const stamp = readStamp(ctx.paths);
  const cached = readCache(ctx.paths);
  if (stamp && cached?.tree === stamp.tree) return cached.paths;
  const { stdout } = await git(gitCall(ctx, { verb: 'ls-files', args: ['-s', '-z'], signal }));
  const found: string[] = [];
  for (const entry of splitZ(stdout)) {
    const parsed = parseStageEntry(entry);
    if (parsed?.mode === GITLINK) found.push(parsed.path);
  }
  if (stamp && !ctx.scratch) writeCache(ctx.paths, { tree: stamp.tree, paths: found });
  return found;
}

/** Gitlinks whose folder is still there but holds no `.git`: plain files now. */
export async function staleGitlinks(ctx: StoreContext, signal: AbortSignal): Promise<string[]> {
  const links = await indexGitlinks(ctx, signal);
  return links.filter((p) => {
    if (!isUtf8Path(p)) return false;
    const full = path.join(ctx.location.root, p);
    return tryLstat(full)?.isDirectory() && !existsSync(path.join(full, '.git'));
  });
}

/**
 * After a checkpoint: carry the cached list from its parent's tree to its own
 * through their diff (a first checkpoint's diff is its whole tree).
 */
export function carryGitlinks(paths: StorePaths, parentTree: string | undefined, tree: string, changes: readonly TreeChange[]): void {
  const cached = parentTree ? readCache(paths) : { tree: parentTree, paths: [] };
  if (!cached || cached.tree !== parentTree) return;
  const links = new Set(cached.paths);
  for (const c of changes) {
    if (c.before?.mode === GITLINK) links.delete(c.path);
    if (c.after?.mode === GITLINK) links.add(c.path);
  }
  writeCache(paths, { tree, paths: [...links] });
}
