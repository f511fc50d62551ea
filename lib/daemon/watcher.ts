/**
 * One workspace watched by the daemon: @parcel/watcher's events folded into
 * the change log, and the cookie sync that makes a view complete. A capture
 * asks for a view; before answering, the watcher sets the workspace folder's
 * mtime and waits for that change's own event: every change made before the
 * ask was queued before it, so it has been recorded (the cookie of Watchman and
 * git's fsmonitor, without a file).
 */
import { statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import {
  markUnknown,
  newChangeLog,
  recordChanges,
  settle,
  viewOf,
  type ChangeLog,
  type ChangeView,
  type WatchedChange,
} from '../model/change-log.js';
import type { ChangeSource } from '../store/context.js';
import type { WatchedWorkspace } from '../store/daemon-client.js';

/**
 * Test-only: `GIT_CKPT_TEST_WATCHER=overflow:N` drops every Nth batch of events as an overflow would;
 * `max:N` makes the change log give up past N paths (a small watcher); `lose:NAME` drops the events of
 * files named NAME without a word, as a watcher that misses a change does (what verification finds).
 */
const TEST_WATCHER = /^(overflow|max|lose):([\w.-]+)$/.exec(process.env.GIT_CKPT_TEST_WATCHER ?? '');
const TEST_OVERFLOW_EVERY = TEST_WATCHER?.[1] === 'overflow' ? Number(TEST_WATCHER[2]) : 0;
const TEST_MAX_PATHS = TEST_WATCHER?.[1] === 'max' ? Number(TEST_WATCHER[2]) : undefined;
const TEST_LOST_NAME = TEST_WATCHER?.[1] === 'lose' ? TEST_WATCHER[2] : undefined;

/** The clock going back further than this since the last sync: event times and mtimes no longer order changes. */
const CLOCK_SLACK_MS = 1000;

/** A cookie that has not come back in this long: the watcher is stuck, so the view is unknown. */
const COOKIE_WAIT_MS = 2000;

interface Subscription {
  unsubscribe(): Promise<void>;
}

export class WorkspaceWatcher implements ChangeSource {
  private readonly log: ChangeLog = newChangeLog('the daemon had not watched this workspace before');
  private subscription?: Subscription;
  /** The pending sync's answer, called when the folder's own change is reported. */
  private cookie?: () => void;
  private syncing: Promise<void> = Promise.resolve();
  /** Inside `within`: the event's sync is done. */
  private synced = false;
  /** Called after a batch that recorded a change (`git ckpt watch`'s quiet timer). */
  onChange?: () => void;
  private batches = 0;
  /** The workspace folder's identity when watching began: another folder at the same path is not watched. */
  private folder?: { dev: number; ino: number };
  /** The clock at the last sync. */
  private lastSyncAt = Date.now();
  readonly stats: WatchedWorkspace;

  private constructor(readonly root: string) {
    const now = Date.now();
    this.stats = {
      root,
      events: 0,
      captures: 0,
      fullScans: 0,
      lastFullScanReason: null,
      unknown: this.log.unknown,
      pending: 0,
      startedAt: now,
      lastActivityAt: now,
      verifiedAt: null,
      verification: null,
    };
  }

  /** Start watching `root` (realpath); `ignore` are absolute folders whose events are not wanted (store roots). */
  static async start(root: string, ignore: string[]): Promise<WorkspaceWatcher> {
    const watcher = new WorkspaceWatcher(root);
    await watcher.subscribe(ignore);
    return watcher;
  }

  private ignore: string[] = [];

  private async subscribe(ignore: string[]): Promise<void> {
    this.ignore = ignore;
    const { dev, ino } = statSync(this.root);
    this.folder = { dev, ino };
    const loaded = await import('@parcel/watcher');
    // CommonJS: its exports arrive as the default export of an ES import.
    const parcel = (loaded as unknown as { default?: typeof loaded }).default ?? loaded;
    this.subscription = await parcel.subscribe(this.root, (err, events) => this.onEvents(err, events), { ignore });
  }

  async stop(): Promise<void> {
    const sub = this.subscription;
    this.subscription = undefined;
    this.cookie?.();
    await sub?.unsubscribe().catch(() => undefined);
  }

  /** Anything may have changed (a restore by another process, a verification that found a miss). */
  invalidate(reason: string): void {
    markUnknown(this.log, reason);
    this.refreshStats();
  }

  private onEvents(err: Error | null, events: { path: string; type: WatchedChange['type'] }[]): void {
    this.stats.lastActivityAt = Date.now();
    this.batches += 1;
    // Test-only: every Nth batch lost as a kernel queue overflow, which the watcher reports as an error.
    if (!err && TEST_OVERFLOW_EVERY && this.batches % TEST_OVERFLOW_EVERY === 0) err = new Error('events were dropped (test overflow)');
    if (err) {
      markUnknown(this.log, `the watcher reported an error: ${err.message}`);
      this.refreshStats();
      return;
    }
    const changes: WatchedChange[] = [];
    let cookieSeen = false;
    for (const event of events) {
      const rel = path.relative(this.root, event.path).split(path.sep).join('/');
      if (rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) continue;
      if (TEST_LOST_NAME !== undefined && path.basename(rel) === TEST_LOST_NAME) continue;
      // The folder itself changed its times: the sync cookie (its deletion or move is a change like any other).
      if (rel === '' && event.type === 'update') {
        cookieSeen = true;
        continue;
      }
      changes.push({ path: rel, type: event.type });
    }
    const recorded = recordChanges(this.log, changes, TEST_MAX_PATHS);
    this.stats.events += recorded;
    this.refreshStats();
    if (recorded) this.onChange?.();
    // After this batch, and after any other subscription's batch delivered in the same turn.
    const done = this.cookie;
    if (cookieSeen && done) setImmediate(done);
  }

  private refreshStats(): void {
    this.stats.unknown = this.log.unknown;
    this.stats.pending = this.log.paths.size;
  }

  /**
   * Wait until every change made before now is in the log. The cookie is the
   * workspace folder's own mtime, set to now: the watcher reports that as a
   * change of the folder itself, queued after every earlier event, and no file
   * appears for the user's editor or git to see (a cookie file would). Syncs
   * run one at a time, so one report answers one of them.
   */
  private sync(): Promise<void> {
    const next = this.syncing.then(() => this.syncOnce());
    this.syncing = next.catch(() => undefined);
    return next;
  }

  private async syncOnce(): Promise<void> {
    if (!this.subscription) {
      markUnknown(this.log, 'the watcher stopped');
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.cookie = () => resolve(true);
      timer = setTimeout(() => resolve(false), COOKIE_WAIT_MS);
    });
    // A surprise the events cannot tell of: the folder replaced by another (moved away and back, restored
    // from a backup), or the clock gone back (a changed file may then look older than the last capture).
    const now = Date.now();
    if (now < this.lastSyncAt - CLOCK_SLACK_MS)
      markUnknown(this.log, `the clock went back ${Math.round((this.lastSyncAt - now) / 1000)} s`);
    this.lastSyncAt = now;
    try {
      const st = statSync(this.root);
      if (this.folder && (st.ino !== this.folder.ino || st.dev !== this.folder.dev)) {
        // The subscription watches the folder that went: watch the one there now (parcel keeps one watcher a
        // path, so the old one goes first; what changes meanwhile is covered by the full scan this asks for).
        markUnknown(this.log, 'the workspace folder was replaced by another one at the same path');
        const old = this.subscription;
        this.subscription = undefined;
        await old.unsubscribe().catch(() => undefined);
        await this.subscribe(this.ignore);
      }
      utimesSync(this.root, st.atime, new Date());
    } catch (err) {
      clearTimeout(timer);
      this.cookie = undefined;
      markUnknown(
        this.log,
        `the workspace folder's time could not be set to sync with the watcher (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
      return;
    }
    try {
      if (!(await arrived)) markUnknown(this.log, `the watcher did not report a change within ${COOKIE_WAIT_MS} ms`);
    } finally {
      clearTimeout(timer);
      this.cookie = undefined;
    }
  }

  /**
   * Run one hook event's captures after one sync: they all stand for the moment
   * the event arrived (a pre that first records the previous call's post takes
   * two), and a second sync right after the first waits out the watcher's batching.
   */
  async within<T>(fn: () => Promise<T>): Promise<T> {
    await this.sync();
    this.synced = true;
    try {
      return await fn();
    } finally {
      this.synced = false;
    }
  }

  async view(): Promise<ChangeView> {
    if (!this.synced) await this.sync();
    this.refreshStats();
    const view = viewOf(this.log);
    this.stats.captures += 1;
    if (view.full) {
      this.stats.fullScans += 1;
      this.stats.lastFullScanReason = view.reason;
    }
    return view;
  }

  settle(view: ChangeView, keep: readonly string[]): void {
    settle(this.log, view, keep);
    this.refreshStats();
  }
}
