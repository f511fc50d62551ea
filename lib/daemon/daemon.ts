/**
 * `git ckpt daemon run`: the resident process, one per store root. It holds
 * the daemon lock for its whole life, watches each workspace hooks name, and
 * records hook events through the same `runHook` as the hook process, with
 * the watcher's account of changes so a capture scans only what changed. The
 * workspace lock and p-queue rules are unchanged: one writer per workspace,
 * across the daemon and every CLI process.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { hookWorkspaceRoot, runHook } from '../agents/hook.js';
import { scanWorkspace } from '../capture/scan.js';
import { coveredBy } from '../model/change-log.js';
import { isCkptError } from '../model/errors.js';
import { neutralOutput, parseHookPayload } from '../model/hook-payload.js';
import { breakLockOfGoneOwner, processGone, withLock } from '../store/lock.js';
import { DEFAULT_SETTINGS, readUserSettings, type Settings } from '../store/settings.js';
import { daemonPaths, rootHookLog, storeRoot, storeRootsInside, writeFileAtomic, type DaemonPaths } from '../store/store.js';
import { Workspace } from '../workspace.js';
import { BODY_MAX_BYTES, forwardedCwd, forwardedEnv, QUEUE_MAX, route, type RequestFacts } from './endpoint.js';
import { WorkspaceWatcher } from './watcher.js';
import { answers, type DaemonStatus, type Endpoint, type WatchedWorkspace } from '../store/daemon-client.js';

/** Workspaces watched at once; the least recently used one stops watching past this. */
const MAX_WATCHED = 32;
/** Phases answered as soon as they are queued (see handle). */
const ANSWERED_AT_ONCE = new Set(['post', 'turn-end', 'subagent-end']);
/** How often the idle, upgrade and verification clocks are looked at. */
const TICK_MS = 30_000;

export type DaemonExit = 'stopped' | 'idle' | 'upgraded' | 'disabled' | 'already-running';

export interface DaemonOptions {
  env: NodeJS.ProcessEnv;
  version: string;
  /** The file whose change (an upgrade) makes the daemon exit. */
  binary: string;
  /** Test-only: shorter clocks. */
  tickMs?: number;
}

/** How long a starting daemon waits for the daemon lock. */
const LOCK_WAIT_MS = 2000;

/** A Unix socket path longer than this does not fit `sun_path` on macOS (104 bytes with the NUL). */
const SOCKET_PATH_MAX = 100;

function binaryStamp(file: string): string {
  try {
    const st = statSync(file);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_MAX_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

/** A directory a hook may be recorded for: absolute, existing, and this user's. */
function ownDirectory(dir: string | null): string | null {
  if (!dir || !path.isAbsolute(dir)) return null;
  try {
    const st = statSync(dir);
    if (!st.isDirectory()) return null;
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return null;
    return dir;
  } catch {
    return null;
  }
}

class Daemon {
  private readonly watchers = new Map<string, WorkspaceWatcher>();
  private readonly starting = new Set<string>();
  private readonly inFlight = new Map<string, number>();
  private readonly lanes = new Map<string, Promise<unknown>>();
  private readonly watchTimers = new Map<string, NodeJS.Timeout>();
  private readonly verifying = new Set<string>();
  private counts = { requests: 0, events: 0, refused: 0 };
  private lastRequestAt = Date.now();
  private readonly startedAt = Date.now();
  private port = 0;
  private socket: string | null = null;
  private servers: http.Server[] = [];
  private finish!: (why: DaemonExit) => void;
  private readonly binaryAtStart: string;

  constructor(
    private readonly paths: DaemonPaths,
    private readonly options: DaemonOptions,
    private settings: Settings,
    private readonly token: string,
  ) {
    this.binaryAtStart = binaryStamp(options.binary);
  }

  log(line: string, alsoHookLog = false): void {
    appendDaemonLog(alsoHookLog ? [this.paths.log, rootHookLog(path.dirname(this.paths.dir))] : [this.paths.log], line);
  }

  /**
   * Run `fn` after everything queued for `key`: one lane per workspace, in
   * arrival order, so an event is recorded before any that came after it.
   */
  private enqueue<T>(key: string, fn: () => Promise<T>, done?: () => void): Promise<T> {
    const run = (this.lanes.get(key) ?? Promise.resolve()).then(fn);
    const settled: Promise<unknown> = run
      .catch(() => undefined)
      .finally(() => {
        if (this.lanes.get(key) === settled) this.lanes.delete(key);
        done?.();
      });
    this.lanes.set(key, settled);
    return run;
  }

  async serve(): Promise<DaemonExit> {
    const done = new Promise<DaemonExit>((resolve) => {
      this.finish = resolve;
    });
    rmSync(this.paths.socket, { force: true });
    if (this.paths.socket.length <= SOCKET_PATH_MAX) {
      const unix = http.createServer((req, res) => void this.handle(req, res, true));
      await new Promise<void>((resolve, reject) => {
        unix.once('error', reject);
        unix.listen(this.paths.socket, () => resolve());
      });
      chmodSync(this.paths.socket, 0o600);
      this.socket = this.paths.socket;
      this.servers.push(unix);
    }
    const tcp = http.createServer((req, res) => void this.handle(req, res, false));
    const listen = (port: number) =>
      new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => resolve());
      });
    // The port of the last run, which HTTP hooks in agents' configs name; another one when it is taken.
    const kept = Number(readTextOr(this.paths.port, '0')) || 0;
    await listen(kept).catch((err) => {
      if (!kept) throw err;
      this.log(
        `port ${kept} is taken (${(err as NodeJS.ErrnoException).code}); HTTP hooks installed for it fail open until \`git ckpt hooks install\` runs again`,
      );
      return listen(0);
    });
    this.port = (tcp.address() as AddressInfo).port;
    if (this.port !== kept) writeFileAtomic(this.paths.port, `${this.port}\n`);
    this.servers.push(tcp);
    for (const server of this.servers) server.keepAliveTimeout = 1000;
    const endpoint: Endpoint = {
      pid: process.pid,
      port: this.port,
      socket: this.socket,
      version: this.options.version,
      startedAt: this.startedAt,
      binary: this.options.binary,
    };
    writeFileAtomic(this.paths.endpoint, `${JSON.stringify(endpoint)}\n`);
    this.log(`listening (port ${this.port}${this.socket ? `, socket ${this.socket}` : ''})`);
    const tick = setInterval(() => void this.tick(), this.options.tickMs ?? TICK_MS);
    const onSignal = () => this.finish('stopped');
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    const why = await done;
    clearInterval(tick);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    await this.shutdown(why);
    return why;
  }

  private async shutdown(why: DaemonExit): Promise<void> {
    this.log(`exiting: ${why}`);
    for (const timer of this.watchTimers.values()) clearTimeout(timer);
    for (const server of this.servers) server.close();
    // Events already answered are still recorded before the daemon goes.
    const drained = Promise.all(this.lanes.values());
    await Promise.race([drained, new Promise((r) => setTimeout(r, 15_000).unref())]);
    for (const server of this.servers) server.closeAllConnections();
    await Promise.all([...this.watchers.values()].map((w) => w.stop()));
    // Only files that are still ours: a successor may already have written its own.
    try {
      const endpoint = JSON.parse(readFileSync(this.paths.endpoint, 'utf8')) as Endpoint;
      if (endpoint.pid === process.pid) {
        rmSync(this.paths.endpoint, { force: true });
        if (this.socket) rmSync(this.socket, { force: true });
      }
    } catch {
      /* gone already */
    }
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    const busy = [...this.inFlight.values()].some((n) => n > 0);
    if (!busy && now - this.lastRequestAt > this.settings.daemonIdleMs) return this.finish('idle');
    if (!busy && binaryStamp(this.options.binary) !== this.binaryAtStart) return this.finish('upgraded');
    // The store root removed, or ckpt.daemon turned off: nothing left to serve.
    if (!existsSync(this.paths.dir)) return this.finish('stopped');
    const settings = await readUserSettings(this.options.env).catch(() => this.settings);
    if (!settings.daemon) return this.finish('disabled');
    this.settings = settings;
    for (const [root, watcher] of this.watchers) {
      if (!existsSync(root)) {
        this.log(`${root}: the workspace is gone; no longer watched`);
        this.watchers.delete(root);
        await watcher.stop();
        continue;
      }
      const since = watcher.stats.verifiedAt ?? watcher.stats.startedAt;
      if (watcher.stats.lastActivityAt > since && now - since >= this.settings.daemonVerifyMs) await this.verify(root, watcher);
    }
  }

  /**
   * Compare the watcher's account with a full scan: every path the full scan
   * finds changed must be in the account. A miss is recorded and makes the
   * next capture a full scan.
   */
  async verify(root: string, watcher: WorkspaceWatcher): Promise<string> {
    if (this.verifying.has(root)) return 'already running';
    this.verifying.add(root);
    try {
      const ws = Workspace.open(root, { env: this.options.env, changesFor: () => watcher });
      if (!ws.store) return 'no store';
      const found = await ws.locked(async (ctx) => {
        const view = await watcher.view();
        if (view.full) return `unknown (${view.reason}): the next capture scans everything`;
        const scan = await scanWorkspace(ctx, true, new AbortController().signal);
        const covered = new Set(view.paths);
        const changed = [...scan.modified, ...scan.deleted, ...scan.untracked, ...scan.newDirs].map((p) => p.replace(/\/$/, ''));
        const missed = changed.filter((p) => !coveredBy(p, covered));
        if (!missed.length) return `complete (${changed.length} changed path(s), all in the account)`;
        watcher.invalidate(`the verification found ${missed.length} change(s) the watcher missed`);
        return `missed ${missed.length} change(s): ${missed.slice(0, 5).join(', ')}; the next capture scans everything`;
      });
      watcher.stats.verifiedAt = Date.now();
      watcher.stats.verification = found;
      this.log(`${root}: verification ${found}`, found.startsWith('missed'));
      return found;
    } catch (err) {
      return `failed: ${(err as Error).message}`;
    } finally {
      this.verifying.delete(root);
    }
  }

  /**
   * `git ckpt watch` on a workspace (or off, with null): after each quiet period
   * of changes, a checkpoint of kind `watch` through the workspace's lane.
   * Watched changes count as activity, so the daemon does not exit idle under a watch.
   */
  private async setWatch(root: string, quietMs: number | null): Promise<WatchedWorkspace | null | undefined> {
    if (!ownDirectory(root)) return undefined;
    const watcher = this.watchers.get(root) ?? (await this.startWatcher(root));
    if (!watcher) return undefined;
    clearTimeout(this.watchTimers.get(root));
    this.watchTimers.delete(root);
    if (quietMs === null) {
      delete watcher.stats.watch;
      watcher.onChange = undefined;
      this.log(`${root}: watch stopped`);
      return null;
    }
    watcher.stats.watch = { quietMs, checkpoints: watcher.stats.watch?.checkpoints ?? 0, since: watcher.stats.watch?.since ?? Date.now() };
    watcher.onChange = () => {
      this.lastRequestAt = Date.now();
      clearTimeout(this.watchTimers.get(root));
      this.watchTimers.set(
        root,
        setTimeout(() => void this.watchCheckpoint(root, watcher), quietMs),
      );
    };
    this.log(`${root}: watching for quiet periods of ${quietMs} ms`);
    return { ...watcher.stats };
  }

  private async watchCheckpoint(root: string, watcher: WorkspaceWatcher): Promise<void> {
    this.watchTimers.delete(root);
    const take = async () => {
      const ws = Workspace.open(root, { env: this.options.env, changesFor: () => watcher });
      const result = await watcher.within(() =>
        ws.snapshot({ kind: 'watch', message: `watch: changes, then ${watcher.stats.watch?.quietMs} ms quiet` }),
      );
      if (result.created && watcher.stats.watch) watcher.stats.watch.checkpoints += 1;
    };
    await this.enqueue(root, take).catch((err: unknown) => this.log(`${root}: watch checkpoint failed: ${(err as Error).message}`, true));
  }

  /** The watcher of a workspace root, started on first use (that event scans in full, as without a daemon). */
  private changesFor(root: string): WorkspaceWatcher | undefined {
    const watcher = this.watchers.get(root);
    if (watcher) return watcher;
    if (!this.starting.has(root)) void this.startWatcher(root);
    return undefined;
  }

  private async startWatcher(root: string): Promise<WorkspaceWatcher | undefined> {
    this.starting.add(root);
    try {
      if (this.watchers.size >= MAX_WATCHED) {
        const oldest = [...this.watchers.values()].sort((a, b) => a.stats.lastActivityAt - b.stats.lastActivityAt)[0]!;
        this.watchers.delete(oldest.root);
        await oldest.stop();
      }
      const ignore = storeRootsInside(root, this.options.env).map((rel) => path.join(root, rel));
      const watcher = await WorkspaceWatcher.start(root, ignore);
      this.watchers.set(root, watcher);
      this.log(`${root}: watching`);
      return watcher;
    } catch (err) {
      this.log(`${root}: cannot watch (${(err as Error).message}); hooks there scan in full`);
      return undefined;
    } finally {
      this.starting.delete(root);
    }
  }

  private reply(res: http.ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
    res.end(body);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, viaSocket: boolean): Promise<void> {
    this.counts.requests += 1;
    this.lastRequestAt = Date.now();
    const facts: RequestFacts = {
      method: req.method ?? '',
      url: req.url ?? '/',
      headers: req.headers,
      viaSocket,
      token: this.token,
      port: this.port,
    };
    const where = route(facts);
    if (where.kind === 'refused') {
      this.counts.refused += 1;
      this.log(`refused ${facts.method} ${facts.url.slice(0, 80)}: ${where.reason}`, true);
      req.resume();
      return this.reply(res, where.status, `${where.reason}\n`);
    }
    if (where.kind === 'status') return this.reply(res, 200, `${JSON.stringify(this.status())}\n`, 'application/json');
    if (where.kind === 'watch') {
      req.resume();
      const watched = await this.setWatch(where.root, where.quietMs);
      if (watched === undefined) return this.reply(res, 400, 'not a folder this user can watch\n');
      return this.reply(res, 200, `${JSON.stringify(watched)}\n`, 'application/json');
    }
    if (where.kind === 'flush') {
      // One workspace's lane, or every lane.
      await (where.root === null ? Promise.all(this.lanes.values()) : this.lanes.get(where.root));
      return this.reply(res, 200, 'flushed\n');
    }
    if (where.kind === 'stop') {
      this.reply(res, 200, 'stopping\n');
      this.finish('stopped');
      return;
    }
    const body = await readBody(req);
    const neutral = neutralOutput(where.agent);
    if (body === null) {
      this.counts.refused += 1;
      this.log(`refused a ${where.agent} ${where.phase} event: body over ${BODY_MAX_BYTES} bytes`, true);
      return this.reply(res, 413, `body over ${BODY_MAX_BYTES} bytes\n`);
    }
    const env = { ...this.options.env, ...forwardedEnv(req.headers) };
    const event = parseHookPayload(where.agent, where.phase, body, env);
    const cwd = ownDirectory(viaSocket ? forwardedCwd(req.headers) : event.cwd);
    if (!cwd || (event.projectDir !== null && !ownDirectory(event.projectDir))) {
      this.counts.refused += 1;
      this.log(`refused a ${where.agent} ${where.phase} event: its directory is missing, not absolute or not this user's`, true);
      return this.reply(res, 200, neutral);
    }
    const options = { env, cwd, startedAt: Date.now(), changesFor: (root: string) => this.changesFor(root) };
    // The lane is the workspace runHook records the event in; one it would refuse gets a lane of its own.
    let key: string;
    try {
      key = hookWorkspaceRoot(event, options);
    } catch {
      key = cwd;
    }
    const waiting = this.inFlight.get(key) ?? 0;
    if (waiting >= QUEUE_MAX) {
      this.counts.refused += 1;
      this.log(`refused a ${where.agent} ${where.phase} event for ${key}: ${waiting} events already waiting`, true);
      return this.reply(res, 503, 'busy\n');
    }
    this.inFlight.set(key, waiting + 1);
    const record = () => runHook(where.agent, where.phase, body, { ...options, startedAt: Date.now() }, event);
    const run = this.enqueue(
      key,
      () => {
        const watcher = this.watchers.get(key);
        return watcher ? watcher.within(record) : record();
      },
      () => {
        this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
        this.counts.events += 1;
        this.lastRequestAt = Date.now();
      },
    );
    // What a call changed is fixed when its post arrives, and the agent's next change waits for a
    // pre (or a prompt) hook, which waits for this lane: a post is answered at once.
    if (ANSWERED_AT_ONCE.has(where.phase)) return this.reply(res, 200, neutral);
    const result = await run.catch(() => undefined);
    this.reply(res, 200, result?.stdout ?? neutral);
  }

  status(): DaemonStatus {
    const memory = process.memoryUsage();
    return {
      pid: process.pid,
      version: this.options.version,
      startedAt: this.startedAt,
      uptimeMs: Date.now() - this.startedAt,
      rssBytes: memory.rss,
      heapBytes: memory.heapUsed,
      ...this.counts,
      socket: this.socket,
      port: this.port,
      idleExitMs: this.settings.daemonIdleMs,
      verifyEveryMs: this.settings.daemonVerifyMs,
      workspaces: [...this.watchers.values()].map((w) => ({ ...w.stats })),
    };
  }
}

/** Run the daemon until it is stopped, idle, upgraded, or finds another one running. */
export async function runDaemon(options: DaemonOptions): Promise<DaemonExit> {
  const root = storeRoot(options.env);
  const paths = daemonPaths(root);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  chmodSync(paths.dir, 0o700);
  // A holder whose socket refuses connections and that `ps` finds dead or a zombie is gone.
  if (!(await answers(paths.socket))) breakLockOfGoneOwner(paths.lock, processGone);
  try {
    // A holder killed a moment ago may still be exiting: wait for it a little (two daemons started at once: one waits, then exits).
    return await withLock(paths.lock, LOCK_WAIT_MS, async () => {
      const settings = await readUserSettings(options.env).catch(() => DEFAULT_SETTINGS);
      // Kept across restarts: an agent's HTTP hook config carries it.
      let token = readTextOr(paths.token, '').trim();
      if (!/^[0-9a-f]{48}$/.test(token)) {
        token = randomBytes(24).toString('hex');
        writeFileSync(paths.token, token, { mode: 0o600 });
      }
      chmodSync(paths.token, 0o600);
      return new Daemon(paths, options, settings, token).serve();
    });
  } catch (err) {
    if (isCkptError(err, 'lock-timeout')) {
      appendDaemonLog([paths.log], `another one holds the lock (${err.message}); exiting`);
      return 'already-running';
    }
    appendDaemonLog([paths.log], `failed: ${(err as Error).stack ?? String(err)}`);
    throw err;
  }
}

/** One timestamped line in each log file; logging never stops the daemon. */
function appendDaemonLog(files: string[], line: string): void {
  const text = `${new Date().toISOString()} daemon ${process.pid}: ${line}\n`;
  try {
    for (const file of files) appendFileSync(file, text, { mode: 0o600 });
  } catch {
    /* logged next time */
  }
}

function readTextOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
