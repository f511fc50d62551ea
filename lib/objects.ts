/**
 * The shadow repository's objects outside any checkpoint's view: loose
 * objects, packs and their `.keep` marks, what killed processes leave, and the
 * blobs the shadow index names.
 */
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, splitZ } from './runner.js';
import type { StorePaths } from './store.js';

/** The empty tree: what a first checkpoint's change is computed against. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const PACK_FILE = /^pack-([0-9a-f]{40,64})\.(pack|idx|rev|bitmap|keep|mtimes|promisor)$/;

/** Our own temporary files older than this are debris (younger ones may belong to a live writer). */
const STALE_TMP_MS = 60_000;

export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export function packDir(gitDir: string): string {
  return path.join(gitDir, 'objects', 'pack');
}

/** Pack names (the hash part of pack-<hash>.pack) present now. */
export function packNames(gitDir: string): string[] {
  const names: string[] = [];
  for (const f of listDir(packDir(gitDir))) {
    const m = PACK_FILE.exec(f);
    if (m && m[2] === 'pack') names.push(m[1]!);
  }
  return names;
}

/** Mark every complete pack `.keep`, so git's own repack and gc never rewrite or drop it. */
export function keepAllPacks(gitDir: string): void {
  const dir = packDir(gitDir);
  const files = new Set(listDir(dir));
  for (const name of packNames(gitDir)) {
    if (files.has(`pack-${name}.idx`) && !files.has(`pack-${name}.keep`)) writeFileSync(path.join(dir, `pack-${name}.keep`), 'git-ckpt\n');
  }
}

/** Every loose object id (one readdir per fan-out folder). */
export function looseObjects(gitDir: string): string[] {
  const objects = path.join(gitDir, 'objects');
  const ids: string[] = [];
  for (const dir of listDir(objects)) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of listDir(path.join(objects, dir))) {
      if (/^[0-9a-f]{38}$|^[0-9a-f]{62}$/.test(name)) ids.push(dir + name);
    }
  }
  return ids;
}

export function looseObjectPath(gitDir: string, id: string): string {
  return path.join(gitDir, 'objects', id.slice(0, 2), id.slice(2));
}

/**
 * What killed processes leave: git's temporary packs and objects and its index
 * lock, and (with `storeFiles`) our own temporary files and half-made repositories.
 * Only call while holding the workspace lock.
 */
export function findDebris(paths: StorePaths, storeFiles: boolean, now = Date.now()): string[] {
  const found: string[] = [];
  const objects = path.join(paths.gitDir, 'objects');
  const packs = packDir(paths.gitDir);
  for (const name of listDir(packs)) if (name.startsWith('tmp_') || name.startsWith('.tmp-')) found.push(path.join(packs, name));
  for (const name of listDir(objects)) {
    if (name.startsWith('tmp_objdir') || name.startsWith('incoming-')) found.push(path.join(objects, name));
    else if (/^[0-9a-f]{2}$/.test(name))
      for (const inner of listDir(path.join(objects, name))) if (inner.startsWith('tmp_obj_')) found.push(path.join(objects, name, inner));
  }
  found.push(
    ...listDir(paths.dir)
      .filter((n) => n === 'index.lock')
      .map((n) => path.join(paths.dir, n)),
  );
  if (storeFiles) {
    for (const name of listDir(paths.dir)) {
      if (!/\.tmp-\d+/.test(name) && !/^git\.init-\d+$/.test(name)) continue;
      const full = path.join(paths.dir, name);
      try {
        if (now - statSync(full).mtimeMs > STALE_TMP_MS) found.push(full);
      } catch {
        /* gone */
      }
    }
  }
  return found;
}

/** The blobs the shadow index names: the next snapshot trusts its stat cache for unchanged files, so they must stay. */
export async function indexBlobs(paths: StorePaths): Promise<string[]> {
  const index = await git({
    verb: 'ls-files',
    args: ['-s', '-z'],
    gitDir: paths.gitDir,
    indexFile: paths.indexFile,
    cwd: paths.dir,
    okCodes: [128],
  });
  const blobs: string[] = [];
  for (const entry of splitZ(index.stdout)) {
    const m = /^(\d{6}) ([0-9a-f]{40,64}) \d\t/.exec(entry);
    if (m && m[1] !== '160000') blobs.push(m[2]!);
  }
  return blobs;
}
