/**
 * What a watcher saw change in one workspace since the last capture, as git's
 * fsmonitor and Watchman answer it: a list of paths, or "unknown" (a fresh
 * instance: anything may have changed, so the next capture scans everything).
 * The fast path only narrows the full scan to these paths; it never guesses.
 */
import { ancestorsOf } from './paths.js';

/** One watcher event, with the path relative to the workspace root ('/'-separated). */
export interface WatchedChange {
  path: string;
  type: 'create' | 'update' | 'delete';
}

/** The sequence numbers of a path's first and latest events since the capture that last took it. */
interface PathSeq {
  first: number;
  last: number;
}

export interface ChangeLog {
  /** Paths changed since the last capture, with the sequence numbers of their events. */
  paths: Map<string, PathSeq>;
  /** The reason the set may be incomplete, or null when it is complete. */
  unknown: string | null;
  /** The sequence number at which the log last became unknown. */
  unknownAt: number;
  seq: number;
}

/**
 * What one capture scans: every path, or only these. `upTo` is the sequence
 * number the capture stands for (a post's: its event's arrival); `later` says
 * the capture may also take changes recorded after it, which it cannot tell
 * apart (a path changed before and after, a file made after inside a folder
 * it scans, a full scan).
 */
export type ChangeView =
  | { full: true; reason: string; upTo: number; later: boolean }
  | { full: false; paths: string[]; upTo: number; later: boolean };

/**
 * Past this many changed paths a capture scans everything: ls-files matches
 * pathspecs one by one, the paths travel on its command line (macOS allows
 * 1 MiB of arguments), and a burst this large is also what a kernel queue
 * overflow that the watcher does not report looks like.
 */
const MAX_TRACKED_PATHS = 2000;
/** The same limit in bytes of paths. */
const MAX_TRACKED_BYTES = 256 * 1024;

/** Files whose change alters what is ignored everywhere in the workspace. */
const ROOT_RULE_FILES = new Set(['.ckptignore', '.gitignore']);

export function newChangeLog(reason: string): ChangeLog {
  return { paths: new Map(), unknown: reason, unknownAt: 0, seq: 0 };
}

export function markUnknown(log: ChangeLog, reason: string): void {
  log.seq += 1;
  log.unknown = reason;
  log.unknownAt = log.seq;
  log.paths.clear();
}

/** In a submodule's repository under the workspace's `.git/modules/`: what moves its commit (the gitlink's). */
const REF_NAMES = new Set(['HEAD', 'packed-refs']);

/**
 * The path a change stands for in a scan, or what it means otherwise:
 * - `.git/info/exclude` changes the ignore rules: unknown;
 * - a submodule's HEAD or refs under `.git/modules/` move a gitlink the event cannot name: unknown;
 * - anything else in the workspace's own `.git` is not workspace content;
 * - inside a nested repository, the folder that holds its `.git` (captured as a gitlink);
 * - a `.gitignore` changes what is ignored below its folder: that folder is scanned (the root's: everything);
 * - a name the watcher could not decode (U+FFFD) is scanned through its folder, where git lists its real bytes.
 * @public (tests use it)
 */
export function pathForScan(rel: string): { path: string } | { unknown: string } | { ignore: true } {
  if (rel === '' || rel === '.') return { unknown: 'the workspace folder itself was moved or deleted' };
  const parts = rel.split('/');
  if (parts[0] === '.git') {
    if (rel === '.git/info/exclude') return { unknown: 'the ignore rules changed (.git/info/exclude)' };
    if (parts[1] === 'modules' && (REF_NAMES.has(parts.at(-1)!) || parts.includes('refs')))
      return { unknown: `a submodule's commit moved (${parts.slice(0, -1).join('/')})` };
    return { ignore: true };
  }
  const nested = parts.indexOf('.git');
  if (nested > 0) return { path: parts.slice(0, nested).join('/') };
  const name = parts.at(-1)!;
  if (ROOT_RULE_FILES.has(name)) {
    if (parts.length === 1) return { unknown: `the ignore rules changed (${name})` };
    return { path: parts.slice(0, -1).join('/') };
  }
  const undecodable = parts.findIndex((p) => p.includes('\uFFFD'));
  if (undecodable === 0) return { unknown: 'a name at the top of the workspace is not UTF-8' };
  if (undecodable > 0) return { path: parts.slice(0, undecodable).join('/') };
  return { path: rel };
}

/** Record a batch of changes (relative paths). Returns the paths recorded. */
export function recordChanges(log: ChangeLog, changes: readonly WatchedChange[], maxPaths = MAX_TRACKED_PATHS): number {
  let recorded = 0;
  for (const change of changes) {
    const meaning = pathForScan(change.path);
    if ('ignore' in meaning) continue;
    if ('unknown' in meaning) {
      markUnknown(log, meaning.unknown);
      continue;
    }
    // Kept while unknown too: a full capture running now settles only what it saw.
    log.seq += 1;
    recorded += 1;
    const seen = log.paths.get(meaning.path);
    if (seen) seen.last = log.seq;
    else log.paths.set(meaning.path, { first: log.seq, last: log.seq });
  }
  if (log.paths.size > maxPaths) markUnknown(log, `more than ${maxPaths} paths changed since the last capture`);
  return recorded;
}

/**
 * What the next capture scans, standing for the changes recorded up to
 * `upTo` (by default all of them): a path first changed after it is left for
 * the next capture.
 */
export function viewOf(log: ChangeLog, upTo = log.seq): ChangeView {
  const after = [...log.paths].filter(([, seq]) => seq.last > upTo);
  if (log.unknown !== null) return { full: true, reason: log.unknown, upTo, later: after.length > 0 || log.unknownAt > upTo };
  const paths = [...log.paths].filter(([, seq]) => seq.first <= upTo).map(([p]) => p);
  paths.sort();
  let bytes = 0;
  for (const p of paths) bytes += Buffer.byteLength(p) + 1;
  if (bytes > MAX_TRACKED_BYTES)
    return { full: true, reason: `the changed paths take more than ${MAX_TRACKED_BYTES} bytes`, upTo, later: after.length > 0 };
  const cover = minimalCover(paths);
  const scanned = new Set(cover);
  // Changed again after upTo, or made after it inside a folder this capture scans: it takes them too.
  const later = after.some(([p, seq]) => seq.first <= upTo || coveredBy(p, scanned));
  return { full: false, paths: cover, upTo, later };
}

/** Pure: sorted paths without those below another one of them (a folder's pathspec covers them). */
function minimalCover(sorted: string[]): string[] {
  const out: string[] = [];
  for (const p of sorted) {
    const last = out.at(-1);
    if (last !== undefined && p.startsWith(`${last}/`)) continue;
    out.push(p);
  }
  return out;
}

/**
 * Place the changes recorded between `upTo` (a cookie set) and `seen` (its
 * event come): the watcher batches what happens within a few milliseconds,
 * so they may have been made before or after the cookie. `when` says what is
 * known of a path: `before` (made only before it: taken now), `after` (made
 * after it: left for the next capture), `both` (either: taken now, and the
 * capture says it may hold later changes). Paths first recorded after `seen`
 * changed after the cookie.
 */
export function placeLate(log: ChangeLog, upTo: number, seen: number, when: (path: string) => 'before' | 'after' | 'both'): void {
  for (const [p, seq] of log.paths) {
    if (seq.last <= upTo || seq.first > seen) continue;
    const placed = when(p);
    if (placed === 'after') continue;
    seq.first = Math.min(seq.first, upTo);
    // Made only before the cookie, unless a later batch changed it again.
    if (placed === 'before' && seq.last <= seen) seq.last = upTo;
  }
}

/**
 * After a capture that used `view`: what it saw is settled, except the paths
 * it could not take (skipped, held back), which every later capture looks at
 * again as the full scan would. Changes recorded while it ran stay.
 */
export function settle(log: ChangeLog, view: ChangeView, keep: readonly string[]): void {
  const kept = new Set(keep);
  if (view.full && log.unknown !== null && log.unknownAt <= view.upTo) log.unknown = null;
  for (const [p, seq] of log.paths) {
    if (kept.has(p)) continue;
    if (seq.last <= view.upTo) log.paths.delete(p);
    // Changed again since upTo: what is left to take came after it.
    else seq.first = Math.max(seq.first, view.upTo + 1);
  }
  for (const p of keep) {
    const seq = log.paths.get(p);
    if (seq) seq.first = Math.min(seq.first, view.upTo);
    else log.paths.set(p, { first: view.upTo, last: view.upTo });
  }
}

/** Whether a path is one of `paths` or below one of them. */
export function coveredBy(p: string, paths: ReadonlySet<string>): boolean {
  return paths.has(p) || ancestorsOf(p).some((dir) => paths.has(dir));
}
