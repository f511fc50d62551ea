/**
 * Per-session counters (turn and step numbers for agents that give no ids),
 * kept in the store as one small JSON file, read and written under the
 * workspace lock. Only the most recent sessions are kept.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withLock } from './lock.js';
import { storePaths } from './store.js';
import { emptySessionState, reviveSessionState, type SessionState } from '../model/turns.js';

const SESSIONS_KEPT = 50;

type SessionTable = Record<string, SessionState>;

function sessionsFile(storeDir: string): string {
  return storePaths(storeDir).sessions;
}

function readTable(storeDir: string): SessionTable {
  try {
    const parsed: unknown = JSON.parse(readFileSync(sessionsFile(storeDir), 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as SessionTable;
  } catch {
    /* none yet, or unreadable: counting starts again, which only affects numbering */
  }
  return {};
}

/**
 * Apply `update` to one session's state and persist it, under the state's own
 * lock: hooks number their events even while the first snapshot holds the
 * workspace lock for a long time (see baseline.ts). The workspace lock, when
 * held, is always taken first.
 */
export async function updateSessionState<T extends { state: SessionState }>(
  storeDir: string,
  session: string,
  update: (state: SessionState) => T,
): Promise<T> {
  return withLock(storePaths(storeDir).sessionsLock, SESSIONS_LOCK_TIMEOUT_MS, async () => updateLocked(storeDir, session, update));
}

/** How long a hook waits for another one's few milliseconds of numbering. */
const SESSIONS_LOCK_TIMEOUT_MS = 5000;

function updateLocked<T extends { state: SessionState }>(storeDir: string, session: string, update: (state: SessionState) => T): T {
  const table = readTable(storeDir) as Record<string, unknown>;
  const result = update(reviveSessionState(table[session]) ?? emptySessionState());
  // Re-insert at the end: key order is recency, and the oldest sessions are dropped.
  delete table[session];
  table[session] = result.state;
  const keys = Object.keys(table);
  for (const key of keys.slice(0, Math.max(0, keys.length - SESSIONS_KEPT))) delete table[key];
  // Rewritten in place, under the lock: creating a file per hook costs more than the rare torn
  // write after a crash, which only restarts the counters.
  writeFileSync(sessionsFile(storeDir), JSON.stringify(table), { mode: 0o600 });
  return result;
}

/** The sessions whose state is kept, the most recent last (without the lock: a hint). */
export function sessionIds(storeDir: string): string[] {
  return Object.keys(readTable(storeDir));
}

/** One session's state as last written, without the lock (a hint: undefined when there is none). */
export function readSessionState(storeDir: string, session: string): SessionState | undefined {
  return reviveSessionState(readTable(storeDir)[session]);
}

/** Drop one session's state (its counters and its turn's title), under the state's lock: `forget --session`. */
export async function forgetSessionState(storeDir: string, session: string): Promise<void> {
  await withLock(storePaths(storeDir).sessionsLock, SESSIONS_LOCK_TIMEOUT_MS, async () => {
    const table = readTable(storeDir);
    if (!(session in table)) return;
    delete table[session];
    writeFileSync(sessionsFile(storeDir), JSON.stringify(table), { mode: 0o600 });
  });
}

/**
 * Replace, in every session's state, the texts `scrub` rewrites (a tool call's input not yet recorded,
 * a turn's title not yet carried by a checkpoint): `forget --path` takes a forgotten path's mention out
 * of them too. Returns how many texts changed.
 */
export async function scrubSessionTexts(
  storeDir: string,
  scrub: (text: string, what: 'input' | 'prompt') => string | undefined,
): Promise<number> {
  return withLock(storePaths(storeDir).sessionsLock, SESSIONS_LOCK_TIMEOUT_MS, async () => {
    const table = readTable(storeDir);
    let changed = 0;
    const call = (c: { input: string | null } | null | undefined) => {
      const next = c?.input ? scrub(c.input, 'input') : undefined;
      if (c && next !== undefined) {
        c.input = next;
        changed++;
      }
    };
    for (const state of Object.values(table)) {
      if (!state || typeof state !== 'object') continue;
      call(state.open);
      for (const r of Object.values(state.running ?? {})) call(r?.call);
      const title = typeof state.title === 'string' ? scrub(state.title, 'prompt') : undefined;
      if (title !== undefined) {
        state.title = title;
        changed++;
      }
    }
    if (changed) writeFileSync(sessionsFile(storeDir), JSON.stringify(table), { mode: 0o600 });
    return changed;
  });
}
