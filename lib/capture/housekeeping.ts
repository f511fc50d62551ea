/**
 * Housekeeping after a checkpoint: pack loose objects once enough have
 * accumulated, and start a background gc when the retention policy has
 * something to drop. A failure here leaves loose objects, never a broken checkpoint.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StoreContext } from '../store/context.js';
import { spawnBackground } from '../store/background.js';
import { readLedger } from '../model/ledger.js';
import { diskFull } from '../model/errors.js';
import { journalBlobs, readJournal } from '../store/journal.js';
import { findDebris, keepAllPacks, looseObjects, recordObjects, removeOrphanLoose } from '../store/packs.js';
import { planRetention, retentionPolicy } from '../model/retention.js';
import { git } from '../git/runner.js';
import { writeFileAtomic, type StorePaths } from '../store/store.js';

/** Consider a background gc every this many new checkpoints. */
export const AUTO_GC_EVERY = 200;

/** Pack loose objects once roughly this many have accumulated. */
export const LOOSE_PACK_THRESHOLD = 1000;

/**
 * Start `git ckpt gc --auto` in the background when the retention policy has
 * something to drop or the store is over its quota. Checked every
 * AUTO_GC_EVERY checkpoints, and cheap: the pack folder's sizes and a parse of
 * the ledger. The gc waits for this snapshot's lock, so the hook never waits for it.
 */
export function maybeStartBackgroundGc(ctx: StoreContext): void {
  try {
    const { records } = readLedger(ctx.paths.ledger);
    let bytes = 0;
    const dir = ctx.paths.packDir;
    for (const name of readdirSync(dir)) bytes += statSync(path.join(dir, name)).size;
    const { settings } = ctx;
    const plan = planRetention({ records, now: Date.now(), policy: retentionPolicy(settings), storeBytes: bytes });
    if (plan.drop.length === 0 && bytes <= settings.maxBytes) return;
    // The store root is passed on: a library caller may have opened the workspace with its own.
    const env = { ...(ctx.env ?? process.env), GIT_CKPT_HOME: path.dirname(ctx.paths.dir) };
    spawnBackground(['-C', ctx.location.root, 'gc', '--auto'], { env });
  } catch {
    /* housekeeping only: the next check tries again */
  }
}

/**
 * After a capture failed on a full disk: remove the loose objects it wrote
 * before failing (no record names them), so the space is free again and the
 * next snapshot succeeds as soon as the workspace fits. Only with the lock held.
 */
export async function reclaimAfterFullDisk(ctx: StoreContext, err: unknown): Promise<void> {
  if (ctx.scratch || !diskFull(err)) return;
  try {
    removeGitDebris(ctx.paths);
    // Only from a ledger read whole and a journal read whole: an unreadable line or journal may name what looks orphaned.
    const { records, warnings } = readLedger(ctx.paths.ledger);
    if (warnings.length) return;
    await removeOrphanLoose(ctx.paths, recordObjects(records), journalBlobs(readJournal(ctx.paths.dir)));
  } catch {
    /* best effort: gc does the same */
  }
}

/** Remove what a killed git child leaves behind. Only called while holding the workspace lock. */
export function removeGitDebris(paths: StorePaths): void {
  for (const file of findDebris(paths, false)) rmSync(file, { recursive: true, force: true });
}

export interface PackState {
  /** Roughly how many loose objects snapshots have written since the last packing. */
  looseEstimate: number;
  /** Checkpoints created since gc last ran or was considered. */
  sinceGc: number;
}

export function readPackState(paths: StorePaths): PackState {
  try {
    const state = JSON.parse(readFileSync(paths.packState, 'utf8')) as Partial<PackState>;
    if (Number.isFinite(state.looseEstimate))
      return { looseEstimate: state.looseEstimate!, sinceGc: Number.isFinite(state.sinceGc) ? state.sinceGc! : 0 };
  } catch {
    /* none yet */
  }
  return { looseEstimate: 0, sinceGc: 0 };
}

/**
 * Pack the loose objects into one pack and drop the loose copies: thousands of
 * loose trees cost a disk block each, the same content packed costs a fraction.
 */
export async function packLooseObjects(ctx: StoreContext, state: PackState, signal: AbortSignal): Promise<void> {
  const ids = looseObjects(ctx.paths);
  if (ids.length) {
    const packDir = ctx.paths.packDir;
    mkdirSync(packDir, { recursive: true });
    await git({
      verb: 'pack-objects',
      args: ['-q', { literal: 'pack' }],
      gitDir: ctx.paths.gitDir,
      cwd: packDir,
      input: `${ids.join('\n')}\n`,
      signal,
    });
    keepAllPacks(ctx.paths);
    await git({ verb: 'prune-packed', args: ['-q'], gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir, signal });
  }
  writeFileAtomic(ctx.paths.packState, JSON.stringify({ ...state, looseEstimate: 0 }));
}
