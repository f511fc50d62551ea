/**
 * Snapshot: one stat pass (`git ls-files -m -d -o` against the persistent shadow
 * index), hashing of the changed files only (`git add` in bounded batches, so a
 * budget kill keeps every finished batch), `write-tree`, and a `commit-tree` whose
 * parent is the previous checkpoint. Large batches are streamed straight into a
 * pack (core.bigFileThreshold), so a first snapshot never leaves tens of thousands
 * of loose objects behind.
 */
import { existsSync } from 'node:fs';
import { batchLimits, planCapture, secretMatcher, stageUnits, takeBatch, NO_SECRETS } from './capture-plan.js';
import { gitCall, type StoreContext } from './context.js';
import { Deadline } from './deadline.js';
import { CkptError, isCkptError } from './errors.js';
import { AUTO_GC_EVERY, LOOSE_PACK_THRESHOLD, changedDirectories, maybeStartBackgroundGc, packLooseObjects, packStateFile, readPackState, removeGitDebris } from './housekeeping.js';
import { readStamp, refreshDue, writeStamp } from './index-stamp.js';
import { appendRecord, assertWritableSchema, LEDGER_SCHEMA, PATHS_KEPT, readLatest, readLedger, SKIPPED_KEPT, type ChangedPath, type CheckpointKind, type CheckpointRecord, type HookFields, type OperationInfo, type SkippedPath } from './ledger.js';
import { EMPTY_TREE, keepAllPacks } from './objects.js';
import { probeDegraded } from './probe.js';
import { git, splitZ, type GitCall } from './runner.js';
import { collectFacts, expandNewDirs, lateArrivals, scanWorkspace, syncExcludes } from './scan.js';
import { forceRemove, holdBack, PACK_BATCH_MIN, stageBatch } from './stage.js';
import { writeFileAtomic } from './store.js';
import { CHECKPOINT_AUTHOR, commitMessage } from './trailers.js';

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
  /** Stage the workspace and write its tree, but create no checkpoint (diff and status use this). */
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
  tree?: string;
  record?: CheckpointRecord;
  skipped: SkippedPath[];
  skippedCount: number;
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

async function changedPaths(ctx: StoreContext, parent: string | null, commit: string, signal: AbortSignal): Promise<{ changes: ChangedPath[]; added: string[]; modified: string[] }> {
  const args: GitCall['args'] = ['-r', '-z', '--no-renames', '--no-commit-id', '--raw'];
  args.push({ oid: parent ?? EMPTY_TREE }, { oid: commit });
  const { stdout } = await git(gitCall(ctx, { verb: 'diff-tree', args, signal }));
  const parts = splitZ(stdout);
  const changes: ChangedPath[] = [];
  const added: string[] = [];
  const modified: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i]!.split(' ').at(-1)![0] as ChangedPath['status'];
    const p = parts[i + 1]!;
    changes.push({ path: p, status });
    if (status === 'A') added.push(p);
    else if (status === 'M' || status === 'T') modified.push(p);
  }
  return { changes, added, modified };
}

/**
 * Take one snapshot. The caller holds the workspace lock.
 */
export async function snapshotLocked(ctx: StoreContext, opts: SnapshotOptions): Promise<SnapshotResult> {
  const budget = opts.timeBudgetMs ?? ctx.settings.timeBudgetMs;
  const deadline = new Deadline(budget, opts.signal);
  const signal = deadline.signal;
  let hashed = 0;
  let total = 0;
  try {
    const latestRead = readLatest(ctx.paths.ledger);
    assertWritableSchema(latestRead.newestSchema);
    const latest = latestRead.record;
    if (latest && !existsSync(ctx.scratch?.indexFile ?? ctx.paths.indexFile)) {
      // Index lost: rebuild it from the latest tree; stat data is empty, so git rehashes what it must.
      await git(gitCall(ctx, { verb: 'read-tree', args: [{ oid: latest.tree }], signal }));
    }
    syncExcludes(ctx.location, ctx.paths, ctx.scratch !== undefined);
    const first = !latest;

    const scan = await scanWorkspace(ctx, !first, signal);
    const expansion = scan.newDirs.length ? await expandNewDirs(ctx, scan.newDirs, ctx.settings.maxNewFiles, signal) : { files: new Map(), overLimit: new Map() };
    const candidates = [...scan.modified, ...scan.untracked, ...scan.deleted];
    for (const list of expansion.files.values()) candidates.push(...list);
    const facts = collectFacts(ctx.location.root, candidates);
    const secrets = candidates.length ? await secretMatcher(ctx.settings.secretPatterns) : NO_SECRETS;
    const plan = planCapture(scan, expansion, facts, ctx.settings, secrets);
    const skipped = [...plan.skipped];

    const unchanged = plan.stage.length === 0 && plan.forceRemove.length === 0;
    const stamp = unchanged && !ctx.scratch ? readStamp(ctx.paths) : undefined;
    let tree = stamp?.tree;
    if (!tree) {
      total = plan.stage.length;
      const report = () => opts.onProgress?.({ hashed: Math.min(hashed, total), total, elapsedMs: deadline.elapsed(), first });
      const measured = { files: 0, bytes: 0, ms: 0 };
      // Small change sets stay one pathspec per file: folding costs a listing of the whole index afterwards.
      const maxUnit = plan.stage.length >= FOLD_MIN_PATHS ? MAX_DIR_UNIT : 0;
      const units = stageUnits(plan.stage, plan.sizes, [...skipped.map((s) => s.path), ...plan.forceRemove], maxUnit);
      for (let from = 0; from < units.length; ) {
        if (from > 0) deadline.arm();
        deadline.check();
        const limits = batchLimits(budget > 0 ? budget - deadline.elapsed() : undefined, measured.files ? measured : undefined);
        const end = takeBatch(units, from, limits.maxCount, limits.maxBytes);
        const batch = units.slice(from, end);
        const files = batch.reduce((n, u) => n + u.count, 0);
        const started = Date.now();
        skipped.push(
          ...(await stageBatch(ctx, batch.map((u) => u.pathspec), files, !opts.knownContent, signal, (n) => {
            hashed += n;
            report();
          })),
        );
        measured.files += files;
        measured.bytes += batch.reduce((n, u) => n + u.bytes, 0);
        measured.ms += Date.now() - started;
        from = end;
      }
      await forceRemove(ctx, plan.forceRemove, signal);
      const dirUnits = units.filter((u) => u.isDir).map((u) => u.pathspec);
      if (dirUnits.length) {
        // A directory pathspec also takes files that appeared after the scan: hold them to the same limits.
        const late = await lateArrivals(ctx, dirUnits, new Set(plan.stage), signal);
        const latePlan = planCapture({ modified: [], deleted: [], untracked: late, newDirs: [] }, { files: new Map(), overLimit: new Map() }, collectFacts(ctx.location.root, late), ctx.settings, secrets);
        skipped.push(...latePlan.skipped);
        await forceRemove(ctx, latePlan.skipped.map((s) => s.path), signal);
      }
      if (opts.holdPaths?.length) await holdBack(ctx, opts.holdPaths, latest?.tree ?? null, signal);
      tree = (await git(gitCall(ctx, { verb: 'write-tree', signal }))).stdout.toString('utf8').trim();
    }

    const skippedView = { skipped: skipped.slice(0, SKIPPED_KEPT), skippedCount: skipped.length };
    if ((latest && latest.tree === tree && !opts.force) || opts.dryCommit || ctx.scratch) {
      if (latest?.tree === tree && !ctx.scratch) {
        const times = { refreshed: stamp?.refreshed ?? 0, staged: stamp?.staged ?? 0 };
        if (unchanged && refreshDue(stamp, Date.now())) {
          await git(gitCall(ctx, { verb: 'update-index', args: ['-q', '--refresh'], okCodes: [1], signal }));
          times.refreshed = Date.now();
        }
        if (!stamp || times.refreshed !== stamp.refreshed) writeStamp(ctx.paths, tree, times);
      }
      return { created: false, id: latest?.id, tree, record: latest, ...skippedView, elapsedMs: deadline.elapsed() };
    }

    const now = Date.now();
    const meta = {
      time: now,
      session: opts.session ?? null,
      turn: opts.turn ?? null,
      step: opts.step ?? null,
      tool: opts.tool ?? null,
      kind: opts.kind ?? 'manual',
      message: opts.message ?? '',
      stats: { added: 0, modified: 0, deleted: 0 },
      bytes: 0,
      paths: [] as ChangedPath[],
      changed: 0,
      ...skippedView,
      ...(opts.operation ? { op: await opts.operation(tree) } : {}),
      ...opts.hook,
    };
    const isoDate = `@${Math.floor(now / 1000)} +0000`;
    const commitArgs: GitCall['args'] = [{ oid: tree }];
    if (latest) commitArgs.push('-p', { oid: latest.id });
    const identity = {
      GIT_AUTHOR_NAME: CHECKPOINT_AUTHOR.name,
      GIT_AUTHOR_EMAIL: CHECKPOINT_AUTHOR.email,
      GIT_AUTHOR_DATE: isoDate,
      GIT_COMMITTER_NAME: CHECKPOINT_AUTHOR.name,
      GIT_COMMITTER_EMAIL: CHECKPOINT_AUTHOR.email,
      GIT_COMMITTER_DATE: isoDate,
    };
    // The stats trailer needs the diff, and the diff needs a commit: diff the trees first.
    const diff = await changedPaths(ctx, latest?.tree ?? null, tree, signal).catch(async () => ({ changes: [], added: [], modified: [] }));
    meta.stats = {
      added: diff.changes.filter((c) => c.status === 'A').length,
      modified: diff.changes.filter((c) => c.status === 'M' || c.status === 'T').length,
      deleted: diff.changes.filter((c) => c.status === 'D').length,
    };
    meta.bytes = [...diff.added, ...diff.modified].reduce((sum, p) => sum + (plan.sizes.get(p) ?? 0), 0);
    meta.paths = diff.changes.slice(0, PATHS_KEPT);
    meta.changed = diff.changes.length;
    let parent = latest?.id ?? null;
    let committed;
    try {
      committed = await git(gitCall(ctx, { verb: 'commit-tree', args: commitArgs, input: commitMessage(meta), env: identity, signal }));
    } catch (err) {
      if (!latest || signal.aborted) throw err;
      // The latest checkpoint lost its commit (a damaged store): chain to the newest one still whole.
      parent = await newestIntactParent(ctx);
      const args: GitCall['args'] = [{ oid: tree }, ...(parent ? ['-p', { oid: parent }] : [])];
      committed = await git(gitCall(ctx, { verb: 'commit-tree', args, input: commitMessage(meta), env: identity, signal }));
    }
    const id = committed.stdout.toString('utf8').trim();
    const record: CheckpointRecord = { v: LEDGER_SCHEMA, id, parent, tree, ...meta };
    appendRecord(ctx.paths.ledger, record);
    writeStamp(ctx.paths, tree, { refreshed: 0, staged: Date.now() });

    // Packs written by this snapshot's batches are marked .keep at once, so no git command ever drops them.
    if (total >= PACK_BATCH_MIN && !opts.knownContent) keepAllPacks(ctx.paths.gitDir);
    const packState = readPackState(ctx.paths);
    // New loose objects: blobs of small batches, one tree per directory on a changed path, the commit.
    packState.looseEstimate += (total < PACK_BATCH_MIN ? total : 0) + changedDirectories(diff.changes) + 1;
    packState.sinceGc += 1;
    if (packState.sinceGc >= AUTO_GC_EVERY) {
      packState.sinceGc = 0;
      maybeStartBackgroundGc(ctx);
    }
    if (packState.looseEstimate >= LOOSE_PACK_THRESHOLD) {
      // Housekeeping: a failure here leaves loose objects, never a broken checkpoint.
      await packLooseObjects(ctx, packState, signal).catch(() => writeFileAtomic(packStateFile(ctx.paths), JSON.stringify(packState)));
    } else {
      writeFileAtomic(packStateFile(ctx.paths), JSON.stringify(packState));
    }
    return { created: true, id, tree, record, ...skippedView, elapsedMs: deadline.elapsed() };
  } catch (err) {
    if (signal.aborted) {
      removeGitDebris(ctx.paths);
      const reason = signal.reason;
      if (isCkptError(reason, 'budget')) {
        throw new CkptError(
          'budget',
          `snapshot stopped by its ${Math.round(budget / 100) / 10}s time budget after hashing ${hashed} of ${total || '?'} files; the work done is kept, run it again to resume (or raise ckpt.timeBudget)`,
          { hashed, total },
        );
      }
      throw reason;
    }
    throw err;
  } finally {
    deadline.dispose();
  }
}
