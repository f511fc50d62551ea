/**
 * Snapshot: one stat pass (`git ls-files -m -d -o` against the persistent shadow
 * index), hashing of the changed files only (`git add` in bounded batches, so a
 * budget kill keeps every finished batch), `write-tree`, and a `commit-tree` whose
 * parent is the previous checkpoint. Large batches are streamed straight into a
 * pack (core.bigFileThreshold), so a first snapshot never leaves tens of thousands
 * of loose objects behind.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { batchLimits, planCapture, secretMatcher, stageUnits, takeBatch, NO_SECRETS } from './capture-plan.js';
import { gitCall, type StoreContext } from '../store/context.js';
import { pausePoint } from '../model/crash-point.js';
import { Deadline } from './deadline.js';
import { CkptError, isCkptError } from '../model/errors.js';
import {
  AUTO_GC_EVERY,
  LOOSE_PACK_THRESHOLD,
  changedDirectories,
  maybeStartBackgroundGc,
  packLooseObjects,
  readPackState,
  reclaimAfterFullDisk,
  removeGitDebris,
} from './housekeeping.js';
import { readStamp, refreshDue, writeStamp, type Stamp } from './index-stamp.js';
import {
  appendRecord,
  assertWritableSchema,
  LEDGER_SCHEMA,
  PATHS_KEPT,
  readLatest,
  readLedger,
  SKIPPED_KEPT,
  type ChangedPath,
  type CheckpointKind,
  type CheckpointRecord,
  type HookFields,
  type OperationInfo,
  type SkippedPath,
} from '../model/ledger.js';
import { carryGitlinks, staleGitlinks } from './gitlinks.js';
import { parseRawDiff } from '../git/objects.js';
import { keepAllPacks } from '../store/packs.js';
import { EMPTY_TREE } from '../model/oid.js';
import { isUtf8Path } from '../model/paths.js';
import { probeDegraded } from '../store/probe.js';
import type { TreeChange } from '../model/tree.js';
import { git, type GitCall } from '../git/runner.js';
import { collectFacts, expandNewDirs, lateArrivals, readForgotten, scanWorkspace, syncExcludes, trackedBelow } from './scan.js';
import { forceRemove, holdBack, PACK_BATCH_MIN, stageBatch } from './stage.js';
import { storeRootsInside, writeFileAtomic } from '../store/store.js';
import { CHECKPOINT_AUTHOR, commitMessage } from '../model/trailers.js';

export interface SnapshotOptions {
  message?: string;
  session?: string;
  turn?: number;
  step?: number;
  tool?: string;
  kind?: CheckpointKind;
  /** Agent hooks: who made the change and how (agent, phase, tool call, input summary, failure, subagent, turn title). */
  hook?: HookFields;
  /**
   * Workspace-relative files to leave as the latest checkpoint has them (files a
   * running subagent call is writing: its own post will capture them).
   */
  holdPaths?: string[];
  /** Override the time budget (ms); 0 disables it. */
  timeBudgetMs?: number;
  /** Called while files are hashed. */
  onProgress?: (progress: SnapshotProgress) => void;
  signal?: AbortSignal;
  /** Stage the workspace and write its tree, but create no checkpoint: captureTree's mode. */
  dryCommit?: boolean;
  /** Create a checkpoint even when the tree equals the latest one (restore records). */
  force?: boolean;
  /**
   * The changed files hold content the store already has (right after a restore):
   * hash into loose objects, which git skips writing when they exist, instead of
   * streaming every blob into a new pack.
   */
  knownContent?: boolean;
  /** Restore, revert and undo records: what the operation did, given the captured tree (it verifies against it). */
  operation?: (tree: string) => Promise<OperationInfo>;
}

export interface SnapshotProgress {
  hashed: number;
  total: number;
  elapsedMs: number;
  first: boolean;
}

export interface SnapshotResult {
  created: boolean;
  /** The new checkpoint, or the latest one when nothing changed (undefined in an empty store). */
  id?: string;
  /** The workspace's tree as captured. */
  tree: string;
  record?: CheckpointRecord;
  skipped: SkippedPath[];
  skippedCount: number;
  /** Every path not captured (`skipped` keeps the first SKIPPED_KEPT): what a restore must leave alone. */
  allSkipped?: SkippedPath[];
  elapsedMs: number;
}

/** A directory pathspec stands for at most this many files. */
const MAX_DIR_UNIT = 500;

/** Fold files into directory pathspecs only from this many staged paths on (git matches pathspecs linearly). */
const FOLD_MIN_PATHS = 1000;

/** The newest checkpoint whose commit object still exists, or null. */
async function newestIntactParent(ctx: StoreContext): Promise<string | null> {
  const { records } = readLedger(ctx.paths.ledger);
  const degraded = await probeDegraded(ctx.paths, records);
  for (let i = records.length - 1; i >= 0; i--) if (degraded[records[i]!.id] !== 'commit') return records[i]!.id;
  return null;
}

/**
 * The paths the index changed since the parent tree, with git's status letter
 * (T: file, symlink and gitlink swapped). Run beside write-tree, which writes
 * the same index as a tree: a diff of the two trees afterwards would cost one
 * git process more on the path every one-file hook takes.
 */
async function indexChanges(ctx: StoreContext, parent: string | null, signal: AbortSignal): Promise<ChangedPaths> {
  const { stdout } = await git(
    gitCall(ctx, { verb: 'diff-index', args: ['--cached', '-r', '-z', '--no-renames', '--raw', { oid: parent ?? EMPTY_TREE }], signal }),
  );
  const raw = parseRawDiff(stdout);
  const changes = raw.map(
    (c): ChangedPath => ({
      path: c.path,
      status: !c.before ? 'A' : !c.after ? 'D' : entryType(c.before.mode) === entryType(c.after.mode) ? 'M' : 'T',
    }),
  );
  return {
    changes,
    raw,
    added: changes.filter((c) => c.status === 'A').map((c) => c.path),
    modified: changes.filter((c) => c.status === 'M' || c.status === 'T').map((c) => c.path),
  };
}

interface ChangedPaths {
  changes: ChangedPath[];
  added: string[];
  modified: string[];
  raw?: TreeChange[];
}

/** The latest tree is missing (a damaged store): no stats; the commit chains past it. */
const NO_CHANGES: ChangedPaths = { changes: [], added: [], modified: [] };

/** Pure: what a tree entry's mode says it is. */
function entryType(mode: string): 'file' | 'symlink' | 'gitlink' | 'tree' {
  return mode === '120000' ? 'symlink' : mode === '160000' ? 'gitlink' : mode.startsWith('04') ? 'tree' : 'file';
}

/** Files hashed so far and files to hash: the budget error and the progress callback report them. */
interface Progress {
  hashed: number;
  total: number;
}

type CapturePlan = ReturnType<typeof planCapture> & {
  secrets: Awaited<ReturnType<typeof secretMatcher>>;
  forgotten: Awaited<ReturnType<typeof secretMatcher>>;
};

/** The latest checkpoint, after the checks a write needs: schema, a lost index rebuilt, excludes in sync, stale entries dropped. */
async function prepare(ctx: StoreContext, signal: AbortSignal): Promise<CheckpointRecord | undefined> {
  const latestRead = readLatest(ctx.paths.ledger);
  assertWritableSchema(latestRead.newestSchema);
  const latest = latestRead.record;
  if (latest && !existsSync(ctx.scratch?.indexFile ?? ctx.paths.indexFile)) {
    // Index lost: rebuild it from the latest tree; stat data is empty, so git rehashes what it must.
    await git(gitCall(ctx, { verb: 'read-tree', args: [{ oid: latest.tree }], signal }));
  }
  const storeRoots = storeRootsInside(ctx.location.root, ctx.env);
  syncExcludes(ctx.location, ctx.paths, storeRoots, ctx.scratch !== undefined);
  // A nested repository that is plain files now (its .git removed): out of the index, so the scan lists its files as new.
  await forceRemove(ctx, await staleGitlinks(ctx, signal), signal);
  // Store roots inside the workspace are excluded; what was captured of one before that leaves the index.
  if (storeRoots.length) await forceRemove(ctx, await trackedBelow(ctx, storeRoots, signal), signal);
  return latest;
}

/** The scan, the facts about every candidate, and the pure capture plan. */
async function planFromDisk(ctx: StoreContext, first: boolean, signal: AbortSignal, only?: readonly string[]): Promise<CapturePlan> {
  const scan = await scanWorkspace(ctx, !first, signal, only);
  const listable = scan.newDirs.filter(isUtf8Path);
  const expansion = listable.length
    ? await expandNewDirs(ctx, listable, ctx.settings.maxNewFiles, signal)
    : { files: new Map(), overLimit: new Map() };
  const candidates = [...scan.modified, ...scan.untracked, ...scan.deleted];
  for (const list of expansion.files.values()) candidates.push(...list);
  const facts = collectFacts(ctx.location.root, candidates);
  const secrets = candidates.length ? await secretMatcher(ctx.settings.secretPatterns) : NO_SECRETS;
  const forgottenPatterns = candidates.length ? readForgotten(ctx.paths) : [];
  const forgotten = forgottenPatterns.length ? await secretMatcher(forgottenPatterns, true) : NO_SECRETS;
  return { ...planCapture(scan, expansion, facts, ctx.settings, secrets, forgotten), secrets, forgotten };
}

/** Hash what the plan stages, in batches under the budget, then write the tree. Returns the tree and every skip. */
async function stageAndWrite(
  ctx: StoreContext,
  plan: CapturePlan,
  latest: CheckpointRecord | undefined,
  opts: SnapshotOptions,
  deadline: Deadline,
  progress: Progress,
): Promise<{ tree: string; skipped: SkippedPath[]; changes?: Promise<ChangedPaths> }> {
  const { signal } = deadline;
  const skipped = [...plan.skipped];
  const budget = opts.timeBudgetMs ?? ctx.settings.timeBudgetMs;
  progress.total = plan.stage.length;
  const report = () =>
    opts.onProgress?.({
      hashed: Math.min(progress.hashed, progress.total),
      total: progress.total,
      elapsedMs: deadline.elapsed(),
      first: !latest,
    });
  const measured = { files: 0, bytes: 0, ms: 0 };
  // Small change sets stay one pathspec per file: folding costs a listing of the whole index afterwards.
  const maxUnit = plan.stage.length >= FOLD_MIN_PATHS ? MAX_DIR_UNIT : 0;
  const units = stageUnits(plan.stage, plan.sizes, [...skipped.map((s) => s.path), ...plan.forceRemove], maxUnit);
  // First: while the index still tracks files below a folder that is a repository now, git walks
  // into it instead of recording it as a gitlink.
  await forceRemove(ctx, plan.forceRemove, signal);
  for (let from = 0; from < units.length; ) {
    // The first batch always runs: every snapshot makes progress, however small its budget.
    if (from > 0) deadline.arm();
    deadline.check();
    const limits = batchLimits(budget > 0 ? budget - deadline.elapsed() : undefined, measured.files ? measured : undefined);
    const end = takeBatch(units, from, limits.maxCount, limits.maxBytes);
    const batch = units.slice(from, end);
    const files = batch.reduce((n, u) => n + u.count, 0);
    const started = Date.now();
    const onHashed = (n: number) => {
      progress.hashed += n;
      report();
    };
    skipped.push(
      ...(await stageBatch(
        ctx,
        batch.map((u) => u.pathspec),
        files,
        !opts.knownContent,
        signal,
        onHashed,
      )),
    );
    measured.files += files;
    measured.bytes += batch.reduce((n, u) => n + u.bytes, 0);
    measured.ms += Date.now() - started;
    from = end;
  }
  const dirUnits = units.filter((u) => u.isDir).map((u) => u.pathspec);
  if (dirUnits.length) {
    // A directory pathspec also takes files that appeared after the scan: hold them to the same limits.
    const late = await lateArrivals(ctx, dirUnits, new Set(plan.stage), signal);
    const noExpansion = { files: new Map(), overLimit: new Map() };
    const latePlan = planCapture(
      { modified: [], deleted: [], untracked: late, newDirs: [] },
      noExpansion,
      collectFacts(ctx.location.root, late),
      ctx.settings,
      plan.secrets,
      plan.forgotten,
    );
    skipped.push(...latePlan.skipped);
    await forceRemove(
      ctx,
      latePlan.skipped.map((s) => s.path),
      signal,
    );
  }
  if (opts.holdPaths?.length) await holdBack(ctx, opts.holdPaths, latest?.tree ?? null, signal);
  await pausePoint('staged');
  const changes = opts.dryCommit || ctx.scratch ? undefined : indexChanges(ctx, latest?.tree ?? null, signal);
  // Handled by the caller, or dropped with write-tree's own error.
  changes?.catch(() => undefined);
  const tree = (await git(gitCall(ctx, { verb: 'write-tree', signal }))).stdout.toString('utf8').trim();
  return { tree, skipped, ...(changes ? { changes } : {}) };
}

/**
 * An unchanged workspace keeps its stamp fresh: racily clean entries are
 * refreshed once a little after staging, then at most every 30 s, so files
 * rewritten with identical bytes are not hashed again on every hook.
 */
async function keepStampFresh(
  ctx: StoreContext,
  tree: string,
  stamp: Stamp | undefined,
  unchanged: boolean,
  signal: AbortSignal,
): Promise<void> {
  const times = { refreshed: stamp?.refreshed ?? 0, staged: stamp?.staged ?? 0 };
  if (unchanged && refreshDue(stamp, Date.now())) {
    await git(gitCall(ctx, { verb: 'update-index', args: ['-q', '--refresh'], okCodes: [1], signal }));
    times.refreshed = Date.now();
  }
  if (!stamp || times.refreshed !== stamp.refreshed) writeStamp(ctx.paths, tree, times);
}

/** Commit the tree as the next checkpoint (its parent the latest, or the newest still whole) and append its record. */
async function commitCheckpoint(
  ctx: StoreContext,
  latest: CheckpointRecord | undefined,
  tree: string,
  plan: CapturePlan,
  skipped: SkippedPath[],
  opts: SnapshotOptions,
  pending: Promise<ChangedPaths> | undefined,
  signal: AbortSignal,
): Promise<{ record: CheckpointRecord; changes: ChangedPath[] }> {
  const now = Date.now();
  // The stats trailer needs the diff, so it comes before the commit.
  const diff = await (pending ?? indexChanges(ctx, latest?.tree ?? null, signal)).catch((err: unknown) => {
    if (signal.aborted) throw err;
    return NO_CHANGES;
  });
  const meta = {
    time: now,
    session: opts.session ?? null,
    turn: opts.turn ?? null,
    step: opts.step ?? null,
    tool: opts.tool ?? null,
    kind: opts.kind ?? 'manual',
    message: opts.message ?? '',
    stats: {
      added: diff.changes.filter((c) => c.status === 'A').length,
      modified: diff.changes.filter((c) => c.status === 'M' || c.status === 'T').length,
      deleted: diff.changes.filter((c) => c.status === 'D').length,
    },
    bytes: [...diff.added, ...diff.modified].reduce((sum, p) => sum + (plan.sizes.get(p) ?? 0), 0),
    paths: diff.changes.slice(0, PATHS_KEPT),
    changed: diff.changes.length,
    skipped: skipped.slice(0, SKIPPED_KEPT),
    skippedCount: skipped.length,
    ...(opts.operation ? { op: await opts.operation(tree) } : {}),
    ...opts.hook,
  };
  const isoDate = `@${Math.floor(now / 1000)} +0000`;
  const identity = {
    GIT_AUTHOR_NAME: CHECKPOINT_AUTHOR.name,
    GIT_AUTHOR_EMAIL: CHECKPOINT_AUTHOR.email,
    GIT_AUTHOR_DATE: isoDate,
    GIT_COMMITTER_NAME: CHECKPOINT_AUTHOR.name,
    GIT_COMMITTER_EMAIL: CHECKPOINT_AUTHOR.email,
    GIT_COMMITTER_DATE: isoDate,
  };
  const commit = (parent: string | null) => {
    const args: GitCall['args'] = [{ oid: tree }, ...(parent ? ['-p', { oid: parent }] : [])];
    return git(gitCall(ctx, { verb: 'commit-tree', args, input: commitMessage(meta), env: identity, signal }));
  };
  let parent = latest?.id ?? null;
  let committed: Awaited<ReturnType<typeof git>>;
  try {
    committed = await commit(parent);
  } catch (err) {
    if (!latest || signal.aborted) throw err;
    // The latest checkpoint lost its commit (a damaged store): chain to the newest one still whole.
    parent = await newestIntactParent(ctx);
    committed = await commit(parent);
  }
  const record: CheckpointRecord = { v: LEDGER_SCHEMA, id: committed.stdout.toString('utf8').trim(), parent, tree, ...meta };
  appendRecord(ctx.paths.ledger, record);
  writeStamp(ctx.paths, tree, { refreshed: 0, staged: Date.now() });
  if (diff.raw) carryGitlinks(ctx.paths, latest?.tree, tree, diff.raw);
  return { record, changes: diff.changes };
}

/** After a checkpoint: mark its packs .keep, count loose objects, pack them or start gc when due. */
async function afterCommit(
  ctx: StoreContext,
  changes: ChangedPath[],
  staged: number,
  opts: SnapshotOptions,
  signal: AbortSignal,
): Promise<void> {
  // Packs written by this snapshot's batches are marked .keep at once, so no git command ever drops them.
  if (staged >= PACK_BATCH_MIN && !opts.knownContent) keepAllPacks(ctx.paths);
  const packState = readPackState(ctx.paths);
  // New loose objects: blobs of small batches, one tree per directory on a changed path, the commit.
  packState.looseEstimate += (staged < PACK_BATCH_MIN ? staged : 0) + changedDirectories(changes) + 1;
  packState.sinceGc += 1;
  if (packState.sinceGc >= AUTO_GC_EVERY) {
    packState.sinceGc = 0;
    maybeStartBackgroundGc(ctx);
  }
  if (packState.looseEstimate >= LOOSE_PACK_THRESHOLD) {
    await packLooseObjects(ctx, packState, signal).catch(() => writeFileAtomic(ctx.paths.packState, JSON.stringify(packState)));
  } else {
    writeFileAtomic(ctx.paths.packState, JSON.stringify(packState));
  }
}

/**
 * Take one snapshot. The caller holds the workspace lock. Nothing is created
 * when the tree equals the latest checkpoint's (unless `force`), and nothing
 * in dry and scratch captures (see captureTree).
 */
export async function snapshotLocked(ctx: StoreContext, opts: SnapshotOptions): Promise<SnapshotResult> {
  const budget = opts.timeBudgetMs ?? ctx.settings.timeBudgetMs;
  const deadline = new Deadline(budget, opts.signal);
  const { signal } = deadline;
  const progress: Progress = { hashed: 0, total: 0 };
  try {
    const latest = await prepare(ctx, signal);
    // A watcher's view narrows the scan of a real snapshot; dry and scratch captures scan everything.
    const view = ctx.changes && !ctx.scratch && !opts.dryCommit ? await ctx.changes.view(signal) : undefined;
    const only = view && !view.full && latest ? view.paths : undefined;
    const plan = await planFromDisk(ctx, !latest, signal, only);
    const unchanged = plan.stage.length === 0 && plan.forceRemove.length === 0;
    const stamp = unchanged && !ctx.scratch ? readStamp(ctx.paths) : undefined;
    const {
      tree,
      skipped,
      changes: pendingChanges,
    } = stamp
      ? { tree: stamp.tree, skipped: plan.skipped, changes: undefined }
      : await stageAndWrite(ctx, plan, latest, opts, deadline, progress);
    const skippedView = { skipped: skipped.slice(0, SKIPPED_KEPT), skippedCount: skipped.length, allSkipped: skipped };
    const commits = !opts.dryCommit && !ctx.scratch && (opts.force || latest?.tree !== tree);
    const settle = () => {
      if (!view) return;
      // What could not be taken is looked at again by every capture, as the full scan does.
      const keep = [...skipped.map((s) => s.path.replace(/\/$/, '')), ...(opts.holdPaths ?? [])];
      ctx.changes?.settle(only ? view : { ...view, full: true, reason: 'scanned in full' }, keep);
    };
    if (!commits) {
      // Racily clean entries need no refresh when a watcher names what changed.
      if (latest?.tree === tree && !ctx.scratch) await keepStampFresh(ctx, tree, stamp, unchanged && !only, signal);
      settle();
      return { created: false, id: latest?.id, tree, record: latest, ...skippedView, elapsedMs: deadline.elapsed() };
    }
    const { record, changes } = await commitCheckpoint(ctx, latest, tree, plan, skipped, opts, pendingChanges, signal);
    settle();
    await afterCommit(ctx, changes, progress.total, opts, signal);
    return { created: true, id: record.id, tree, record, ...skippedView, elapsedMs: deadline.elapsed() };
  } catch (err) {
    if (!signal.aborted) {
      await reclaimAfterFullDisk(ctx, err);
      throw err;
    }
    removeGitDebris(ctx.paths);
    if (!isCkptError(signal.reason, 'budget')) throw signal.reason;
    const { hashed, total } = progress;
    throw new CkptError(
      'budget',
      `snapshot stopped by its ${Math.round(budget / 100) / 10}s time budget after hashing ${hashed} of ${total || '?'} files; the work done is kept, run it again to resume (or raise ckpt.timeBudget)`,
      { hashed, total },
    );
  } finally {
    deadline.dispose();
  }
}

/**
 * Capture the live workspace into a scratch index and object folder (under the
 * system's temporary folder), hand the tree to `use` while they exist, then
 * remove them: the store stays byte for byte as it was (dry runs and previews).
 */
export async function withScratchCapture<T>(
  ctx: StoreContext,
  use: (result: Awaited<ReturnType<typeof captureTree>>, objectDir: string) => Promise<T>,
): Promise<T> {
  const scratchDir = mkdtempSync(path.join(tmpdir(), 'git-ckpt-dry-'));
  try {
    const indexFile = path.join(scratchDir, 'index');
    try {
      copyFileSync(ctx.paths.indexFile, indexFile);
      // git re-reads entries as new as the index itself (racily clean ones): keep the original's
      // mtime, or a copy made now would hide a same-size edit made in the same second.
      const st = statSync(ctx.paths.indexFile);
      utimesSync(indexFile, st.atime, st.mtime);
    } catch {
      /* no index yet: the capture rebuilds one from the latest tree */
    }
    const scratch = { indexFile, objectDir: path.join(scratchDir, 'objects') };
    mkdirSync(scratch.objectDir);
    return await use(await captureTree({ ...ctx, scratch }, { timeBudgetMs: 0 }), scratch.objectDir);
  } finally {
    rmSync(scratchDir, { recursive: true, force: true });
  }
}

/**
 * Capture the workspace's tree without creating a checkpoint: into the shadow
 * index (diff, status), or into a scratch index and object folder that leave
 * the store byte-identical (dry-run restores). Always returns a tree.
 */
export async function captureTree(
  ctx: StoreContext,
  options: { timeBudgetMs?: number } = {},
): Promise<{ tree: string; latest?: CheckpointRecord; skipped: SkippedPath[]; skippedCount: number; allSkipped: SkippedPath[] }> {
  const result = await snapshotLocked(ctx, { dryCommit: true, ...options });
  return {
    tree: result.tree,
    latest: result.record,
    skipped: result.skipped,
    skippedCount: result.skippedCount,
    allSkipped: result.allSkipped ?? result.skipped,
  };
}
