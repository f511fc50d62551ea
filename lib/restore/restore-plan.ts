/**
 * Pure planning for restore, revert and undo. Each command states what it wants
 * each path to become (`Want`); `reconcile` then compares that with what the
 * guard captured (`live`) and what is on disk (`DiskFact`) and decides, per
 * path, one action. Nothing here reads or writes a file, so every rule below is
 * testable without a disk.
 *
 * The rules that keep a restore from destroying what it cannot bring back:
 * - content that was never captured (ignored, too large, secret) is never
 *   deleted or overwritten;
 * - what a checkpoint did not see is unknown there, never absent: a path it
 *   lacks is deleted only when its scan could have seen it (`unseenReasons`);
 * - nothing is written through a symlink, or where a file or directory that is
 *   not itself planned for deletion stands in the way;
 * - unsafe paths (`..`, absolute, `.git`) are refused whatever their source.
 */
import { createHash } from 'node:crypto';
import { unsafePathReason } from '../model/paths.js';
import {
  GITLINK,
  SYMLINK,
  sameEntry,
  type Action,
  type ActionCounts,
  type DiskFact,
  type DiskKind,
  type TreeChange,
  type TreeEntry,
  type Want,
} from '../model/tree.js';

/** How a blocker reads in a skip's reason. */
const BLOCKER_WORDS: Record<DiskKind, string> = {
  file: 'a file',
  symlink: 'a symlink',
  dir: 'a directory',
  missing: 'nothing',
  other: 'a special file',
};

export interface PlannedFile {
  path: string;
  action: Action;
  reason?: string;
  /** The entry to write (restore, recreate); absent for delete, unchanged and skip. */
  want?: TreeEntry;
  /** What the guard captured at this path (what undo and --abort bring back). */
  from?: TreeEntry;
}

export interface Plan {
  /** Every considered path, sorted; `unchanged` entries included. */
  files: PlannedFile[];
  counts: ActionCounts;
  /** Present now but not in the target, left alone (restore without --delete-new). */
  leftovers: string[];
}

export interface ReconcileInput {
  want: Map<string, Want>;
  live: Map<string, TreeEntry>;
  disk: Map<string, DiskFact>;
  /** Replace a captured symlink where a regular file is wanted, and delete captured leftovers in the way. */
  replaceCaptured: boolean;
  /** Folders nothing is written to or deleted from (store roots inside the workspace). */
  protectedDirs?: readonly string[];
  /**
   * Paths wanted absent only because a checkpoint lacks them, where that checkpoint could not have
   * seen them (`unseenReasons`): never deleted, with the reason.
   */
  unseen?: ReadonlyMap<string, string>;
}

const STORE_REASON = "inside a folder of git-ckpt's stores; never written";

function emptyCounts(): ActionCounts {
  return { restore: 0, recreate: 0, delete: 0, unchanged: 0, skip: 0 };
}

function countActions(files: readonly PlannedFile[]): ActionCounts {
  const counts = emptyCounts();
  for (const f of files) counts[f.action]++;
  return counts;
}

/** Pure: the number of paths a plan writes or deletes. */
export function actionable(plan: Plan): number {
  return plan.counts.restore + plan.counts.recreate + plan.counts.delete;
}

function fact(input: ReconcileInput, p: string): DiskFact {
  return input.disk.get(p) ?? { kind: 'missing' };
}

/**
 * Pure: decide one action per wanted path. Deletions are decided first, because
 * a deletion can clear the way for a write (a leftover file `a` where the target
 * has `a/b`, or the files of a directory `a/` where the target has a file `a`).
 */
export function reconcile(input: ReconcileInput): Plan {
  const decided = new Map<string, PlannedFile>();
  const deleting = new Set<string>();
  const paths = [...input.want.keys()].sort();

  const isProtected = (p: string) => (input.protectedDirs ?? []).some((d) => p === d || p.startsWith(`${d}/`));
  for (const p of paths) {
    if (input.want.get(p) !== null) continue;
    const live = input.live.get(p);
    const disk = fact(input, p);
    const unsafe = unsafePathReason(p);
    let file: PlannedFile;
    if (unsafe) file = { path: p, action: 'skip', reason: `unsafe path refused: ${unsafe}` };
    else if (isProtected(p)) file = { path: p, action: 'skip', reason: STORE_REASON };
    else if (disk.kind === 'missing') file = { path: p, action: 'unchanged' };
    else if (!live) file = { path: p, action: 'skip', reason: 'never captured (ignored, too large or secret); left alone' };
    else if (input.unseen?.has(p)) file = { path: p, action: 'skip', reason: input.unseen.get(p)!, from: live };
    else if (live.mode === GITLINK) file = { path: p, action: 'skip', reason: 'a nested repository; its content is not captured' };
    else if (disk.blocker) file = { path: p, action: 'skip', reason: `${disk.blocker.kind} in the path: ${disk.blocker.path}` };
    else if (disk.kind === 'dir' || disk.kind === 'other')
      file = { path: p, action: 'skip', reason: `a ${disk.kind === 'dir' ? 'directory' : 'special file'} is there now; left alone` };
    else file = { path: p, action: 'delete', from: live };
    if (file.action === 'delete') deleting.add(p);
    decided.set(p, file);
  }

  for (const p of paths) {
    const want = input.want.get(p);
    if (!want) continue;
    const live = input.live.get(p);
    const disk = fact(input, p);
    if (isProtected(p)) decided.set(p, { path: p, action: 'skip', reason: STORE_REASON, ...(live ? { from: live } : {}) });
    else decided.set(p, decideWrite(p, want, live, disk, deleting, input.replaceCaptured));
  }

  const files = paths.map((p) => decided.get(p)!);
  return { files, counts: countActions(files), leftovers: [] };
}

function decideWrite(
  p: string,
  want: TreeEntry,
  live: TreeEntry | undefined,
  disk: DiskFact,
  deleting: Set<string>,
  replaceCaptured: boolean,
): PlannedFile {
  const skip = (reason: string): PlannedFile => ({ path: p, action: 'skip', reason, ...(live ? { from: live } : {}) });
  const unsafe = unsafePathReason(p);
  if (unsafe) return skip(`unsafe path refused: ${unsafe}`);
  if (sameEntry(live, want)) return { path: p, action: 'unchanged' };
  if (!live && sameEntry(disk.entry, want)) return { path: p, action: 'unchanged' };
  if (want.mode === GITLINK) return skip('a nested repository (submodule); its content is not captured, so it is left alone');
  if (disk.blocker && !deleting.has(disk.blocker.path)) {
    if (disk.blocker.kind === 'symlink') return skip(`symlink in the path: ${disk.blocker.path}; nothing is written through a symlink`);
    return skip(
      `${BLOCKER_WORDS[disk.blocker.kind]} is in the way: ${disk.blocker.path}${replaceCaptured ? '' : ' (--delete-new removes it if it was captured)'}`,
    );
  }
  if (live?.mode === GITLINK) return skip('a nested repository is in the way; its content is not captured');
  if (!live) {
    if (disk.kind === 'missing' || disk.blocker) return { path: p, action: 'recreate', want };
    if (disk.kind === 'dir') {
      const inWay = disk.dirFiles ?? [];
      const blocking = inWay.filter((f) => !deleting.has(f));
      if (blocking.length === 0) return { path: p, action: 'recreate', want };
      return skip(
        `a directory is in the way and holds ${blocking.length} file${blocking.length === 1 ? '' : 's'} this restore does not delete (${blocking[0]}${blocking.length > 1 ? ', …' : ''})`,
      );
    }
    return skip('something that was never captured (ignored, too large or secret) is there; left alone');
  }
  if (live.mode === SYMLINK && want.mode !== SYMLINK && !replaceCaptured) {
    return skip('a symlink is there now and the checkpoint has a file (--delete-new replaces it)');
  }
  if (disk.kind === 'dir') return skip('a directory is there now; left alone');
  if (disk.kind === 'other') return skip('a special file is there now; left alone');
  return { path: p, action: disk.kind === 'missing' ? 'recreate' : 'restore', want, from: live };
}

/**
 * Pure: what a restore wants. Every selected target path becomes its target
 * entry; selected paths that exist now but not in the target are leftovers, or
 * deletions under --delete-new.
 */
export function restoreWants(
  target: Map<string, TreeEntry>,
  live: Map<string, TreeEntry>,
  selected: (p: string) => boolean,
  deleteNew: boolean,
): { want: Map<string, Want>; leftovers: string[] } {
  const want = new Map<string, Want>();
  const leftovers: string[] = [];
  for (const [p, entry] of target) if (selected(p)) want.set(p, entry);
  for (const p of live.keys()) {
    if (target.has(p) || !selected(p)) continue;
    if (deleteNew) want.set(p, null);
    else leftovers.push(p);
  }
  return { want, leftovers: leftovers.sort() };
}

/**
 * Pure: what a revert of one checkpoint wants. A path whose live content is
 * still the checkpoint's goes back to the parent's; a path changed since is a
 * conflict, reported and left alone; a path already back at the parent's is
 * unchanged.
 */
export function revertWants(
  changes: readonly TreeChange[],
  live: Map<string, TreeEntry>,
): { want: Map<string, Want>; conflicts: PlannedFile[]; unchanged: string[] } {
  const want = new Map<string, Want>();
  const conflicts: PlannedFile[] = [];
  const unchanged: string[] = [];
  for (const c of changes) {
    const now = live.get(c.path) ?? null;
    if (sameEntry(now, c.before)) unchanged.push(c.path);
    else if (sameEntry(now, c.after)) want.set(c.path, c.before);
    else conflicts.push({ path: c.path, action: 'skip', reason: 'conflict: changed since that checkpoint; left as it is' });
  }
  return { want, conflicts, unchanged };
}

/**
 * Pure: the paths an undo would find stale. An undo reverses the change from a
 * guard to an operation's result; each such path must still hold the result,
 * or the undo would destroy work done since.
 */
export function staleUndoPaths(changes: readonly TreeChange[], live: Map<string, TreeEntry>): string[] {
  return changes.filter((c) => !sameEntry(live.get(c.path) ?? null, c.after)).map((c) => c.path);
}

/** Pure: fold extra entries (conflicts, already-reverted paths) into a plan and recount. */
export function withExtraFiles(plan: Plan, extra: readonly PlannedFile[], leftovers: readonly string[] = plan.leftovers): Plan {
  const files = [...plan.files, ...extra].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, counts: countActions(files), leftovers: [...leftovers] };
}

/** A path the live capture could not take now, as the capture reports it (`dir/` for a directory). */
export interface UncapturedPath {
  path: string;
  reason: string;
}

/**
 * Pure: for a path, why the live capture could not take it (it, or a folder
 * above it), in the words a plan gives; undefined when it was taken.
 */
export function uncapturedNote(uncaptured: readonly UncapturedPath[]): (path: string) => string | undefined {
  const exact = new Map<string, string>();
  const dirs: UncapturedPath[] = [];
  for (const u of uncaptured) {
    if (u.path.endsWith('/')) dirs.push(u);
    else exact.set(u.path, u.reason);
  }
  return (p) => {
    const reason = exact.get(p) ?? dirs.find((d) => p.startsWith(d.path))?.reason;
    return reason === undefined ? undefined : `not captured now (${reason.replaceAll('-', ' ')}); left alone`;
  };
}

/** What a checkpoint could see, as far as a recovery that wants paths absent because it lacks them must know. */
export interface CheckpointSight {
  /** The checkpoint, as the reasons name it. */
  label: string;
  /** No checkpoint holds this state (the parent of a first checkpoint): nothing is known of what was there. */
  none?: boolean;
  /** Its record is gone (gc dropped it; its tree was kept as a base): what it could see is not known. */
  dropped?: boolean;
  /** Its ignore rules are not known (their text is gone from the store). */
  rulesUnknown?: boolean;
  /** Another store's (fetched, imported from a bundle): it never saw this workspace, so nothing it lacks is known absent here. */
  foreign?: boolean;
  /** The paths asked about that its rules ignored. */
  ignored: ReadonlySet<string>;
  /** Folders whose own `.gitignore` it did not capture (ignored or skipped itself): the rules below are not known. */
  unreadRules: readonly string[];
  /** Its record's list of what it did not capture, and whether that list was cut (then any path may be in it). */
  skipped: readonly UncapturedPath[];
  skipsCut: boolean;
  /** Its nested repositories (gitlinks): it never looked inside one. */
  gitlinks: readonly string[];
}

/**
 * Pure: for each path a recovery would delete because a checkpoint lacks it, why that checkpoint could not
 * have seen it, when it could not: its rules ignored it, it was listed as not captured, it lies in a nested
 * repository, or what it saw is not known. A path absent from a checkpoint is absent only if its scan could
 * have seen it; otherwise the path is left alone.
 */
export function unseenReasons(candidates: Iterable<string>, sight: CheckpointSight): Map<string, string> {
  const out = new Map<string, string>();
  const at = `at ${sight.label}`;
  const below = (p: string, dir: string) => dir === '' || p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
  for (const p of candidates) {
    let why: string | undefined;
    if (sight.none) why = `no checkpoint saw the workspace before ${sight.label}`;
    else if (sight.dropped) why = `what the checkpoint before ${sight.label} saw is not known (gc dropped its record)`;
    else if (sight.foreign) why = `${sight.label} came from another store, which never saw this workspace`;
    else if (sight.rulesUnknown) why = `the ignore rules in force ${at} are not known here`;
    else if (sight.skipsCut) why = `${sight.label} lists only the first of the paths it did not capture`;
    else if (sight.gitlinks.some((g) => below(p, g))) why = `inside a nested repository ${at}, which is never looked into`;
    else if (sight.ignored.has(p)) why = `ignored ${at}`;
    else if (sight.unreadRules.some((d) => below(p, d))) why = `a .gitignore above it was not captured ${at}, so its rules are not known`;
    else {
      const skip = sight.skipped.find((s) => (s.path.endsWith('/') ? p.startsWith(s.path) : p === s.path));
      if (skip) why = `not captured ${at} (${skip.reason.replaceAll('-', ' ')})`;
    }
    if (why) out.set(p, `${why}: its absence there says nothing; left alone`);
  }
  return out;
}

/**
 * Pure: never write or delete what the live capture could not take. A path
 * below an unreadable directory keeps the entry of an older capture in the
 * shadow index, so it looks captured; its bytes now may be anything.
 */
export function shieldUncaptured(plan: Plan, uncaptured: readonly UncapturedPath[]): Plan {
  if (uncaptured.length === 0) return plan;
  const noteFor = uncapturedNote(uncaptured);
  let changed = false;
  const files = plan.files.map((f): PlannedFile => {
    if (f.action !== 'restore' && f.action !== 'recreate' && f.action !== 'delete') return f;
    const reason = noteFor(f.path);
    if (reason === undefined) return f;
    changed = true;
    return { path: f.path, action: 'skip', reason };
  });
  return changed ? { files, counts: countActions(files), leftovers: plan.leftovers } : plan;
}

/**
 * Pure: one id for what a plan does: every path it writes, deletes or skips,
 * with the entry it writes and the entry it replaces. A preview's id equals
 * the applied plan's exactly when the same bytes would go over the same bytes;
 * edits elsewhere in the workspace leave it as it is.
 */
export function planFingerprint(op: string, target: string, plan: Plan): string {
  const hash = createHash('sha256').update(`${op}\0${target}\0`);
  for (const f of plan.files) {
    if (f.action === 'unchanged') continue;
    hash.update(
      `${f.path}\0${f.action}\0${f.want ? `${f.want.mode} ${f.want.oid}` : '-'}\0${f.from ? `${f.from.mode} ${f.from.oid}` : '-'}\0`,
    );
  }
  return hash.digest('hex').slice(0, 16);
}
