/**
 * One workspace watched by the daemon: @parcel/watcher's events folded into
 * the change log, and the cookie sync that makes a view complete. A capture
 * asks for a view; before answering, the watcher writes a cookie file in the
 * workspace and waits for its own event: every change made before the ask was
 * queued before the cookie, so it has been recorded (Watchman's and git's
 * fsmonitor's method).
 */
import { unlinkSync, writeFileSync } from 'node:fs';
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
import { COOKIE_PREFIX } from '../model/paths.js';

/**
 * Test-only: `GIT_CKPT_TEST_WATCHER=overflow:N` drops every Nth batch of events as an overflow would;
 * `max:N` makes the change log give up past N paths (a small watcher).
 */
const TEST_WATCHER = /^(overflow|max):(\d+)$/.exec(process.env.GIT_CKPT_TEST_WATCHER ?? '');
const TEST_OVERFLOW_EVERY = TEST_WATCHER?.[1] === 'overflow' ? Number(TEST_WATCHER[2]) : 0;
const TEST_MAX_PATHS = TEST_WATCHER?.[1] === 'max' ? Number(TEST_WATCHER[2]) : undefined;

/** A cookie that has not come back in this long: the watcher is stuck, so the view is unknown. */
const COOKIE_WAIT_MS = 2000;

interface Subscription {
  unsubscribe(): Promise<void>;
}

export type WatcherStats = WatchedWorkspace;

export class WorkspaceWatcher implements ChangeSource {
  private readonly log: ChangeLog = newChangeLog('the daemon had not watched this workspace before');
  private subscription?: Subscription;
  private readonly cookies = new Map<string, () => void>();
  private cookieCount = 0;
  private batches = 0;
  readonly stats: WatcherStats;

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
    const loaded = await import('@parcel/watcher');
    // CommonJS: its exports arrive as the default export of an ES import.
    const parcel = (loaded as unknown as { default?: typeof loaded }).default ?? loaded;
    watcher.subscription = await parcel.subscribe(root, (err, events) => watcher.onEvents(err, events), { ignore });
    return watcher;
  }

  async stop(): Promise<void> {
    const sub = this.subscription;
    this.subscription = undefined;
    for (const done of this.cookies.values()) done();
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
    const arrived: (() => void)[] = [];
    for (const event of events) {
      const rel = path.relative(this.root, event.path).split(path.sep).join('/');
      if (rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) continue;
      if (rel.startsWith(COOKIE_PREFIX) && !rel.includes('/')) {
        const done = this.cookies.get(rel);
        if (done && event.type !== 'delete') arrived.push(done);
        continue;
      }
      changes.push({ path: rel, type: event.type });
    }
    this.stats.events += recordChanges(this.log, changes, TEST_MAX_PATHS);
    this.refreshStats();
    // After this batch, and after any other subscription's batch delivered in the same turn.
    for (const done of arrived) setImmediate(done);
  }

  private refreshStats(): void {
    this.stats.unknown = this.log.unknown;
    this.stats.pending = this.log.paths.size;
  }

  /** Wait until every change made before now is in the log (a cookie's round trip). */
  private async sync(): Promise<void> {
    if (!this.subscription) {
      markUnknown(this.log, 'the watcher stopped');
      return;
    }
    this.cookieCount += 1;
    const name = `${COOKIE_PREFIX}${process.pid}-${this.cookieCount}`;
    const file = path.join(this.root, name);
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.cookies.set(name, () => resolve(true));
      timer = setTimeout(() => resolve(false), COOKIE_WAIT_MS);
    });
    try {
      writeFileSync(file, '', { flag: 'wx', mode: 0o600 });
    } catch (err) {
      clearTimeout(timer);
      this.cookies.delete(name);
      markUnknown(this.log, `no sync cookie could be written in the workspace (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return;
    }
    try {
      if (!(await arrived)) markUnknown(this.log, `the watcher did not report a change within ${COOKIE_WAIT_MS} ms`);
    } finally {
      clearTimeout(timer);
      this.cookies.delete(name);
      try {
        unlinkSync(file);
      } catch {
        /* already gone */
      }
    }
  }

  async view(): Promise<ChangeView> {
    await this.sync();
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

  /** The changed paths recorded now (for the verification). */
  pendingPaths(): ReadonlySet<string> {
    return new Set(this.log.paths.keys());
  }

  get isUnknown(): boolean {
    return this.log.unknown !== null;
  }
}
