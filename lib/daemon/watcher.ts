/**
 * One workspace watched by the daemon: @parcel/watcher's events folded into
 * the change log, and the cookie sync that makes a view complete. A capture
 * asks for a view; before answering, the watcher sets the workspace folder's
 * mtime and waits for that change's own event: every change made before the
 * ask was queued before it, so it has been recorded (the cookie of Watchman and
 * git's fsmonitor, without a file; on Linux its access time, see COOKIE_IN_ATIME).
 *
 * The log may narrow a scan only when the watcher is certain it saw every
 * change, so it is unknown (a full scan) whenever it cannot be:
 * - inotify (Linux) watches one folder at a time, and parcel adds a watch only
 *   for the folder an event names, never for the folders already inside it
 *   (a tree renamed, moved in, copied or unpacked; `mkdir -p` racing it), and
 *   keeps the old paths of a renamed folder's subfolders. Each folder that
 *   appears is therefore subscribed on its own (parcel walks it and watches
 *   every folder below), and `view` waits for those subscriptions; past
 *   MAX_FOLDER_SUBSCRIPTIONS the watcher starts over from the root instead.
 * - a watch that could not be added (the inotify limit), an error, or a
 *   stopped daemon (the kernel drops events it cannot queue, and parcel says
 *   nothing of it) makes the log unknown; a workspace not fully watched stays
 *   unknown at every sync until a retry watches it all.
 * - the ignore rules read from outside the watched tree (the global excludes
 *   file, the repository's info/exclude) are compared by their stat data.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, type Stats, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  coveredBy,
  markUnknown,
  newChangeLog,
  placeLate,
  recordChanges,
  settle,
  viewOf,
  type ChangeLog,
  type ChangeView,
  type WatchedChange,
} from '../model/change-log.js';
import { pausePoint } from '../model/crash-point.js';
import type { ChangeSource } from '../store/context.js';
import type { InotifyUsage, WatchedWorkspace } from '../store/daemon-client.js';

/**
 * Test-only: `GIT_CKPT_TEST_WATCHER=overflow:N` reports every Nth batch of events as an error, as a kernel
 * queue overflow reported by the watcher would be; `max:N` makes the change log give up past N paths (a
 * small watcher); `lose:NAME` drops the events of files named NAME without a word, as a watcher that misses
 * a change does (what verification finds).
 */
const TEST_WATCHER = /^(overflow|max|lose):([\w.-]+)$/.exec(process.env.GIT_CKPT_TEST_WATCHER ?? '');
const TEST_OVERFLOW_EVERY = TEST_WATCHER?.[1] === 'overflow' ? Number(TEST_WATCHER[2]) : 0;
const TEST_MAX_PATHS = TEST_WATCHER?.[1] === 'max' ? Number(TEST_WATCHER[2]) : undefined;
const TEST_LOST_NAME = TEST_WATCHER?.[1] === 'lose' ? TEST_WATCHER[2] : undefined;

/** FSEvents (macOS) and ReadDirectoryChangesW (Windows) watch a whole tree in one; inotify and kqueue watch folder by folder. */
const WATCHES_EACH_FOLDER = process.platform !== 'darwin' && process.platform !== 'win32';

/** The clock going back further than this since the last sync: event times and mtimes no longer order changes. */
const CLOCK_SLACK_MS = 1000;

/**
 * The cookie is a change of the workspace folder's times. On Linux parcel reports any utimes (inotify's
 * IN_ATTRIB), so only the access time moves and the modification time stays (to within a microsecond: Node
 * passes times as a double), which git's untracked cache and tools that compare a folder's mtime then do not
 * see as a change. FSEvents' backend drops a change that leaves the mtime as it was: there it is the mtime.
 */
const COOKIE_IN_ATIME = process.platform === 'linux';

/** A cookie that has not come back in this long: the watcher is stuck, so the view is unknown. */
const COOKIE_WAIT_MS = 2000;

/**
 * Folders subscribed one by one (each appeared after the watcher started) past which it starts over from
 * the root: one walk of the workspace, instead of every later event delivered once per subscription above it.
 */
const MAX_FOLDER_SUBSCRIPTIONS = 256;

/** How long a view waits for new folders' subscriptions (their paths stay in the log until they are up). */
const FOLDER_WAIT_MS = 5000;

/**
 * How coarse file times may be: Linux stamps a change with a clock that moves once a kernel tick (HZ 100
 * at the least: 10 ms); Windows' moves every 15.6 ms; APFS uses the fine clock.
 */
const TIMESTAMP_TICK_MS = process.platform === 'darwin' ? 1 : process.platform === 'win32' ? 16 : 10;

/** The stall clock's tick, and the gap past which the daemon counts as stopped (its queue may have overflowed). */
const STALL_TICK_MS = 250;
const STALL_MS = 1250;

/** A failed watch is tried again after this long, doubling up to the maximum (or at once when the limit changed). */
const RETRY_MIN_MS = 60_000;
const RETRY_MAX_MS = 15 * 60_000;

interface Subscription {
  unsubscribe(): Promise<void>;
}

type ParcelEvents = { path: string; type: WatchedChange['type'] }[];
type Parcel = {
  subscribe(dir: string, fn: (err: Error | null, events: ParcelEvents) => void, opts: { ignore: string[] }): Promise<Subscription>;
};

let parcelModule: Promise<Parcel> | undefined;
function parcel(): Promise<Parcel> {
  parcelModule ??= import('@parcel/watcher').then(
    // CommonJS: its exports arrive as the default export of an ES import.
    (loaded) => ((loaded as unknown as { default?: Parcel }).default ?? loaded) as Parcel,
  );
  return parcelModule;
}

/**
 * A sync's cookie: the log's sequence number when it was set and when its
 * event came, and its ctime (null: no cookie was set).
 */
interface SyncPoint {
  upTo: number;
  seen: number;
  at: number | null;
}

/** A post's arrival (see `arrival`). */
export interface Arrival {
  set: Promise<void>;
  point: Promise<SyncPoint>;
}

/** Why a workspace is not fully watched, and what fixes it. */
interface WatchGap {
  reason: string;
  fix: string | null;
  retryAt: number;
  backoffMs: number;
  /** The kernel's limits when it failed: a change (the fix applied) retries at once. */
  limits: string;
}

/** A folder subscribed on its own: it appeared after the subscription above it walked the tree. */
interface FolderSubscription {
  /** The folder's identity: an inode number freed by a deletion is soon given to a new folder, so its birth time too. */
  dev: number;
  ino: number;
  born: number;
  sub?: Subscription;
  /** Settles once the subscription is up (or failed). */
  ready: Promise<void>;
}

/**
 * The daemon's watchers together: the stall clock that makes every one
 * unknown, and the reset that releases every watch of the process.
 */
export class WatchGroup {
  readonly members = new Set<WorkspaceWatcher>();
  /**
   * Folders whose subscription parcel may still hold in part: one whose watches failed halfway, or whose
   * unsubscribe threw (parcel erases a folder's subscription by its path, so a renamed tree's keep their
   * old paths, and removing their dead watches fails). Parcel caches a folder's list by its path and reuses
   * it while any subscription holds it: a new subscription there would not walk the folder again.
   */
  readonly tainted = new Set<string>();
  private lastBeat = Date.now();
  private readonly timer: NodeJS.Timeout;
  private resetting?: Promise<void>;

  constructor() {
    this.timer = setInterval(() => this.checkStall(), STALL_TICK_MS);
    this.timer.unref();
  }

  /**
   * A daemon stopped (SIGSTOP, a suspended laptop, a starved process) may have
   * missed events: the kernel drops what its queue cannot hold (16,384 by
   * default), and parcel ignores the overflow it is told of. The event loop
   * falling behind the wall clock shows the stop; every workspace is then unknown.
   */
  checkStall(): void {
    const now = Date.now();
    const gap = now - this.lastBeat;
    this.lastBeat = now;
    if (gap < STALL_MS) return;
    for (const watcher of this.members)
      watcher.invalidate(`the daemon was paused ${Math.round(gap / 1000)} s; events may have been dropped`);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * A subscription that failed halfway (or whose end failed) leaves watches in
   * parcel's backend, which also keeps the folder list it read (a retry would
   * reuse it), until the backend goes. So every subscription ends, the backend
   * with them, and the workspaces that were fully watched start over from their roots.
   */
  reset(): Promise<void> {
    this.resetting ??= (async () => {
      const members = [...this.members];
      await Promise.all(members.map((w) => w.release()));
      await dropBackend();
      this.tainted.clear();
      for (const w of members) await w.startOver('the watcher started over to release the watches a failed one held');
    })().finally(() => {
      this.resetting = undefined;
    });
    return this.resetting;
  }
}

export interface WatcherOptions {
  group: WatchGroup;
  /** Absolute folders whose events are not wanted (store roots inside the workspace). */
  ignore: string[];
  /** Nested repositories the store knows (workspace-relative): their `.git` is mostly left unwatched. */
  nestedRepos: () => string[];
  /** Ignore-rule files outside the watched tree (or in its unwatched `.git`), compared by stat at each sync. */
  ignoreSources: string[];
}

export class WorkspaceWatcher implements ChangeSource {
  private readonly log: ChangeLog = newChangeLog('the daemon had not watched this workspace before');
  private rootSub?: Subscription;
  private readonly folders = new Map<string, FolderSubscription>();
  /** Subscriptions change one at a time (a release never overlaps a subscribe). */
  private changing: Promise<unknown> = Promise.resolve();
  /** Bumped when subscriptions are released: events of released ones are not counted. */
  private generation = 0;
  /** Why the watcher should start over from the root at the next sync (an error, too many folders, a replaced root). */
  private restartWanted: string | null = null;
  private gap: WatchGap | null = null;
  /** A subscription failed: the group must release every watch before a retry. */
  private needsReset = false;
  /** Folders still being subscribed when a capture settled the log: their paths go back in for the next one. */
  private readonly settledWhilePending = new Set<string>();
  private readonly sourceStamps = new Map<string, string>();
  /** The pending sync's answer, called when the folder's own change is reported. */
  private cookie?: () => void;
  private syncing: Promise<unknown> = Promise.resolve();
  /** Inside `within`: the event's sync is done, and the sequence number its captures stand for. */
  private synced = false;
  private upTo?: number;
  /** Called after a batch that recorded a change (`git ckpt watch`'s quiet timer). */
  onChange?: () => void;
  private batches = 0;
  /** The workspace folder's identity when watching began: another folder at the same path is not watched. */
  private folder?: { dev: number; ino: number };
  /** The clock at the last sync. */
  private lastSyncAt = Date.now();
  /** The folder's mtime as the last cookie wrote it (seconds passed to utimes), and as stat then read it. */
  private cookieMtime?: { seconds: number; afterWrite: number };
  readonly stats: WatchedWorkspace;

  private constructor(
    readonly root: string,
    private readonly options: WatcherOptions,
  ) {
    const now = Date.now();
    this.stats = {
      root,
      events: 0,
      captures: 0,
      fullScans: 0,
      lastFullScanReason: null,
      unknown: this.log.unknown,
      unwatched: null,
      fix: null,
      pending: 0,
      startedAt: now,
      lastActivityAt: now,
      verifiedAt: null,
      verification: null,
    };
  }

  /** Start watching `root` (realpath). A watch that fails leaves a watcher that says why and scans in full. */
  static async start(root: string, options: WatcherOptions): Promise<WorkspaceWatcher> {
    statSync(root);
    const watcher = new WorkspaceWatcher(root, options);
    options.group.members.add(watcher);
    for (const file of options.ignoreSources) watcher.sourceStamps.set(file, statStamp(file));
    await watcher.serially(() => watcher.subscribeRoot());
    return watcher;
  }

  async stop(): Promise<void> {
    this.options.group.members.delete(this);
    this.cookie?.();
    await this.release();
  }

  /** Anything may have changed (a restore by another process, a verification that found a miss, a stall). */
  invalidate(reason: string): void {
    markUnknown(this.log, reason);
    this.refreshStats();
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.changing.then(fn);
    this.changing = next.catch(() => undefined);
    return next;
  }

  /** End every subscription of this workspace (the group's reset, a restart, the daemon's exit). */
  release(): Promise<void> {
    return this.serially(async () => {
      this.generation += 1;
      const subs: [string, Subscription | undefined][] = [
        [this.root, this.rootSub],
        ...[...this.folders].map(([rel, f]): [string, Subscription | undefined] => [path.join(this.root, rel), f.sub]),
      ];
      this.rootSub = undefined;
      this.folders.clear();
      this.settledWhilePending.clear();
      await Promise.all(subs.map(([dir, sub]) => this.unsubscribe(dir, sub)));
    });
  }

  /** After the group's reset: watch from the root again, unless this workspace is the one waiting for a retry. */
  startOver(reason: string): Promise<void> {
    this.needsReset = false;
    if (this.gap || !this.options.group.members.has(this)) return Promise.resolve();
    markUnknown(this.log, reason);
    this.refreshStats();
    return this.serially(() => this.subscribeRoot());
  }

  /** Subscribe the root (parcel walks the tree and watches every folder). Runs inside `serially`. */
  private async subscribeRoot(): Promise<void> {
    try {
      const { dev, ino } = statSync(this.root);
      this.folder = { dev, ino };
      const generation = this.generation;
      this.rootSub = await this.subscribe(this.root, (err, events) => this.onEvents(generation, true, err, events));
      this.gap = null;
    } catch (err) {
      this.failed(err as Error);
    }
    this.refreshStats();
  }

  private async subscribe(dir: string, fn: (err: Error | null, events: ParcelEvents) => void): Promise<Subscription> {
    if (this.options.group.tainted.has(dir)) throw new HeldFolderError(dir);
    try {
      return await (await parcel()).subscribe(dir, fn, { ignore: this.ignoreFor(dir) });
    } catch (err) {
      // Failed while adding watches: those added stay in parcel, with the folder's list.
      if (/inotify_add_watch on/.test((err as Error).message)) this.options.group.tainted.add(dir);
      throw err;
    }
  }

  /**
   * End one subscription. One whose end fails leaves part of it in parcel (see
   * WatchGroup.tainted), still acting on events: it adds watches, and it drops
   * every subscription with the path of a folder it sees go, the right ones of a
   * folder now at that path included. Returns false then.
   */
  private async unsubscribe(dir: string, sub: Subscription | undefined): Promise<boolean> {
    try {
      await sub?.unsubscribe();
      return true;
    } catch {
      this.options.group.tainted.add(dir);
      return false;
    }
  }

  /** What parcel leaves alone below `dir`: store roots, and most of every git folder (see gitFolderIgnores). */
  private ignoreFor(dir: string): string[] {
    const out = [...this.options.ignore];
    if (dir === this.root) {
      out.push(...gitFolderIgnores(path.join(dir, '.git'), true));
      for (const rel of this.options.nestedRepos()) out.push(...gitFolderIgnores(path.join(this.root, rel, '.git'), false));
    } else {
      out.push(...gitFolderIgnores(path.join(dir, '.git'), false));
      const prefix = `${path.relative(this.root, dir).split(path.sep).join('/')}/`;
      for (const rel of this.options.nestedRepos())
        if (rel.startsWith(prefix)) out.push(...gitFolderIgnores(path.join(this.root, rel, '.git'), false));
    }
    return out;
  }

  /** A subscription failed: the workspace is not fully watched until a retry succeeds (after the group's reset). */
  private failed(err: Error): void {
    const problem = watchProblem(err);
    const backoffMs = this.gap ? Math.min(this.gap.backoffMs * 2, RETRY_MAX_MS) : RETRY_MIN_MS;
    this.gap = { ...problem, backoffMs, retryAt: Date.now() + (problem.transient ? 0 : backoffMs), limits: kernelLimits() };
    this.needsReset = true;
    markUnknown(this.log, problem.reason);
    this.refreshStats();
  }

  private onEvents(generation: number, fromRoot: boolean, err: Error | null, events: ParcelEvents): void {
    if (generation !== this.generation) return;
    this.stats.lastActivityAt = Date.now();
    this.batches += 1;
    // Test-only: every Nth batch reported as an error, as a kernel queue overflow the watcher tells of would be.
    if (!err && TEST_OVERFLOW_EVERY && fromRoot && this.batches % TEST_OVERFLOW_EVERY === 0)
      err = new Error('events were dropped (test overflow)');
    if (err) {
      // Parcel ends a subscription that reports an error on Linux and Windows (FSEvents' dropped events it keeps): start over.
      this.restartWanted ??= `the watcher reported an error: ${err.message}`;
      markUnknown(this.log, `the watcher reported an error: ${err.message}`);
    }
    const changes: WatchedChange[] = [];
    const appeared: string[] = [];
    const deleted: string[] = [];
    let cookieSeen = false;
    for (const event of events) {
      const rel = path.relative(this.root, event.path).split(path.sep).join('/');
      if (rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) continue;
      if (TEST_LOST_NAME !== undefined && path.basename(rel) === TEST_LOST_NAME) continue;
      // The folder itself changed its times: the sync cookie (its deletion or move is a change like any other).
      if (rel === '' && event.type === 'update') {
        cookieSeen ||= fromRoot;
        continue;
      }
      changes.push({ path: rel, type: event.type });
      if (!WATCHES_EACH_FOLDER || rel === '' || rel.split('/').includes('.git')) continue;
      // A folder removed and made again within one batch arrives as an update.
      if (event.type !== 'delete') appeared.push(rel);
      else {
        this.forgetFolders(rel);
        deleted.push(rel);
      }
    }
    const recorded = recordChanges(this.log, changes, TEST_MAX_PATHS);
    this.stats.events += recorded;
    if (appeared.length || deleted.length) this.watchNewFolders(appeared, deleted);
    this.refreshStats();
    if (recorded) this.onChange?.();
    // After this batch, and after any other subscription's batch delivered in the same turn.
    const done = cookieSeen ? this.cookie : undefined;
    if (done) setImmediate(done);
  }

  /**
   * Subscribe each folder that appeared: parcel watched only the folder the event
   * named, when it handled the event, not those already inside it. The topmost
   * of one batch are enough: the folders below them existed before the batch
   * came, so the walk finds them.
   */
  private watchNewFolders(rels: string[], deleted: string[]): void {
    if (this.restartWanted || this.gap) return;
    const found: { rel: string; st: Stats }[] = [];
    const tops = new Set<string>();
    // A folder reported deleted that is there: another one took its path since, or the event is one of
    // parcel's stale paths (the old path of a renamed folder's subfolder), and parcel then also dropped
    // the watches of the folder that is there (it drops every subscription with the event's path).
    const recheck = new Set(deleted);
    // Sorted, a folder comes before everything below it.
    for (const rel of [...new Set([...rels, ...deleted])].sort()) {
      if (coveredBy(rel, tops)) continue;
      const st = tryLstat(path.join(this.root, rel));
      if (!st?.isDirectory()) continue;
      found.push({ rel, st });
      tops.add(rel);
    }
    for (const { rel, st } of found) {
      const known = this.folders.get(rel);
      // The same folder (its times or mode changed): already walked.
      if (known && sameFolder(st, known) && !recheck.has(rel)) continue;
      if (!known && this.folders.size >= MAX_FOLDER_SUBSCRIPTIONS) {
        this.restartWanted = `more than ${MAX_FOLDER_SUBSCRIPTIONS} folders appeared since the watcher started; it starts over from the top`;
        markUnknown(this.log, this.restartWanted);
        return;
      }
      const entry: FolderSubscription = { dev: st.dev, ino: st.ino, born: st.birthtimeMs, ready: Promise.resolve() };
      this.folders.set(rel, entry);
      // The folder that was at this path ends first: parcel keeps one watcher a path, and would hand the new
      // subscription the old one's, with its stale folder list, walking nothing.
      if (known) void this.serially(() => this.endFolder(rel, known));
      const generation = this.generation;
      entry.ready = this.serially(async () => {
        if (generation !== this.generation || this.folders.get(rel) !== entry) return;
        let sub: Subscription;
        try {
          sub = await this.subscribe(path.join(this.root, rel), (err, events) => this.onEvents(generation, false, err, events));
        } catch (err) {
          this.folderFailed(rel, entry, err as Error);
          return;
        }
        if (generation !== this.generation || this.folders.get(rel) !== entry) {
          // Another folder took its path while parcel walked it: that one's event subscribes it.
          entry.sub = sub;
          await this.endFolder(rel, entry);
          return;
        }
        entry.sub = sub;
        // A capture settled the log while the folder was not yet watched: the next one scans it again.
        if (this.settledWhilePending.delete(rel)) recordChanges(this.log, [{ path: rel, type: 'update' }], TEST_MAX_PATHS);
        this.refreshStats();
      });
    }
  }

  /** End a folder's subscription once (a later call finds none). */
  private async endFolder(rel: string, entry: FolderSubscription): Promise<void> {
    const sub = entry.sub;
    entry.sub = undefined;
    const dir = path.join(this.root, rel);
    // What parcel kept of it may drop watches of folders still here: the group starts over at the next sync.
    if (!(await this.unsubscribe(dir, sub))) this.failed(new HeldFolderError(dir));
  }

  /**
   * A folder's subscription failed. One that failed while adding watches (parcel's
   * `inotify_add_watch on …`) leaves them in parcel, with its folder list, which a
   * later subscription at the same path would reuse (see WatchGroup.reset): the
   * workspace is not fully watched until the reset. One whose walk failed leaves
   * nothing: a folder gone or replaced since is dropped (the one there now comes
   * with an event of its own); the same folder failing (a subfolder went during the
   * walk, or cannot be read) is a failure like the other.
   */
  private folderFailed(rel: string, entry: FolderSubscription, err: Error): void {
    if (this.folders.get(rel) === entry) this.folders.delete(rel);
    const heldInParcel = err instanceof HeldFolderError || /inotify_add_watch on/.test(err.message);
    if (!heldInParcel && !sameFolder(tryLstat(path.join(this.root, rel)), entry)) return;
    this.failed(err);
  }

  /**
   * A folder deleted or moved away: the subscriptions at or below it end (they would report its old paths).
   * The event may come late, from a subscription of the folder that went, when another one is there
   * already: a folder still at its path (the same inode) keeps its subscription.
   */
  private forgetFolders(rel: string): void {
    for (const [folder, entry] of this.folders) {
      if (folder !== rel && !folder.startsWith(`${rel}/`)) continue;
      if (sameFolder(tryLstat(path.join(this.root, folder)), entry)) continue;
      this.folders.delete(folder);
      // Queued now: after its own subscription (earlier in the chain), and before any new one at its path
      // (parcel would hand that one this subscription's watcher, with its stale folders, and walk nothing).
      void this.serially(() => this.endFolder(folder, entry));
    }
  }

  private refreshStats(): void {
    this.stats.unknown = this.log.unknown;
    this.stats.pending = this.log.paths.size;
    this.stats.unwatched = this.gap?.reason ?? null;
    this.stats.fix = this.gap?.fix ?? null;
  }

  /**
   * Before a sync: what must be true of the subscriptions for the log to be
   * trusted. A workspace not fully watched is unknown again at every sync.
   */
  private async maintain(): Promise<void> {
    if (this.needsReset) await this.options.group.reset();
    if (this.restartWanted && !this.gap) {
      const reason = this.restartWanted;
      this.restartWanted = null;
      markUnknown(this.log, reason);
      await this.release();
      await this.serially(() => this.subscribeRoot());
      if (this.needsReset) await this.options.group.reset();
    }
    if (this.gap && (Date.now() >= this.gap.retryAt || kernelLimits() !== this.gap.limits)) {
      await this.serially(() => this.subscribeRoot());
      if (this.needsReset) await this.options.group.reset();
      else markUnknown(this.log, 'the watcher watches the whole workspace again');
    }
    if (this.gap) markUnknown(this.log, this.gap.reason);
    const pending = [...this.folders.values()].map((f) => f.ready);
    if (pending.length) await Promise.race([Promise.all(pending), new Promise((resolve) => setTimeout(resolve, FOLDER_WAIT_MS).unref())]);
  }

  /** The ignore-rule files no event tells of: a changed stat (size, times, inode; missing counts) makes the log unknown. */
  private checkIgnoreSources(): void {
    for (const [file, before] of this.sourceStamps) {
      const now = statStamp(file);
      if (now === before) continue;
      this.sourceStamps.set(file, now);
      markUnknown(this.log, `the ignore rules changed (${file})`);
    }
  }

  /**
   * Wait until every change made before now is in the log. The cookie is the
   * workspace folder's own times, set to now: the watcher reports that as a
   * change of the folder itself, queued after every earlier event, and no file
   * appears for the user's editor or git to see (a cookie file would). Syncs
   * run one at a time, so one report answers one of them. `onSet` is called
   * once the cookie is set (or the sync needs none).
   */
  private sync(onSet?: () => void): Promise<SyncPoint> {
    const next = this.syncing.then(() => this.syncOnce(onSet)).finally(() => onSet?.());
    this.syncing = next.catch(() => undefined);
    return next;
  }

  /** Resolves with the moment the cookie was set: what the log held then, and the cookie's ctime. */
  private async syncOnce(onSet?: () => void): Promise<SyncPoint> {
    this.options.group.checkStall();
    await this.maintain();
    this.checkIgnoreSources();
    this.refreshStats();
    if (!this.rootSub) {
      markUnknown(this.log, this.gap?.reason ?? 'the watcher stopped');
      return { upTo: this.log.seq, seen: this.log.seq, at: null };
    }
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.cookie = () => resolve(true);
      timer = setTimeout(() => resolve(false), COOKIE_WAIT_MS);
    });
    // A surprise the events cannot tell of: the folder replaced by another (moved away and back, restored
    // from a backup), or the clock gone back (a changed file may then look older than the last capture).
    let cookie: { upTo: number; at: number };
    const now = Date.now();
    if (now < this.lastSyncAt - CLOCK_SLACK_MS)
      markUnknown(this.log, `the clock went back ${Math.round((this.lastSyncAt - now) / 1000)} s`);
    this.lastSyncAt = now;
    try {
      const st = statSync(this.root);
      if (this.folder && (st.ino !== this.folder.ino || st.dev !== this.folder.dev)) {
        // The subscriptions watch the folder that went: the next sync watches the one there now; this
        // capture scans everything (what changes meanwhile is in the full scan the next one makes too).
        clearTimeout(timer);
        this.cookie = undefined;
        this.restartWanted = 'the workspace folder was replaced by another one at the same path';
        markUnknown(this.log, this.restartWanted);
        await this.maintain();
        return { upTo: this.log.seq, seen: this.log.seq, at: null };
      }
      // utimes takes seconds as a double that libuv truncates to nanoseconds: writing back what stat read would
      // move the folder's mtime down a little at every sync. While nobody else changed it, write the same value again.
      const mtime = this.cookieMtime && st.mtimeMs === this.cookieMtime.afterWrite ? this.cookieMtime.seconds : st.mtimeMs / 1000;
      if (COOKIE_IN_ATIME) utimesSync(this.root, new Date(), mtime);
      else utimesSync(this.root, st.atime, new Date());
      const after = lstatSync(this.root);
      if (COOKIE_IN_ATIME) this.cookieMtime = { seconds: mtime, afterWrite: after.mtimeMs };
      // Every change recorded by now was made before the cookie; those recorded until its event comes may be either.
      cookie = { upTo: this.log.seq, at: after.ctimeMs };
    } catch (err) {
      clearTimeout(timer);
      this.cookie = undefined;
      markUnknown(
        this.log,
        `the workspace folder's time could not be set to sync with the watcher (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
      return { upTo: this.log.seq, seen: this.log.seq, at: null };
    }
    if (onSet) {
      // A post is answered once the file system's clock has passed the cookie's time: whatever anyone
      // changes after the answer then has a ctime past it (Linux stamps files with a clock that moves
      // once a tick, up to 10 ms; a change in the cookie's tick would look as old as the cookie).
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, cookie.at + TIMESTAMP_TICK_MS - Date.now())));
      onSet();
    }
    try {
      if (!(await arrived)) markUnknown(this.log, `the watcher did not report a change within ${COOKIE_WAIT_MS} ms`);
      return { ...cookie, seen: this.log.seq };
    } finally {
      clearTimeout(timer);
      this.cookie = undefined;
    }
  }

  /**
   * A post's arrival: its cookie is set at once (answer the post only after
   * `set`), and its captures stand for the changes recorded before it (`upTo`):
   * what the agent or the user changes after the answer goes to the next
   * checkpoint. An unknown log needs no cookie: its capture scans everything.
   */
  arrival(): Arrival {
    if (this.log.unknown !== null || this.restartWanted || this.gap || this.needsReset)
      return { set: Promise.resolve(), point: Promise.resolve({ upTo: this.log.seq, seen: this.log.seq, at: null }) };
    let markSet!: () => void;
    const set = new Promise<void>((resolve) => {
      markSet = resolve;
    });
    const point = this.sync(markSet).catch(() => ({ upTo: this.log.seq, seen: this.log.seq, at: null }));
    return { set, point };
  }

  /**
   * The changes recorded between the cookie and its event were made before it
   * (their events came with it) or after it (the watcher batches what happens
   * within a few milliseconds). The disk tells most apart: a path whose ctime
   * (the kernel's, which no tool sets) is not past the cookie's changed before
   * it only; one born after the cookie was made after it; one older that
   * changed since may have changed before too. A path gone counts before it
   * when its folder did not change after the cookie; else it may be either.
   */
  private placeLateChanges(upTo: number, seen: number, cookieAt: number): void {
    placeLate(this.log, upTo, seen, (rel) => {
      const full = path.join(this.root, rel);
      const st = tryLstat(full);
      if (st) {
        if (st.ctimeMs <= cookieAt) return 'before';
        return st.birthtimeMs > cookieAt ? 'after' : 'both';
      }
      return (tryLstat(path.dirname(full))?.ctimeMs ?? Number.POSITIVE_INFINITY) > cookieAt ? 'both' : 'before';
    });
  }

  /**
   * Run one hook event's captures after one sync: they all stand for the moment
   * the event arrived (a pre that first records the previous call's post takes
   * two), and a second sync right after the first waits out the watcher's batching.
   * A post's captures stand for its arrival (`arrival().upTo`): they leave later
   * changes in the log and say when they could not.
   */
  async within<T>(fn: () => Promise<T>, arrival?: Arrival): Promise<T> {
    // Test-only: a post's capture held after its answer, so a test can change files before it runs.
    if (arrival) await pausePoint('post-lane');
    await this.sync();
    const point = arrival ? await arrival.point : undefined;
    if (point) {
      this.upTo = point.upTo;
      if (point.at !== null) this.placeLateChanges(point.upTo, point.seen, point.at);
    }
    this.synced = true;
    try {
      return await fn();
    } finally {
      this.synced = false;
      this.upTo = undefined;
    }
  }

  async view(): Promise<ChangeView> {
    if (!this.synced) await this.sync();
    this.refreshStats();
    const view = viewOf(this.log, this.upTo ?? this.log.seq);
    this.stats.captures += 1;
    if (view.full) {
      this.stats.fullScans += 1;
      this.stats.lastFullScanReason = view.reason;
    }
    return view;
  }

  /** The account as of now, for the verification (no capture uses it). */
  async account(): Promise<ChangeView> {
    await this.sync();
    this.refreshStats();
    return viewOf(this.log);
  }

  settle(view: ChangeView, keep: readonly string[]): void {
    settle(this.log, view, keep);
    // Not fully watched: the next capture cannot trust the account either.
    if (this.gap) markUnknown(this.log, this.gap.reason);
    for (const [rel, entry] of this.folders) if (!entry.sub) this.settledWhilePending.add(rel);
    this.refreshStats();
  }
}

/** Whether `st` is the folder a subscription was made for (not another one at its path, nor one given its inode number). */
function sameFolder(st: Stats | undefined, entry: FolderSubscription): boolean {
  return st?.isDirectory() === true && st.dev === entry.dev && st.ino === entry.ino && st.birthtimeMs === entry.born;
}

function tryLstat(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/** A file's stat data as a string: what says it changed (size, times, inode), or that it is missing. */
function statStamp(file: string): string {
  try {
    const st = statSync(file);
    return `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.dev}`;
  } catch (err) {
    return `missing:${(err as NodeJS.ErrnoException).code ?? ''}`;
  }
}

/** A git folder's names that move what a capture takes: a nested repository's commit (its gitlink). */
const REF_NAMES = new Set(['HEAD', 'refs', 'packed-refs']);

/**
 * What the watcher leaves alone in a git folder: in the workspace's own `.git`
 * everything but the repositories of submodules (`modules/`); in those and in
 * nested repositories everything but HEAD, refs and packed-refs, which move
 * their commit. Objects alone are up to 257 folders a repository, and objects,
 * logs and the index change on every git command there; the workspace's
 * `info/exclude` is compared by stat instead (ignoreSources).
 */
function gitFolderIgnores(gitDir: string, own: boolean): string[] {
  let names: string[];
  try {
    // A linked worktree's or a submodule's `.git` is a file naming the real one.
    if (!lstatSync(gitDir).isDirectory()) return own ? [gitDir] : [];
    names = readdirSync(gitDir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const full = path.join(gitDir, name);
    if (own && name === 'modules') for (const repo of submoduleRepos(full, 0)) out.push(...gitFolderIgnores(repo, false));
    else if (own || !REF_NAMES.has(name)) out.push(full);
  }
  return out;
}

/** The git folders under `.git/modules` (a submodule named `a/b` lives in `modules/a/b`). */
function submoduleRepos(dir: string, depth: number): string[] {
  if (depth > 8) return [];
  try {
    const names = readdirSync(dir, { withFileTypes: true });
    if (names.some((d) => d.name === 'HEAD' && d.isFile())) return [dir];
    return names.filter((d) => d.isDirectory()).flatMap((d) => submoduleRepos(path.join(dir, d.name), depth + 1));
  } catch {
    return [];
  }
}

/** A folder parcel may still hold an earlier subscription of (WatchGroup.tainted): it cannot be walked again until the reset. */
class HeldFolderError extends Error {
  constructor(dir: string) {
    super(`parcel still holds an earlier watch of ${dir}`);
  }
}

/**
 * Make parcel drop its backend once every subscription ended: one whose end
 * failed skips parcel's own release (`Backend::unref`), so the backend, with the
 * watches and folder lists it kept, would serve the next subscription. A
 * throw-away subscription ended cleanly releases it.
 */
async function dropBackend(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'git-ckpt-watch-'));
  try {
    const sub = await (await parcel()).subscribe(dir, () => undefined, { ignore: [] });
    await sub.unsubscribe();
  } catch {
    /* nothing was held */
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a failed subscription means for people: the reason, what fixes it, and whether it passes by itself. */
function watchProblem(err: Error): { reason: string; fix: string | null; transient: boolean } {
  const message = err.message || String(err);
  if (err instanceof HeldFolderError)
    return { reason: `the watcher starts over: ${message} (a folder renamed, then removed or replaced)`, fix: null, transient: true };
  if (/No space left on device|ENOSPC/i.test(message))
    return {
      reason: 'the inotify watch limit was reached (fs.inotify.max_user_watches): folders past it are not watched',
      fix: 'raise the limit: sudo sysctl fs.inotify.max_user_watches=524288 (and put fs.inotify.max_user_watches=524288 in /etc/sysctl.d/ to keep it)',
      transient: false,
    };
  if (/Too many open files|EMFILE/i.test(message))
    return {
      reason: 'the inotify instance limit was reached (fs.inotify.max_user_instances)',
      fix: 'raise the limit: sudo sysctl fs.inotify.max_user_instances=1024 (and put it in /etc/sysctl.d/ to keep it)',
      transient: false,
    };
  if (/No such file or directory|ENOENT/i.test(message))
    return { reason: `a folder went away while the watcher walked it (${message})`, fix: null, transient: true };
  if (/Permission denied|EACCES/i.test(message))
    return {
      reason: `a folder cannot be read, so it cannot be watched (${message})`,
      fix: 'make that folder readable, or move it out of the workspace',
      transient: false,
    };
  return { reason: `a folder could not be watched (${message})`, fix: null, transient: false };
}

/** The kernel's inotify limits as one string (Linux; empty elsewhere): a change means someone raised them. */
function kernelLimits(): string {
  if (process.platform !== 'linux') return '';
  return ['/proc/sys/fs/inotify/max_user_watches', '/proc/sys/user/max_inotify_watches', '/proc/sys/fs/inotify/max_user_instances']
    .map((file) => {
      try {
        return readFileSync(file, 'utf8').trim();
      } catch {
        return '-';
      }
    })
    .join('/');
}

/** This process's inotify watches and the user's limit (Linux only: read from /proc; null elsewhere). */
export function inotifyUsage(): InotifyUsage | null {
  if (process.platform !== 'linux') return null;
  let watches = 0;
  try {
    for (const fd of readdirSync('/proc/self/fd')) {
      try {
        if (readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
        watches += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
          .split('\n')
          .filter((line) => line.startsWith('inotify ')).length;
      } catch {
        /* closed meanwhile */
      }
    }
    const limit = Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim());
    return { watches, limit: Number.isFinite(limit) ? limit : null };
  } catch {
    return null;
  }
}
