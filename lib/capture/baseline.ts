/**
 * The first snapshot, taken in the background before the agent's first tool
 * call needs it. On a large workspace it can take longer than any hook may
 * wait, so `hooks install` and a session-start hook start it as a process of
 * its own (`git ckpt init --baseline`); while it runs, hooks record nothing
 * and return at once (still counting turns and steps), and `status` shows
 * its progress. What changes while it runs is taken by the first hook after
 * it, so nothing is lost and the state before the first prompt is the one it
 * saw. Killed, it resumes: staged batches stay in the shadow index, and the
 * next session start finds a dead owner.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { spawnBackground } from '../store/background.js';
import { processAlive } from '../store/lock.js';
import { writeFileAtomic, type StorePaths } from '../store/store.js';

export interface BaselineState {
  pid: number;
  host: string;
  started: number;
  /** Files hashed so far and files to hash, in the current pass. */
  hashed: number;
  total: number;
  updated: number;
}

function readBaseline(paths: StorePaths): BaselineState | undefined {
  try {
    const v = JSON.parse(readFileSync(paths.baseline, 'utf8')) as BaselineState;
    return Number.isInteger(v.pid) && typeof v.host === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A running baseline rewrites its state every second; one silent for this long is gone. */
const BASELINE_HEARTBEAT_MS = 1000;
const BASELINE_STALE_MS = 5000;

/**
 * The baseline in progress, or undefined (none, finished, or its process
 * died). A process killed without a parent to reap it can linger as a zombie
 * that still answers kill(pid, 0): the heartbeat tells.
 */
export function runningBaseline(paths: StorePaths, now = Date.now()): BaselineState | undefined {
  const state = readBaseline(paths);
  if (!state) return undefined;
  if (now - state.updated > BASELINE_STALE_MS) return undefined;
  if (state.host !== hostname()) return state;
  return processAlive(state.pid) ? state : undefined;
}

/** Whether the workspace has no checkpoint yet (no ledger, or an empty one). */
export function noCheckpointYet(paths: StorePaths): boolean {
  try {
    return statSync(paths.ledger).size === 0;
  } catch {
    return true;
  }
}

/** Record this process as the baseline's, with its progress. */
function writeBaseline(paths: StorePaths, progress: Pick<BaselineState, 'hashed' | 'total'>, started: number): void {
  writeFileAtomic(paths.baseline, JSON.stringify({ pid: process.pid, host: hostname(), started, ...progress, updated: Date.now() }));
}

function clearBaseline(paths: StorePaths): void {
  rmSync(paths.baseline, { force: true });
}

/**
 * Start `git ckpt init --baseline` for the workspace, detached, unless one is
 * running. Returns whether one was started.
 */
export function startBaseline(root: string, paths: StorePaths, env: NodeJS.ProcessEnv): boolean {
  if (runningBaseline(paths)) return false;
  try {
    const pid = spawnBackground(['-C', root, 'init', '--baseline'], {
      // The store root this workspace was opened with, whatever the child's environment says.
      env: { ...env, GIT_CKPT_HOME: path.dirname(paths.dir) },
    });
    // Claimed at once with the child's pid: a hook that comes before the child starts must not wait for it.
    if (pid)
      writeFileAtomic(
        paths.baseline,
        JSON.stringify({ pid, host: hostname(), started: Date.now(), hashed: 0, total: 0, updated: Date.now() }),
      );
    return true;
  } catch {
    return false;
  }
}

/**
 * Run the first snapshot (`capture`, handed a progress callback) with the
 * baseline's heartbeat in the store, so hooks can tell a running baseline
 * from a dead one; the state is cleared however it ends. The caller holds the lock.
 */
export async function withBaselineHeartbeat<T, P extends Pick<BaselineState, 'hashed' | 'total'>>(
  paths: StorePaths,
  onProgress: ((p: P) => void) | undefined,
  capture: (progress: (p: P) => void) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  let latest = { hashed: 0, total: 0 };
  writeBaseline(paths, latest, started);
  const beat = setInterval(() => writeBaseline(paths, latest, started), BASELINE_HEARTBEAT_MS);
  beat.unref();
  try {
    return await capture((p) => {
      onProgress?.(p);
      latest = { hashed: p.hashed, total: p.total };
    });
  } finally {
    clearInterval(beat);
    clearBaseline(paths);
  }
}
