/**
 * Checkpoint addresses, resolved purely against the ledger's records:
 *   latest, latest~N     the newest checkpoint, and the Nth before it; git's
 *                        HEAD, HEAD~N, @ and @~N are the same (people type them)
 *   <hex prefix>         a unique prefix of 4 or more hex digits, or a full id
 *                        (of a current id, else of an id forget rewrote)
 *   turn:N[@SESSION]     the state just before turn N of a session (default:
 *                        the most recent session); SESSION is a unique prefix
 *   turn:N~K[@SESSION]   the same on the branch a rewind inside the agent left
 *                        behind K rewinds ago (turn-tree.ts)
 *   prompt:ID            the state just before the turn of the agent's own
 *                        prompt id (Claude's prompt_id, Codex's turn_id), on
 *                        whichever branch holds it
 *
 * Checkpoints fetched from other stores (records with an `origin`) are foreign:
 * `latest` and a `turn:N` or `prompt:ID` without a session are this workspace's
 * own; a fetched session is named by its origin (`<session>@<writer>`) and
 * reached only by naming it (its prefix, or `<session prefix>@<writer prefix>`).
 */
import { shortId, shortSession } from './short-ids.js';
import { CkptError } from './errors.js';
import type { CheckpointRecord } from './ledger.js';
import { serialAt, turnTree } from './turn-tree.js';

export type Address =
  | { kind: 'latest'; back: number }
  | { kind: 'prefix'; prefix: string }
  | { kind: 'before-turn'; turn: number; back: number; session?: string }
  | { kind: 'before-prompt'; prompt: string };

/** Pure: parse an address, or throw a one-line error naming it. */
export function parseAddress(input: string): Address {
  const text = input.trim();
  if (text.startsWith('-')) {
    throw new CkptError('bad-address', `not a checkpoint address: ${JSON.stringify(input)} (looks like an option)`);
  }
  const latest = /^latest(?:~(\d{1,6}))?$/.exec(text) ?? /^(?:HEAD|@)(?:~(\d{1,6}))?$/.exec(text);
  if (latest) return { kind: 'latest', back: latest[1] === undefined ? 0 : Number(latest[1]) };
  const turn = /^turn:(\d{1,6})(?:~(\d{1,4}))?(?:@(.+))?$/.exec(text);
  if (turn) {
    if (Number(turn[1]) < 1) throw new CkptError('bad-address', `turns count from 1: ${JSON.stringify(input)}`);
    return { kind: 'before-turn', turn: Number(turn[1]), back: Number(turn[2] ?? 0), ...(turn[3] ? { session: turn[3] } : {}) };
  }
  const prompt = /^prompt:([A-Za-z0-9][A-Za-z0-9._:-]{0,199})$/.exec(text);
  if (prompt) return { kind: 'before-prompt', prompt: prompt[1]! };
  if (/^[0-9a-fA-F]{4,64}$/.test(text)) return { kind: 'prefix', prefix: text.toLowerCase() };
  if (/^[0-9a-fA-F]{1,3}$/.test(text)) {
    throw new CkptError('bad-address', `checkpoint prefix too short: ${JSON.stringify(input)} (use 4 or more hex digits)`);
  }
  throw new CkptError(
    'bad-address',
    `not a checkpoint address: ${JSON.stringify(input).slice(0, 80)} (expected a hex id prefix, latest, latest~N, HEAD~N, turn:N[~K][@session] or prompt:ID)`,
  );
}

/** Marks an address that is well formed but names nothing that exists (a web API answers 404). */
const NOT_FOUND = { notFound: true };

/** Pure: resolve against records ordered oldest first. */
export function resolveAddress(records: readonly CheckpointRecord[], input: string): CheckpointRecord {
  const address = parseAddress(input);
  if (address.kind === 'latest') {
    // The workspace's own chain: a fetched checkpoint is never `latest`, even in a store with none of its own.
    const own = records.filter((r) => !r.origin);
    if (own.length === 0) throw new CkptError('nothing', 'no checkpoints yet (take one with: git ckpt snapshot)');
    const record = own[own.length - 1 - address.back];
    if (!record) {
      throw new CkptError('bad-address', `${input.trim()}: only ${own.length} checkpoint${own.length === 1 ? '' : 's'} exist`, NOT_FOUND);
    }
    return record;
  }
  if (address.kind === 'before-turn') return resolveBeforeTurn(records, address.turn, address.session, address.back);
  if (address.kind === 'before-prompt') {
    const at = promptTurn(records, address.prompt);
    return resolveBeforeTurn(records, at.turn, at.session, at.back);
  }
  let matches = records.filter((r) => r.id.startsWith(address.prefix));
  // A checkpoint forget rewrote answers to its former ids too, when no current id matches.
  if (matches.length === 0) matches = records.filter((r) => r.formerIds?.some((id) => id.startsWith(address.prefix)));
  // A fetched checkpoint also answers to the id it has in the store it was taken in (what that machine's log shows).
  if (matches.length === 0) matches = records.filter((r) => r.origin?.source.startsWith(address.prefix));
  if (matches.length === 0) throw new CkptError('bad-address', `unknown checkpoint: ${address.prefix}`, NOT_FOUND);
  if (matches.length > 1) throw new CkptError('bad-address', `checkpoint ${address.prefix} is ambiguous (${matches.length} matches)`);
  return matches[0]!;
}

/**
 * Pure: where the turn of an agent's prompt id stands: its session, its position, and the branch that
 * holds it (rewinds ago; 0: the current one). A turn a rewind left behind answers to its id as it did.
 */
export function promptTurn(records: readonly CheckpointRecord[], prompt: string): { session: string; turn: number; back: number } {
  const all = records.filter((r) => r.agentTurn === prompt && r.session !== null && r.turn !== null);
  // The workspace's own turn first: another store's record can neither take its prompt id nor make it ambiguous.
  const own = all.filter((r) => !r.origin);
  const owners = own.length ? own : all;
  const sessions = new Set(owners.map((r) => r.session));
  if (owners.length === 0) throw new CkptError('bad-address', `unknown prompt id: ${JSON.stringify(prompt).slice(0, 80)}`, NOT_FOUND);
  if (sessions.size > 1)
    throw new CkptError('bad-address', `prompt id ${JSON.stringify(prompt).slice(0, 80)} is in ${sessions.size} sessions`);
  const { session, turn } = owners[0]! as { session: string; turn: number };
  const tree = turnTree(
    records.filter((r) => r.session === session),
    session,
  );
  for (let back = 0; back < tree.branches.length; back++) {
    const at = tree.branches[back]!.indexOf(turn);
    if (at >= 0) return { session, turn: at + 1, back };
  }
  return { session, turn, back: 0 };
}

/**
 * Pure: the session a prefix names, or this workspace's most recent one. The workspace's own sessions
 * answer first; a fetched session (`<session>@<writer>`) only to a prefix no own session has, or to
 * `<session prefix>@<writer prefix>`.
 */
export function resolveSession(records: readonly CheckpointRecord[], prefix?: string): string {
  const own = records.filter((r) => !r.origin);
  if (prefix === undefined) {
    for (let i = own.length - 1; i >= 0; i--) if (own[i]!.session !== null) return own[i]!.session!;
    throw new CkptError('bad-address', 'no checkpoint belongs to a session yet (sessions come from agent hooks or --session)');
  }
  const sessionsOf = (rs: readonly CheckpointRecord[]) => [...new Set(rs.map((r) => r.session).filter((s): s is string => s !== null))];
  const mine = sessionsOf(own);
  const foreign = sessionsOf(records.filter((r) => r.origin)).filter((s) => !mine.includes(s));
  const exact = mine.find((s) => s === prefix) ?? foreign.find((s) => s === prefix);
  if (exact) return exact;
  const at = prefix.lastIndexOf('@');
  const named = (s: string) => {
    if (s.startsWith(prefix)) return true;
    const sat = s.lastIndexOf('@');
    return at > 0 && sat > 0 && s.slice(0, sat).startsWith(prefix.slice(0, at)) && s.slice(sat + 1).startsWith(prefix.slice(at + 1));
  };
  const ownMatches = mine.filter(named);
  const matches = ownMatches.length ? ownMatches : foreign.filter(named);
  if (matches.length === 0) throw new CkptError('bad-address', `unknown session: ${JSON.stringify(prefix).slice(0, 80)}`, NOT_FOUND);
  if (matches.length > 1)
    throw new CkptError(
      'bad-address',
      `session ${JSON.stringify(prefix).slice(0, 80)} is ambiguous (${matches.length} matches${ownMatches.length ? '' : `: ${matches.slice(0, 3).join(', ')}`})`,
    );
  return matches[0]!;
}

/**
 * Pure: the state just before turn N of a session's branch (`back` rewinds
 * ago; 0: the current branch). A turn's first checkpoint taken at its start
 * (turn-start, or the pre hook of its first tool call) holds that state; when
 * the turn starts with a post checkpoint, the state before is that
 * checkpoint's parent. A turn with no checkpoint of its own (nothing changed
 * in it) is reached through the next turn of the branch that has one.
 * @public (tests call it directly)
 */
export function resolveBeforeTurn(records: readonly CheckpointRecord[], turn: number, sessionPrefix?: string, back = 0): CheckpointRecord {
  const session = resolveSession(records, sessionPrefix);
  const inSession = records.filter((r) => r.session === session && r.turn !== null);
  const tree = turnTree(inSession, session);
  const branch = tree.branches[back];
  const label = `turn ${turn}${back ? `~${back}` : ''} of session ${shortSession(session)}`;
  if (!branch) {
    const rewinds = tree.branches.length - 1;
    throw new CkptError('bad-address', `no ${label}: the session was rewound ${rewinds === 1 ? 'once' : `${rewinds} times`}`, NOT_FOUND);
  }
  const later = new Set(branch.slice(turn - 1));
  const first = serialAt(tree, turn, back) === undefined ? undefined : inSession.find((r) => later.has(r.turn!));
  if (!first) {
    const last = branch.length;
    throw new CkptError('bad-address', `no ${label}${last ? ` (its last turn is ${last})` : ''}`, NOT_FOUND);
  }
  const opensTurn =
    first.phase === 'turn-start' || first.kind === 'pre' || first.phase === 'pre' || (first.kind === 'turn' && first.phase !== 'turn-end');
  if (opensTurn) return first;
  const parent = first.parent === null ? undefined : records.find((r) => r.id === first.parent);
  if (!parent)
    throw new CkptError(
      'bad-address',
      `no checkpoint holds the state before ${label} (its first checkpoint has ${first.parent ? 'a parent missing from the ledger' : 'no parent'})`,
    );
  return parent;
}

/** The ledger's records with the degraded probe's verdict on them (id → what is missing). */
export interface LedgerView {
  records: CheckpointRecord[];
  degraded: Record<string, string>;
  /** Unreadable ledger lines. */
  warnings: string[];
}

/**
 * Pure: the one resolver that minds degraded checkpoints: `latest`, `latest~N`
 * and `turn:N` skip them; one named by its id is an error that says what is missing.
 */
export function resolveInView({ records, degraded }: Pick<LedgerView, 'records' | 'degraded'>, address: string): CheckpointRecord {
  if (parseAddress(address).kind !== 'prefix')
    return resolveAddress(
      records.filter((r) => !degraded[r.id]),
      address,
    );
  const record = resolveAddress(records, address);
  const missing = degraded[record.id];
  if (missing)
    throw new CkptError('degraded', `checkpoint ${shortId(record.id)} is degraded: ${describeMissing(missing)} (see git ckpt fsck)`);
  return record;
}

/** Pure: what a degraded mark means, in words. */
export function describeMissing(what: string): string {
  return what === 'commit' ? 'its commit object is missing from the store' : 'its tree object is missing from the store';
}

/** What a revert of several checkpoints names: a whole agent session, one of its turns, or a turn range. */
export interface RevertSelection {
  /** A unique prefix of the session id (default: the most recent session). */
  session?: string;
  turn?: number;
}

const TURN_RANGE = /^turn:(\d+)\.\.(?:turn:)?(\d+)(?:@(.+))?$/;

/**
 * Pure: the checkpoints a revert of a session, a turn or a turn range
 * (`turn:3..turn:5[@session]`) undoes, newest first: the ones its tool calls
 * made (post checkpoints). Changes the hooks found between tool calls (pre and
 * turn-end checkpoints: the user's edits, another program's) are not the
 * session's, and stay.
 */
export function revertSelection(records: readonly CheckpointRecord[], what: string | RevertSelection): CheckpointRecord[] {
  let session: string;
  let from = 1;
  let to = Number.POSITIVE_INFINITY;
  if (typeof what === 'string') {
    const m = TURN_RANGE.exec(what.trim());
    if (!m) throw new CkptError('bad-address', `not a turn range: ${JSON.stringify(what).slice(0, 80)} (turn:N..turn:M[@SESSION])`);
    [from, to] = [Number(m[1]), Number(m[2])];
    if (from < 1 || to < from) throw new CkptError('bad-address', `an empty turn range: ${JSON.stringify(what).slice(0, 80)}`);
    session = resolveSession(records, m[3]);
  } else {
    if (what.session === undefined && what.turn === undefined)
      throw new CkptError('usage', 'name a session, a turn or a turn range to revert');
    session = resolveSession(records, what.session);
    if (what.turn !== undefined) from = to = what.turn;
  }
  // Turns count on the current branch: a range leaves out the turns a rewind inside the agent left behind.
  const branch = turnTree(records, session).branches[0]!;
  const serials = new Set(branch.slice(from - 1, Math.min(to, branch.length)));
  const picked = records.filter((r) => r.session === session && r.kind === 'post' && r.turn !== null && serials.has(r.turn));
  if (picked.length === 0) {
    const which =
      to === Number.POSITIVE_INFINITY
        ? `session ${shortSession(session)}`
        : from === to
          ? `turn ${from} of session ${shortSession(session)}`
          : `turns ${from}–${to} of session ${shortSession(session)}`;
    throw new CkptError('nothing', `no tool call of ${which} changed a file: nothing to revert`, { notFound: true });
  }
  return picked.reverse();
}

/**
 * Pure: what a revert of `what` (an address, a turn range, or a session's or
 * turn's tool calls) undoes, newest first, and the tree each one's change is
 * computed against: its parent's, or the parent's tree gc kept on the record
 * when it dropped the parent. A target without either, or degraded, is refused.
 */
export function revertTargets(
  view: Pick<LedgerView, 'records' | 'degraded'>,
  what: string | RevertSelection,
): { targets: CheckpointRecord[]; parentTree: (record: CheckpointRecord) => string | null } {
  const targets = typeof what === 'string' && !what.includes('..') ? [resolveInView(view, what)] : revertSelection(view.records, what);
  const byId = new Map(view.records.map((r) => [r.id, r]));
  for (const target of targets) {
    if (!target.parent) continue;
    const parent = byId.get(target.parent);
    if ((!parent && !target.parentTree) || view.degraded[target.parent] || view.degraded[target.id]) {
      throw new CkptError(
        'degraded',
        `cannot revert ${shortId(target.id)}: ${view.degraded[target.id] ? 'it is degraded' : `its parent checkpoint ${shortId(target.parent)} ${parent ? 'is degraded' : 'was dropped by gc'}`}, and revert needs it`,
      );
    }
  }
  return { targets, parentTree: (r) => (r.parent ? (byId.get(r.parent)?.tree ?? r.parentTree!) : null) };
}
