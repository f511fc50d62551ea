/**
 * What a store knows of sharing (`<store>/share.json`): where checkpoints go, the ids that name this
 * workspace and this store on a remote, the exports made (source id → export commit, per ref), and the
 * tips each remote and the last bundle were given. Validated whole on read like the journal: a tampered
 * file is refused with one line, its ids never reach git's argv. Checkpoints fetched from other stores
 * are in `<store>/fetched.jsonl`, records like the ledger's with their origin.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { CkptError } from '../model/errors.js';
import { appendRecord, isRemoteLabel, isShareId, readLedger, type CheckpointRecord } from '../model/ledger.js';
import { isObjectId } from '../model/oid.js';
import { foreignSession, importedRecordProblem, parseShareRef } from '../model/share-plan.js';
import { urlProblem } from '../git/runner.js';
import { writeFileAtomic, type StorePaths } from './store.js';

interface ShareRemote {
  url: string;
  /** The user's origin has the same URL: `share init --yes` was needed, and said what that means. */
  sameAsOrigin?: boolean;
}

export interface ExportChain {
  session: string | null;
  tip: string;
  /** The chain's first commit: the workspace before the session. */
  base?: string;
  /**
   * The base's parent: a commit of the user's own repository the remote already had, so a push sends
   * only what the session changed. It lives in their repository, never in the store: walks stop there.
   */
  root?: string;
  /** Checkpoint id → its export commit. */
  sources: Record<string, string>;
}

export interface ShareState {
  v: 1;
  /** The shared workspace's id on the remote (other machines' stores of the same project join it) and this store's writer id. */
  ws: string;
  writer: string;
  /** The host that minted the writer id: on another host, this store is a copy and needs a writer of its own. */
  host: string;
  remotes: Record<string, ShareRemote>;
  /** The remote `push` and `fetch` use when none is named ('' when none was: bundles only). */
  default: string;
  exports: Record<string, ExportChain>;
  /** Remote → export ref → the tip it was last given. */
  pushed: Record<string, Record<string, string>>;
  /** Export ref → the tip the last bundle held (an incremental bundle starts there). */
  bundled: Record<string, string>;
  /** Blob id → the credential rule it matched ('' for none): each blob is read for secrets once per rule table. */
  scanned: Record<string, string>;
  /** The rule table the scan cache was made with: a new table reads every blob again. */
  scannedWith?: string;
  /** Export refs `unpush` deleted: pushed again only when their session is named. */
  unpushed?: Record<string, true>;
  /**
   * Export refs whose chain this store dropped while remotes still held it: `forget` took what it
   * carried, or its commits were lost. The chain made again does not continue theirs; a push there is
   * refused with the step that removes it (`unpush`), never forced.
   */
  dropped?: Record<string, DroppedChain>;
  /** The bundle files `bundle create` wrote (absolute paths), with the export refs each holds. */
  bundleFiles?: Record<string, string[]>;
}

interface DroppedChain {
  session: string | null;
  /** The remotes (their labels here) that were last given the chain. */
  remotes: string[];
}

export function newShareId(): string {
  return randomBytes(6).toString('hex');
}

const refMapProblem = (map: unknown, check: (k: string, v: unknown) => boolean): boolean =>
  typeof map !== 'object' || map === null || Object.entries(map).some(([k, v]) => !check(k, v));

/** Pure: what makes a read share.json unusable, or undefined. */
function shareStateProblem(s: Partial<ShareState>): string | undefined {
  if (typeof s !== 'object' || s === null || s.v !== 1) return 'not a share state of this version';
  if (!isShareId(s.ws) || !isShareId(s.writer)) return 'bad workspace or writer id';
  if (typeof s.host !== 'string') return 'bad host';
  if (
    refMapProblem(
      s.remotes,
      (k, v) => isRemoteLabel(k) && typeof (v as ShareRemote)?.url === 'string' && !urlProblem((v as ShareRemote).url),
    )
  )
    return 'bad remote';
  // No default: a store that made bundles and never named a remote.
  if (s.default !== '' && (!isRemoteLabel(s.default) || !s.remotes?.[s.default])) return 'bad default remote';
  const chainOk = (k: string, v: unknown) => {
    const c = v as ExportChain;
    return (
      parseShareRef(k) !== undefined &&
      typeof c === 'object' &&
      c !== null &&
      isObjectId(c.tip) &&
      (c.base === undefined || isObjectId(c.base)) &&
      (c.root === undefined || isObjectId(c.root)) &&
      (c.session === null || typeof c.session === 'string') &&
      !refMapProblem(c.sources, (src, exp) => isObjectId(src) && isObjectId(exp))
    );
  };
  if (refMapProblem(s.exports, chainOk)) return 'bad export';
  const tips = (m: unknown) => !refMapProblem(m, (ref, tip) => parseShareRef(ref) !== undefined && isObjectId(tip));
  if (refMapProblem(s.pushed, (k, v) => isRemoteLabel(k) && tips(v))) return 'bad pushed tips';
  if (!tips(s.bundled)) return 'bad bundled tips';
  if (refMapProblem(s.scanned, (k, v) => isObjectId(k) && typeof v === 'string')) return 'bad scan cache';
  if (s.scannedWith !== undefined && typeof s.scannedWith !== 'string') return 'bad scan cache';
  if (s.unpushed !== undefined && refMapProblem(s.unpushed, (k, v) => parseShareRef(k) !== undefined && v === true))
    return 'bad unpushed refs';
  const droppedOk = (k: string, v: unknown) => {
    const d = v as DroppedChain;
    return (
      parseShareRef(k) !== undefined &&
      typeof d === 'object' &&
      d !== null &&
      (d.session === null || typeof d.session === 'string') &&
      Array.isArray(d.remotes) &&
      d.remotes.every(isRemoteLabel)
    );
  };
  if (s.dropped !== undefined && refMapProblem(s.dropped, droppedOk)) return 'bad dropped chains';
  const bundleOk = (k: string, v: unknown) =>
    k.startsWith('/') && Array.isArray(v) && v.every((ref) => typeof ref === 'string' && parseShareRef(ref) !== undefined);
  if (s.bundleFiles !== undefined && refMapProblem(s.bundleFiles, bundleOk)) return 'bad bundle files';
  return undefined;
}

/** The store's share state, or undefined before `share init`; a tampered file is refused. */
export function readShareState(paths: StorePaths): ShareState | undefined {
  if (!existsSync(paths.share)) return undefined;
  let parsed: Partial<ShareState>;
  try {
    parsed = JSON.parse(readFileSync(paths.share, 'utf8')) as Partial<ShareState>;
  } catch {
    throw new CkptError('store', `${paths.share} is not JSON: fix or remove it, then run git ckpt share init again`);
  }
  const problem = shareStateProblem(parsed);
  if (problem)
    throw new CkptError('store', `${paths.share} cannot be used (${problem}): fix or remove it, then run git ckpt share init again`);
  return parsed as ShareState;
}

/** The state, or a one-line error naming the command that makes it. */
export function requireShareState(paths: StorePaths | undefined): ShareState {
  const state = paths && readShareState(paths);
  if (!state)
    throw new CkptError('nothing', 'sharing is off for this workspace: git ckpt share init --remote <name|url> says where checkpoints go');
  return state;
}

export function writeShareState(paths: StorePaths, state: ShareState): void {
  const problem = shareStateProblem(state);
  if (problem) throw new CkptError('internal', `refusing to write a share state that would not read back (${problem})`);
  writeFileAtomic(paths.share, `${JSON.stringify(state, null, 1)}\n`);
}

/**
 * A state for a store that never shared (with a remote, or none: bundles only), or the same ids kept;
 * a store copied to another host mints a writer of its own.
 */
export function initialState(
  previous: ShareState | undefined,
  ws: string,
  remote?: { name: string; url: string; sameAsOrigin: boolean },
): ShareState {
  const host = hostname();
  const sameStore = previous && previous.host === host;
  const base: ShareState = sameStore
    ? previous
    : {
        v: 1,
        ws,
        writer: newShareId(),
        host,
        remotes: {},
        default: '',
        exports: {},
        pushed: {},
        bundled: {},
        scanned: previous?.scanned ?? {},
      };
  // Exports of another workspace id are another chain: dropped with the id.
  const same = base.ws === ws;
  return {
    ...base,
    ws,
    exports: same ? base.exports : {},
    pushed: same ? base.pushed : {},
    bundled: same ? base.bundled : {},
    ...(remote
      ? {
          remotes: { ...base.remotes, [remote.name]: { url: remote.url, ...(remote.sameAsOrigin ? { sameAsOrigin: true } : {}) } },
          default: remote.name,
        }
      : {}),
  };
}

/**
 * Checkpoints fetched from other stores, oldest first, as every view reads them: each session named by
 * its origin (`<session>@<writer>`, see foreignSession), so another store's session never joins one of
 * this store's; a record whose ids have no id's shape (an older git-ckpt imported it unchecked) is left
 * out with a warning. Unreadable lines are warnings like the ledger's.
 */
export function readFetched(paths: StorePaths): { records: CheckpointRecord[]; warnings: string[] } {
  const read = readLedger(paths.fetched);
  const warnings = read.warnings.map((w) => w.replace(/^ledger/, 'fetched checkpoints'));
  const records: CheckpointRecord[] = [];
  for (const r of read.records) {
    if (!r.origin) continue;
    const problem = importedRecordProblem(r);
    if (problem) {
      warnings.push(`fetched checkpoint ${r.id.slice(0, 8)} left out: ${problem}`);
      continue;
    }
    records.push(asForeign(r));
  }
  return { records, warnings };
}

/** Pure: a fetched record with its sessions named by its origin. */
function asForeign(r: CheckpointRecord): CheckpointRecord {
  const writer = r.origin!.writer;
  return {
    ...r,
    session: r.session === null ? null : foreignSession(r.session, writer),
    ...(r.fork ? { fork: { ...r.fork, session: foreignSession(r.fork.session, writer) } } : {}),
  };
}

export function appendFetched(paths: StorePaths, records: readonly CheckpointRecord[]): void {
  for (const r of records) appendRecord(paths.fetched, r);
}
