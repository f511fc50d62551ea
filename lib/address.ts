/**
 * Checkpoint addresses, resolved purely against the ledger's records:
 *   latest, latest~N     the newest checkpoint, and the Nth before it
 *   <hex prefix>         a unique prefix of 4 or more hex digits, or a full id
 */
import { CkptError } from './errors.js';
import type { CheckpointRecord } from './ledger.js';

export type Address = { kind: 'latest'; back: number } | { kind: 'prefix'; prefix: string };

/** Pure: parse an address, or throw a one-line error naming it. */
export function parseAddress(input: string): Address {
  const text = input.trim();
  if (text.startsWith('-')) {
    throw new CkptError('bad-address', `not a checkpoint address: ${JSON.stringify(input)} (looks like an option)`);
  }
  const latest = /^latest(?:~(\d{1,6}))?$/.exec(text) ?? /^(?:HEAD|@)(?:~(\d{1,6}))?$/.exec(text);
  if (latest) return { kind: 'latest', back: latest[1] === undefined ? 0 : Number(latest[1]) };
  if (/^[0-9a-fA-F]{4,64}$/.test(text)) return { kind: 'prefix', prefix: text.toLowerCase() };
  if (/^[0-9a-fA-F]{1,3}$/.test(text)) {
    throw new CkptError('bad-address', `checkpoint prefix too short: ${JSON.stringify(input)} (use 4 or more hex digits)`);
  }
  throw new CkptError('bad-address', `not a checkpoint address: ${JSON.stringify(input).slice(0, 80)} (expected a hex id prefix, latest or latest~N)`);
}

/** Pure: resolve against records ordered oldest first. */
export function resolveAddress(records: readonly CheckpointRecord[], input: string): CheckpointRecord {
  const address = parseAddress(input);
  if (address.kind === 'latest') {
    if (records.length === 0) throw new CkptError('nothing', 'no checkpoints yet (take one with: git ckpt snapshot)');
    const record = records[records.length - 1 - address.back];
    if (!record) {
      throw new CkptError('bad-address', `${input.trim()}: only ${records.length} checkpoint${records.length === 1 ? '' : 's'} exist`);
    }
    return record;
  }
  const matches = records.filter((r) => r.id.startsWith(address.prefix));
  if (matches.length === 0) throw new CkptError('bad-address', `unknown checkpoint: ${address.prefix}`);
  if (matches.length > 1) throw new CkptError('bad-address', `checkpoint ${address.prefix} is ambiguous (${matches.length} matches)`);
  return matches[0]!;
}
