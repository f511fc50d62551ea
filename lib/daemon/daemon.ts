/**
 * `git ckpt daemon run`: the resident process, one per store root. It holds
 * the daemon lock for its whole life, watches each workspace hooks name, and
 * records hook events through the same `runHook` as the hook process, with
 * the watcher's account of changes so a capture scans only what changed. The
 * workspace lock and p-queue rules are unchanged: one writer per workspace,
 * across the daemon and every CLI process.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { hookWorkspaceRoot, runHook } from '../agents/hook.js';
import { cachedGitlinks } from '../capture/gitlinks.js';
import { ignoreSourceFiles, scanWorkspace } from '../capture/scan.js';
import { coveredBy } from '../model/change-log.js';
import { crashPoint } from '../model/crash-point.js';
import { isCkptError } from '../model/errors.js';
import { oneLine } from '../model/text.js';
import { parseHookPayload } from '../agents/hook-payload.js';
import { neutralOutput, withoutAgentEnv } from '../agents/registry.js';
import { breakLockOfGoneOwner, processGone, withLock } from '../store/lock.js';
import { DEFAULT_SETTINGS, readUserSettings, type Settings } from '../store/settings.js';
import { daemonPaths, rootHookLog, storeRoot, storeRootsInside, writeFileAtomic, type DaemonPaths } from '../store/store.js';
import { Workspace } from '../workspace.js';
import { BODY_MAX_BYTES, forwardedCwd, forwardedEnv, QUEUE_MAX, route, type RequestFacts } from './endpoint.js';
import { type Arrival, inotifyUsage, WatchGroup, WorkspaceWatcher } from './watcher.js';
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

/** How long a request may take to arrive whole (headers and body). */
const REQUEST_TIMEOUT_MS = 10_000;

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

/** A request's body, or why there is none: over BODY_MAX_BYTES, or the client went away before sending it. */
function readBody(req: http.IncomingMessage): Promise<{ text: string } | { missing: 'too-large' | 'aborted' }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_MAX_BYTES) {
        resolve({ missing: 'too-large' });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', () => resolve({ missing: 'aborted' }));
    req.on('close', () => resolve({ missing: 'aborted' }));
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

/**
 * Whether a hook may name a file for git-ckpt to read (the agent's transcript): absolute and this user's,
 * through any symlink (the transcript reader itself takes regular files only). One not there yet (Claude
 * writes its transcript after the session start) is no finding; one of another user's is.
 */
function fileToRead(file: string): 'own' | 'missing' | 'foreign' {
  if (!path.isAbsolute(file)) return 'missing';
  try {
    return typeof process.getuid !== 'function' || statSync(file).uid === process.getuid() ? 'own' : 'foreign';
  } catch {
    return 'missing';
  }
}

/** Whether a workspace root has a store already. */
function hasStore(root: string, env: NodeJS.ProcessEnv): boolean {
  try {
    return Workspace.open(root, { env }).store !== undefined;
  } catch {
    return false;
  }
}

/**
 * Why `/watch` refuses a folder, or null: it takes what `git ckpt watch` names, a workspace's root as
 * git-ckpt finds it (not the home folder, not `/`, not inside a git directory), this user's, with a
 * store (the command makes it first). Anything wider would have the daemon watch a whole tree.
 */
function watchRefusal(root: string, env: NodeJS.ProcessEnv): string | null {
  if (!ownDirectory(root)) return `${JSON.stringify(root.slice(0, 200))} is not an absolute folder of this user's`;
  let ws: Workspace;
  try {
    ws = Workspace.open(root, { env });
  } catch (err) {
    return (err as Error).message;
  }
  if (ws.root !== root) return `${JSON.stringify(root.slice(0, 200))} is not a workspace's root (its workspace is ${ws.root})`;
  if (!ws.store) return `${root} has no store (git ckpt watch makes it first)`;
  return null;
}

class Daemon {
  private readonly watchers = new Map<string, WorkspaceWatcher>();
  private readonly group = new WatchGroup();
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
  /** The environment hook events are recorded with, before what a request forwards. */
  private readonly hookEnv: NodeJS.ProcessEnv;

  constructor(
    private readonly paths: DaemonPaths,
    private readonly options: DaemonOptions,
    private settings: Settings,
    private readonly token: string,
  ) {
    this.binaryAtStart = binaryStamp(options.binary);
    this.hookEnv = withoutAgentEnv(options.env);
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
      const unix = http.createServer((req, res) => this.serveRequest(req, res, true));
      await new Promise<void>((resolve, reject) => {
        unix.once('error', reject);
        unix.listen(this.paths.socket, () => resolve());
      });
      chmodSync(this.paths.socket, 0o600);
      this.socket = this.paths.socket;
      this.servers.push(unix);
    }
    const tcp = http.createServer((req, res) => this.serveRequest(req, res, false));
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
    for (const server of this.servers) {
      server.keepAliveTimeout = 1000;
      // A hook's request arrives in milliseconds: one that trickles in (a lying Content-Length) is not kept.
      server.headersTimeout = REQUEST_TIMEOUT_MS;
      server.requestTimeout = REQUEST_TIMEOUT_MS;
    }
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
    const tick = setInterval(
      () =>
        void this.tick().catch((err: unknown) => this.log(`a clock tick failed: ${oneLine(String((err as Error)?.message ?? err), 300)}`)),
      this.options.tickMs ?? TICK_MS,
    );
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
    this.group.stop();
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
        const view = await watcher.account();
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
  private async setWatch(root: string, quietMs: number | null): Promise<WatchedWorkspace | null | { refused: string }> {
    const refusal = watchRefusal(root, this.options.env);
    if (refusal) return { refused: `not a workspace git ckpt watch can name: ${refusal}` };
    const watcher = this.watchers.get(root) ?? (await this.startWatcher(root));
    if (!watcher) return { refused: `${root} cannot be watched (daemon.log says why)` };
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
      const ws = Workspace.open(root, { env: this.options.env });
      const watcher = await WorkspaceWatcher.start(root, {
        group: this.group,
        ignore,
        nestedRepos: () => (ws.store ? cachedGitlinks(ws.store) : []),
        ignoreSources: ignoreSourceFiles(ws.location, this.options.env),
      });
      this.watchers.set(root, watcher);
      this.log(
        `${root}: ${watcher.stats.unwatched ? `not fully watched (${watcher.stats.unwatched}); hooks there scan in full` : 'watching'}`,
      );
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

  /**
   * Every request, whatever it holds: an exception in its handler becomes a 500 and a log line, never an
   * unhandled rejection (which would end the daemon), and a client gone mid-request ends only its request.
   */
  private serveRequest(req: http.IncomingMessage, res: http.ServerResponse, viaSocket: boolean): void {
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    this.handle(req, res, viaSocket).catch((err: unknown) => {
      this.counts.refused += 1;
      this.log(
        `failed on ${JSON.stringify(`${req.method} ${req.url}`.slice(0, 80))}: ${oneLine(String((err as Error)?.stack ?? err), 400)}`,
        true,
      );
      if (res.headersSent) res.destroy();
      else this.reply(res, 500, 'internal error (see daemon.log)\n');
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, viaSocket: boolean): Promise<void> {
    this.counts.requests += 1;
    this.lastRequestAt = Date.now();
    const facts: RequestFacts = {
      method: req.method ?? '',
      url: req.url ?? '/',
      headers: req.headers,
      viaSocket,
      socketServed: this.socket !== null,
      token: this.token,
      port: this.port,
    };
    const where = route(facts);
    if (where.kind === 'refused') {
      this.counts.refused += 1;
      this.log(`refused ${JSON.stringify(`${facts.method} ${facts.url}`.slice(0, 80))}: ${where.reason}`, true);
      req.resume();
      return this.reply(res, where.status, `${where.reason}\n`);
    }
    if (where.kind === 'status') return this.reply(res, 200, `${JSON.stringify(this.status())}\n`, 'application/json');
    if (where.kind === 'watch') {
      req.resume();
      const watched = await this.setWatch(where.root, where.quietMs);
      if (watched !== null && 'refused' in watched) {
        this.counts.refused += 1;
        this.log(`refused a watch: ${watched.refused}`, true);
        return this.reply(res, 400, `${watched.refused}\n`);
      }
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
    crashPoint('endpoint');
    const read = await readBody(req);
    const neutral = neutralOutput(where.agent);
    if ('missing' in read) {
      this.counts.refused += 1;
      if (read.missing === 'aborted') return this.log(`dropped a ${where.agent} ${where.phase} event: its client went away`);
      this.log(`refused a ${where.agent} ${where.phase} event: body over ${BODY_MAX_BYTES} bytes`, true);
      return this.reply(res, 413, `body over ${BODY_MAX_BYTES} bytes\n`);
    }
    const body = read.text;
    // The daemon's environment, minus the variables of whichever agent started it, plus the agent's own (socket only).
    const env = { ...this.hookEnv, ...forwardedEnv(facts) };
    const event = parseHookPayload(where.agent, where.phase, body, env);
    // The transcript is the one file an event names for git-ckpt to read (a rewind, a Codex call's failure), and
    // its path goes into the record: only one of this user's own (an agent's transcript always is). One not there
    // yet is kept through the socket (as the caller's own Node hook keeps it), not over HTTP, whose sender could
    // make it later.
    const transcript = event.transcript === null ? 'own' : fileToRead(event.transcript);
    if (transcript === 'foreign')
      this.log(`a ${where.agent} ${where.phase} event named another user's file as its transcript; left out`, true);
    if (transcript === 'foreign' || (transcript === 'missing' && !viaSocket)) event.transcript = null;
    // Through the socket, the entry script (the caller's own process) then records the event itself, with its own
    // rights; over HTTP (Claude Code's hooks, which fail open on any answer) the neutral answer.
    const refuse = (why: string) => {
      this.counts.refused += 1;
      this.log(`refused a ${where.agent} ${where.phase} event: ${why}`, true);
      return viaSocket ? this.reply(res, 403, `${why}\n`) : this.reply(res, 200, neutral);
    };
    const cwd = ownDirectory(viaSocket ? forwardedCwd(req.headers) : event.cwd);
    if (!cwd || (event.projectDir !== null && !ownDirectory(event.projectDir)))
      return refuse("its directory is missing, not absolute or not this user's");
    const options = { env, cwd, startedAt: Date.now(), changesFor: (root: string) => this.changesFor(root) };
    // The lane is the workspace runHook records the event in; one it would refuse gets a lane of its own.
    let key: string;
    try {
      key = hookWorkspaceRoot(event, options);
    } catch {
      key = cwd;
    }
    // A folder of this user's inside someone else's repository does not make that repository this user's workspace.
    if (!ownDirectory(key)) return refuse(`its workspace ${JSON.stringify(key.slice(0, 200))} is not this user's`);
    // Over HTTP the payload alone names the folder, and a token is all that vouches for the sender: it adds events
    // to a workspace that has a store (Claude Code's prompt and session start are command hooks, which make it),
    // never makes one, so no request has a folder of this user's read into a new store.
    if (!viaSocket && !hasStore(key, this.options.env))
      return refuse(`no store for ${JSON.stringify(key.slice(0, 200))} (HTTP events make none)`);
    const waiting = this.inFlight.get(key) ?? 0;
    if (waiting >= QUEUE_MAX) {
      this.counts.refused += 1;
      this.log(`refused a ${where.agent} ${where.phase} event for ${key}: ${waiting} events already waiting`, true);
      return this.reply(res, 503, 'busy\n');
    }
    this.inFlight.set(key, waiting + 1);
    // A post's capture stands for what changed before it arrived: the watcher marks that moment now.
    const arrivedAt = this.arrivalOf(key, where.phase);
    const record = () => runHook(where.agent, where.phase, body, { ...options, startedAt: Date.now() }, event);
    const run = this.enqueue(
      key,
      () => {
        const watcher = this.watchers.get(key);
        return watcher ? watcher.within(record, watcher === arrivedAt?.watcher ? arrivedAt.arrival : undefined) : record();
      },
      () => {
        this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
        this.counts.events += 1;
        this.lastRequestAt = Date.now();
      },
    );
    // What a call changed is fixed when its post arrives, and the agent's next change waits for a
    // pre (or a prompt) hook, which waits for this lane: a post is answered at once.
    if (ANSWERED_AT_ONCE.has(where.phase)) {
      await arrivedAt?.arrival.set;
      return this.reply(res, 200, neutral);
    }
    const result = await run.catch(() => undefined);
    this.reply(res, 200, result?.stdout ?? neutral);
  }

  /**
   * Principle 8: what a post records is fixed when it arrives, and it is answered
   * at once, so the agent's (or the user's) next change may come before its
   * capture runs. The watcher's cookie is set now, before the answer; the
   * capture then leaves what came after it for the next checkpoint.
   */
  private arrivalOf(root: string, phase: string): { watcher: WorkspaceWatcher; arrival: Arrival } | undefined {
    const watcher = ANSWERED_AT_ONCE.has(phase) ? this.watchers.get(root) : undefined;
    return watcher ? { watcher, arrival: watcher.arrival() } : undefined;
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
      inotify: inotifyUsage(),
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

/** A log past this size is moved to `<file>.1` (the one generation kept), as the hooks' own logs are. */
const LOG_MAX_BYTES = 1024 * 1024;

/**
 * One timestamped line in each log file; logging never stops the daemon. Each file stays under two
 * LOG_MAX_BYTES, however many requests are refused (anyone on this machine can knock on the port).
 */
function appendDaemonLog(files: string[], line: string): void {
  const text = `${new Date().toISOString()} daemon ${process.pid}: ${line}\n`;
  for (const file of files) {
    try {
      if (statSync(file).size > LOG_MAX_BYTES) renameSync(file, `${file}.1`);
    } catch {
      /* no log yet */
    }
    try {
      appendFileSync(file, text, { mode: 0o600 });
    } catch {
      /* logged next time */
    }
  }
}

function readTextOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
