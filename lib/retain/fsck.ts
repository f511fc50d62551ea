/**
 * fsck: a deep look at a store. Degraded checkpoints (any object of theirs
 * missing, not just the commit and root tree the quick probe checks), orphan
 * objects (in the store, needed by no checkpoint and not by the shadow index),
 * the store's size, and ledger lines that could not be read.
 *
 * `--rebuild-ledger` recovers the ledger from the checkpoint commits
 * themselves: every commit carries its metadata as `Ckpt-*` trailers.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { readCommitText, recordFromCommit } from '../model/trailers.js';
import { readLedger, type CheckpointRecord } from '../model/ledger.js';
import { forEachObject } from '../git/objects.js';
import { indexBlobs, recordObjects, sharedCommits } from '../store/packs.js';
import { git } from '../git/runner.js';
import { dirSize, writeFileDurable, type StorePaths } from '../store/store.js';
import { readFetched, readShareState } from '../store/share-state.js';

export interface FsckReport {
  /** This workspace's own checkpoints, and those fetched from other stores (checked the same way). */
  checkpoints: number;
  fetched: number;
  /** Ids of degraded checkpoints, oldest first; empty when none. */
  degraded: string[];
  /** For each degraded checkpoint, the missing objects (first few). */
  missing: Record<string, string[]>;
  orphans: number;
  storeBytes: number;
  unreadableLines: string[];
  /** Fetched records left out of every view (unreadable, or ids without an id's shape). */
  fetchedWarnings: string[];
  /** Export refs whose chain's commits are gone: the next push or bundle makes the chain again. */
  lostExports: string[];
}

async function allObjects(paths: StorePaths): Promise<Map<string, string>> {
  const { stdout } = await git({
    verb: 'cat-file',
    args: ['--batch-all-objects', '--batch-check=%(objectname) %(objecttype)'],
    gitDir: paths.gitDir,
    cwd: paths.dir,
  });
  const types = new Map<string, string>();
  for (const line of stdout.toString('utf8').split('\n')) {
    const [id, type] = line.split(' ');
    if (id && type) types.set(id, type);
  }
  return types;
}

async function reachable(paths: StorePaths, ids: readonly string[]): Promise<{ found: Set<string>; missing: Set<string> }> {
  const found = new Set<string>();
  const missing = new Set<string>();
  if (ids.length === 0) return { found, missing };
  const { stdout } = await git({
    verb: 'rev-list',
    args: ['--objects', '--no-walk', '--missing=print', '--stdin'],
    gitDir: paths.gitDir,
    cwd: paths.dir,
    input: `${ids.join('\n')}\n`,
    okCodes: [128],
  });
  for (const line of stdout.toString('utf8').split('\n')) {
    const id = line.split(' ')[0]!;
    if (id.startsWith('?')) missing.add(id.slice(1));
    else if (id) found.add(id);
  }
  return { found, missing };
}

export async function fsckStore(paths: StorePaths, objectsPresent?: Map<string, string>): Promise<FsckReport> {
  const { records: own, warnings } = readLedger(paths.ledger);
  // Fetched checkpoints are restorable like the workspace's own: a missing object of theirs is a degraded checkpoint too.
  const fetched = readFetched(paths);
  const records = [...fetched.records, ...own];
  const objects = objectsPresent ?? (await allObjects(paths));
  const missing: Record<string, string[]> = {};
  for (const r of records) {
    if (!objects.has(r.id)) missing[r.id] = [r.id];
    else if (!objects.has(r.tree)) missing[r.id] = [r.tree];
  }
  const intact = records.filter((r) => !missing[r.id]);
  // A base tree kept for a dropped parent (`parentTree`) is a checkpoint's too: checked, and no orphan.
  for (const r of intact) if (r.parentTree && !objects.has(r.parentTree)) missing[r.id] = [r.parentTree];
  // The export chains and what was fetched from other stores are kept too (see sharedCommits): no orphans.
  const shared = sharedCommits(paths).filter((id) => objects.has(id));
  const all = await reachable(paths, [...recordObjects(intact.filter((r) => !missing[r.id])), ...shared]);
  if (all.missing.size) {
    // Something deeper is gone: find whose, one checkpoint at a time (only in a damaged store).
    for (const r of intact) {
      const one = await reachable(paths, [r.id]);
      if (one.missing.size) missing[r.id] = [...one.missing].slice(0, 5);
    }
  }
  for (const blob of await indexBlobs(paths)) all.found.add(blob);
  let orphans = 0;
  for (const id of objects.keys()) if (!all.found.has(id)) orphans++;
  let lostExports: string[] = [];
  try {
    const state = readShareState(paths);
    lostExports = Object.entries(state?.exports ?? {})
      .filter(([, chain]) => !objects.has(chain.tip))
      .map(([ref]) => ref);
  } catch {
    /* a share state the share commands refuse, and name */
  }
  return {
    checkpoints: own.length,
    fetched: fetched.records.length,
    degraded: records.filter((r) => missing[r.id]).map((r) => r.id),
    missing,
    orphans,
    storeBytes: dirSize(paths.dir),
    unreadableLines: warnings,
    fetchedWarnings: fetched.warnings,
    lostExports,
  };
}

/** Pure: order rebuilt records as the ledger had them: by time, a parent before its children. */
export function orderRecords(records: CheckpointRecord[]): CheckpointRecord[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const sorted = [...records].sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : 1));
  const out: CheckpointRecord[] = [];
  const placed = new Set<string>();
  const place = (r: CheckpointRecord) => {
    if (placed.has(r.id)) return;
    placed.add(r.id);
    const parent = r.parent ? byId.get(r.parent) : undefined;
    if (parent) place(parent);
    out.push(r);
  };
  for (const r of sorted) place(r);
  return out;
}

export interface RebuildReport {
  recovered: number;
  /** Where the previous ledger was kept (when there was one). */
  backup: string | null;
}

/** Recover the ledger from the checkpoint commits in the store. The caller holds the workspace lock. */
export async function rebuildLedger(paths: StorePaths): Promise<RebuildReport> {
  const objects = await allObjects(paths);
  const commits = [...objects].filter(([, type]) => type === 'commit').map(([id]) => id);
  const records: CheckpointRecord[] = [];
  await forEachObject({ gitDir: paths.gitDir, cwd: paths.dir }, commits, (id, content) => {
    const raw = content.toString('utf8');
    // An export copy (this store's, or one fetched from another) names its workspace: it is no checkpoint of this one.
    if (readCommitText(raw).trailers.has('Ws')) return;
    const record = recordFromCommit(id, raw);
    if (record) records.push(record);
  });
  let backup: string | null = null;
  if (existsSync(paths.ledger)) {
    backup = `${paths.ledger}.bak-${Date.now()}`;
    copyFileSync(paths.ledger, backup);
  }
  const ordered = orderRecords(records);
  writeFileDurable(paths.ledger, ordered.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return { recovered: ordered.length, backup };
}
