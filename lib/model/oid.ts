/** Pure: git object ids: what a valid one looks like, and the empty tree. */

const OID_RE = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** A full object id, SHA-1 or SHA-256: the only form a ledger, journal or argument may hold. */
export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OID_RE.test(value);
}

/** The empty tree: what a first checkpoint's change is computed against. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
