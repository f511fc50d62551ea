/**
 * Reaching the daemon from a CLI or hook process: where it listens, whether
 * it runs, starting it in the background, stopping it, asking its status.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { CkptError } from '../model/errors.js';
import { cliEntry } from './layout.js';
import { processAlive } from './lock.js';
import { daemonPaths, storeRoot } from './store.js';

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
  pending: number;
  startedAt: number;
  lastActivityAt: number;
  /** The last verification: when, and what it found. */
  verifiedAt: number | null;
  verification: string | null;
  /** `git ckpt watch` on this workspace: its quiet period and the checkpoints it took. */
  watch?: { quietMs: number; checkpoints: number; since: number };
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

/** Start the daemon in the background (it exits at once if one runs already). */
export function spawnDaemon(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const child = spawn(process.execPath, [cliEntry(), 'daemon', 'run'], { detached: true, stdio: 'ignore', env });
  child.on('error', () => undefined);
  child.unref();
  return child.pid;
}

/**
 * Make sure a daemon runs, starting one when none does (or when the caller
 * found the one named unreachable: killed, not yet reaped); never waits for it.
 */
export async function ensureDaemon(env: NodeJS.ProcessEnv = process.env, unreachable = false): Promise<'running' | 'started'> {
  const endpoint = unreachable ? null : runningDaemon(env);
  // Its pid may still answer after a SIGKILL (a zombie not yet reaped): the socket says whether it serves.
  if (endpoint && (!endpoint.socket || (await answers(endpoint.socket)))) return 'running';
  spawnDaemon(env);
  return 'started';
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
export async function startDaemon(
  env: NodeJS.ProcessEnv = process.env,
  waitMs = 10_000,
): Promise<{ endpoint: Endpoint; started: boolean }> {
  const running = runningDaemon(env);
  if (running) return { endpoint: running, started: false };
  spawnDaemon(env);
  const until = Date.now() + waitMs;
  for (let delay = 5; Date.now() < until; delay = Math.min(delay * 2, 100)) {
    await sleep(delay);
    const endpoint = runningDaemon(env);
    if (endpoint) return { endpoint, started: true };
  }
  throw new CkptError('io', `the daemon did not start within ${Math.round(waitMs / 1000)} s (see ${daemonPaths(storeRoot(env)).log})`);
}

/** Stop the running daemon and wait until it has exited; false when none ran. */
export async function stopDaemon(env: NodeJS.ProcessEnv = process.env, waitMs = 20_000): Promise<boolean> {
  const endpoint = runningDaemon(env);
  if (!endpoint) return false;
  await request(endpoint, env, 'POST', '/stop').catch(() => {
    process.kill(endpoint.pid, 'SIGTERM');
  });
  const until = Date.now() + waitMs;
  while (processAlive(endpoint.pid)) {
    if (Date.now() > until)
      throw new CkptError('io', `the daemon (pid ${endpoint.pid}) did not exit within ${Math.round(waitMs / 1000)} s`);
    await sleep(20);
  }
  return true;
}

/** The running daemon's status, or null when none runs. */
export async function daemonStatus(env: NodeJS.ProcessEnv = process.env): Promise<DaemonStatus | null> {
  const endpoint = runningDaemon(env);
  if (!endpoint) return null;
  const { status, body } = await request(endpoint, env, 'GET', '/status');
  if (status !== 200) throw new CkptError('io', `the daemon answered ${status}: ${body.trim().slice(0, 200)}`);
  return JSON.parse(body) as DaemonStatus;
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
