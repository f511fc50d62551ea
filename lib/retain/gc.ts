/**
 * gc: apply the retention plan and reclaim the space. The caller holds the
 * workspace lock.
 *
 * Order is what makes a kill at any moment harmless:
 *   0. delete the loose objects no record, the shadow index or a pending
 *      journal needs (what a killed or disk-full snapshot wrote): space first,
 *      with nothing written, so a full disk can always be reclaimed;
 *   1. write one new pack holding exactly the objects of the kept checkpoints
 *      (plus the blobs the shadow index and a pending journal name, and the
 *      tree of each dropped parent a kept checkpoint reverts against),
 *      fsync'd, and mark it `.keep`;
 *   2. rewrite the ledger without the dropped records (temp file, rename);
 *   3. only then delete the old packs and every loose object.
 * Before 2 completes every checkpoint is whole; after it, every kept one is
 * in the new pack. Dropped objects left behind by a kill are orphans, which the
 * next gc removes.
 *
 * Every pack carries a `.keep` file and the shadow repository sets
 * gc.pruneExpire=never, so a `git gc` or `git repack -a -d` someone runs in it
 * by hand leaves checkpoint objects alone.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { findDebris, looseObjectPath, looseObjects, neededObjects, packNames, recordObjects, removeOrphanLoose } from '../store/packs.js';
import path from 'node:path';
import { CkptError } from '../model/errors.js';
import { crashPoint } from '../model/crash-point.js';
import { journalBlobs, readJournal, type Journal } from '../store/journal.js';
import { readLedger, type CheckpointRecord, type LedgerRead } from '../model/ledger.js';
import { planRetention, retentionPolicy, type DropRule, type RetentionPlan } from '../model/retention.js';
import { git } from '../git/runner.js';
import type { Settings } from '../store/settings.js';
import { dirSize, OBJECT_CACHES, fsyncFile, writeFileAtomic, writeFileDurable, type StorePaths } from '../store/store.js';

export interface GcOptions {
  dryRun?: boolean;
  now?: number;
}

export interface GcReport {
  dryRun: boolean;
  kept: number;
  dropped: { id: string; rule: DropRule; time: number; session: string | null }[];
  protected: { id: string; why: string }[];
  bytesBefore: number;
  /** Measured after the run; the plan's estimate in a dry run. */
  bytesAfter: number;
  maxBytes: number;
  /** Leftovers of killed processes that were (or, in a dry run, would be) removed. */
  debris: string[];
  /** Loose objects no record needed (a snapshot killed, or stopped by a full disk, wrote them): removed first. */
  orphans: number;
  packsBefore: number;
  packsAfter: number;
  looseBefore: number;
}

function planFor(
  paths: StorePaths,
  settings: Settings,
  now: number,
): { plan: RetentionPlan; journal: Journal | undefined; ledger: LedgerRead } {
  const ledger = readLedger(paths.ledger);
  const { records } = ledger;
  let journal: Journal | undefined;
  try {
    journal = readJournal(paths.dir);
  } catch (err) {
    throw new CkptError('pending', `gc refused: ${(err as Error).message}`, {}, { cause: err });
  }
  const plan = planRetention({
    records,
    now,
    policy: retentionPolicy(settings),
    storeBytes: dirSize(paths.dir),
    journalIds: journal ? [journal.target, journal.guard] : [],
  });
  return { plan, journal, ledger };
}

export async function gcLocked(ctx: { paths: StorePaths; settings: Settings }, options: GcOptions = {}): Promise<GcReport> {
  const { paths, settings } = ctx;
  const now = options.now ?? Date.now();
  const debris = findDebris(paths, true, now);
  const packsBefore = packNames(paths).length;
  const looseBefore = looseObjects(paths).length;
  const first = planFor(paths, settings, now);
  let { plan, journal } = first;
  const { ledger } = first;
  // Space first, writing nothing: loose objects no record needs (a snapshot stopped by a full disk
  // leaves them), so that the new pack below has room even on a disk that was full. Only from a
  // ledger read whole: an unreadable line may name what looks orphaned.
  const orphans = ledger.warnings.length
    ? 0
    : await removeOrphanLoose(paths, recordObjects(ledger.records), journalBlobs(journal), Boolean(options.dryRun));
  const report: GcReport = {
    dryRun: Boolean(options.dryRun),
    kept: plan.keep.length,
    dropped: plan.drop.map((d) => ({ id: d.record.id, rule: d.rule, time: d.record.time, session: d.record.session })),
    protected: plan.protected,
    bytesBefore: plan.bytesBefore,
    bytesAfter: plan.bytesAfterEstimate,
    maxBytes: settings.maxBytes,
    debris,
    orphans,
    packsBefore,
    packsAfter: packsBefore,
    looseBefore,
  };
  if (options.dryRun) return report;

  for (const file of debris) rmSync(file, { recursive: true, force: true });
  const dropped = new Map(report.dropped.map((d) => [d.id, d]));
  // The byte rule works from an estimate; measure after each pass and go again while still over.
  for (let round = 0; round < 3; round++) {
    await repack(paths, plan.keep, journal, plan.drop.length > 0);
    const after = dirSize(paths.dir);
    report.bytesAfter = after;
    if (after <= settings.maxBytes) break;
    const next = planFor(paths, settings, now);
    if (next.plan.drop.length === 0) break;
    ({ plan, journal } = next);
    for (const d of next.plan.drop)
      dropped.set(d.record.id, { id: d.record.id, rule: d.rule, time: d.record.time, session: d.record.session });
  }
  report.dropped = [...dropped.values()];
  report.kept = plan.keep.length;
  report.packsAfter = packNames(paths).length;
  writeFileAtomic(paths.packState, JSON.stringify({ looseEstimate: 0, sinceGc: 0 }));
  return report;
}

/** One pass: the new pack, the ledger, then the old objects. */
async function repack(
  paths: StorePaths,
  kept: readonly CheckpointRecord[],
  journal: Journal | undefined,
  ledgerChanges: boolean,
): Promise<void> {
  const list = await neededObjects(paths, recordObjects(kept), journalBlobs(journal));
  await replaceObjects(paths, list, () => {
    crashPoint('gc-pack');
    if (ledgerChanges) writeFileDurable(paths.ledger, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
  });
}

/**
 * The store's objects replaced by exactly the listed ones (`rev-list
 * --objects` lines, or bare ids), crash-safely: one new pack, fsync'd and
 * marked `.keep`; then the caches that may name objects about to go are
 * cleared and `commit` runs (the ledger's rewrite, the commit point); only
 * then every older pack and every loose object is deleted. Returns the new pack's name.
 */
export async function replaceObjects(paths: StorePaths, list: string, commit: () => void): Promise<string> {
  const before = packNames(paths);
  const loose = looseObjects(paths).map((id) => looseObjectPath(paths, id));
  const dir = paths.packDir;
  // One pack with exactly what the kept checkpoints need, fsync'd before anything is removed.
  const { stdout } = await git({
    verb: 'pack-objects',
    args: ['-q', '--window=10', { literal: 'pack' }],
    configOverrides: { 'core.fsync': 'committed', 'pack.writeReverseIndex': 'false' },
    gitDir: paths.gitDir,
    cwd: ensureDir(dir),
    // No blank lines: pack-objects reads one as garbage (an empty list is an empty pack).
    input: list
      .split('\n')
      .filter(Boolean)
      .map((line) => `${line}\n`)
      .join(''),
  });
  const made = stdout.toString('utf8').trim();
  if (!/^[0-9a-f]{40,64}$/.test(made)) throw new CkptError('git', `pack-objects gave no pack name (${made.slice(0, 80)})`);
  writeFileSync(path.join(dir, `pack-${made}.keep`), 'git-ckpt\n');
  fsyncFile(path.join(dir, `pack-${made}.idx`));
  // Caches that may name objects about to go.
  for (const cache of OBJECT_CACHES) rmSync(paths[cache], { force: true });
  commit();
  for (const name of before) {
    if (name === made) continue;
    // The index first: without it git no longer sees the pack, so a kill here leaves nothing half-visible.
    for (const ext of ['idx', 'pack', 'rev', 'bitmap', 'mtimes', 'promisor', 'keep'])
      rmSync(path.join(dir, `pack-${name}.${ext}`), { force: true });
  }
  for (const file of loose) rmSync(file, { force: true });
  return made;
}

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
