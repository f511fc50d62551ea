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

export interface ChangeLog {
  /** Paths changed since the last capture, each with the sequence number of its latest event. */
  paths: Map<string, number>;
  /** The reason the set may be incomplete, or null when it is complete. */
  unknown: string | null;
  /** The sequence number at which the log last became unknown. */
  unknownAt: number;
  seq: number;
}

/** What one capture scans: every path, or only these. */
export type ChangeView = { full: true; reason: string; upTo: number } | { full: false; paths: string[]; upTo: number };

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

/**
 * The path a change stands for in a scan, or what it means otherwise:
 * - `.git/info/exclude` changes the ignore rules: unknown;
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
    log.paths.set(meaning.path, log.seq);
  }
  if (log.paths.size > maxPaths) markUnknown(log, `more than ${maxPaths} paths changed since the last capture`);
  return recorded;
}

/** What the next capture scans. */
export function viewOf(log: ChangeLog): ChangeView {
  if (log.unknown !== null) return { full: true, reason: log.unknown, upTo: log.seq };
  const paths = [...log.paths.keys()].sort();
  let bytes = 0;
  for (const p of paths) bytes += Buffer.byteLength(p) + 1;
  if (bytes > MAX_TRACKED_BYTES)
    return { full: true, reason: `the changed paths take more than ${MAX_TRACKED_BYTES} bytes`, upTo: log.seq };
  return { full: false, paths: minimalCover(paths), upTo: log.seq };
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
 * After a capture that used `view`: what it saw is settled, except the paths
 * it could not take (skipped, held back), which every later capture looks at
 * again as the full scan would. Changes recorded while it ran stay.
 */
export function settle(log: ChangeLog, view: ChangeView, keep: readonly string[]): void {
  const kept = new Set(keep);
  if (view.full && log.unknown !== null && log.unknownAt <= view.upTo) log.unknown = null;
  for (const [p, seq] of log.paths) if (seq <= view.upTo && !kept.has(p)) log.paths.delete(p);
  for (const p of keep) if (!log.paths.has(p)) log.paths.set(p, view.upTo);
}

/** Whether a path is one of `paths` or below one of them. */
export function coveredBy(p: string, paths: ReadonlySet<string>): boolean {
  return paths.has(p) || ancestorsOf(p).some((dir) => paths.has(dir));
}
