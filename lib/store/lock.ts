/**
 * Serialization per workspace: a p-queue (concurrency 1) inside the process, and a
 * lock file across processes. The lock is a symlink whose target names its owner
 * (pid, host, time), as Emacs's lock files are: creating it is one atomic call
 * that fails when it exists, so a lock is never seen empty or half-written, and
 * it needs no data block, so it can still be taken on a full disk. A lock whose
 * owner on this host is gone is stale and is broken, one breaker at a time, and
 * a process removes a lock only while it still names that process.
 * Works the same on macOS and Linux: no flock, no /proc. (Windows, later, needs
 * another primitive: its symlinks need a privilege.)
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type PQueue from 'p-queue';
import { CkptError, UNWRITABLE_ERRNOS } from '../model/errors.js';

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

/** The host as a lock names it: a short hash, so the whole target stays a "fast" symlink that needs no data block. */
const HOST = createHash('sha1').update(hostname()).digest('hex').slice(0, 12);

function ownerText(): string {
  return `git-ckpt:${process.pid}:${HOST}:${Date.now()}`;
}

/** The owner a lock names: a symlink's target, or a lock file's JSON as older versions wrote it. */
function parseOwner(text: string): LockOwner | undefined {
  const m = /^git-ckpt:(\d+):([0-9a-f]+):(\d+)$/.exec(text);
  if (m) return { pid: Number(m[1]), host: m[2]!, time: Number(m[3]) };
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (Number.isInteger(owner.pid) && typeof owner.host === 'string')
      return { ...owner, host: createHash('sha1').update(owner.host).digest('hex').slice(0, 12) };
  } catch {
    /* an older version's lock being written, or garbage */
  }
  return undefined;
}

/** What a lock says, or undefined when there is none. */
function readLockText(file: string): string | undefined {
  try {
    return readlinkSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code !== 'EINVAL') throw err;
  }
  try {
    return readFileSync(file, 'utf8'); // a regular file: an older version's lock
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** How long a lock's owner may hold it before `ps` is asked whether it is a zombie. */
const ZOMBIE_CHECK_AFTER_MS = 1000;

/**
 * `ps` says the process does not exist or is a zombie: its pid answers
 * signals, but it runs no more (some container inits reap late). Not free (a
 * process), so asked only of a lock held long.
 */
export function processGone(pid: number): boolean {
  const r = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
  if (r.error) return false;
  const stat = r.stdout.trim();
  return stat === '' || stat.startsWith('Z');
}

export function processAlive(pid: number): boolean {
  // 0 and negative ids name process groups: a tampered pid file must never make us signal our own group.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock is stale when its owner on this host is dead, or (an older version's file) it has been unreadable for long. */
function isStale(text: string, ageMs: number): boolean {
  const owner = parseOwner(text);
  if (!owner) return ageMs > 5_000;
  if (owner.host !== HOST) return false;
  return !processAlive(owner.pid);
}

/** Take the lock with `owner` as its text; false when it is held. */
function tryCreate(file: string, owner = ownerText()): boolean {
  try {
    symlinkSync(owner, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    const why = code ? UNWRITABLE_ERRNOS[code] : undefined;
    throw new CkptError(
      'io',
      why
        ? `cannot write the store to lock it (${why}): ${file}; status, diff, fsck and dry runs still work`
        : `cannot create lock ${file}: ${(err as Error).message}`,
      // `lockFailed`: no lock could be taken, so no other process can write this store either.
      { errno: code, lockFailed: true },
      { cause: err },
    );
  }
}

/**
 * Break a stale lock. Breakers take turns through a lock of their own, and the
 * lock is removed only if it still says what was judged stale: while a stale
 * lock stands nobody else can replace it (only breakers remove it), so no
 * live lock is ever removed, whatever the number of contenders.
 */
function breakStale(file: string, seen: string): void {
  const breaker = `${file}.break`;
  const mine = ownerText();
  if (!tryCreate(breaker, mine)) {
    // A breaker that died mid-way would block every other one: its lock is stale in turn (a
    // foreign host's once it is old, since its pid cannot be checked from here).
    const text = readLockText(breaker);
    const owner = text === undefined ? undefined : parseOwner(text);
    const foreignAndOld = owner !== undefined && owner.host !== HOST && Date.now() - owner.time > 10_000;
    if (text !== undefined && (isStale(text, 0) || foreignAndOld) && readLockText(breaker) === text) rmSync(breaker, { force: true });
    return;
  }
  try {
    if (readLockText(file) === seen) rmSync(file, { force: true });
  } finally {
    removeIfOurs(breaker, mine);
  }
}

/** Remove a lock only while it still names us: one broken by mistake and retaken by another stays theirs. */
function removeIfOurs(file: string, owner: string): void {
  try {
    if (readLockText(file) === owner) rmSync(file, { force: true });
  } catch {
    /* unreadable: leave it */
  }
}

/**
 * Break a lock whose owner on this host `isGone` says is gone although its pid
 * still answers (a zombie nobody reaped: some container inits reap late). The
 * same turn-taking as for any stale lock. Returns whether the lock was broken.
 */
export function breakLockOfGoneOwner(file: string, isGone: (pid: number) => boolean): boolean {
  const text = readLockText(file);
  const owner = text === undefined ? undefined : parseOwner(text);
  if (!owner || owner.host !== HOST || !isGone(owner.pid)) return false;
  breakStale(file, text!);
  return readLockText(file) !== text;
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
  let zombieChecked: string | undefined;
  let brokeStale = false;
  for (;;) {
    const owner = ownerText();
    if (tryCreate(file, owner)) {
      let released = false;
      return {
        brokeStale,
        release() {
          if (released) return;
          released = true;
          removeIfOurs(file, owner);
        },
      };
    }
    const text = readLockText(file);
    if (text === undefined) continue; // released between our attempts
    if (!firstSeen || firstSeen.text !== text) firstSeen = { text, at: Date.now() };
    // Held a while by a pid that still answers: once, ask `ps` whether it is a zombie (killed, not reaped yet).
    const heldLong = Date.now() - firstSeen.at > ZOMBIE_CHECK_AFTER_MS && zombieChecked !== text;
    if (heldLong) zombieChecked = text;
    if (isStale(text, Date.now() - firstSeen.at)) {
      breakStale(file, text);
      brokeStale = true;
      continue;
    }
    if (heldLong && breakLockOfGoneOwner(file, processGone)) {
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
