/**
 * Restore, revert and undo, and the recovery of an interrupted one: what each
 * command wants, planned against the guard the transaction (transaction.ts)
 * captures, then journaled and applied by it. The caller holds the workspace lock.
 */
import path from 'node:path';
import { removeTmpFiles, type ApplyFailure } from './apply.js';
import type { StoreContext } from '../store/context.js';
import { gatherDiskFacts, tryLstat } from '../capture/disk.js';
import { CkptError } from '../model/errors.js';
import { readJournal, removeJournal, type JournalEntry } from '../store/journal.js';
import { OPERATION_KINDS, SKIPPED_KEPT, type CheckpointRecord, type OperationKind } from '../model/ledger.js';
import { revertTrees, type ConflictMode, type RevertStep } from './merge.js';
import { labelRevertPlan, revertWant } from './revert-plan.js';
import { listTree, treeChanges } from '../git/objects.js';
import { EMPTY_TREE } from '../model/oid.js';
import { isSelected, unsafePathReason } from '../model/paths.js';
import { restoreWants, revertWants, staleUndoPaths, uncapturedNote, withExtraFiles, type PlannedFile } from './restore-plan.js';
import { GITLINK, sameEntry, type TreeChange, type TreeEntry, type Want } from '../model/tree.js';
import { gitVersion, versionBelow } from '../git/runner.js';
import { shortId } from '../model/short-ids.js';
import { unseenAt } from './unseen.js';
import {
  applyAndRecord,
  execute,
  recordAsOperation,
  reconcileHere,
  diskHolds,
  refuseIfInterrupted,
  repoOf,
  withLive,
  withPreview,
  type LiveState,
  type OperationOptions,
  type OperationReport,
  type RecordAs,
  type RestoreOptions,
  type UndoOptions,
} from './transaction.js';

export type { OperationOptions, OperationReport, RestoreOptions, UndoOptions } from './transaction.js';

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
    // What the checkpoint lacks is deleted only where its scan could have seen it.
    const unseen = await unseenAt(ctx, { record: target, entries: targetEntries }, deletions(want, live));
    const reconciled = reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: options.deleteNew ?? false, unseen });
    const uncapturedLeftovers = live.uncaptured.filter((s) => selected(s.path) && !targetEntries.has(s.path)).map((s) => s.path);
    const plan = { ...reconciled, leftovers: [...leftovers, ...uncapturedLeftovers].sort() };
    const report = await execute(
      ctx,
      { op: 'restore', target: target.id, live, plan, paths: selection, ...(options.rewound ? { rewound: options.rewound } : {}) },
      options,
    );
    return withPreview(ctx, report, options, live, target.id, objectDir);
  });
}

/** The paths a plan's wants would delete that the live capture holds. */
function deletions(want: ReadonlyMap<string, Want>, live: LiveState): string[] {
  return [...want].filter(([p, w]) => w === null && live.entries.has(p)).map(([p]) => p);
}

/**
 * Why each path a revert would delete is left alone, when it is: the revert deletes a path because a
 * reverted checkpoint added it, so the state it goes back to there is that checkpoint's parent (of the
 * oldest such checkpoint, for a range); a path that parent could not have seen is unknown there.
 */
async function unseenBeforeAdded(
  ctx: StoreContext,
  steps: readonly { id: string; parent: string | null; changes: readonly TreeChange[] }[],
  recordOf: (id: string) => CheckpointRecord | undefined,
  candidates: readonly string[],
): Promise<Map<string, string>> {
  // Steps are newest first: the last one seen adding a path is the oldest that did.
  const addedBy = new Map<string, (typeof steps)[number]>();
  for (const step of steps) for (const c of step.changes) if (c.before === null) addedBy.set(c.path, step);
  const bySource = new Map<string, { step: (typeof steps)[number] | undefined; paths: string[] }>();
  for (const p of candidates) {
    const step = addedBy.get(p);
    const key = step?.id ?? '';
    const group = bySource.get(key) ?? { step, paths: [] };
    group.paths.push(p);
    bySource.set(key, group);
  }
  const out = new Map<string, string>();
  for (const { step, paths } of bySource.values()) {
    const record = step?.parent ? recordOf(step.parent) : undefined;
    const label = step ? shortId(step.id) : shortId(steps.at(-1)!.id);
    const dropped = Boolean(step?.parent && !record);
    for (const [p, why] of await unseenAt(ctx, { record, label, dropped }, paths)) out.set(p, why);
  }
  return out;
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
  records: readonly CheckpointRecord[] = [],
): Promise<OperationReport> {
  const byId = new Map(records.map((r) => [r.id, r]));
  const recordOf = (id: string) => byId.get(id);
  refuseIfInterrupted(ctx);
  const dryRun = options.dryRun ?? false;
  const newest = targets[0]!;
  if (versionBelow(await gitVersion(), THREE_WAY_GIT)) {
    if (targets.length > 1)
      throw new CkptError('usage', `reverting a range or a session needs git ${THREE_WAY_GIT} or newer (git merge-tree --write-tree)`);
    return revertWhole(ctx, newest, options, recordOf);
  }
  // Each checkpoint's own change, read once: the merge steps and the plan's labels both use it.
  const steps: (RevertStep & { parent: string | null })[] = [];
  for (const t of targets) {
    const parent = parentTree(t);
    steps.push({
      id: t.id,
      parent: t.parent,
      tree: t.tree,
      parentTree: parent,
      changes: await treeChanges(repoOf(ctx), parent ?? EMPTY_TREE, t.id),
    });
  }
  const reverted = targets.map((t) => t.id);
  const work = async (live: LiveState, objectDir?: string): Promise<OperationReport> => {
    const repo = { ...repoOf(ctx), scratchObjectDir: objectDir };
    const { tree, conflicts } = await revertTrees(repo, live, steps, options.conflict ?? 'keep');
    const want = revertWant(live.entries, await listTree(repo, tree, undefined, objectDir));
    const disk = gatherDiskFacts(ctx.location.root, want, live.entries);
    const unseen = await unseenBeforeAdded(ctx, steps, recordOf, deletions(want, live));
    const plan = labelRevertPlan({
      merged: reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: true, unseen }),
      want,
      changes: steps.map((step) => step.changes),
      conflicts,
      markers: options.conflict === 'markers',
    });
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

/** One checkpoint, reverted path by path: a path changed since is a conflict, skipped whole (git < 2.38). */
async function revertWhole(
  ctx: StoreContext,
  target: CheckpointRecord,
  options: OperationOptions,
  recordOf: (id: string) => CheckpointRecord | undefined,
): Promise<OperationReport> {
  const changes = await treeChanges(repoOf(ctx), target.parent ?? EMPTY_TREE, target.id);
  return withLive(ctx, options.dryRun ?? false, `guard before revert of ${shortId(target.id)}`, (live) =>
    revertWholeLive(ctx, target, changes, live, options, recordOf),
  );
}

async function revertWholeLive(
  ctx: StoreContext,
  target: CheckpointRecord,
  changes: TreeChange[],
  live: LiveState,
  options: OperationOptions,
  recordOf: (id: string) => CheckpointRecord | undefined,
): Promise<OperationReport> {
  const { want, conflicts, unchanged } = revertWants(changes, live.entries);
  const disk = gatherDiskFacts(ctx.location.root, want, live.entries);
  const unseen = await unseenBeforeAdded(ctx, [{ id: target.id, parent: target.parent, changes }], recordOf, deletions(want, live));
  // Said where it matters: this git cannot keep later edits in the same file.
  const whole = conflicts.map((c) => ({
    ...c,
    reason: `${c.reason} (git ${THREE_WAY_GIT} or newer would keep later edits in other lines)`,
  }));
  const plan = withExtraFiles(
    reconcileHere(ctx, { want, live: live.entries, disk, replaceCaptured: true, unseen }),
    [...whole, ...unchanged.map((p): PlannedFile => ({ path: p, action: 'unchanged' }))],
    [],
  );
  return execute(ctx, { op: 'revert', target: target.id, live, plan }, options);
}

/** The newest restore, revert or undo record of this workspace's own (a fetched one was another store's): what `undo` reverses. */
export function lastOperation(records: readonly CheckpointRecord[]): CheckpointRecord | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    if (OPERATION_KINDS.includes(records[i]!.kind as OperationKind) && !records[i]!.origin) return records[i];
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
  const guard = records.find((r) => r.id === last.op!.guard);
  return withLive(ctx, options.dryRun ?? false, `guard before undo of ${shortId(last.id)}`, async (live, objectDir) => {
    const report = await undoLive(ctx, records, last, guard, changes, live, options);
    return withPreview(ctx, report, options, live, last.op!.guard, objectDir);
  });
}

async function undoLive(
  ctx: StoreContext,
  records: readonly CheckpointRecord[],
  last: CheckpointRecord,
  guard: CheckpointRecord | undefined,
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
  const rewound = last.op?.rewound ? await rewoundWants(ctx, last.op, allChanges, live) : new Map<string, Want>();
  for (const [p, w] of rewound) want.set(p, w);
  // What the operation changed where its record cannot show it (a file it wrote that a rule ignores now):
  // reversed too when the disk still holds what it wrote; its record says what was there before.
  const unrecorded = unrecordedBack(ctx, last, leftAlone, want);
  if (unrecorded.stale.length && !options.force)
    throw new CkptError(
      'stale',
      `undo refused: ${unrecorded.stale.length} file${unrecorded.stale.length === 1 ? '' : 's'} the ${last.kind} wrote changed since (${unrecorded.stale.slice(0, 5).join(', ')}${unrecorded.stale.length > 5 ? ', …' : ''}); nothing was changed (--force undoes the rest anyway)`,
      { stale: unrecorded.stale },
    );
  const entries = new Map(live.entries);
  for (const [p, e] of unrecorded.held) entries.set(p, e);
  const disk = gatherDiskFacts(ctx.location.root, want, entries);
  // Back to the state before the operation, not to the guard's view of it: what the guard could not see
  // (ignored then, not captured) and the operation's record holds is no change of the operation's.
  const ownDeletions = deletions(want, live).filter((p) => !rewound.has(p) && !unrecorded.held.has(p));
  const unseen = await unseenAt(ctx, { record: guard, label: `the guard of ${shortId(last.id)}` }, ownDeletions);
  const rewoundRecord = last.op?.rewound ? records.find((r) => r.id === last.op!.rewound) : undefined;
  const rewoundDeletions = deletions(want, live).filter((p) => rewound.has(p));
  for (const [p, why] of await unseenAt(ctx, { record: rewoundRecord, label: 'the turns left behind' }, rewoundDeletions))
    unseen.set(p, why);
  const plan = withExtraFiles(
    reconcileHere(ctx, { want, live: entries, disk, replaceCaptured: true, unseen }),
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

/**
 * The changes an operation's record keeps beside its tree (`op.unrecorded`), each wanted back as it was
 * before the operation while the disk holds what the operation left there (`held`: that content, which
 * the store has); one changed since is `stale`. A path a recovery left alone stays out.
 */
function unrecordedBack(
  ctx: StoreContext,
  last: CheckpointRecord,
  leftAlone: ReadonlySet<string>,
  want: Map<string, Want>,
): { held: Map<string, TreeEntry>; stale: string[] } {
  const held = new Map<string, TreeEntry>();
  const stale: string[] = [];
  for (const [p, before, after] of last.op?.unrecorded ?? []) {
    if (leftAlone.has(p)) continue;
    if (!diskHolds(ctx.location.root, p, after)) stale.push(p);
    else {
      want.set(p, before);
      if (after) held.set(p, after);
    }
  }
  return { held, stale };
}

/**
 * An undo of a restore that followed a rewind inside the agent brings those turns back whole: besides the
 * restore's own change, each path the turns left behind changed (before them: the restore's target; at their
 * end: `op.rewound`) that was back as before them when the restore ran (the agent's own rewind had put it
 * back) and is still so now goes to the turns' end again. A path changed since is left as it is.
 */
async function rewoundWants(
  ctx: StoreContext,
  op: NonNullable<CheckpointRecord['op']>,
  own: readonly TreeChange[],
  live: LiveState,
): Promise<Map<string, Want>> {
  const repo = repoOf(ctx);
  const ownPaths = new Set(own.map((c) => c.path));
  const atGuard = await listTree(repo, op.guard);
  const want = new Map<string, Want>();
  for (const c of await treeChanges(repo, op.target, op.rewound!)) {
    if (ownPaths.has(c.path) || c.after?.mode === GITLINK || c.before?.mode === GITLINK) continue;
    const before = atGuard.get(c.path) ?? null;
    if (!sameEntry(before, c.before) || !sameEntry(live.entries.get(c.path) ?? null, before)) continue;
    want.set(c.path, c.after);
  }
  return want;
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
  const noteFor = uncapturedNote(uncaptured);
  const out: { path: string; reason: string }[] = [];
  entries.forEach(([p, want, from]) => {
    const uncapturedReason = noteFor(p);
    if (uncapturedReason !== undefined) out.push({ path: p, reason: uncapturedReason });
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
    const leftAloneFlag = leftAlone.length ? { leftAlone: leftAlone.slice(0, SKIPPED_KEPT).map((l) => l.path) } : {};
    const as: RecordAs =
      action === 'continue'
        ? {
            ...recordAsOperation(journal),
            flags: { continued: true, ...leftAloneFlag },
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
            flags: { aborted: true, ...leftAloneFlag },
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
