/**
 * The transaction every restore, revert and undo runs through. The caller
 * holds the workspace lock.
 *
 *   1. capture a guard checkpoint of the current state (content dedup applies);
 *      a dry run captures into a scratch index and object folder instead, so
 *      the store stays byte-identical;
 *   2. the command plans purely (restore-plan.ts) against the guard and the
 *      disk; what the guard could not capture is left alone; a plan that is not
 *      the one the caller agreed to (`expectPlan`) stops here;
 *   3. write the journal, fsync'd, before the first write to the workspace;
 *   4. apply in explicit-path batches, atomic per file; a failure is recorded
 *      and the pass goes on;
 *   5. capture the result as the operation's record (its parent is the guard),
 *      verifying every journaled path against what was wanted;
 *   6. remove the journal.
 * A kill at any moment leaves either no journal (nothing written yet, or all
 * done and recorded) or a journal that --continue and --abort complete
 * (restore.ts); they capture a guard first and leave alone each path changed
 * since the kill.
 */
import path from 'node:path';
import { applyEntries, randomTag, removeTmpFiles, type ApplyEntry, type ApplyFailure } from './apply.js';
import type { StoreContext } from '../store/context.js';
import { crashPoint } from '../model/crash-point.js';
import { diskEntry, tryLstat } from '../capture/disk.js';
import { CkptError } from '../model/errors.js';
import { diffTrees } from '../inspect/inspect.js';
import { readJournal, removeJournal, writeJournal, type Journal, type JournalEntry } from '../store/journal.js';
import {
  SKIPPED_KEPT,
  UNRECORDED_KEPT,
  type CheckpointRecord,
  type OperationInfo,
  type OperationKind,
  type SkippedPath,
} from '../model/ledger.js';
import { listTree, treeChanges, type RepoAccess } from '../git/objects.js';
import { actionable, planFingerprint, reconcile, shieldUncaptured, type Plan, type ReconcileInput } from './restore-plan.js';
import { sameEntry, type ActionCounts, type PathChange, type TreeEntry, type Want } from '../model/tree.js';
import { snapshotLocked, withScratchCapture } from '../capture/snapshot.js';
import { shortId } from '../model/short-ids.js';
import { storeRootsInside } from '../store/store.js';

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
  /**
   * followRewind=auto: the restore completes a rewind inside the agent, whose turns left behind ended at
   * this checkpoint; its undo also brings back what the agent's own rewind put back (see restore.ts).
   */
  rewound?: string;
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
  /**
   * What the operation's record holds (its change from the guard), and the paths in it the operation did
   * not write: a file no longer ignored once it rewrote an ignore file, an edit made while it ran.
   */
  recorded?: { added: number; modified: number; deleted: number; unwritten: string[]; unwrittenCount: number };
}

export interface LiveState {
  tree: string;
  guard: string | null;
  entries: Map<string, TreeEntry>;
  uncaptured: SkippedPath[];
}

export function repoOf(ctx: StoreContext): RepoAccess {
  return { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir };
}

export function refuseIfInterrupted(ctx: StoreContext): void {
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
export async function withLive<T>(
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
export async function withPreview(
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
  return { ...report, diff: await diffTrees(ctx.paths, live.tree, result, { format: 'patch', color: false }, paths, objectDir) };
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
export function reconcileHere(ctx: StoreContext, input: Omit<ReconcileInput, 'protectedDirs'>): Plan {
  return reconcile({ ...input, protectedDirs: storeRootsInside(ctx.location.root, ctx.env) });
}

function journalEntries(plan: Plan): JournalEntry[] {
  return plan.files
    .filter((f) => f.action === 'restore' || f.action === 'recreate' || f.action === 'delete')
    .map((f) => [f.path, f.action === 'delete' ? null : f.want!, f.from ?? null]);
}

/** Whether the disk holds `want` at `p` right now (used when a post-capture did not take the path). */
export function diskHolds(root: string, p: string, want: Want): boolean {
  const full = path.join(root, p);
  const st = tryLstat(full);
  if (!st) return want === null;
  return want !== null && sameEntry(diskEntry(full, st), want);
}

/** How a journal's pass is recorded: the operation itself, or (abort) a restore of the guard's bytes. */
export interface RecordAs {
  kind: OperationKind;
  target: string;
  guard: string;
  message: string;
  counts: ActionCounts;
  leftovers: number;
  flags: Pick<OperationInfo, 'continued' | 'aborted' | 'leftAlone' | 'rewound'>;
}

export function recordAsOperation(journal: Journal): RecordAs {
  return {
    kind: journal.op,
    target: journal.target,
    guard: journal.guard,
    message: journal.reverted
      ? `revert of ${journal.reverted.length} checkpoints, ${shortId(journal.reverted.at(-1)!)}..${shortId(journal.reverted[0]!)}`
      : `${journal.op} ${journal.op === 'undo' ? 'of' : 'to'} ${shortId(journal.target)}`,
    counts: journal.counts,
    leftovers: journal.leftovers,
    flags: journal.rewound ? { rewound: journal.rewound } : {},
  };
}

/**
 * Apply a journal's entries (to their wanted state, or back to the guard's),
 * then record the pass, verifying each path against the result's tree.
 */
export async function applyAndRecord(
  ctx: StoreContext,
  journal: Journal,
  entries: readonly ApplyEntry[],
  as: RecordAs,
  guardEntries?: ReadonlyMap<string, TreeEntry>,
): Promise<{ record: string | null; failures: ApplyFailure[]; written: number; stats?: CheckpointRecord['stats'] }> {
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
      const unrecorded = as.flags.aborted ? [] : unrecordedChanges(ctx, journal, failures, after, guardEntries);
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
        ...(unrecorded.length ? { unrecorded: unrecorded.slice(0, UNRECORDED_KEPT) } : {}),
        ...(unrecorded.length > UNRECORDED_KEPT ? { unrecordedCount: unrecorded.length } : {}),
      };
      return info;
    },
  });
  return { record: result.id ?? null, failures, written: applied.written + applied.deleted, stats: result.record?.stats };
}

/**
 * What a journal's pass changed that the guard → record diff cannot show: any change of a path the guard did
 * not hold (`guardEntries`, when the caller has them: it was ignored then, so the guard cannot say the file
 * was absent, only the journal can), and a file written that the record's capture does not take (ignored by
 * the rules in force now). Undo needs them to return to the state before the operation.
 */
function unrecordedChanges(
  ctx: StoreContext,
  journal: Journal,
  failures: readonly ApplyFailure[],
  after: ReadonlyMap<string, TreeEntry>,
  guardEntries: ReadonlyMap<string, TreeEntry> | undefined,
): PathChange[] {
  const failed = new Set(failures.map((f) => f.path));
  const out: PathChange[] = [];
  for (const [p, want, from] of journal.entries) {
    if (failed.has(p) || sameEntry(want, from)) continue;
    // The guard did not hold the path (ignored when it was taken): only the journal knows what was there.
    if (guardEntries && !guardEntries.has(p)) out.push([p, from, want]);
    // Written, and not in the record (a rule ignores it now).
    else if (want !== null && !after.has(p) && diskHolds(ctx.location.root, p, want)) out.push([p, from, want]);
  }
  return out;
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
  /** A restore that follows a rewind inside the agent: the end of the turns left behind. */
  rewound?: string;
}

/** Run a planned operation: journal, apply, record, close. */
export async function execute(ctx: StoreContext, planned: Planned, options: OperationOptions): Promise<OperationReport> {
  const { op, target, live, paths, reverted, rewound } = planned;
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
    ...(rewound ? { rewound } : {}),
    entries: journalEntries(plan),
  };
  writeJournal(ctx.paths.dir, journal);
  crashPoint('journal');
  const entries = journal.entries.map(([p, want]) => ({ path: p, want }));
  const { record, failures, stats } = await applyAndRecord(ctx, journal, entries, recordAsOperation(journal), live.entries);
  removeJournal(ctx.paths.dir);
  const recorded = record && stats ? await recordedChange(ctx, live.guard!, record, stats, plan) : undefined;
  return { ...base, record, counts: resultCounts(plan, failures), failures, ...(recorded ? { recorded } : {}) };
}

/** The record's change from the guard, with the paths in it that the plan did not write. */
async function recordedChange(
  ctx: StoreContext,
  guard: string,
  record: string,
  stats: CheckpointRecord['stats'],
  plan: Plan,
): Promise<NonNullable<OperationReport['recorded']>> {
  const written = new Set(writtenPaths(plan));
  const unwritten = (await treeChanges(repoOf(ctx), guard, record)).map((c) => c.path).filter((p) => !written.has(p));
  return { ...stats, unwritten: unwritten.slice(0, SKIPPED_KEPT), unwrittenCount: unwritten.length };
}
