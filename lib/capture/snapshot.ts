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
import {
  batchLimits,
  planCapture,
  secretMatcher,
  stageUnits,
  takeBatch,
  NO_SECRETS,
  type NewDirExpansion,
  type SecretMatcher,
  type StageUnit,
} from './capture-plan.js';
import { gitCall, type StoreContext } from '../store/context.js';
import { pausePoint } from '../model/crash-point.js';
import { Deadline } from './deadline.js';
import { CkptError, isCkptError } from '../model/errors.js';
import {
  AUTO_GC_EVERY,
  LOOSE_PACK_THRESHOLD,
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
  newlySkipped,
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
import { rawDiffSplitter } from '../git/objects.js';
import { keepAllPacks } from '../store/packs.js';
import { EMPTY_TREE } from '../model/oid.js';
import { ancestorsOf, isUtf8Path } from '../model/paths.js';
import { probeDegraded } from '../store/probe.js';
import { GITLINK, SYMLINK, type TreeChange } from '../model/tree.js';
import { git, zSplitter, type GitCall } from '../git/runner.js';
import { pathMessages } from '../model/git-messages.js';
import { saveIgnoreRules } from './ignore-rules.js';
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
  /** What the checkpoint before this capture did not also leave out (newlySkipped): what to report. */
  newlySkipped?: SkippedPath[];
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
 * What the index changed since the parent tree, with git's status letters
 * (T: file, symlink and gitlink swapped), summed up as the record needs it,
 * streamed: a first snapshot of a million files keeps its first PATHS_KEPT
 * paths and a set of folders, not a million changes. Run beside write-tree,
 * which writes the same index as a tree: a diff of the two trees afterwards
 * would cost one git process more on the path every one-file hook takes.
 */
async function indexChanges(
  ctx: StoreContext,
  parent: string | null,
  sizes: ReadonlyMap<string, number>,
  signal: AbortSignal,
): Promise<ChangeSummary> {
  const tally = changeTally(sizes);
  const split = rawDiffSplitter((c) =>
    tally.add(c, !c.before ? 'A' : !c.after ? 'D' : entryType(c.before.mode) === entryType(c.after.mode) ? 'M' : 'T'),
  );
  await git(
    gitCall(ctx, {
      verb: 'diff-index',
      args: ['--cached', '-r', '-z', '--no-renames', '--raw', { oid: parent ?? EMPTY_TREE }],
      signal,
      collectStdout: false,
      onStdout: split,
    }),
  );
  return tally.done();
}

/** The change summary, summed one change at a time as a listing streams by. */
function changeTally(sizes: ReadonlyMap<string, number>): {
  add(change: TreeChange, status: ChangedPath['status'], ancestors?: string[]): void;
  done(): ChangeSummary;
} {
  const summary: ChangeSummary = {
    kept: [],
    count: 0,
    stats: { added: 0, modified: 0, deleted: 0 },
    bytes: 0,
    directories: 0,
    gitlinks: [],
  };
  const dirs = new Set<string>(['']);
  return {
    add(change, status, ancestors = ancestorsOf(change.path)) {
      summary.count++;
      if (summary.kept.length < PATHS_KEPT) summary.kept.push({ path: change.path, status });
      if (status === 'D') summary.stats.deleted++;
      else {
        if (status === 'A') summary.stats.added++;
        else summary.stats.modified++;
        summary.bytes += sizes.get(change.path) ?? 0;
      }
      for (const dir of ancestors) dirs.add(dir);
      if (change.before?.mode === GITLINK || change.after?.mode === GITLINK) summary.gitlinks!.push(change);
    },
    done() {
      summary.directories = dirs.size;
      return summary;
    },
  };
}

interface ChangeSummary {
  /** The first PATHS_KEPT changes, in git's order. */
  kept: ChangedPath[];
  count: number;
  stats: { added: number; modified: number; deleted: number };
  /** Bytes of the files added or modified (sizes from the plan). */
  bytes: number;
  /** Folders on changed paths, the root included: each is a new tree object. */
  directories: number;
  /** The changes that involve a gitlink (the gitlink cache follows them); absent when the diff is unknown. */
  gitlinks?: TreeChange[];
}

/** The latest tree is missing (a damaged store): no stats; the commit chains past it. */
const NO_CHANGES: ChangeSummary = { kept: [], count: 0, stats: { added: 0, modified: 0, deleted: 0 }, bytes: 0, directories: 1 };

/** Pure: what a tree entry's mode says it is. */
function entryType(mode: string): 'file' | 'symlink' | 'gitlink' | 'tree' {
  return mode === SYMLINK ? 'symlink' : mode === GITLINK ? 'gitlink' : mode.startsWith('04') ? 'tree' : 'file';
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

/**
 * The latest checkpoint, after the checks a write needs: schema, a lost index rebuilt, excludes in sync, stale
 * entries dropped; and the id of the ignore rules outside the tree this capture runs with (its record names them).
 */
async function prepare(ctx: StoreContext, signal: AbortSignal): Promise<{ latest: CheckpointRecord | undefined; rules: string }> {
  const latestRead = readLatest(ctx.paths.ledger);
  assertWritableSchema(latestRead.newestSchema);
  const latest = latestRead.record;
  if (latest && !existsSync(ctx.scratch?.indexFile ?? ctx.paths.indexFile)) {
    // Index lost: rebuild it from the latest tree; stat data is empty, so git rehashes what it must.
    await git(gitCall(ctx, { verb: 'read-tree', args: [{ oid: latest.tree }], signal }));
  }
  const storeRoots = storeRootsInside(ctx.location.root, ctx.env);
  const exclude = syncExcludes(ctx.location, ctx.paths, storeRoots, ctx.scratch !== undefined);
  const rules = saveIgnoreRules(ctx.paths, exclude, ctx.env ?? process.env, ctx.scratch === undefined);
  // A nested repository that is plain files now (its .git removed): out of the index, so the scan lists its files as new.
  await forceRemove(ctx, await staleGitlinks(ctx, signal), signal);
  // Store roots inside the workspace are excluded; what was captured of one before that leaves the index.
  if (storeRoots.length) await forceRemove(ctx, await trackedBelow(ctx, storeRoots, signal), signal);
  return { latest, rules };
}

/** The scan, the facts about every candidate, and the pure capture plan. */
async function planFromDisk(
  ctx: StoreContext,
  first: boolean,
  signal: AbortSignal,
  only?: readonly string[],
  untracked = true,
): Promise<CapturePlan> {
  const scan = await scanWorkspace(ctx, !first, signal, only, untracked);
  const listable = scan.newDirs.filter(isUtf8Path);
  const expansion = listable.length ? await expandNewDirs(ctx, listable, ctx.settings.maxNewFiles, signal) : NO_EXPANSION;
  const candidates = [...scan.modified, ...scan.untracked, ...scan.deleted];
  for (const list of expansion.files.values()) candidates.push(...list);
  const facts = collectFacts(ctx.location.root, candidates);
  const { secrets, forgotten } = candidates.length ? await matchers(ctx) : { secrets: NO_SECRETS, forgotten: NO_SECRETS };
  return { ...planCapture(scan, expansion, facts, ctx.settings, secrets, forgotten), secrets, forgotten };
}

const NO_EXPANSION: NewDirExpansion = { files: new Map(), overLimit: new Map() };

/** The secret patterns and the patterns `forget --path` removed, as matchers. */
async function matchers(ctx: StoreContext): Promise<{ secrets: SecretMatcher; forgotten: SecretMatcher }> {
  const forgottenPatterns = readForgotten(ctx.paths);
  return {
    secrets: await secretMatcher(ctx.settings.secretPatterns),
    forgotten: forgottenPatterns.length ? await secretMatcher(forgottenPatterns, true) : NO_SECRETS,
  };
}

/** The batches hashed so far: the budget sizes the next one from their throughput. */
interface Hashing {
  measured: { files: number; bytes: number; ms: number };
  batches: number;
  skipped: SkippedPath[];
}

const newHashing = (): Hashing => ({ measured: { files: 0, bytes: 0, ms: 0 }, batches: 0, skipped: [] });

/** Hash units into the shadow index in batches sized to what is left of the budget. */
async function hashUnits(
  ctx: StoreContext,
  units: readonly StageUnit[],
  opts: SnapshotOptions,
  deadline: Deadline,
  hashing: Hashing,
  onHashed: (n: number) => void,
  unbudgetedBatch?: number,
): Promise<void> {
  const budget = opts.timeBudgetMs ?? ctx.settings.timeBudgetMs;
  const { measured } = hashing;
  for (let from = 0; from < units.length; ) {
    // The first batch always runs: every snapshot makes progress, however small its budget.
    if (hashing.batches > 0) deadline.arm();
    deadline.check();
    const limits =
      budget <= 0 && unbudgetedBatch
        ? { maxCount: unbudgetedBatch, maxBytes: Number.POSITIVE_INFINITY }
        : batchLimits(budget > 0 ? budget - deadline.elapsed() : undefined, measured.files ? measured : undefined);
    const end = takeBatch(units, from, limits.maxCount, limits.maxBytes);
    const batch = units.slice(from, end);
    const files = batch.reduce((n, u) => n + u.count, 0);
    const started = Date.now();
    const pathspecs = batch.map((u) => u.pathspec);
    hashing.skipped.push(...(await stageBatch(ctx, pathspecs, files, !opts.knownContent, deadline.signal, onHashed)));
    hashing.batches++;
    measured.files += files;
    measured.bytes += batch.reduce((n, u) => n + u.bytes, 0);
    measured.ms += Date.now() - started;
    from = end;
  }
}

/** The progress callback's view of the hashing, at most as far as the total. */
function progressReport(opts: SnapshotOptions, deadline: Deadline, progress: Progress, first: boolean): (n: number) => void {
  return (n) => {
    progress.hashed += n;
    opts.onProgress?.({ hashed: Math.min(progress.hashed, progress.total), total: progress.total, elapsedMs: deadline.elapsed(), first });
  };
}

interface Staged {
  tree: string;
  skipped: SkippedPath[];
  changes?: Promise<ChangeSummary>;
}

/** Hash what the plan stages, in batches under the budget, then write the tree. Returns the tree and every skip. */
async function stageAndWrite(
  ctx: StoreContext,
  plan: CapturePlan,
  latest: CheckpointRecord | undefined,
  opts: SnapshotOptions,
  deadline: Deadline,
  progress: Progress,
): Promise<Staged> {
  const { signal } = deadline;
  const skipped = [...plan.skipped];
  progress.total = plan.stage.length;
  // Small change sets stay one pathspec per file: folding costs a listing of the whole index afterwards.
  const maxUnit = plan.stage.length >= FOLD_MIN_PATHS ? MAX_DIR_UNIT : 0;
  const units = stageUnits(plan.stage, plan.sizes, [...skipped.map((s) => s.path), ...plan.forceRemove], maxUnit);
  // First: while the index still tracks files below a folder that is a repository now, git walks
  // into it instead of recording it as a gitlink.
  await forceRemove(ctx, plan.forceRemove, signal);
  const hashing = newHashing();
  await hashUnits(ctx, units, opts, deadline, hashing, progressReport(opts, deadline, progress, !latest));
  skipped.push(...hashing.skipped);
  const dirUnits = units.filter((u) => u.isDir).map((u) => u.pathspec);
  if (dirUnits.length) {
    // A directory pathspec also takes files that appeared after the scan: hold them to the same limits.
    const late = await lateArrivals(ctx, dirUnits, new Set(plan.stage), signal);
    await dropUncapturable(ctx, late, plan, skipped, signal);
  }
  return writeStaged(ctx, latest, opts, skipped, plan.sizes, signal);
}

/** The plan for paths taken as untracked files, with their facts read from disk now. */
function planUntracked(ctx: StoreContext, paths: string[], matching: Pick<CapturePlan, 'secrets' | 'forgotten'>) {
  const scan = { modified: [], deleted: [], untracked: paths, newDirs: [] };
  return planCapture(scan, NO_EXPANSION, collectFacts(ctx.location.root, paths), ctx.settings, matching.secrets, matching.forgotten);
}

/** Paths already in the index that the limits would have skipped: out again, and reported. */
async function dropUncapturable(
  ctx: StoreContext,
  paths: string[],
  matching: Pick<CapturePlan, 'secrets' | 'forgotten'>,
  skipped: SkippedPath[],
  signal: AbortSignal,
): Promise<void> {
  if (!paths.length) return;
  const plan = planUntracked(ctx, paths, matching);
  skipped.push(...plan.skipped);
  await forceRemove(
    ctx,
    plan.skipped.map((s) => s.path),
    signal,
  );
}

/** After staging: held paths put back, then the tree written and (for a checkpoint) the changes read beside it. */
async function writeStaged(
  ctx: StoreContext,
  latest: CheckpointRecord | undefined,
  opts: SnapshotOptions,
  skipped: SkippedPath[],
  sizes: ReadonlyMap<string, number>,
  signal: AbortSignal,
): Promise<Staged> {
  if (opts.holdPaths?.length) await holdBack(ctx, opts.holdPaths, latest?.tree ?? null, signal);
  await pausePoint('staged');
  const changes = opts.dryCommit || ctx.scratch ? undefined : indexChanges(ctx, latest?.tree ?? null, sizes, signal);
  // Handled by the caller, or dropped with write-tree's own error.
  changes?.catch(() => undefined);
  const tree = (await git(gitCall(ctx, { verb: 'write-tree', signal }))).stdout.toString('utf8').trim();
  return { tree, skipped, ...(changes ? { changes } : {}) };
}

/**
 * Untracked paths listed, planned and hashed at a time by a first snapshot.
 * Each `git add` reads and writes the whole index, and git's bulk check-in
 * looks up every new object in a list of those already written (quadratic in
 * the batch): at a million files 20,000 took 124 s and 50,000 took 136 s.
 * (`GIT_CKPT_TEST_FIRST_CHUNK` makes it small, so tests cross many chunk edges).
 */
const FIRST_CHUNK_PATHS = Number(process.env.GIT_CKPT_TEST_FIRST_CHUNK) || 25_000;

/**
 * A first snapshot, streamed: the listing of the workspace is read in chunks
 * of FIRST_CHUNK_PATHS paths, and each chunk is planned by the same planner
 * and hashed while git waits with the rest, so memory is a chunk's whatever
 * the workspace's size (a million files held whole took five times git's own
 * memory). git lists untracked files in path order, so a folder's files are
 * together: a chunk folds its folders into pathspecs except those it shares
 * with the chunks before and after it.
 */
async function stageFirstSnapshot(ctx: StoreContext, opts: SnapshotOptions, deadline: Deadline, progress: Progress): Promise<Staged> {
  const { signal } = deadline;
  // What a first snapshot stopped by its budget left in the index, changed since: planned whole
  // (it is at most what that run hashed), and never folded, or its folders would take untracked files unplanned.
  const tracked = await planFromDisk(ctx, true, signal, undefined, false);
  const { secrets, forgotten } = await matchers(ctx);
  const skipped = [...tracked.skipped];
  const blocked = [...skipped.map((s) => s.path), ...tracked.forceRemove];
  const report = progressReport(opts, deadline, progress, true);
  if (opts.onProgress) progress.total = tracked.stage.length + (await countUntracked(ctx, signal));
  await forceRemove(ctx, tracked.forceRemove, signal);
  const hashing = newHashing();
  await hashUnits(ctx, stageUnits(tracked.stage, tracked.sizes, blocked, 0), opts, deadline, hashing, report);
  let bytes = [...tracked.sizes.values()].reduce((n, b) => n + b, 0);
  let staged = tracked.stage.length;
  const folded = new Map<string, number>();
  // Without a budget (init) a folder of up to a chunk's files is one pathspec: every `git add`
  // matches its pathspecs against the whole index, so a few large ones keep a million files linear.
  const budget = opts.timeBudgetMs ?? ctx.settings.timeBudgetMs;
  const maxUnit = budget > 0 ? MAX_DIR_UNIT : FIRST_CHUNK_PATHS;
  let chunk: string[] = [];
  let previousLast: string | undefined;
  // One `git add` at a time (each writes the index), while the next chunk is looked at and
  // planned beside it: on two cores the planner's lstat and matching cost no wall time.
  let adding: Promise<void> = Promise.resolve();
  const takeChunk = async () => {
    const paths = chunk.length > FIRST_CHUNK_PATHS ? chunk.splice(0, FIRST_CHUNK_PATHS) : chunk;
    if (paths === chunk) chunk = [];
    if (!paths.length) return;
    // The folders this chunk shares with the one before and the one after stay unfolded.
    const shared = [sharedFolder(previousLast, paths[0]!), sharedFolder(paths[paths.length - 1]!, chunk[0])];
    previousLast = paths[paths.length - 1];
    const plan = planUntracked(ctx, paths, { secrets, forgotten });
    skipped.push(...plan.skipped);
    for (const b of plan.sizes.values()) bytes += b;
    staged += plan.stage.length;
    if (!opts.onProgress) progress.total = staged;
    const blockedHere = [...blocked, ...plan.skipped.map((s) => s.path), ...shared.filter((d) => d !== undefined)];
    const units = stageUnits(plan.stage, plan.sizes, blockedHere, plan.stage.length >= FOLD_MIN_PATHS ? maxUnit : 0);
    for (const u of units) if (u.isDir) folded.set(u.pathspec.slice(0, -1), u.count);
    await adding;
    // Without a budget a chunk is one `git add`: each one reads and writes the whole index.
    adding = hashUnits(ctx, units, opts, deadline, hashing, report, FIRST_CHUNK_PATHS);
    adding.catch(() => undefined); // awaited by the next chunk or after the listing
  };
  const split = zSplitter((p) => chunk.push(p));
  const { stderr } = await git(
    gitCall(ctx, {
      verb: 'ls-files',
      args: UNTRACKED_LISTING,
      signal,
      collectStdout: false,
      onStdout(data) {
        split(data);
        // While a chunk is hashed git's output waits (the runner pauses the pipe). One path more
        // than a chunk is read first: the next chunk's first path tells which folders they share.
        return chunk.length > FIRST_CHUNK_PATHS ? takeChunk() : undefined;
      },
    }),
  );
  split.end();
  while (chunk.length) await takeChunk();
  await adding;
  skipped.push(...pathMessages(stderr).skipped, ...hashing.skipped);
  // A folded folder also takes files that appeared after the listing: hold them to the same limits.
  let listed = await listIndex(ctx, folded, signal);
  if (listed.grown.length) {
    const late = await trackedBelow(ctx, listed.grown, signal);
    await dropUncapturable(ctx, late, { secrets, forgotten }, skipped, signal);
    listed = await listIndex(ctx, new Map(), signal);
  }
  progress.total = staged;
  // Against no parent the change is the index itself: listed above, where diff-index would hold
  // a pair for every entry (at a million files the largest process of the snapshot).
  const result = await writeStaged(ctx, undefined, { ...opts, dryCommit: true }, skipped, new Map(), signal);
  const summary = { ...listed.summary, bytes };
  return { ...result, ...(opts.dryCommit || ctx.scratch ? {} : { changes: Promise.resolve(summary) }) };
}

/** Pure: the deepest folder two paths share (they are in path order, so everything between is in it too). */
function sharedFolder(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return undefined;
  const shared = ancestorsOf(a).filter((dir) => b.startsWith(`${dir}/`));
  return shared[shared.length - 1];
}

/** A first snapshot's listing of untracked files (the count for its progress uses the same). */
const UNTRACKED_LISTING = ['-z', '-o', '--exclude-standard'];

/** How many untracked paths a first snapshot will list (for its progress total): one quick pass, nothing kept. */
async function countUntracked(ctx: StoreContext, signal: AbortSignal): Promise<number> {
  let n = 0;
  await git(
    gitCall(ctx, {
      verb: 'ls-files',
      args: UNTRACKED_LISTING,
      signal,
      collectStdout: false,
      onStdout(data) {
        for (let i = data.indexOf(0); i !== -1; i = data.indexOf(0, i + 1)) n++;
      },
    }),
  );
  return n;
}

/**
 * One streamed pass over a first snapshot's index: the change summary against
 * no parent (every entry added), and the folded folders that hold more entries
 * than were planned there (files created after the listing).
 */
async function listIndex(
  ctx: StoreContext,
  folded: Map<string, number>,
  signal: AbortSignal,
): Promise<{ summary: ChangeSummary; grown: string[] }> {
  // Sizes are the caller's (summed while staging): every entry here is an addition.
  const tally = changeTally(new Map());
  const seen = new Map<string, number>();
  const split = zSplitter((entry) => {
    // "<mode> <oid> <stage>\t<path>"
    const tab = entry.indexOf('\t');
    const p = entry.slice(tab + 1);
    const [mode, oid] = entry.slice(0, tab).split(' ');
    const ancestors = ancestorsOf(p);
    tally.add({ path: p, before: null, after: { mode: mode!, oid: oid! } }, 'A', ancestors);
    const inFolded = ancestors.find((dir) => folded.has(dir));
    if (inFolded !== undefined) seen.set(inFolded, (seen.get(inFolded) ?? 0) + 1);
  });
  await git(gitCall(ctx, { verb: 'ls-files', args: ['-z', '-s'], signal, collectStdout: false, onStdout: split }));
  split.end();
  const grown = [...seen].filter(([dir, n]) => n > folded.get(dir)!).map(([dir]) => `${dir}/`);
  return { summary: tally.done(), grown };
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
  sizes: ReadonlyMap<string, number>,
  skipped: SkippedPath[],
  opts: SnapshotOptions & { rules: string },
  pending: Promise<ChangeSummary> | undefined,
  signal: AbortSignal,
  { mayIncludeLater }: { mayIncludeLater: boolean },
): Promise<{ record: CheckpointRecord; diff: ChangeSummary }> {
  const now = Date.now();
  // The stats trailer needs the diff, so it comes before the commit.
  const diff = await (pending ?? indexChanges(ctx, latest?.tree ?? null, sizes, signal)).catch((err: unknown) => {
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
    stats: diff.stats,
    bytes: diff.bytes,
    paths: diff.kept,
    changed: diff.count,
    skipped: skipped.slice(0, SKIPPED_KEPT),
    skippedCount: skipped.length,
    rules: opts.rules,
    ...(opts.operation ? { op: await opts.operation(tree) } : {}),
    ...opts.hook,
    ...(mayIncludeLater ? { mayIncludeLater: true as const } : {}),
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
  if (diff.gitlinks) carryGitlinks(ctx.paths, latest?.tree, tree, diff.gitlinks);
  return { record, diff };
}

/** After a checkpoint: mark its packs .keep, count loose objects, pack them or start gc when due. */
async function afterCommit(
  ctx: StoreContext,
  diff: ChangeSummary,
  staged: number,
  opts: SnapshotOptions,
  signal: AbortSignal,
): Promise<void> {
  // Packs written by this snapshot's batches are marked .keep at once, so no git command ever drops them.
  if (staged >= PACK_BATCH_MIN && !opts.knownContent) keepAllPacks(ctx.paths);
  const packState = readPackState(ctx.paths);
  // New loose objects: blobs of small batches, one tree per directory on a changed path, the commit.
  packState.looseEstimate += (staged < PACK_BATCH_MIN ? staged : 0) + diff.directories + 1;
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
 * The daemon's no-change capture: the watcher saw nothing change, and the index
 * is as the latest checkpoint left it (its stamp). Nothing to scan or prepare:
 * what prepare looks at (the exclude files, nested repositories, the index
 * itself) would have been a change the watcher saw, or an unknown view.
 */
function unchangedByWatcher(ctx: StoreContext): Pick<SnapshotResult, 'created' | 'id' | 'tree' | 'record'> | undefined {
  const latestRead = readLatest(ctx.paths.ledger);
  const latest = latestRead.record;
  if (!latest) return undefined;
  assertWritableSchema(latestRead.newestSchema);
  const stamp = readStamp(ctx.paths);
  if (stamp?.tree !== latest.tree) return undefined;
  return { created: false, id: latest.id, tree: latest.tree, record: latest };
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
    // A watcher's view narrows the scan of a real snapshot; dry and scratch captures scan everything.
    const view = ctx.changes && !ctx.scratch && !opts.dryCommit ? await ctx.changes.view(signal) : undefined;
    if (view && !view.full && view.paths.length === 0 && !opts.force && !opts.holdPaths?.length) {
      const unchanged = unchangedByWatcher(ctx);
      if (unchanged) {
        ctx.changes?.settle(view, []);
        return { ...unchanged, skipped: [], skippedCount: 0, allSkipped: [], elapsedMs: deadline.elapsed() };
      }
    }
    const { latest, rules } = await prepare(ctx, signal);
    const only = view && !view.full && latest ? view.paths : undefined;
    const plan = latest ? await planFromDisk(ctx, false, signal, only) : undefined;
    const unchanged = plan !== undefined && plan.stage.length === 0 && plan.forceRemove.length === 0;
    const stamp = unchanged && !ctx.scratch ? readStamp(ctx.paths) : undefined;
    const {
      tree,
      skipped,
      changes: pendingChanges,
    } = !plan
      ? await stageFirstSnapshot(ctx, opts, deadline, progress)
      : stamp
        ? { tree: stamp.tree, skipped: plan.skipped, changes: undefined }
        : await stageAndWrite(ctx, plan, latest, opts, deadline, progress);
    const skippedView = {
      skipped: skipped.slice(0, SKIPPED_KEPT),
      skippedCount: skipped.length,
      allSkipped: skipped,
      newlySkipped: newlySkipped(skipped, latest),
    };
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
    const { record, diff } = await commitCheckpoint(
      ctx,
      latest,
      tree,
      plan?.sizes ?? new Map(),
      skipped,
      { ...opts, rules },
      pendingChanges,
      signal,
      { mayIncludeLater: view?.later === true },
    );
    settle();
    await afterCommit(ctx, diff, progress.total, opts, signal);
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
