/**
 * Serialization per workspace: a p-queue (concurrency 1) inside the process, and a
 * lock file across processes. The lock file is created with O_EXCL and holds the
 * owner's pid and host; a lock whose owner on this host is gone is stale and is
 * broken. Works the same on macOS and Linux: no flock, no /proc.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeSync, linkSync } from 'node:fs';
import { hostname } from 'node:os';
import type PQueue from 'p-queue';
import { CkptError } from './errors.js';

/**
 * Per-key lanes. An uncontended call runs at once; p-queue is loaded and used
 * only when calls overlap in this process. A hook process makes one call, and
 * loading p-queue would cost it about 10 ms on every tool call of the agent.
 */
interface Lane {
  /** The call running outside the queue, if any. */
  direct?: Promise<unknown>;
  /** Callers on their way into the queue (loading it). */
  entering: number;
  queue?: PQueue;
}

const lanes = new Map<string, Lane>();
let loadQueue: Promise<typeof PQueue> | undefined;

/** Run `fn` after every earlier task for the same key in this process. */
export async function serialize<T>(key: string, fn: () => Promise<T>): Promise<T> {
  let lane = lanes.get(key);
  if (!lane) {
    lane = { entering: 0 };
    lanes.set(key, lane);
  }
  const busy = lane.direct !== undefined || lane.entering > 0 || (lane.queue !== undefined && lane.queue.size + lane.queue.pending > 0);
  if (!busy) {
    const running = fn();
    lane.direct = running;
    try {
      return await running;
    } finally {
      if (lane.direct === running) lane.direct = undefined;
    }
  }
  const before = lane.direct;
  lane.entering++;
  try {
    loadQueue ??= import('p-queue').then((m) => m.default);
    const Queue = await loadQueue;
    lane.queue ??= new Queue({ concurrency: 1 });
    // Callers resume from the same import in arrival order, so the queue keeps that order.
    return (await lane.queue.add(async () => {
      if (before) await before.catch(() => undefined);
      return fn();
    })) as T;
  } finally {
    lane.entering--;
  }
}

interface LockOwner {
  pid: number;
  host: string;
  time: number;
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (Number.isInteger(owner.pid) && typeof owner.host === 'string') return owner;
  } catch {
    /* a lock being written, or garbage */
  }
  return undefined;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock is stale when its owner on this host is dead, or it has been unreadable for long. */
function isStale(text: string, ageMs: number): boolean {
  const owner = parseOwner(text);
  if (!owner) return ageMs > 5_000;
  if (owner.host !== hostname()) return false;
  return !processAlive(owner.pid);
}

function tryCreate(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new CkptError('store', `cannot create lock ${file}: ${(err as Error).message}`, {}, { cause: err });
  }
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), time: Date.now() } satisfies LockOwner));
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Break a stale lock. The lock is moved aside first and checked again, so that of
 * two processes breaking the same lock only one wins, and a live lock that slipped
 * in between is put back.
 */
function breakStale(file: string, seen: string): void {
  const aside = `${file}.stale-${process.pid}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // someone else moved it
  }
  let moved = '';
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    /* vanished */
  }
  if (moved !== seen) {
    try {
      linkSync(aside, file); // fails if a newer lock exists; then that one rules
    } catch {
      /* the newer lock stands */
    }
  }
  rmSync(aside, { force: true });
}

export interface LockHandle {
  release(): void;
  /** A dead owner's lock was broken to get this one: its git children may have left debris. */
  brokeStale: boolean;
}

async function acquireLock(file: string, timeoutMs: number, signal?: AbortSignal): Promise<LockHandle> {
  const deadline = Date.now() + timeoutMs;
  let delay = 2;
  let firstSeen: { text: string; at: number } | undefined;
  let brokeStale = false;
  for (;;) {
    if (tryCreate(file)) {
      let released = false;
      return {
        brokeStale,
        release() {
          if (released) return;
          released = true;
          rmSync(file, { force: true });
        },
      };
    }
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // released between our attempts
    }
    if (!firstSeen || firstSeen.text !== text) firstSeen = { text, at: Date.now() };
    if (isStale(text, Date.now() - firstSeen.at)) {
      breakStale(file, text);
      brokeStale = true;
      continue;
    }
    if (signal?.aborted) throw signal.reason;
    if (Date.now() >= deadline) {
      const owner = parseOwner(text);
      throw new CkptError(
        'lock-timeout',
        `workspace is busy: lock ${file} held${owner ? ` by pid ${owner.pid}` : ''} for more than ${Math.round(timeoutMs / 1000)}s`,
      );
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 50);
  }
}

export async function withLock<T>(file: string, timeoutMs: number, fn: (lock: LockHandle) => Promise<T>, signal?: AbortSignal): Promise<T> {
  const lock = await acquireLock(file, timeoutMs, signal);
  const releaseOnExit = () => lock.release();
  process.once('exit', releaseOnExit);
  try {
    return await fn(lock);
  } finally {
    process.removeListener('exit', releaseOnExit);
    lock.release();
  }
}
