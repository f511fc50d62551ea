/**
 * Pure: a restore, revert or undo as one entry of a list, its guard folded in. An operation
 * writes two checkpoints, the guard (the workspace just before it) and its record (just
 * after); a list of both reads as bookkeeping. `log` and the web page show the record, with
 * the guard named on it. It imports nothing, so the page bundles it.
 */

/** What folding reads: a checkpoint record and its web view both have it. */
interface Listed {
  id: string;
  kind: string;
  op?: { guard: string } | null;
}

/** One entry of a list: a checkpoint, and for an operation the guard checkpoint it took, when listed. */
export interface ListEntry<T> {
  record: T;
  guard?: T;
}

/**
 * Each operation's guard, when it is a checkpoint of kind `guard` in `records`, leaves its own
 * place and rides on the operation's entry. A guard no listed operation names (an operation
 * interrupted, or cut off by a limit) stays an entry of its own; so does a guard that is an
 * ordinary checkpoint (nothing changed since it, so the operation took no new one). Order kept.
 */
export function foldGuards<T extends Listed>(records: readonly T[]): ListEntry<T>[] {
  const guards = new Map<string, T>();
  for (const r of records) if (r.kind === 'guard') guards.set(r.id, r);
  const folded = new Map<string, T>();
  for (const r of records) {
    const guard = r.op ? guards.get(r.op.guard) : undefined;
    if (guard && !folded.has(guard.id)) folded.set(guard.id, r);
  }
  const entries: ListEntry<T>[] = [];
  for (const r of records) {
    if (folded.has(r.id)) continue;
    const guard = r.op ? guards.get(r.op.guard) : undefined;
    entries.push(guard && folded.get(guard.id) === r ? { record: r, guard } : { record: r });
  }
  return entries;
}

/** How many records `entries` hold (an operation with its guard folded in is two). */
export function recordsIn<T>(entries: readonly ListEntry<T>[]): number {
  return entries.reduce((n, e) => n + (e.guard ? 2 : 1), 0);
}
