/**
 * Restore, revert and undo as transactions. The caller holds the workspace lock.
 *
 *   1. capture a guard checkpoint of the current state (content dedup applies);
 *      a dry run captures into a scratch index and object folder instead, so
 *      the store stays byte-identical;
 *   2. plan purely (restore-plan.ts) against the guard and the disk;
 *   3. write the journal, fsync'd, before the first write to the workspace;
 *   4. apply in explicit-path batches, atomic per file; a failure is recorded
 *      and the pass goes on;
 *   5. capture the result as the operation's record (its parent is the guard),
 *      verifying every journaled path against what was wanted;
 *   6. remove the journal.
 * A kill at any moment leaves either no journal (nothing written yet, or all
 * done and recorded) or a journal that --continue and --abort complete exactly.
 */
import path from 'node:path';
import { applyEntries, randomTag, removeTmpFiles, type ApplyEntry, type ApplyFailure } from './apply.js';
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
  staleUndoPaths,
  withExtraFiles,
  type ActionCounts,
  type Plan,
  type PlannedFile,
  type ReconcileInput,
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

function short(id: string): string {
  return id.slice(0, 10);
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

/** Capture the workspace: a guard checkpoint, or for a dry run a scratch tree that leaves the store as it was. */
async function captureLive(ctx: StoreContext, dryRun: boolean, message: string): Promise<LiveState> {
  if (!dryRun) {
    const result = await snapshotLocked(ctx, { kind: 'guard', message, timeBudgetMs: 0 });
    // A guard always has an id: it is the new checkpoint, or the latest when nothing changed (the store is not empty then).
    return { tree: result.tree, guard: result.id!, entries: await listTree(repoOf(ctx), result.tree), uncaptured: result.skipped };
  }
  return withScratchCapture(ctx, async (result, objectDir) => {
    // The tree's objects live in the scratch folder: list it before the folder goes.
    const entries = await listTree(repoOf(ctx), result.tree, undefined, objectDir);
    return { tree: result.tree, guard: null, entries, uncaptured: result.skipped };
  });
}

/** reconcile, with every store root inside the workspace left alone. */
function reconcileHere(ctx: StoreContext, input: Omit<ReconcileInput, 'protectedDirs'>): Plan {
  return reconcile({ ...input, protectedDirs: storeRootsInside(ctx.location.root, ctx.env) });
}

function totalCounts(plan: Plan, failures: ApplyFailure[]): ActionCounts & { failed: number } {
  return { ...plan.counts, failed: failures.length };
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

/**
 * Apply a journal's entries (to their wanted state, or back to the guard's),
 * then record the operation, verifying each path against the result's tree.
 */
async function applyAndRecord(
  ctx: StoreContext,
  journal: Journal,
  side: 'want' | 'from',
  continued: boolean,
): Promise<{ record: string | null; failures: ApplyFailure[] }> {
  const entries: ApplyEntry[] = journal.entries.map(([p, want, from]) => ({ path: p, want: side === 'want' ? want : from }));
  // A killed pass may have left temporary files; clear them first so emptied directories can go.
  removeTmpFiles(
    ctx.location.root,
    entries.map((e) => e.path),
  );
  const applied = await applyEntries(repoOf(ctx), ctx.location.root, entries, journal.id);
  if (side === 'from') return { record: null, failures: applied.failures };

  const failures = [...applied.failures];
  const failed = new Set(failures.map((f) => f.path));
  const result = await snapshotLocked(ctx, {
    kind: journal.op,
    force: true,
    knownContent: true,
    timeBudgetMs: 0,
    message: journal.reverted
      ? `revert of ${journal.reverted.length} checkpoints, ${short(journal.reverted.at(-1)!)}..${short(journal.reverted[0]!)}`
      : `${journal.op} ${journal.op === 'undo' ? 'of' : 'to'} ${short(journal.target)}`,
    operation: async (tree) => {
      const after = await listTree(repoOf(ctx), tree);
      for (const e of entries) {
        if (failed.has(e.path)) continue;
        if (sameEntry(after.get(e.path) ?? null, e.want)) continue;
        if (!after.has(e.path) && diskHolds(ctx.location.root, e.path, e.want)) continue;
        failures.push({ path: e.path, error: 'verification failed: the workspace does not hold the wanted content' });
      }
      const info: OperationInfo = {
        target: journal.target,
        guard: journal.guard,
        journal: journal.id,
        counts: { ...journal.counts, failed: failures.length },
        failures: failures.slice(0, SKIPPED_KEPT),
        leftovers: journal.leftovers,
        ...(journal.paths ? { paths: journal.paths } : {}),
        ...(journal.reverted ? { reverted: journal.reverted } : {}),
        ...(continued ? { continued: true } : {}),
      };
      return info;
    },
  });
  return { record: result.id ?? null, failures };
}

/** Run a planned operation: journal, apply, record, close. */
async function execute(
  ctx: StoreContext,
  op: OperationKind,
  target: string,
  live: LiveState,
  plan: Plan,
  paths: string[] | undefined,
  dryRun: boolean,
  reverted?: string[],
): Promise<OperationReport> {
  const base = { op, dryRun, target, guard: live.guard, plan, leftovers: plan.leftovers, uncaptured: live.uncaptured };
  if (dryRun || actionable(plan) === 0) return { ...base, record: null, counts: totalCounts(plan, []), failures: [] };
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
  const { record, failures } = await applyAndRecord(ctx, journal, 'want', false);
  removeJournal(ctx.paths.dir);
  return { ...base, record, counts: totalCounts(plan, failures), failures };
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
  const live = await captureLive(ctx, dryRun, `guard before restore to ${short(target.id)}`);
  const selected = (p: string) => isSelected(p, selection);
  const { want, leftovers } = restoreWants(targetEntries, live.entries, selected, options.deleteNew ?? false);
  const disk = gatherDiskFacts(ctx.location.root, want, live.entries);
  const plan = reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: options.deleteNew ?? false });
  const uncapturedLeftovers = live.uncaptured.filter((s) => selected(s.path) && !targetEntries.has(s.path)).map((s) => s.path);
  plan.leftovers = [...leftovers, ...uncapturedLeftovers].sort();
  return execute(ctx, 'restore', target.id, live, plan, selection, dryRun);
}

export interface RevertOptions extends OperationOptions {
  /** A conflicted text file: left as it is now (`keep`, the default) or given git's conflict markers. */
  conflict?: ConflictMode;
  /** A dry run also returns the line diff the revert would write (`diff`). */
  preview?: boolean;
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
    return revertWhole(ctx, newest, dryRun);
  }
  // Each checkpoint's own change, read once: the merge steps and the plan's labels both use it.
  const steps: RevertStep[] = [];
  for (const t of targets) {
    const parent = parentTree(t);
    steps.push({ id: t.id, parentTree: parent, changes: await treeChanges(repoOf(ctx), parent ?? EMPTY_TREE, t.id) });
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
    const report = await execute(ctx, 'revert', newest.id, live, plan, undefined, dryRun, reverted);
    if (!dryRun || !options.preview || want.size === 0) return report;
    // The diff of what the plan writes: not of paths it skips (an uncaptured file in the way).
    const writes = plan.files.filter((f) => f.action === 'restore' || f.action === 'recreate' || f.action === 'delete').map((f) => f.path);
    if (writes.length === 0) return report;
    const diff = await diffTrees(ctx.paths, live.tree, tree, 'patch', false, writes.length <= 2000 ? writes : undefined, objectDir);
    return { ...report, diff };
  };
  if (!dryRun)
    return work(
      await captureLive(
        ctx,
        false,
        `guard before revert of ${short(newest.id)}${targets.length > 1 ? ` and ${targets.length - 1} more` : ''}`,
      ),
    );
  return withScratchCapture(ctx, async (result, objectDir) => {
    const entries = await listTree(repoOf(ctx), result.tree, undefined, objectDir);
    return work({ tree: result.tree, guard: null, entries, uncaptured: result.skipped }, objectDir);
  });
}

/** The git that first writes a merge's tree without a work tree. */
const THREE_WAY_GIT = '2.38';

/** Pure: a conflict in words: its line ranges in the present file, or why it is whole. */
function conflictText(c: RevertConflict): string {
  if (c.whole) return `${c.whole} (reverting ${short(c.checkpoint)})`;
  const ranges = c.ranges.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
  return `line${c.ranges.length === 1 && c.ranges[0]![0] === c.ranges[0]![1] ? '' : 's'} ${ranges} changed since (reverting ${short(c.checkpoint)})`;
}

/** The first conflict per path (a range revert can meet one path in several steps). */
function dedupe(files: PlannedFile[]): PlannedFile[] {
  const seen = new Set<string>();
  return files.filter((f) => !seen.has(f.path) && seen.add(f.path));
}

/** One checkpoint, reverted path by path: a path changed since is a conflict, skipped whole (git < 2.38). */
async function revertWhole(ctx: StoreContext, target: CheckpointRecord, dryRun: boolean): Promise<OperationReport> {
  const changes = await treeChanges(repoOf(ctx), target.parent ?? EMPTY_TREE, target.id);
  const live = await captureLive(ctx, dryRun, `guard before revert of ${short(target.id)}`);
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
  return execute(ctx, 'revert', target.id, live, plan, undefined, dryRun);
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
  const dryRun = options.dryRun ?? false;
  const changes = await treeChanges(repoOf(ctx), last.op.guard, last.id);
  const live = await captureLive(ctx, dryRun, `guard before undo of ${short(last.id)}`);
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
  const plan = reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: true });
  return execute(ctx, 'undo', last.id, live, plan, undefined, dryRun);
}

export interface RecoveryReport {
  op: OperationKind;
  journal: string;
  target: string;
  guard: string;
  action: 'continue' | 'abort';
  record: string | null;
  entries: number;
  failures: ApplyFailure[];
  /** The operation had already been recorded before the interruption. */
  alreadyRecorded: boolean;
}

/** Finish (`continue`) or roll back (`abort`) an interrupted operation. */
export async function recoverLocked(
  ctx: StoreContext,
  records: readonly CheckpointRecord[],
  action: 'continue' | 'abort',
): Promise<RecoveryReport> {
  const journal = readJournal(ctx.paths.dir);
  if (!journal) throw new CkptError('nothing', 'no interrupted restore to continue or abort');
  const recorded = records.find((r) => r.op?.journal === journal.id);
  const base = {
    op: journal.op,
    journal: journal.id,
    target: journal.target,
    guard: journal.guard,
    action,
    entries: journal.entries.length,
  };
  if (recorded) {
    // Killed between the ledger append and the journal's removal: the operation is complete.
    removeTmpFiles(
      ctx.location.root,
      journal.entries.map((e) => e[0]),
    );
    removeJournal(ctx.paths.dir);
    if (action === 'abort') {
      const undone = await undoLocked(ctx, records, {});
      return { ...base, record: undone.record, failures: undone.failures, alreadyRecorded: true };
    }
    return { ...base, record: recorded.id, failures: [], alreadyRecorded: true };
  }
  const { record, failures } = await applyAndRecord(ctx, journal, action === 'continue' ? 'want' : 'from', true);
  removeJournal(ctx.paths.dir);
  return { ...base, record, failures, alreadyRecorded: false };
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
