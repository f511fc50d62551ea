/**
 * The shadow repository's objects as files of the store: loose objects, packs
 * and their `.keep` marks, what killed processes leave, the blobs the shadow
 * index names, and what records need kept (gc, forget, the disk-full cleanup).
 */
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readLedger, type CheckpointRecord } from '../model/ledger.js';
import { isObjectId } from '../model/oid.js';
import { git, splitZ } from '../git/runner.js';
import { OBJECT_CACHES, type StorePaths } from './store.js';

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

type ObjectDirs = Pick<StorePaths, 'objectsDir' | 'packDir'>;

/** Pack names (the hash part of pack-<hash>.pack) present now. */
export function packNames(paths: ObjectDirs): string[] {
  const names: string[] = [];
  for (const f of listDir(paths.packDir)) {
    const m = PACK_FILE.exec(f);
    if (m && m[2] === 'pack') names.push(m[1]!);
  }
  return names;
}

/** Mark every complete pack `.keep`, so git's own repack and gc never rewrite or drop it. */
export function keepAllPacks(paths: ObjectDirs): void {
  const dir = paths.packDir;
  const files = new Set(listDir(dir));
  for (const name of packNames(paths)) {
    if (files.has(`pack-${name}.idx`) && !files.has(`pack-${name}.keep`)) writeFileSync(path.join(dir, `pack-${name}.keep`), 'git-ckpt\n');
  }
}

/** Every loose object id (one readdir per fan-out folder). */
export function looseObjects(paths: ObjectDirs): string[] {
  const objects = paths.objectsDir;
  const ids: string[] = [];
  for (const dir of listDir(objects)) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of listDir(path.join(objects, dir))) {
      if (/^[0-9a-f]{38}$|^[0-9a-f]{62}$/.test(name)) ids.push(dir + name);
    }
  }
  return ids;
}

export function looseObjectPath(paths: ObjectDirs, id: string): string {
  return path.join(paths.objectsDir, id.slice(0, 2), id.slice(2));
}

/**
 * What killed processes leave: git's temporary packs and objects and its index
 * lock, and (with `storeFiles`) our own temporary files and half-made repositories.
 * Only call while holding the workspace lock.
 */
export function findDebris(paths: StorePaths, storeFiles: boolean, now = Date.now()): string[] {
  const found: string[] = [];
  const objects = paths.objectsDir;
  const packs = paths.packDir;
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

/** What records need kept whole: each checkpoint's commit, and the tree of a parent gc dropped (its revert's base). */
export function recordObjects(records: readonly CheckpointRecord[]): string[] {
  return records.flatMap((r) => (r.parentTree ? [r.id, r.parentTree] : [r.id]));
}

/**
 * pack-objects' input for everything the given commits and trees need (their
 * trees and blobs; not their parents), with paths for delta hints, plus the
 * blobs the shadow index names and `extraBlobs` that the store holds (an
 * interrupted operation's journal names blobs no checkpoint holds yet). A
 * start that is gone (a degraded checkpoint) is left out: rev-list stops on one.
 */
export async function neededObjects(paths: StorePaths, starts: readonly string[], extraBlobs: readonly string[] = []): Promise<string> {
  const present = await presentObjects(paths, [...starts, ...sharedCommits(paths)]);
  const listed = await git({
    verb: 'rev-list',
    args: ['--objects', '--no-walk', '--missing=allow-any', '--stdin'],
    gitDir: paths.gitDir,
    cwd: paths.dir,
    input: `${present.join('\n')}\n`,
  });
  const blobs = [...(await indexBlobs(paths)), ...(await presentObjects(paths, extraBlobs))];
  return `${listed.stdout.toString('utf8')}${blobs.join('\n')}\n`;
}

/**
 * The commits of the export chains (`share.json`) and those fetched from other stores (`fetched.jsonl`):
 * kept whatever the retention policy drops, since a later export continues its chain and a fetched
 * checkpoint is restorable. Read from the files, never walked: a chain's base may be parented on a
 * commit of the user's repository, which the store does not hold.
 */
export function sharedCommits(paths: StorePaths): string[] {
  const ids: string[] = [];
  try {
    const state = JSON.parse(readFileSync(paths.share, 'utf8')) as {
      exports?: Record<string, { tip?: unknown; base?: unknown; sources?: Record<string, unknown> }>;
    };
    for (const chain of Object.values(state.exports ?? {}))
      ids.push(...[chain.tip, chain.base, ...Object.values(chain.sources ?? {})].filter(isObjectId));
  } catch {
    /* no sharing, or a state share commands refuse (they name it) */
  }
  ids.push(...readLedger(paths.fetched).records.map((r) => r.id));
  return ids;
}

/** The ids among `ids` that the store holds (pack-objects fails on a missing one). */
export async function presentObjects(paths: StorePaths, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { stdout } = await git({
    verb: 'cat-file',
    args: ['--batch-check=%(objectname) %(objecttype)', '--buffer'],
    gitDir: paths.gitDir,
    cwd: paths.dir,
    input: `${ids.join('\n')}\n`,
  });
  return stdout
    .toString('utf8')
    .split('\n')
    .filter((line) => / (blob|tree|commit)$/.test(line))
    .map((line) => line.slice(0, line.indexOf(' ')));
}

/**
 * Delete the loose objects that none of `starts`, the shadow index or
 * `extraBlobs` needs: what a snapshot killed or stopped by a full disk wrote.
 * Writes nothing, so it frees space on a full disk. The caller holds the
 * workspace lock (no snapshot is writing). Returns how many went (or would go).
 */
export async function removeOrphanLoose(
  paths: StorePaths,
  starts: readonly string[],
  extraBlobs: readonly string[],
  dryRun = false,
): Promise<number> {
  const loose = looseObjects(paths);
  if (loose.length === 0) return 0;
  const needed = new Set((await neededObjects(paths, starts, extraBlobs)).split('\n').map((line) => line.split(' ', 1)[0]));
  const orphans = loose.filter((id) => !needed.has(id));
  if (dryRun || orphans.length === 0) return orphans.length;
  // Caches that may name a tree about to go (the index stamp's tree is in no checkpoint).
  for (const cache of OBJECT_CACHES) rmSync(paths[cache], { force: true });
  for (const id of orphans) rmSync(looseObjectPath(paths, id), { force: true });
  return orphans.length;
}

/** The blobs the shadow index names: the next snapshot trusts its stat cache for unchanged files, so they must stay. */
export async function indexBlobs(paths: StorePaths, indexFile = paths.indexFile): Promise<string[]> {
  return [...new Set((await indexEntries(paths, indexFile)).filter((e) => e.mode !== '160000').map((e) => e.oid))];
}

/** Every entry of an index (the shadow index, or a copy of it): path, mode and blob. */
export async function indexEntries(paths: StorePaths, indexFile = paths.indexFile): Promise<{ path: string; mode: string; oid: string }[]> {
  const index = await git({
    verb: 'ls-files',
    args: ['-s', '-z'],
    gitDir: paths.gitDir,
    indexFile,
    cwd: paths.dir,
    okCodes: [128],
  });
  const entries: { path: string; mode: string; oid: string }[] = [];
  for (const entry of splitZ(index.stdout)) {
    const parsed = parseStageEntry(entry);
    if (parsed) entries.push(parsed);
  }
  return entries;
}

/** One `ls-files -s -z` entry: "<mode> <oid> <stage>\t<path>". */
export function parseStageEntry(entry: string): { mode: string; oid: string; path: string } | undefined {
  const m = /^(\d{6}) ([0-9a-f]{40,64}) \d\t/.exec(entry);
  return m ? { mode: m[1]!, oid: m[2]!, path: entry.slice(m[0].length) } : undefined;
}
