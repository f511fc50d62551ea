/**
 * Retention: which checkpoints gc keeps. A pure function over the ledger.
 *
 * Rules, in order, each naming itself on what it drops:
 *   keep      at most `keep` checkpoints per session (the newest);
 *   maxAge    checkpoints older than `maxAgeMs`;
 *   maxBytes  the oldest of the rest, while the store is estimated above `maxBytes`.
 * Floors that no rule crosses:
 *   - the newest checkpoint of each session (and of the unattributed ones);
 *   - the last restore, revert or undo and its guard (what `undo` needs);
 *   - every checkpoint an open restore journal names;
 *   - the parent of every kept `post`, so `turn:N` finds the state before a
 *     kept turn; a kept checkpoint whose parent goes keeps that parent's tree
 *     instead (`parentTree`), so its revert still has its base;
 *   - a rewind's mark while a checkpoint of its turn or a later one of its
 *     session is kept: `turn:N` counts the branch the mark starts (its tree is
 *     its parent's, so it holds no content of its own); a fork's mark the same
 *     way, so `log` still names the session the fork came from.
 * A store over its quota therefore never prunes itself into "no checkpoints".
 */
import type { CheckpointRecord } from './ledger.js';

export interface RetentionPolicy {
  /** Checkpoints kept per session. */
  keep: number;
  /** Checkpoints older than this are dropped (ms). */
  maxAgeMs: number;
  /** Soft quota of the workspace's store (bytes). */
  maxBytes: number;
}

/** Pure: the policy the settings give (ckpt.keep, ckpt.maxAge, ckpt.maxBytes). */
export function retentionPolicy(settings: RetentionPolicy): RetentionPolicy {
  return { keep: settings.keep, maxAgeMs: settings.maxAgeMs, maxBytes: settings.maxBytes };
}

export type DropRule = 'keep' | 'maxAge' | 'maxBytes';

export interface RetentionPlan {
  keep: CheckpointRecord[];
  drop: { record: CheckpointRecord; rule: DropRule }[];
  /** Why each floor checkpoint is protected. */
  protected: { id: string; why: string }[];
  /** The store size the byte rule worked from, and its estimate after the drops. */
  bytesBefore: number;
  bytesAfterEstimate: number;
}

export interface RetentionInput {
  /** Oldest first, as the ledger holds them. */
  records: readonly CheckpointRecord[];
  now: number;
  policy: RetentionPolicy;
  /** Bytes the store uses on disk now. */
  storeBytes: number;
  /** Checkpoints an open restore journal names. */
  journalIds?: readonly string[];
}

function sessionKey(r: CheckpointRecord): string {
  return r.session === null ? '\0none' : `s:${r.session}`;
}

/** Pure: the retention plan. */
export function planRetention(input: RetentionInput): RetentionPlan {
  const { records, now, policy } = input;
  const floors = new Map<string, string>();
  const newest = new Map<string, CheckpointRecord>();
  for (const r of records) newest.set(sessionKey(r), r);
  for (const r of newest.values())
    floors.set(r.id, `newest of ${r.session === null ? 'the checkpoints without a session' : `session ${r.session}`}`);
  for (let i = records.length - 1; i >= 0; i--) {
    const op = records[i]!;
    if (!op.op) continue;
    floors.set(op.id, `the last ${op.kind} (what undo reverses)`);
    floors.set(op.op.guard, `the guard of the last ${op.kind} (undo's target)`);
    break;
  }
  for (const id of input.journalIds ?? []) floors.set(id, 'named by an interrupted restore');

  const dropped = new Map<string, DropRule>();
  // keep: count per session from the newest.
  const seen = new Map<string, number>();
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    const key = sessionKey(r);
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    if (n > policy.keep && !floors.has(r.id)) dropped.set(r.id, 'keep');
  }
  // maxAge.
  for (const r of records) {
    if (!dropped.has(r.id) && !floors.has(r.id) && now - r.time > policy.maxAgeMs) dropped.set(r.id, 'maxAge');
  }
  // maxBytes: checkpoint bytes stand for disk bytes in proportion (the store is compressed).
  const totalContent = records.reduce((sum, r) => sum + Math.max(0, r.bytes), 0);
  const diskPerContentByte = totalContent > 0 ? input.storeBytes / totalContent : 0;
  let estimate = input.storeBytes - records.filter((r) => dropped.has(r.id)).reduce((sum, r) => sum + r.bytes * diskPerContentByte, 0);
  for (const r of records) {
    if (estimate <= policy.maxBytes) break;
    if (dropped.has(r.id) || floors.has(r.id)) continue;
    dropped.set(r.id, 'maxBytes');
    estimate -= r.bytes * diskPerContentByte;
  }
  const byId = new Map(records.map((r) => [r.id, r]));
  for (const mark of records) {
    if (!(mark.rewind || mark.fork) || mark.turn === null || !dropped.has(mark.id)) continue;
    const stillCounted = records.some((r) => r.session === mark.session && r.turn !== null && r.turn >= mark.turn! && !dropped.has(r.id));
    if (!stillCounted) continue;
    dropped.delete(mark.id);
    floors.set(
      mark.id,
      mark.rewind
        ? 'a rewind inside the agent (turn:N counts the branch it starts)'
        : 'a fork of another session (log names where it came from)',
    );
  }
  for (const r of records) {
    if (r.kind !== 'post' || dropped.has(r.id) || !r.parent || !dropped.has(r.parent)) continue;
    dropped.delete(r.parent);
    floors.set(r.parent, 'the parent of a kept post (what its revert compares with)');
    estimate += (byId.get(r.parent)?.bytes ?? 0) * diskPerContentByte;
  }
  return {
    // A kept checkpoint whose parent goes keeps that parent's tree: what its revert is computed against.
    keep: records
      .filter((r) => !dropped.has(r.id))
      .map((r) => (r.parent && dropped.has(r.parent) && !r.parentTree ? { ...r, parentTree: byId.get(r.parent)!.tree } : r)),
    drop: records.filter((r) => dropped.has(r.id)).map((record) => ({ record, rule: dropped.get(record.id)! })),
    protected: [...floors].filter(([id]) => records.some((r) => r.id === id)).map(([id, why]) => ({ id, why })),
    bytesBefore: input.storeBytes,
    bytesAfterEstimate: Math.max(0, Math.round(estimate)),
  };
}
