/**
 * Restore, revert and undo as transactions. The caller holds the workspace lock.
 *
 *   1. capture a guard checkpoint of the current state (content dedup applies);
 *      a dry run captures into a scratch index and object folder instead, so
 *      the store stays byte-identical;
 *   2. plan purely (restore-plan.ts) against the guard and the disk; what the
 *      guard could not capture is left alone; a plan that is not the one the
 *      caller agreed to (`expectPlan`) stops here;
 *   3. write the journal, fsync'd, before the first write to the workspace;
 *   4. apply in explicit-path batches, atomic per file; a failure is recorded
 *      and the pass goes on;
 *   5. capture the result as the operation's record (its parent is the guard),
 *      verifying every journaled path against what was wanted;
 *   6. remove the journal.
 * A kill at any moment leaves either no journal (nothing written yet, or all
 * done and recorded) or a journal that --continue and --abort complete; they
 * capture a guard first and leave alone each path changed since the kill.
 */
import { shortId } from './short-ids.js';
import path from 'node:path';
import { applyEntries, randomTag, removeTmpFiles, type ApplyEntry, type ApplyFailure } from './apply.js';
import { crashPoint } from './crash-point.js';
import { diskEntry, gatherDiskFacts, tryLstat } from './disk.js';
import { listTree, treeChanges, type RepoAccess } from './objects.js';
import { CkptError } from './errors.js';
import { readJournal, removeJournal, writeJournal, type Journal, type JournalEntry } from './journal.js';
import {
  OPERATION_KINDS,
  SKIPPED_KEPT,
  type CheckpointRecord,
  type OperationInfo,
  type OperationKind,
  type SkippedPath,
} from './ledger.js';
import { isSelected, unsafePathReason } from './paths.js';
import {
  actionable,
  reconcile,
  restoreWants,
  revertWants,
  sameEntry,
  planFingerprint,
  shieldUncaptured,
  staleUndoPaths,
  withExtraFiles,
  type ActionCounts,
  type Plan,
  type PlannedFile,
  type ReconcileInput,
  type TreeChange,
  type TreeEntry,
  type Want,
} from './restore-plan.js';
import { EMPTY_TREE } from './objects.js';
import type { StoreContext } from './context.js';
import { snapshotLocked, withScratchCapture } from './snapshot.js';
import { storeRootsInside } from './store.js';
import { revertTrees, type ConflictMode, type RevertConflict, type RevertStep } from './merge.js';
import { gitVersion, versionBelow } from './runner.js';
import { diffTrees } from './inspect.js';

export interface OperationOptions {
  /** Plan and print, change nothing: not the workspace, the store or the ledger. */
  dryRun?: boolean;
  /** A dry run also returns the line diff the plan would write (`diff`), from the same capture. */
  preview?: boolean;
  /**
   * The `planId` of the dry run the user agreed to: the operation refuses
   * (`stale`, nothing written) when its plan is no longer that one.
   */
  expectPlan?: string;
}

export interface RestoreOptions extends OperationOptions {
  /** Also delete files that exist now but not in the checkpoint (only captured ones). */
  deleteNew?: boolean;
  /** Only these workspace-relative paths (files or directories). */
  paths?: string[];
}

export interface UndoOptions extends OperationOptions {
  /** Undo even when files the operation touched changed since. */
  force?: boolean;
}

export interface OperationReport {
  op: OperationKind;
  dryRun: boolean;
  /** The checkpoint restored or reverted, or the operation record undone. */
  target: string;
  /** The checkpoint holding the state before the operation (null in a dry run). */
  guard: string | null;
  /** The operation's own record (null when nothing was written). */
  record: string | null;
  plan: Plan;
  /** What the plan writes, over what, as one id: pass it back as `expectPlan` to apply exactly this plan. */
  planId: string;
  counts: ActionCounts & { failed: number };
  failures: ApplyFailure[];
  leftovers: string[];
  /** Paths the capture could not take (too large, secret …): never touched. */
  uncaptured: SkippedPath[];
  /** A previewed dry run's line diff, from the workspace to what it would write. */
  diff?: string;
}

interface LiveState {
  tree: string;
  guard: string | null;
  entries: Map<string, TreeEntry>;
  uncaptured: SkippedPath[];
}

function repoOf(ctx: StoreContext): RepoAccess {
  return { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir };
}

function refuseIfInterrupted(ctx: StoreContext): void {
  const journal = readJournal(ctx.paths.dir);
  if (journal) {
    throw new CkptError(
      'pending',
      `an interrupted ${journal.op} (journal ${journal.id}) is pending; finish it with: git ckpt restore --continue, or roll it back with: git ckpt restore --abort`,
    );
  }
}

/**
 * Capture the workspace and hand it to `work`: a guard checkpoint, or for a
 * dry run a scratch tree (with its object folder, alive while `work` runs)
 * that leaves the store as it was.
 */
async function withLive<T>(
  ctx: StoreContext,
  dryRun: boolean,
  message: string,
  work: (live: LiveState, objectDir?: string) => Promise<T>,
): Promise<T> {
  if (!dryRun) {
    const result = await snapshotLocked(ctx, { kind: 'guard', message, timeBudgetMs: 0 });
    // A guard always has an id: it is the new checkpoint, or the latest when nothing changed (the store is not empty then).
    const entries = await listTree(repoOf(ctx), result.tree);
    return work({ tree: result.tree, guard: result.id!, entries, uncaptured: result.allSkipped ?? result.skipped });
  }
  return withScratchCapture(ctx, async (result, objectDir) => {
    const entries = await listTree(repoOf(ctx), result.tree, undefined, objectDir);
    return work({ tree: result.tree, guard: null, entries, uncaptured: result.allSkipped }, objectDir);
  });
}

/** The paths a plan writes or deletes. */
function writtenPaths(plan: Plan): string[] {
  return plan.files.filter((f) => f.action === 'restore' || f.action === 'recreate' || f.action === 'delete').map((f) => f.path);
}

/** More paths than this and a preview diffs whole trees: the list would exceed a command line, and the diff says the same. */
const PREVIEW_MAX_PATHS = 2000;

/** A dry run's preview: the line diff from the live tree to `result` over the paths the plan writes (not those it skips). */
async function withPreview(
  ctx: StoreContext,
  report: OperationReport,
  options: OperationOptions,
  live: LiveState,
  result: string,
  objectDir: string | undefined,
): Promise<OperationReport> {
  if (!report.dryRun || !options.preview) return report;
  const writes = writtenPaths(report.plan);
  if (writes.length === 0) return { ...report, diff: '' };
  const paths = writes.length <= PREVIEW_MAX_PATHS ? writes : undefined;
  return { ...report, diff: await diffTrees(ctx.paths, live.tree, result, 'patch', false, paths, objectDir) };
}

/**
 * What a pass did: the plan's counts with the paths that failed taken out of
 * the action they were planned for, so "N restored" counts only what was written.
 */
function resultCounts(plan: Plan, failures: readonly ApplyFailure[]): ActionCounts & { failed: number } {
  const counts = { ...plan.counts, failed: failures.length };
  const failed = new Set(failures.map((f) => f.path));
  for (const f of plan.files) if (failed.has(f.path) && f.action !== 'skip' && f.action !== 'unchanged') counts[f.action]--;
  return counts;
}

/** reconcile, with every store root inside the workspace left alone. */
function reconcileHere(ctx: StoreContext, input: Omit<ReconcileInput, 'protectedDirs'>): Plan {
  return reconcile({ ...input, protectedDirs: storeRootsInside(ctx.location.root, ctx.env) });
}

function journalEntries(plan: Plan): JournalEntry[] {
  return plan.files
    .filter((f) => f.action === 'restore' || f.action === 'recreate' || f.action === 'delete')
    .map((f) => [f.path, f.action === 'delete' ? null : f.want!, f.from ?? null]);
}

/** Whether the disk holds `want` at `p` right now (used when a post-capture did not take the path). */
function diskHolds(root: string, p: string, want: Want): boolean {
  const full = path.join(root, p);
  const st = tryLstat(full);
  if (!st) return want === null;
  return want !== null && sameEntry(diskEntry(full, st), want);
}

/** How a journal's pass is recorded: the operation itself, or (abort) a restore of the guard's bytes. */
interface RecordAs {
  kind: OperationKind;
  target: string;
  guard: string;
  message: string;
  counts: ActionCounts;
  leftovers: number;
  flags: Pick<OperationInfo, 'continued' | 'aborted' | 'leftAlone'>;
}

function recordAsOperation(journal: Journal): RecordAs {
  return {
    kind: journal.op,
    target: journal.target,
    guard: journal.guard,
    message: journal.reverted
      ? `revert of ${journal.reverted.length} checkpoints, ${shortId(journal.reverted.at(-1)!)}..${shortId(journal.reverted[0]!)}`
      : `${journal.op} ${journal.op === 'undo' ? 'of' : 'to'} ${shortId(journal.target)}`,
    counts: journal.counts,
    leftovers: journal.leftovers,
    flags: {},
  };
}

/**
 * Apply a journal's entries (to their wanted state, or back to the guard's),
 * then record the pass, verifying each path against the result's tree.
 */
async function applyAndRecord(
  ctx: StoreContext,
  journal: Journal,
  entries: readonly ApplyEntry[],
  as: RecordAs,
): Promise<{ record: string | null; failures: ApplyFailure[]; written: number }> {
  // A killed pass may have left temporary files; clear them first so emptied directories can go.
  removeTmpFiles(
    ctx.location.root,
    entries.map((e) => e.path),
  );
  const applied = await applyEntries(repoOf(ctx), ctx.location.root, entries, journal.id);
  const failures = [...applied.failures];
  const failed = new Set(failures.map((f) => f.path));
  const result = await snapshotLocked(ctx, {
    kind: as.kind,
    force: true,
    knownContent: true,
    timeBudgetMs: 0,
    message: as.message,
    operation: async (tree) => {
      const after = await listTree(repoOf(ctx), tree);
      for (const e of entries) {
        if (failed.has(e.path)) continue;
        if (sameEntry(after.get(e.path) ?? null, e.want)) continue;
        if (!after.has(e.path) && diskHolds(ctx.location.root, e.path, e.want)) continue;
        failures.push({ path: e.path, error: 'verification failed: the workspace does not hold the wanted content' });
      }
      const info: OperationInfo = {
        target: as.target,
        guard: as.guard,
        journal: journal.id,
        counts: { ...as.counts, failed: failures.length },
        failures: failures.slice(0, SKIPPED_KEPT),
        leftovers: as.leftovers,
        ...(journal.paths ? { paths: journal.paths } : {}),
        ...(journal.reverted ? { reverted: journal.reverted } : {}),
        ...as.flags,
      };
      return info;
    },
  });
  return { record: result.id ?? null, failures, written: applied.written + applied.deleted };
}

interface Planned {
  op: OperationKind;
  /** The checkpoint restored or reverted, or the operation record undone. */
  target: string;
  live: LiveState;
  plan: Plan;
  /** The paths a restore was limited to. */
  paths?: string[];
  /** A revert's checkpoints, newest first. */
  reverted?: string[];
}

/** Run a planned operation: journal, apply, record, close. */
async function execute(ctx: StoreContext, planned: Planned, options: OperationOptions): Promise<OperationReport> {
  const { op, target, live, paths, reverted } = planned;
  const dryRun = options.dryRun ?? false;
  const plan = shieldUncaptured(planned.plan, live.uncaptured);
  const planId = planFingerprint(op, target, plan);
  const base = {
    op,
    dryRun,
    target,
    guard: live.guard,
    plan,
    planId,
    leftovers: plan.leftovers,
    uncaptured: live.uncaptured.slice(0, SKIPPED_KEPT),
  };
  if (!dryRun && options.expectPlan !== undefined && options.expectPlan !== planId)
    throw new CkptError(
      'stale',
      `the ${op} plan changed since its preview (files were edited since, or the checkpoints moved); nothing was written: preview it again`,
      { planId, expected: options.expectPlan },
    );
  if (dryRun || actionable(plan) === 0) return { ...base, record: null, counts: resultCounts(plan, []), failures: [] };
  const { restore, recreate, delete: del, unchanged, skip } = plan.counts;
  const journal: Journal = {
    v: 1,
    id: randomTag(),
    op,
    started: Date.now(),
    target,
    guard: live.guard!,
    counts: { restore, recreate, delete: del, unchanged, skip },
    leftovers: plan.leftovers.length,
    ...(paths?.length ? { paths } : {}),
    ...(reverted && reverted.length > 1 ? { reverted } : {}),
    entries: journalEntries(plan),
  };
  writeJournal(ctx.paths.dir, journal);
  crashPoint('journal');
  const entries = journal.entries.map(([p, want]) => ({ path: p, want }));
  const { record, failures } = await applyAndRecord(ctx, journal, entries, recordAsOperation(journal));
  removeJournal(ctx.paths.dir);
  return { ...base, record, counts: resultCounts(plan, failures), failures };
}

/** Fail closed on selected paths that are in neither the checkpoint nor the workspace. */
function checkSelection(root: string, target: Map<string, TreeEntry>, selection: string[]): void {
  const keys = [...target.keys()];
  for (const s of selection) {
    if (s === '.') continue;
    const unsafe = unsafePathReason(s);
    if (unsafe) throw new CkptError('path', `path refused: ${JSON.stringify(s)} (${unsafe})`);
    if (keys.some((k) => isSelected(k, [s]))) continue;
    if (!tryLstat(path.join(root, s)))
      throw new CkptError('path', `path is in neither the checkpoint nor the workspace: ${s}; nothing was changed`);
  }
}

export async function restoreLocked(ctx: StoreContext, target: CheckpointRecord, options: RestoreOptions = {}): Promise<OperationReport> {
  refuseIfInterrupted(ctx);
  const dryRun = options.dryRun ?? false;
  const selection = options.paths?.length ? options.paths : undefined;
  const targetEntries = await listTree(repoOf(ctx), target.id);
  if (selection) checkSelection(ctx.location.root, targetEntries, selection);
  return withLive(ctx, dryRun, `guard before restore to ${shortId(target.id)}`, async (live, objectDir) => {
    const selected = (p: string) => isSelected(p, selection);
    const { want, leftovers } = restoreWants(targetEntries, live.entries, selected, options.deleteNew ?? false);
    const disk = gatherDiskFacts(ctx.location.root, want, live.entries);
    const reconciled = reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: options.deleteNew ?? false });
    const uncapturedLeftovers = live.uncaptured.filter((s) => selected(s.path) && !targetEntries.has(s.path)).map((s) => s.path);
    const plan = { ...reconciled, leftovers: [...leftovers, ...uncapturedLeftovers].sort() };
    const report = await execute(ctx, { op: 'restore', target: target.id, live, plan, paths: selection }, options);
    return withPreview(ctx, report, options, live, target.id, objectDir);
  });
}

export interface RevertOptions extends OperationOptions {
  /** A conflicted text file: left as it is now (`keep`, the default) or given git's conflict markers. */
  conflict?: ConflictMode;
}

/**
 * Revert checkpoints (newest first) three-way: each one's change is undone in
 * the present, keeping every later edit that does not overlap it (merge.ts).
 * With a git older than 2.38, one checkpoint at a time as before: a path
 * changed since is skipped whole.
 */
export async function revertLocked(
  ctx: StoreContext,
  targets: readonly CheckpointRecord[],
  parentTree: (record: CheckpointRecord) => string | null,
  options: RevertOptions = {},
): Promise<OperationReport> {
  refuseIfInterrupted(ctx);
  const dryRun = options.dryRun ?? false;
  const newest = targets[0]!;
  if (versionBelow(await gitVersion(), THREE_WAY_GIT)) {
    if (targets.length > 1)
      throw new CkptError('usage', `reverting a range or a session needs git ${THREE_WAY_GIT} or newer (git merge-tree --write-tree)`);
    return revertWhole(ctx, newest, options);
  }
  // Each checkpoint's own change, read once: the merge steps and the plan's labels both use it.
  const steps: RevertStep[] = [];
  for (const t of targets) {
    const parent = parentTree(t);
    steps.push({ id: t.id, tree: t.tree, parentTree: parent, changes: await treeChanges(repoOf(ctx), parent ?? EMPTY_TREE, t.id) });
  }
  const reverted = targets.map((t) => t.id);
  const work = async (live: LiveState, objectDir?: string): Promise<OperationReport> => {
    const repo = { ...repoOf(ctx), scratchObjectDir: objectDir };
    const { tree, conflicts } = await revertTrees(repo, live.tree, steps, options.conflict ?? 'keep');
    const result = await listTree(repo, tree, undefined, objectDir);
    const want = new Map<string, TreeEntry | null>();
    for (const p of new Set([...live.entries.keys(), ...result.keys()]))
      if (!sameEntry(live.entries.get(p) ?? null, result.get(p) ?? null)) want.set(p, result.get(p) ?? null);
    // What each path held before the oldest reverted change to it: a result equal to it is a clean revert.
    const original = new Map<string, TreeEntry | null>();
    for (const step of steps) for (const c of step.changes) original.set(c.path, c.before);
    const disk = gatherDiskFacts(ctx.location.root, want, live.entries);
    const merged = reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: true });
    const conflicted = new Map(conflicts.map((c) => [c.path, c]));
    const files = merged.files.map((f): PlannedFile => {
      const conflict = conflicted.get(f.path);
      if (conflict)
        return {
          ...f,
          reason:
            options.conflict === 'markers' && !conflict.whole
              ? `conflict markers written: ${conflictText(conflict)}`
              : `conflict: ${conflictText(conflict)}; the other reverted changes to it were applied`,
        };
      if (f.action === 'skip' || f.action === 'unchanged') return f;
      const before = original.get(f.path);
      const clean = before !== undefined && sameEntry(want.get(f.path) ?? null, before);
      return { ...f, reason: clean ? 'reverted' : 'merged, keeping later edits' };
    });
    const kept = conflicts
      .filter((c) => !want.has(c.path))
      .map((c): PlannedFile => ({ path: c.path, action: 'skip', reason: `conflict: ${conflictText(c)}; left as it is` }));
    // Paths the reverted changes touched that need nothing (already as the revert wants them) count as unchanged.
    const settled = [...original.keys()]
      .filter((p) => !want.has(p) && !conflicted.has(p) && !conflicts.some((c) => p.startsWith(`${c.path}/`)))
      .map((p): PlannedFile => ({ path: p, action: 'unchanged' }));
    const plan = withExtraFiles({ ...merged, files }, [...dedupe(kept), ...settled], []);
    const report = await execute(ctx, { op: 'revert', target: newest.id, live, plan, reverted }, options);
    return withPreview(ctx, report, options, live, tree, objectDir);
  };
  return withLive(
    ctx,
    dryRun,
    `guard before revert of ${shortId(newest.id)}${targets.length > 1 ? ` and ${targets.length - 1} more` : ''}`,
    work,
  );
}

/** The git that first writes a merge's tree without a work tree. */
const THREE_WAY_GIT = '2.38';

/** Pure: a conflict in words: its line ranges in the present file, or why it is whole. */
function conflictText(c: RevertConflict): string {
  if (c.whole) return `${c.whole} (reverting ${shortId(c.checkpoint)})`;
  const ranges = c.ranges.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
  return `line${c.ranges.length === 1 && c.ranges[0]![0] === c.ranges[0]![1] ? '' : 's'} ${ranges} changed since (reverting ${shortId(c.checkpoint)})`;
}

/** The first conflict per path (a range revert can meet one path in several steps). */
function dedupe(files: PlannedFile[]): PlannedFile[] {
  const seen = new Set<string>();
  return files.filter((f) => !seen.has(f.path) && seen.add(f.path));
}

/** One checkpoint, reverted path by path: a path changed since is a conflict, skipped whole (git < 2.38). */
async function revertWhole(ctx: StoreContext, target: CheckpointRecord, options: OperationOptions): Promise<OperationReport> {
  const changes = await treeChanges(repoOf(ctx), target.parent ?? EMPTY_TREE, target.id);
  return withLive(ctx, options.dryRun ?? false, `guard before revert of ${shortId(target.id)}`, (live) =>
    revertWholeLive(ctx, target, changes, live, options),
  );
}

async function revertWholeLive(
  ctx: StoreContext,
  target: CheckpointRecord,
  changes: TreeChange[],
  live: LiveState,
  options: OperationOptions,
): Promise<OperationReport> {
  const { want, conflicts, unchanged } = revertWants(changes, live.entries);
  const disk = gatherDiskFacts(ctx.location.root, want, live.entries);
  // Said where it matters: this git cannot keep later edits in the same file.
  const whole = conflicts.map((c) => ({
    ...c,
    reason: `${c.reason} (git ${THREE_WAY_GIT} or newer would keep later edits in other lines)`,
  }));
  const plan = withExtraFiles(
    reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: true }),
    [...whole, ...unchanged.map((p): PlannedFile => ({ path: p, action: 'unchanged' }))],
    [],
  );
  return execute(ctx, { op: 'revert', target: target.id, live, plan }, options);
}

/** The newest restore, revert or undo record: what `undo` reverses. */
export function lastOperation(records: readonly CheckpointRecord[]): CheckpointRecord | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    if (OPERATION_KINDS.includes(records[i]!.kind as OperationKind)) return records[i];
  }
  return undefined;
}

export async function undoLocked(
  ctx: StoreContext,
  records: readonly CheckpointRecord[],
  options: UndoOptions = {},
  unreadableLines = 0,
): Promise<OperationReport> {
  refuseIfInterrupted(ctx);
  const last = lastOperation(records);
  if (!last?.op) {
    const note = unreadableLines
      ? ` (${unreadableLines} unreadable ledger line${unreadableLines === 1 ? ' was' : 's were'} skipped; see git ckpt log)`
      : '';
    throw new CkptError('nothing', `nothing to undo: no restore, revert or undo has been recorded${note}`);
  }
  const changes = await treeChanges(repoOf(ctx), last.op.guard, last.id);
  return withLive(ctx, options.dryRun ?? false, `guard before undo of ${shortId(last.id)}`, async (live, objectDir) => {
    const report = await undoLive(ctx, last, changes, live, options);
    return withPreview(ctx, report, options, live, last.op!.guard, objectDir);
  });
}

async function undoLive(
  ctx: StoreContext,
  last: CheckpointRecord,
  allChanges: TreeChange[],
  live: LiveState,
  options: UndoOptions,
): Promise<OperationReport> {
  // What a recovery left as it found it (edited after the interruption) was never its change: undo leaves it too.
  const leftAlone = new Set(last.op?.leftAlone ?? []);
  const changes = allChanges.filter((c) => !leftAlone.has(c.path));
  const stale = staleUndoPaths(changes, live.entries);
  if (stale.length && !options.force) {
    const list = stale.slice(0, 5).join(', ');
    throw new CkptError(
      'stale',
      `undo refused: ${stale.length} file${stale.length === 1 ? '' : 's'} changed since the ${last.kind} (${list}${stale.length > 5 ? ', …' : ''}); nothing was changed (--force undoes anyway; the current state is kept as a guard checkpoint)`,
      { stale },
    );
  }
  const want = new Map<string, Want>(changes.map((c) => [c.path, c.before]));
  const disk = gatherDiskFacts(ctx.location.root, want, live.entries);
  const plan = withExtraFiles(
    reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: true }),
    allChanges
      .filter((c) => leftAlone.has(c.path))
      .map(
        (c): PlannedFile => ({
          path: c.path,
          action: 'skip',
          reason: 'changed after the interruption, so not the operation’s: left as it is',
        }),
      ),
  );
  return execute(ctx, { op: 'undo', target: last.id, live, plan }, options);
}

export interface RecoveryReport {
  op: OperationKind;
  journal: string;
  target: string;
  guard: string;
  action: 'continue' | 'abort';
  /** Planned only: nothing was written. */
  dryRun: boolean;
  /** The checkpoint of the workspace as recovery found it (null when the operation had been recorded already). */
  recoveryGuard: string | null;
  record: string | null;
  entries: number;
  failures: ApplyFailure[];
  /** Journaled paths changed since the interruption (or not capturable now): left as they are. */
  leftAlone: { path: string; reason: string }[];
  /** The operation had already been recorded before the interruption. */
  alreadyRecorded: boolean;
}

/**
 * Pure: the journaled paths recovery must not write. The interrupted pass only
 * ever put a path at its wanted entry, so one that holds neither side was
 * changed by someone since; one the present capture could not take may hold
 * anything.
 */
export function recoveryLeftAlone(
  entries: readonly JournalEntry[],
  present: Map<string, TreeEntry>,
  uncaptured: readonly { path: string; reason: string }[],
): { path: string; reason: string }[] {
  const shielded = shieldUncaptured(
    {
      files: entries.map(([p, want]) => ({ path: p, action: want ? 'restore' : 'delete' })),
      counts: { restore: 0, recreate: 0, delete: 0, unchanged: 0, skip: 0 },
      leftovers: [],
    },
    uncaptured,
  );
  const out: { path: string; reason: string }[] = [];
  entries.forEach(([p, want, from], i) => {
    const file = shielded.files[i]!;
    if (file.action === 'skip') out.push({ path: p, reason: file.reason! });
    else {
      const now = present.get(p) ?? null;
      if (!sameEntry(now, want) && !sameEntry(now, from))
        out.push({ path: p, reason: 'changed since the interruption; left as it is (kept in the recovery guard)' });
    }
  });
  return out;
}

/**
 * Finish (`continue`) or roll back (`abort`) an interrupted operation. The
 * present state is captured first, as before every other write, so whatever
 * happened since the interruption is in a checkpoint; paths changed since are
 * left as they are. An abort is recorded as a restore of the journal's guard,
 * so `undo` brings back what it rolled back.
 */
export async function recoverLocked(
  ctx: StoreContext,
  records: readonly CheckpointRecord[],
  action: 'continue' | 'abort',
  options: OperationOptions = {},
): Promise<RecoveryReport> {
  const journal = readJournal(ctx.paths.dir);
  if (!journal) throw new CkptError('nothing', 'no interrupted restore to continue or abort');
  const dryRun = options.dryRun ?? false;
  const recorded = records.find((r) => r.op?.journal === journal.id);
  const base = {
    op: journal.op,
    journal: journal.id,
    target: journal.target,
    guard: journal.guard,
    action,
    dryRun,
    entries: journal.entries.length,
  };
  if (recorded) {
    if (dryRun) return { ...base, recoveryGuard: null, record: recorded.id, failures: [], leftAlone: [], alreadyRecorded: true };
    // Killed between the ledger append and the journal's removal: the operation is complete.
    removeTmpFiles(
      ctx.location.root,
      journal.entries.map((e) => e[0]),
    );
    removeJournal(ctx.paths.dir);
    if (action === 'abort') {
      const undone = await undoLocked(ctx, records, {});
      return {
        ...base,
        recoveryGuard: undone.guard,
        record: undone.record,
        failures: undone.failures,
        leftAlone: [],
        alreadyRecorded: true,
      };
    }
    return { ...base, recoveryGuard: null, record: recorded.id, failures: [], leftAlone: [], alreadyRecorded: true };
  }
  const message = `guard before restore --${action} of ${journal.op} journal ${journal.id}`;
  return withLive(ctx, dryRun, message, async (live) => {
    const leftAlone = recoveryLeftAlone(journal.entries, live.entries, live.uncaptured);
    if (dryRun) return { ...base, recoveryGuard: null, record: null, failures: [], leftAlone, alreadyRecorded: false };
    const skipped = new Set(leftAlone.map((l) => l.path));
    const todo = journal.entries.filter(([p]) => !skipped.has(p));
    const entries = todo.map(([p, want, from]) => ({ path: p, want: action === 'continue' ? want : from }));
    const as: RecordAs =
      action === 'continue'
        ? {
            ...recordAsOperation(journal),
            flags: { continued: true, ...(leftAlone.length ? { leftAlone: leftAlone.slice(0, SKIPPED_KEPT).map((l) => l.path) } : {}) },
          }
        : {
            kind: 'restore',
            target: journal.guard,
            guard: live.guard!,
            message: `abort of the interrupted ${journal.op}: back to ${shortId(journal.guard)}`,
            counts: {
              restore: todo.filter(([, , from]) => from !== null).length,
              recreate: 0,
              delete: todo.filter(([, , from]) => from === null).length,
              unchanged: 0,
              skip: leftAlone.length,
            },
            leftovers: 0,
            flags: { aborted: true, ...(leftAlone.length ? { leftAlone: leftAlone.slice(0, SKIPPED_KEPT).map((l) => l.path) } : {}) },
          };
    const { record, failures } = await applyAndRecord(ctx, journal, entries, as);
    removeJournal(ctx.paths.dir);
    return { ...base, recoveryGuard: live.guard, record, failures, leftAlone, alreadyRecorded: false };
  });
}

/** The interrupted operation, for status. */
/** A restore, revert or undo that did not finish, or why its journal cannot be read. */
export type InterruptedOperation =
  | { op: OperationKind; journal: string; target: string; started: number; entries: number }
  | { error: string };

export function interruptedOperation(storeDir: string): InterruptedOperation | undefined {
  try {
    const j = readJournal(storeDir);
    return j && { op: j.op, journal: j.id, target: j.target, started: j.started, entries: j.entries.length };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
