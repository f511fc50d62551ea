/**
 * Reaching the daemon from a CLI or hook process: where it listens, whether
 * it runs, starting it in the background, stopping it, asking its status.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CkptError } from '../model/errors.js';
import { commandLineConfigOf } from '../git/runner.js';
import { spawnBackground } from './background.js';
import { processAlive, processGone } from './lock.js';
import { daemonPaths, storeRoot, writeFileAtomic } from './store.js';

/** Where the daemon listens and who it is, as it writes it once it listens. */
export interface Endpoint {
  pid: number;
  port: number;
  socket: string | null;
  version: string;
  startedAt: number;
  /** The file whose change means git-ckpt was upgraded. */
  binary: string;
}

/** One watched workspace, as `daemon status` shows it. */
export interface WatchedWorkspace {
  root: string;
  events: number;
  captures: number;
  fullScans: number;
  /** Why the last full scan was needed (null: none yet). */
  lastFullScanReason: string | null;
  /** Why the account of changes is incomplete now, or null. */
  unknown: string | null;
  /** Why part of the workspace is not watched (every capture scans everything until it is), or null. */
  unwatched: string | null;
  /** What fixes `unwatched`, when a person can (raise the inotify watch limit …). */
  fix: string | null;
  pending: number;
  startedAt: number;
  lastActivityAt: number;
  /** The last verification: when, and what it found. */
  verifiedAt: number | null;
  verification: string | null;
  /** `git ckpt watch` on this workspace: its quiet period and the checkpoints it took. */
  watch?: { quietMs: number; checkpoints: number; since: number };
}

/** The daemon's inotify watches and the user's limit (Linux). */
export interface InotifyUsage {
  watches: number;
  limit: number | null;
}

export interface DaemonStatus {
  pid: number;
  version: string;
  startedAt: number;
  uptimeMs: number;
  rssBytes: number;
  heapBytes: number;
  requests: number;
  events: number;
  refused: number;
  socket: string | null;
  port: number;
  idleExitMs: number;
  verifyEveryMs: number;
  /** Linux only (null elsewhere): every workspace's folders share the user's limit. */
  inotify: InotifyUsage | null;
  workspaces: WatchedWorkspace[];
}

/** The running daemon's endpoint for this environment's store root, or null. */
export function runningDaemon(env: NodeJS.ProcessEnv = process.env): Endpoint | null {
  try {
    const endpoint = JSON.parse(readFileSync(daemonPaths(storeRoot(env)).endpoint, 'utf8')) as Endpoint;
    return Number.isInteger(endpoint.pid) && processAlive(endpoint.pid) ? endpoint : null;
  } catch {
    return null;
  }
}

/** The per-install token HTTP clients send (the daemon makes it on its first start). */
export function daemonToken(env: NodeJS.ProcessEnv = process.env): string {
  return readFileSync(daemonPaths(storeRoot(env)).token, 'utf8').trim();
}

/** The token, when the daemon of this store root ever made one (undefined, never an error, when not). */
export function currentDaemonToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return daemonToken(env) || undefined;
  } catch {
    return undefined;
  }
}

/** A token as the daemon makes one: 24 random bytes in hex. */
export function newDaemonToken(): string {
  return randomBytes(24).toString('hex');
}

/**
 * A new token, when the old one may have been read by others (an older git-ckpt wrote it into a
 * project file that teams commit, and so into its checkpoints): the token file is replaced first
 * (0600; 48 hex digits, as the daemon makes it), then a running daemon, which holds the old one,
 * is restarted. Every config that names the token must then be written again with the new one.
 */
export async function renewDaemonToken(env: NodeJS.ProcessEnv, token = newDaemonToken()): Promise<void> {
  if (!/^[0-9a-f]{48}$/.test(token)) throw new CkptError('refused', 'a daemon token is 48 hex digits');
  const paths = daemonPaths(storeRoot(env));
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeFileAtomic(paths.token, token);
  if (await stopDaemon(env)) await startDaemon(env);
}

/**
 * Start the daemon in the background (it exits at once if one runs already). It lives on after this
 * process and holds nothing of it: none of its descriptors (background.ts), none of its agent's variables
 * (every caller passes an environment without them),
 * and it works from `/`, not from the folder of whichever hook started it (a relative store root is made
 * absolute first).
 */
function spawnDaemon(env: NodeJS.ProcessEnv): number | undefined {
  // Every function that may start the daemon takes its environment without a default: the caller takes the
  // agents' variables out (agents/registry.ts withoutAgentEnv), since this layer knows no agent.
  const own = { ...env };
  // A `git -c` setting holds for the one command that was given it, not for a daemon serving every workspace.
  for (const key of Object.keys(commandLineConfigOf(own))) delete own[key];
  if (own.GIT_CKPT_HOME) own.GIT_CKPT_HOME = path.resolve(own.GIT_CKPT_HOME);
  return spawnBackground(['daemon', 'run'], { env: own, cwd: '/' });
}

/**
 * Make sure a daemon runs, starting one when none does (or when the caller
 * found the one named unreachable: killed, not yet reaped); never waits for it.
 */
export async function ensureDaemon(env: NodeJS.ProcessEnv, unreachable = false): Promise<'running' | 'started'> {
  if (!unreachable && (await servingDaemon(env))) return 'running';
  spawnDaemon(env);
  return 'started';
}

/**
 * The running daemon's endpoint when it also serves: its pid may outlive its socket (a zombie not yet
 * reaped after a SIGKILL, or a daemon that is exiting), and then none serves.
 */
async function servingDaemon(env: NodeJS.ProcessEnv): Promise<Endpoint | null> {
  const endpoint = runningDaemon(env);
  if (!endpoint || (endpoint.socket && !(await answers(endpoint.socket)))) return null;
  return endpoint;
}

/** Whether a request failed because nothing serves at the endpoint (gone between the look and the request). */
function nobodyServes(err: unknown): boolean {
  return ['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE'].includes((err as NodeJS.ErrnoException).code ?? '');
}

/** Whether something accepts connections on a Unix socket (a local connect: well under a millisecond). */
export function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = net.connect(socket);
    conn.once('connect', () => {
      conn.destroy();
      resolve(true);
    });
    conn.once('error', () => resolve(false));
  });
}

async function request(
  endpoint: Endpoint,
  env: NodeJS.ProcessEnv,
  method: string,
  path: string,
  timeoutMs = 5000,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  // Loaded only once a daemon runs: every hook process loads this module.
  const { default: http } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request(
      endpoint.socket
        ? { socketPath: endpoint.socket, method, path, timeout: timeoutMs, headers }
        : {
            host: '127.0.0.1',
            port: endpoint.port,
            method,
            path,
            timeout: timeoutMs,
            headers: { ...headers, 'x-ckpt-token': daemonToken(env) },
          },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`the daemon did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** A path as a header value: its UTF-8 bytes, one Latin-1 character each (the daemon decodes them back). */
const latin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start the daemon and wait until it listens. */
export async function startDaemon(env: NodeJS.ProcessEnv, waitMs = 10_000): Promise<{ endpoint: Endpoint; started: boolean }> {
  const running = await servingDaemon(env);
  if (running) return { endpoint: running, started: false };
  spawnDaemon(env);
  const until = Date.now() + waitMs;
  for (let delay = 5; Date.now() < until; delay = Math.min(delay * 2, 100)) {
    await sleep(delay);
    const endpoint = await servingDaemon(env);
    if (endpoint) return { endpoint, started: true };
  }
  throw new CkptError('io', `the daemon did not start within ${Math.round(waitMs / 1000)} s (see ${daemonPaths(storeRoot(env)).log})`);
}

/**
 * Stop the running daemon and wait until it has exited; false when none serves. A pid whose socket is
 * closed is never signalled: that daemon is exiting or gone, and its pid may be another process's by now.
 */
export async function stopDaemon(env: NodeJS.ProcessEnv = process.env, waitMs = 20_000): Promise<boolean> {
  const endpoint = await servingDaemon(env);
  if (!endpoint) return false;
  // Refused (over TCP, with a token the daemon no longer holds) or unanswered: it is told by signal.
  const asked = await request(endpoint, env, 'POST', '/stop').then(
    (r) => r.status < 300,
    () => false,
  );
  if (!asked) process.kill(endpoint.pid, 'SIGTERM');
  const until = Date.now() + waitMs;
  for (let waited = 0; processAlive(endpoint.pid); waited += 20) {
    // A zombie answers kill -0 until it is reaped: `ps` says it is gone (looked at once a second).
    if (waited > 0 && waited % 1000 === 0 && processGone(endpoint.pid)) break;
    if (Date.now() > until)
      throw new CkptError('io', `the daemon (pid ${endpoint.pid}) did not exit within ${Math.round(waitMs / 1000)} s`);
    await sleep(20);
  }
  return true;
}

/** The running daemon's status, or null when none runs. */
export async function daemonStatus(env: NodeJS.ProcessEnv = process.env, timeoutMs = 5000): Promise<DaemonStatus | null> {
  const endpoint = await servingDaemon(env);
  if (!endpoint) return null;
  let answer: { status: number; body: string };
  try {
    answer = await request(endpoint, env, 'GET', '/status', timeoutMs);
  } catch (err) {
    if (nobodyServes(err)) return null;
    throw new CkptError('io', `the daemon (pid ${endpoint.pid}) did not answer: ${(err as Error).message}`);
  }
  if (answer.status !== 200) throw new CkptError('io', `the daemon answered ${answer.status}: ${answer.body.trim().slice(0, 200)}`);
  return JSON.parse(answer.body) as DaemonStatus;
}

/**
 * Wait until the daemon has recorded every event it already answered for this
 * workspace (a post is answered before its capture): what a command then reads
 * or restores is what the agent's hooks left. A no-op without a daemon.
 */
export async function flushDaemon(env: NodeJS.ProcessEnv, workspaceRoot: string, timeoutMs = 5000): Promise<void> {
  const endpoint = runningDaemon(env);
  if (!endpoint) return;
  await request(endpoint, env, 'POST', '/flush', timeoutMs, { 'x-ckpt-root': latin1(workspaceRoot) }).catch(() => undefined);
}

/**
 * `git ckpt watch`: a checkpoint of kind `watch` after each quiet period of
 * changes (`quietMs`), or `null` to stop. The daemon is started when none runs.
 */
export async function setWatch(env: NodeJS.ProcessEnv, workspaceRoot: string, quietMs: number | null): Promise<WatchedWorkspace | null> {
  const { endpoint } = await startDaemon(env);
  const { status, body } = await request(endpoint, env, 'POST', '/watch', 10_000, {
    'x-ckpt-root': latin1(workspaceRoot),
    'x-ckpt-quiet-ms': quietMs === null ? 'off' : String(quietMs),
  });
  if (status !== 200) throw new CkptError('io', `the daemon answered ${status}: ${body.trim().slice(0, 200)}`);
  return JSON.parse(body) as WatchedWorkspace | null;
}
