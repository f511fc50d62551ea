/**
 * The library face of git-ckpt: open a workspace, snapshot it, list, show and
 * diff its checkpoints, and report its status. An agent harness can embed this
 * in-process; the CLI is a thin layer over it.
 */
import { shortId } from './model/short-ids.js';
import { labelOfTurn, turnLabels } from './model/turn-tree.js';
import { pendingRewinds, type PendingRewind } from './model/rewind-plan.js';
import { existsSync } from 'node:fs';
import { describeMissing, resolveInView, resolveSession, revertTargets, type LedgerView, type RevertSelection } from './model/address.js';
import type { FsckReport, RebuildReport } from './retain/fsck.js';
import type { GcOptions, GcReport } from './retain/gc.js';
import type { ForgetOptions, ForgetReport } from './retain/forget.js';
import type { ForgetInput } from './retain/forget-plan.js';
import { probeDegraded, type DegradedMap } from './store/probe.js';
import { noCheckpointYet, runningBaseline, startBaseline, withBaselineHeartbeat, type BaselineState } from './capture/baseline.js';
import { asCkptError, CkptError, isCkptError, storeUnwritable } from './model/errors.js';
import {
  readLedger,
  turnTitleKey,
  USER_KINDS,
  type CheckpointRecord,
  type ForkMark,
  type LedgerRead,
  type SkippedPath,
  type UserKind,
} from './model/ledger.js';
import { serialize, withLock } from './store/lock.js';
import { DEFAULT_SETTINGS, readSettings, type Settings } from './store/settings.js';
import type { ChangeSource, StoreContext } from './store/context.js';
import { flushDaemon } from './store/daemon-client.js';
import { crashPoint } from './model/crash-point.js';
import { removeGitDebris } from './capture/housekeeping.js';
import { captureTree, snapshotLocked, withScratchCapture, type SnapshotOptions, type SnapshotResult } from './capture/snapshot.js';
import { diffTrees, showBase, type DiffFormat } from './inspect/inspect.js';
import { treeChanges } from './git/objects.js';
import type { TreeChange } from './model/tree.js';
import { dirSize, initShadowRepo, openStoreDir, storeDirFor, type StorePaths } from './store/store.js';
import { locateWorkspace, type WorkspaceLocation } from './store/locate.js';
import { readFetched } from './store/share-state.js';
import type {
  BundleCreateOptions,
  BundleImportOptions,
  BundleReport,
  BundleVerifyReport,
  FetchOptions,
  FetchReport,
  PushOptions,
  PushReport,
  ShareAccess,
  ShareInitOptions,
  ShareInitReport,
  UnpushReport,
} from './share/share.js';

type ShareModule = typeof import('./share/share.js');

/** Errors leave as CkptErrors (a share command's lock and network steps are outside the lock door). */
async function wrapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asCkptError(err);
  }
}
// Restore machinery loads on first use: the hook path (a snapshot per tool call) never needs it.
import type {
  InterruptedOperation,
  OperationOptions,
  OperationReport,
  RecoveryReport,
  RestoreOptions,
  RevertOptions,
  UndoOptions,
} from './restore/restore.js';
/**
 * Modules the hook path never runs, loaded on first use. The hook's bundle
 * leaves them out (scripts/bundle.mjs points these imports at dist/lib/):
 * that saves parsing ~40 KB on every tool call.
 */
const lazy = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
};
const restoreModule = lazy(() => import('./restore/restore.js'));
const gcModule = lazy(() => import('./retain/gc.js'));
const fsckModule = lazy(() => import('./retain/fsck.js'));
const forgetModule = lazy(() => import('./retain/forget.js'));
const forgetPlanModule = lazy(() => import('./retain/forget-plan.js'));
const shareModule = lazy(() => import('./share/share.js'));

/** A snapshot as a person or a harness asks for one. */
export interface SnapshotRequest {
  message?: string;
  session?: string;
  turn?: number;
  step?: number;
  tool?: string;
  kind?: UserKind;
  /** Override the time budget (ms); 0 disables it. */
  timeBudgetMs?: number;
  onProgress?: SnapshotOptions['onProgress'];
  signal?: AbortSignal;
}

export type { DiffFormat } from './inspect/inspect.js';

export interface ListOptions {
  /** Only this session's checkpoints (a unique prefix of its id). */
  session?: string;
  /** Only this turn's checkpoints: the Nth prompt of each session's current branch. */
  turn?: number;
  /** At most this many, newest first. */
  limit?: number;
}

export interface ListResult {
  /** Each turn's title (the user's prompt, first line), by turnTitleKey(session, turn). */
  titles: Record<string, string>;
  /** How people name the turns of sessions rewound inside the agent (`2`, `2~1`), by turnTitleKey(session, turn). */
  labels: Record<string, string>;
  /** Sessions forked from another, to where they came from. */
  forks: Record<string, ForkMark>;
  /** Newest first. */
  records: CheckpointRecord[];
  /** How many matched before `limit` cut the list. */
  total: number;
  warnings: string[];
}

export interface StatusReport {
  workspace: string;
  store: string;
  git: boolean;
  checkpoints: number;
  sessions: string[];
  bytesOnDisk: number;
  /** The soft quota (ckpt.maxBytes) the store is held to by gc. */
  maxBytes: number;
  /** The secret patterns in force: files matching them are never stored. */
  secretPatterns: string[];
  latest: CheckpointRecord | null;
  /** Whether the workspace differs from the latest checkpoint (null when there is none, or it was not compared). */
  dirty: boolean | null;
  /** What differs from the latest checkpoint, path by path (at most STATUS_CHANGED_KEPT; `changedCount` has them all). */
  changed: { path: string; status: 'A' | 'M' | 'D' }[];
  changedCount: number;
  /** Why the workspace was not compared with the latest checkpoint (then `dirty` is null). */
  notCompared: string | null;
  /** The first snapshot still being taken in the background, with its progress. */
  baseline: BaselineState | null;
  /** What the workspace holds now that no checkpoint captures (too large, secret …), first SKIPPED_KEPT of them. */
  uncaptured: SkippedPath[];
  uncapturedCount: number;
  /** A restore, revert or undo that was interrupted (run restore --continue or --abort). */
  interrupted: InterruptedOperation | null;
  /** A forget that was interrupted, in words with the command that finishes it. */
  interruptedForget: string | null;
  /** Rewinds of the conversation inside an agent whose turns left behind still show in the workspace. */
  rewinds: PendingRewind[];
  warnings: string[];
}

/** Changed paths `status` lists by name; past this it gives the count and `git ckpt diff --stat`. */
const STATUS_CHANGED_KEPT = 20;

export interface OpenOptions {
  /** Environment to read GIT_CKPT_HOME / XDG_STATE_HOME from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** The watcher's account of changes for a workspace root (the daemon's), which snapshots then scan instead of everything. */
  changesFor?: (root: string) => ChangeSource | undefined;
}

export class Workspace {
  private settingsCache?: Settings;
  private constructor(
    readonly location: WorkspaceLocation,
    private storePaths: StorePaths | undefined,
    private readonly env: NodeJS.ProcessEnv,
    private readonly changes?: ChangeSource,
    /** Opened by the daemon for an event it records: never waits for the daemon. */
    private readonly inDaemon = false,
  ) {}

  /** Open the workspace that contains `dir` (the git toplevel, or `dir` itself). Creates nothing. */
  static open(dir: string, options: OpenOptions = {}): Workspace {
    const env = options.env ?? process.env;
    const location = locateWorkspace(dir);
    const changes = options.changesFor?.(location.root);
    return new Workspace(location, openStoreDir(location.root, false, env), env, changes, options.changesFor !== undefined);
  }

  get root(): string {
    return this.location.root;
  }

  /**
   * The same workspace, scanned in full by every capture. A restore made inside the daemon needs it:
   * the watcher reports the restore's own writes only after they land, and the restore verifies them at once.
   */
  scannedInFull(): Workspace {
    return this.changes ? new Workspace(this.location, this.storePaths, this.env, undefined, this.inDaemon) : this;
  }

  /** The store folder, created on first use. */
  private ensureStore(): StorePaths {
    this.storePaths ??= openStoreDir(this.location.root, true, this.env)!;
    return this.storePaths;
  }

  get store(): StorePaths | undefined {
    return this.storePaths;
  }

  /** Where this workspace's store is (or will be), without creating it. */
  storeDirPath(): string {
    return this.storePaths?.dir ?? storeDirFor(this.location.root, this.env);
  }

  /** The workspace's settings; `lockTimeoutMs` bounds the wait when a new store must first be made under the lock. */
  async settings(options: { lockTimeoutMs?: number } = {}): Promise<Settings> {
    if (this.settingsCache) return this.settingsCache;
    const paths = this.ensureStore();
    // A store is created only through the lock door: parallel first hooks must not race to make it.
    if (!existsSync(paths.shadowHead)) return this.exclusive(async (_paths, settings) => settings, undefined, options.lockTimeoutMs);
    this.settingsCache = await readSettings(paths, this.env);
    return this.settingsCache;
  }

  /**
   * The lock door: run `fn` serialized with every other writer of this
   * workspace, in and across processes; errors leave as CkptErrors (see asCkptError).
   */
  private async exclusive<T>(
    fn: (paths: StorePaths, settings: Settings) => Promise<T>,
    signal?: AbortSignal,
    lockTimeoutMs?: number,
  ): Promise<T> {
    return wrapped(() => this.exclusiveRaw(fn, signal, lockTimeoutMs));
  }

  private async exclusiveRaw<T>(
    fn: (paths: StorePaths, settings: Settings) => Promise<T>,
    signal?: AbortSignal,
    lockTimeoutMs?: number,
  ): Promise<T> {
    const paths = this.ensureStore();
    // Events the daemon answered before recording them come first (not inside the daemon itself).
    if (!this.inDaemon) await flushDaemon(this.env, this.location.root);
    return serialize(paths.dir, async () => {
      // Settings name the lock timeout, so read them first when the shadow repository exists;
      // a new one is made under the lock.
      if (!this.settingsCache && existsSync(paths.shadowHead)) await this.settings();
      const lockTimeout = lockTimeoutMs ?? this.settingsCache?.lockTimeoutMs ?? DEFAULT_SETTINGS.lockTimeoutMs;
      return withLock(
        paths.lock,
        lockTimeout,
        async (lock) => {
          crashPoint('door');
          await initShadowRepo(paths);
          // Only a process killed while holding the lock leaves git debris behind.
          if (lock.brokeStale || existsSync(`${paths.indexFile}.lock`)) removeGitDebris(paths);
          this.settingsCache ??= await readSettings(paths, this.env);
          const settings = this.settingsCache;
          return fn(paths, settings);
        },
        signal,
      );
    });
  }

  /**
   * The door for commands that only read (status, diff, fsck, dry runs): the
   * lock door; when the store turns out not to be writable (a full disk, a
   * read-only mount or folder), the same work again with `unwritable` set, so
   * captures go to a scratch index outside the store, still under the lock.
   * Only when no lock can be taken at all does it go on without one: then no
   * other process can write the store either.
   */
  private async readDoor<T>(fn: (paths: StorePaths, settings: Settings, unwritable: boolean) => Promise<T>): Promise<T> {
    try {
      return await this.exclusive(async (paths, settings) => {
        try {
          return await fn(paths, settings, false);
        } catch (err) {
          if (!storeUnwritable(asCkptError(err))) throw err;
          return fn(paths, settings, true);
        }
      });
    } catch (err) {
      const paths = this.storePaths;
      const lockFailed = isCkptError(err, 'io') && err.data.lockFailed === true && storeUnwritable(err);
      if (!paths || !existsSync(paths.shadowHead) || !lockFailed) throw err;
      try {
        return await fn(paths, this.settingsCache ?? (await readSettings(paths, this.env)), true);
      } catch (inner) {
        throw asCkptError(inner);
      }
    }
  }

  /** Capture the workspace as a checkpoint (nothing is created when nothing changed). */
  async snapshot(request: SnapshotRequest = {}): Promise<SnapshotResult> {
    const kind = request.kind ?? 'manual';
    if (!USER_KINDS.includes(kind))
      throw new CkptError(
        'usage',
        `a snapshot's kind is one of ${USER_KINDS.join(', ')}, not ${JSON.stringify(kind)} (guards and operation records are made by restore, revert and undo)`,
      );
    // Only the user's options reach the engine: its internal capture modes are not part of this face.
    const { message, session, turn, step, tool, timeBudgetMs, onProgress, signal } = request;
    const options: SnapshotOptions = { message, session, turn, step, tool, kind, timeBudgetMs, onProgress, signal };
    return this.exclusive((paths, settings) => {
      // The first snapshot is `init`'s, whatever command asks for it: no budget, large folders in
      // one pass (with a budget, 50,000 files ran out of 15 s in batches where init took 3-5 s).
      const first = timeBudgetMs === undefined && noCheckpointYet(paths);
      return snapshotLocked(this.context(paths, settings), first ? { ...options, timeBudgetMs: 0 } : options);
    }, signal);
  }

  /**
   * Start the first snapshot in the background when the workspace has none
   * (`hooks install` does, so the agent's first tool call has a checkpoint to
   * rewind to). Returns whether one was started.
   */
  async startBaseline(): Promise<boolean> {
    const paths = this.ensureStore();
    return noCheckpointYet(paths) && startBaseline(this.location.root, paths, this.env);
  }

  /**
   * The first snapshot, however long it takes; its progress is in the store
   * for `status` (see baseline.ts). What changes while it runs is taken by the
   * first hook after it, so the state before the agent's first prompt stays
   * the one this snapshot saw.
   */
  async baseline(onProgress?: SnapshotOptions['onProgress']): Promise<SnapshotResult> {
    return this.exclusive((paths, settings) =>
      withBaselineHeartbeat(paths, onProgress, (progress) =>
        snapshotLocked(this.context(paths, settings), {
          kind: 'manual',
          message: 'initial snapshot',
          timeBudgetMs: 0,
          onProgress: progress,
        }),
      ),
    );
  }

  /**
   * Run `fn` under the workspace lock, with the store open and its settings
   * read: the door through which the hooks act (numbering and snapshot under
   * one lock). Not a stable API.
   */
  async locked<T>(fn: (ctx: StoreContext) => Promise<T>, options: { lockTimeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
    return this.exclusive((paths, settings) => fn(this.context(paths, settings)), options.signal, options.lockTimeoutMs);
  }

  /** A dry run only reads (its capture is a scratch one), so it works on a store that cannot be written. */
  private operationDoor<T>(options: { dryRun?: boolean }, fn: (paths: StorePaths, settings: Settings) => Promise<T>): Promise<T> {
    return options.dryRun ? this.readDoor(fn) : this.exclusive(fn);
  }

  private context(paths: StorePaths, settings: Settings): StoreContext {
    return { location: this.location, paths, settings, env: this.env, ...(this.changes ? { changes: this.changes } : {}) };
  }

  /** Make the workspace match a checkpoint (see restore.ts for the transaction). */
  async restore(address: string, options: RestoreOptions = {}): Promise<OperationReport> {
    // Lock, then read: the target is resolved and probed under the lock, so a background gc cannot drop it in between.
    return this.operationDoor(options, async (paths, settings) => {
      const target = resolveInView(await this.checked(!options.dryRun), address);
      return (await restoreModule()).restoreLocked(this.context(paths, settings), target, options);
    });
  }

  /**
   * Undo what checkpoints changed, keeping everything since that does not
   * overlap (three-way, see merge.ts): one checkpoint by its address, or the
   * tool calls of a turn range (`turn:3..turn:5[@session]`), of a turn, or of a
   * whole agent session (`{ session, turn? }`).
   */
  async revert(what: string | RevertSelection, options: RevertOptions = {}): Promise<OperationReport> {
    return this.operationDoor(options, async (paths, settings) => {
      const view = await this.checked(!options.dryRun);
      const { targets, parentTree } = revertTargets(view, what);
      return (await restoreModule()).revertLocked(this.context(paths, settings), targets, parentTree, options, view.records);
    });
  }

  /** Reverse the last restore, revert or undo (so repeating it redoes). */
  async undo(options: UndoOptions = {}): Promise<OperationReport> {
    return this.operationDoor(options, async (paths, settings) => {
      const { records, degraded, warnings } = await this.checked(!options.dryRun);
      const restore = await restoreModule();
      const last = restore.lastOperation(records);
      for (const id of last?.op ? [last.id, last.op.guard] : []) {
        if (degraded[id])
          throw new CkptError('degraded', `cannot undo: checkpoint ${shortId(id)} is degraded (${describeMissing(degraded[id])})`);
      }
      return restore.undoLocked(this.context(paths, settings), records, options, warnings.length);
    });
  }

  /** The ledger's records with the probe's verdict on them: one read and one probe per command. */
  private async checked(writeCache = true): Promise<LedgerView> {
    const { records, warnings } = this.ledger();
    return { records, warnings, degraded: this.storePaths ? await probeDegraded(this.storePaths, records, writeCache) : {} };
  }

  /** Degraded checkpoints (commit or root tree missing), from the cached probe. */
  async degraded(writeCache = true): Promise<DegradedMap> {
    return (await this.checked(writeCache)).degraded;
  }

  /** Resolve an address (see address.ts), minding degraded checkpoints; a dry run's (`writeCache: false`) writes no probe cache. */
  async resolve(address: string, options: { writeCache?: boolean } = {}): Promise<CheckpointRecord> {
    return resolveInView(await this.checked(options.writeCache ?? true), address);
  }

  /** Apply the retention policy and reclaim space (see gc.ts). */
  async gc(options: GcOptions = {}): Promise<GcReport> {
    const run = async (paths: StorePaths, settings: Settings) => (await gcModule()).gcLocked({ paths, settings }, options);
    return options.dryRun ? this.readDoor(run) : this.exclusive(run);
  }

  /**
   * Remove checkpoints (by address, a whole session, or everything older than a
   * date), or paths from every checkpoint, from the store for good: the chain
   * is rewritten (see forget.ts) and the objects are pruned at once. A dry run
   * says what goes and the bytes it frees. Bad input is refused before the lock.
   */
  async forget(request: ForgetInput, options: ForgetOptions = {}): Promise<ForgetReport> {
    const checked = (await forgetPlanModule()).checkRequest(request);
    const paths = this.storePaths;
    if (!paths) throw new CkptError('nothing', 'no checkpoints yet: nothing to forget');
    const run = () =>
      this.operationDoor(options, async (lockedPaths, settings) =>
        (await forgetModule()).forgetLocked(this.context(lockedPaths, settings), checked, options),
      );
    if (options.dryRun) return run();
    // A forget may drop export chains from share.json: the share commands' lock first (the order they take both in).
    const settings = await this.settings();
    return wrapped(() => withLock(paths.shareLock, settings.lockTimeoutMs, run));
  }

  /** A deep check of the store. */
  async fsck(): Promise<FsckReport> {
    if (!this.storePaths) throw new CkptError('nothing', 'no store for this workspace yet');
    return this.readDoor(async (paths) => (await fsckModule()).fsckStore(paths));
  }

  /** Recover the ledger from the checkpoint commits' trailers. */
  async rebuildLedger(): Promise<RebuildReport> {
    if (!this.storePaths) throw new CkptError('nothing', 'no store for this workspace yet');
    return this.exclusive(async (paths) => (await fsckModule()).rebuildLedger(paths));
  }

  /** Finish or roll back an interrupted restore, revert or undo. */
  async recover(action: 'continue' | 'abort', options: OperationOptions = {}): Promise<RecoveryReport> {
    if (!this.storePaths) throw new CkptError('nothing', 'no interrupted restore to continue or abort');
    return this.operationDoor(options, async (paths, settings) =>
      (await restoreModule()).recoverLocked(this.context(paths, settings), this.ledger().records, action, options),
    );
  }

  /**
   * The checkpoints every view reads: those fetched from other stores (oldest first), then this
   * workspace's own chain, so that `latest` and `latest~N` stay this workspace's own.
   */
  private ledger(): LedgerRead {
    if (!this.storePaths) return { records: [], warnings: [], newestSchema: 0 };
    const own = readLedger(this.storePaths.ledger);
    if (!existsSync(this.storePaths.fetched)) return own;
    const fetched = readFetched(this.storePaths);
    const byTime = [...fetched.records].sort((a, b) => a.time - b.time);
    return { ...own, records: [...byTime, ...own.records], warnings: [...fetched.warnings, ...own.warnings] };
  }

  /** What the share commands run with: the context outside the lock, and the lock door. */
  private async shareAccess(): Promise<ShareAccess> {
    const settings = await this.settings();
    return {
      ctx: this.context(this.ensureStore(), settings),
      locked: (fn) => this.exclusive((paths, lockedSettings) => fn(this.context(paths, lockedSettings))),
    };
  }

  /** Say where checkpoints go (a remote of the user's repository, or a URL): nothing travels before this. */
  async shareInit(options: ShareInitOptions = {}): Promise<ShareInitReport> {
    return wrapped(async () => (await shareModule()).shareInit(await this.shareAccess(), options));
  }

  /** The store's share settings, or undefined before `shareInit`. */
  async shareSettings(): Promise<ReturnType<ShareModule['shareSummary']>> {
    if (!this.storePaths) return undefined;
    return (await shareModule()).shareSummary((await this.shareAccess()).ctx);
  }

  /** Push sessions' export copies to the remote (see share.ts); `dryRun` says what would go and what is withheld. */
  async push(options: PushOptions = {}): Promise<PushReport> {
    return wrapped(async () => (await shareModule()).push(await this.shareAccess(), options));
  }

  /** ckpt.share.auto=turn's background push of one session: failures and withheld checkpoints go to the hook log. */
  async autoPush(session: string): Promise<void> {
    return (await shareModule()).autoPush(await this.shareAccess(), session);
  }

  /** Fetch other stores' sessions of this workspace from the remote (or list them). */
  async fetchCheckpoints(options: FetchOptions = {}): Promise<FetchReport> {
    return wrapped(async () => (await shareModule()).fetchCheckpoints(await this.shareAccess(), options));
  }

  async bundleCreate(file: string, options: BundleCreateOptions = {}): Promise<BundleReport> {
    return wrapped(async () => (await shareModule()).bundleCreate(await this.shareAccess(), file, options));
  }

  async bundleVerify(file: string): Promise<BundleVerifyReport> {
    return wrapped(async () => (await shareModule()).bundleVerify(await this.shareAccess(), file));
  }

  /** Import a bundle's chains of this workspace (of every workspace with `anyWorkspace`). */
  async bundleImport(file: string, options: BundleImportOptions = {}): Promise<Awaited<ReturnType<ShareModule['bundleImport']>>> {
    return wrapped(async () => (await shareModule()).bundleImport(await this.shareAccess(), file, options));
  }

  /** Delete this store's ref of a session on the remote (deleting is not purging: the host keeps the objects). */
  async unpush(options: { remote?: string; session: string }): Promise<UnpushReport> {
    return wrapped(async () => (await shareModule()).unpush(await this.shareAccess(), options));
  }

  /** Checkpoints, newest first. */
  async list(options: ListOptions = {}): Promise<ListResult> {
    if (!this.inDaemon && this.storePaths) await flushDaemon(this.env, this.location.root);
    const { records, warnings } = this.ledger();
    let matching = records;
    if (options.session !== undefined) {
      const session = resolveSession(records, options.session);
      matching = matching.filter((r) => r.session === session);
    }
    const labels = turnLabels(records);
    const labelOf = (r: CheckpointRecord) => (r.turn === null ? null : labelOfTurn(labels, r.session, r.turn));
    if (options.turn !== undefined) matching = matching.filter((r) => labelOf(r) === String(options.turn));
    const newestFirst = [...matching].reverse();
    // A turn's title rides on its first checkpoint, which `limit` may cut: gather them from all records.
    const titles: Record<string, string> = {};
    for (const r of records) if (r.prompt && r.session !== null && r.turn !== null) titles[turnTitleKey(r.session, r.turn)] ??= r.prompt;
    const forks: Record<string, ForkMark> = {};
    for (const r of records) if (r.fork && r.session !== null) forks[r.session] ??= r.fork;
    return {
      records: options.limit === undefined ? newestFirst : newestFirst.slice(0, options.limit),
      total: newestFirst.length,
      warnings,
      titles,
      labels,
      forks,
    };
  }

  /**
   * A checkpoint's own change: git's diff from its parent. When gc dropped the
   * parent (or it is degraded), the diff is from the nearest older checkpoint
   * still whole, and `base` says so.
   */
  async show(
    address: string,
    options: { format?: DiffFormat; color?: boolean; binary?: boolean; paths?: string[] } = {},
  ): Promise<{ record: CheckpointRecord; diff: string; base?: { id: string | null; reason: string } }> {
    const view = await this.checked();
    const record = resolveInView(view, address);
    const { from, base } = showBase(view.records, view.degraded, record);
    const diff = await diffTrees(
      this.storePaths!,
      from,
      record.id,
      { format: options.format ?? 'patch-with-stat', color: options.color ?? false, binary: options.binary },
      options.paths,
    );
    return { record, diff, ...(base ? { base } : {}) };
  }

  /**
   * Diff two checkpoints, or a checkpoint against the live workspace. The live
   * side is captured into the shadow index (no checkpoint is created), so new
   * files show up too.
   */
  async diff(
    options: { from?: string; to?: string; format?: DiffFormat; color?: boolean; binary?: boolean; paths?: string[] } = {},
  ): Promise<string> {
    const view = await this.checked();
    const from = resolveInView(view, options.from ?? 'latest');
    const how = { format: options.format ?? 'patch', color: options.color ?? false, binary: options.binary };
    if (options.to !== undefined) return diffTrees(this.storePaths!, from.tree, resolveInView(view, options.to).id, how, options.paths);
    return this.readDoor(async (paths, settings, unwritable) => {
      const ctx = this.context(paths, settings);
      if (!unwritable) return diffTrees(paths, from.tree, (await captureTree(ctx)).tree, how, options.paths);
      return withScratchCapture(ctx, (live, objectDir) => diffTrees(paths, from.tree, live.tree, how, options.paths, objectDir));
    });
  }

  /**
   * The live workspace's tree and what it holds that is not captured (too
   * large, secret …), without a checkpoint, compared under the same lock with
   * the ledger's latest record; into a scratch index when the store cannot be written.
   */
  private captureForStatus(): Promise<{ live: Awaited<ReturnType<typeof captureTree>>; read: LedgerRead; changed: TreeChange[] }> {
    return this.readDoor(async (paths, settings, unwritable) => {
      const ctx = this.context(paths, settings);
      // Lock, then re-read: the latest checkpoint is compared with a capture of the same moment.
      const read = this.ledger();
      const latest = read.records.at(-1);
      // What changed, read while the captured tree's objects exist (a scratch capture's go with it).
      const compare = (tree: string, objectDir?: string) =>
        latest && latest.tree !== tree
          ? treeChanges({ gitDir: paths.gitDir, cwd: paths.dir }, latest.tree, tree, undefined, objectDir)
          : [];
      if (unwritable)
        return withScratchCapture(ctx, async (live, objectDir) => ({ live, read, changed: await compare(live.tree, objectDir) }));
      const live = await captureTree(ctx);
      return { live, read, changed: await compare(live.tree) };
    });
  }

  async status(): Promise<StatusReport> {
    const { interruptedOperation } = await restoreModule();
    const interrupted = this.storePaths ? (interruptedOperation(this.storePaths.dir) ?? null) : null;
    const interruptedForget =
      this.storePaths && existsSync(this.storePaths.forgetMarker)
        ? ((await forgetModule()).interruptedForget(this.storePaths) ?? null)
        : null;
    const baseline = this.storePaths ? (runningBaseline(this.storePaths) ?? null) : null;
    let read = this.ledger();
    // While the baseline holds the lock, comparing with the live workspace would wait for it; a journal's
    // half-written state is not compared either: restore --continue or --abort settles it first.
    const notCompared =
      read.records.length === 0
        ? null
        : baseline
          ? 'the first snapshot is still being taken in the background'
          : interrupted
            ? 'a restore, revert or undo was interrupted'
            : null;
    let live: Awaited<ReturnType<typeof captureTree>> | undefined;
    let changed: TreeChange[] = [];
    if (read.records.length && !notCompared) ({ read, live, changed } = await this.captureForStatus());
    const { records, warnings } = read;
    // The workspace's own latest: fetched checkpoints come first in the view, and never stand for it.
    const latest = [...records].reverse().find((r) => !r.origin) ?? null;
    const dirty = live && latest ? live.tree !== latest.tree : null;
    const settings = this.storePaths ? await this.settings() : DEFAULT_SETTINGS;
    return {
      workspace: this.location.root,
      store: this.storeDirPath(),
      git: this.location.userGitDir !== undefined,
      checkpoints: records.length,
      sessions: [...new Set(records.map((r) => r.session).filter((s): s is string => s !== null))],
      bytesOnDisk: this.storePaths ? dirSize(this.storePaths.dir) : 0,
      maxBytes: settings.maxBytes,
      secretPatterns: settings.secretPatterns,
      latest,
      dirty,
      changed: changed.slice(0, STATUS_CHANGED_KEPT).map((c) => ({ path: c.path, status: !c.before ? 'A' : !c.after ? 'D' : 'M' })),
      changedCount: changed.length,
      notCompared,
      baseline,
      uncaptured: live?.skipped ?? [],
      uncapturedCount: live?.skippedCount ?? 0,
      interrupted,
      rewinds: pendingRewinds(records, Date.now()),
      interruptedForget,
      warnings,
    };
  }
}
