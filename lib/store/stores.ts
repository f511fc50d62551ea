/**
 * Every workspace store under the store root: its size, when it was last used,
 * and whether its workspace still exists. Stores of deleted workspaces can be
 * removed, each under its own lock.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { withLock } from './lock.js';
import { listDir } from './packs.js';
import { dirSize, storePaths, storeRoot, type StorePaths } from './store.js';

export interface StoreInfo {
  dir: string;
  /** The workspace it belongs to (null when the store does not say). */
  workspace: string | null;
  missing: boolean;
  bytes: number;
  /** The last write to its ledger or index (ms since the epoch). */
  lastUsed: number;
  checkpoints: number;
}

function mtime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Pure: a store folder's name as the store root holds them (`<name>-<hash>`), not a path. */
const STORE_NAME_RE = /^[^/\\\0.][^/\\\0]*$/;

/**
 * The workspace one store belongs to, by the store's folder name, reading only
 * that store's `workspace` file (not every store's sizes and ledgers, as
 * listStores does). Undefined when there is no such store or it does not say.
 */
export function storeWorkspace(name: string, env: NodeJS.ProcessEnv = process.env): { workspace: string; missing: boolean } | undefined {
  if (!STORE_NAME_RE.test(name) || name === 'backups') return undefined;
  const workspace = recordedWorkspace(storePaths(path.join(storeRoot(env), name)));
  return workspace ? { workspace, missing: !existsSync(workspace) } : undefined;
}

/** The workspace a store's `workspace` file names, or null (no file, or empty). */
function recordedWorkspace(paths: StorePaths): string | null {
  try {
    return readFileSync(paths.workspaceFile, 'utf8').replace(/\n$/, '') || null;
  } catch {
    return null;
  }
}

export function listStores(env: NodeJS.ProcessEnv = process.env): StoreInfo[] {
  const root = storeRoot(env);
  const out: StoreInfo[] = [];
  for (const name of listDir(root).sort()) {
    const paths = storePaths(path.join(root, name));
    if (!existsSync(paths.workspaceFile) && !existsSync(paths.gitDir)) continue;
    const workspace = recordedWorkspace(paths);
    let checkpoints = 0;
    try {
      checkpoints = readFileSync(paths.ledger, 'utf8').split('\n').filter(Boolean).length;
    } catch {
      /* none */
    }
    out.push({
      dir: paths.dir,
      workspace,
      missing: workspace !== null && !existsSync(workspace),
      bytes: dirSize(paths.dir),
      lastUsed: Math.max(mtime(paths.ledger), mtime(paths.indexFile), mtime(paths.dir)),
      checkpoints,
    });
  }
  return out;
}

/** Remove the stores whose workspace no longer exists (each under its lock); returns what was (or would be) removed. */
export async function pruneMissingStores(env: NodeJS.ProcessEnv = process.env, dryRun = false): Promise<StoreInfo[]> {
  const gone = listStores(env).filter((s) => s.missing);
  if (dryRun) return gone;
  for (const store of gone) {
    await withLock(storePaths(store.dir).lock, 5000, async () => {
      // Checked again under the lock: the workspace may have come back.
      if (store.workspace && existsSync(store.workspace)) return;
      rmSync(store.dir, { recursive: true, force: true });
    });
  }
  return gone.filter((s) => !existsSync(s.dir));
}
