/**
 * Pure planning for a snapshot: given what the stat pass reported and the facts
 * about each candidate path, decide what to stage, what to drop from the shadow
 * index, and what to skip (with a reason). No I/O here.
 */
import type { Ignore } from 'ignore';
import type { SkippedPath } from '../model/ledger.js';
import { ancestorsOf, isUtf8Path } from '../model/paths.js';
import type { Settings } from '../store/settings.js';

export interface ScanResult {
  modified: string[];
  deleted: string[];
  /** Untracked files, and embedded repositories as `dir/`. */
  untracked: string[];
  /** Untracked directories holding no tracked file (directory mode only), as `dir/`. */
  newDirs: string[];
  /** Directories with tracked files that are repositories of their own now, with those files. */
  nestedRepos?: { root: string; tracked: string[] }[];
  /** What git said it could not read (a folder past PATH_MAX, an unreadable one). */
  unreadable?: SkippedPath[];
}

/** Pure: parse `git ls-files -z -t -m -d -o [--directory]` output. */
export function parseScan(entries: Iterable<string>): ScanResult {
  const scan = scanCollector();
  for (const entry of entries) scan.add(entry);
  return scan.result();
}

/** Pure: parseScan one entry at a time, for a listing streamed from git. */
export function scanCollector(): { add(entry: string): void; result(): ScanResult } {
  const modified = new Set<string>();
  const deleted = new Set<string>();
  const untracked: string[] = [];
  const newDirs: string[] = [];
  return {
    add(entry) {
      if (entry.length < 3 || entry[1] !== ' ') return;
      const tag = entry[0];
      const p = entry.slice(2);
      if (tag === 'C') modified.add(p);
      else if (tag === 'R') deleted.add(p);
      else if (tag === '?') (p.endsWith('/') ? newDirs : untracked).push(p);
    },
    result() {
      for (const p of deleted) modified.delete(p);
      return { modified: [...modified], deleted: [...deleted], untracked, newDirs, nestedRepos: [] };
    },
  };
}

export interface PathFacts {
  /**
   * 'beyond-symlink': an ancestor directory was replaced by a symlink (git refuses to stage through it).
   * 'too-long': the path is past PATH_MAX, so it cannot be read.
   * 'repo': a directory holding a `.git` of its own (a nested repository: git records its HEAD, a gitlink).
   */
  kind: 'file' | 'symlink' | 'dir' | 'repo' | 'other' | 'missing' | 'beyond-symlink' | 'too-long';
  size: number;
}

export interface CapturePlan {
  /** Paths for `git add -A` (files, symlinks, deletions, embedded repos as `dir/`). */
  stage: string[];
  /** Paths to drop from the shadow index without touching the disk. */
  forceRemove: string[];
  skipped: SkippedPath[];
  /** Bytes of the files staged, by path (for incremental byte accounting). */
  sizes: Map<string, number>;
}

/** What planCapture needs of a matcher. */
export type SecretMatcher = Pick<Ignore, 'ignores'>;

/** Matches nothing: the matcher of a snapshot with no changed path (it never loads `ignore`). */
export const NO_SECRETS: SecretMatcher = { ignores: () => false };

/**
 * gitignore-style matching of secret patterns; `ignore` is loaded only when a
 * snapshot has changed paths. Secret patterns ignore case (the safe side:
 * `.ENV` is a secret too); forgotten patterns match case as git does, as
 * `forget --path` removed them.
 */
export async function secretMatcher(patterns: string[], matchCase = false): Promise<SecretMatcher> {
  const { default: ignore } = await import('ignore');
  const fresh = () => ignore({ ignorecase: !matchCase }).add(patterns);
  // `ignore` caches an answer for every path and folder it is asked about, with no way to drop
  // them: over a first snapshot of a million files that cache outgrew the path list itself.
  let matcher = fresh();
  let asked = 0;
  return {
    ignores(p: string) {
      if (++asked % MATCHER_CACHE_PATHS === 0) matcher = fresh();
      return matcher.ignores(p);
    },
  };
}

/** Paths a matcher answers before it is replaced by a fresh one (its cache with it). */
const MATCHER_CACHE_PATHS = 32_768;

export interface NewDirExpansion {
  /** Files found in each new directory; absent when the directory was over the limit. */
  files: Map<string, string[]>;
  /** Directories over the limit, with the count seen when counting stopped. */
  overLimit: Map<string, number>;
  /** What git said it could not read while listing them. */
  unreadable?: SkippedPath[];
}

/**
 * Pure: decide the capture. `facts` must hold every modified and untracked path
 * (including those of expanded new directories).
 */
export function planCapture(
  scan: ScanResult,
  expansion: NewDirExpansion,
  facts: Map<string, PathFacts>,
  settings: Settings,
  secrets: SecretMatcher,
  forgotten: SecretMatcher = NO_SECRETS,
): CapturePlan {
  const stage: string[] = [];
  const forceRemove: string[] = [];
  const skipped: SkippedPath[] = [];
  const sizes = new Map<string, number>();

  for (const [dir, count] of expansion.overLimit) {
    skipped.push({ path: dir, reason: 'new-directory-too-many-files', size: count });
  }
  skipped.push(...(scan.unreadable ?? []), ...(expansion.unreadable ?? []));
  // A new folder whose own name is not UTF-8 is not listed (planFromDisk leaves it out of the expansion).
  for (const dir of scan.newDirs) if (!isUtf8Path(dir)) skipped.push({ path: dir, reason: 'name-not-utf8' });

  // A captured directory that became a repository of its own: its files leave the index, and
  // the repository is recorded as git records one (a gitlink), never entered again.
  const inNested = new Set<string>();
  for (const { root, tracked } of scan.nestedRepos ?? []) {
    stage.push(`${root}/`);
    for (const p of tracked) {
      forceRemove.push(p);
      inNested.add(p);
    }
  }
  const consider = (p: string, tracked: boolean) => {
    if (inNested.has(p)) return;
    if (p.endsWith('/')) {
      stage.push(p); // an embedded repository: git records its HEAD as a gitlink
      return;
    }
    if (!isUtf8Path(p)) {
      skipped.push({ path: p, reason: 'name-not-utf8' });
      if (tracked) forceRemove.push(p);
      return;
    }
    // What `git ckpt forget --path` removed from every checkpoint is never captured again.
    if (forgotten.ignores(p) || secrets.ignores(p)) {
      skipped.push({ path: p, reason: forgotten.ignores(p) ? 'forgotten' : 'secret' });
      if (tracked) forceRemove.push(p);
      return;
    }
    const fact = facts.get(p) ?? { kind: 'missing', size: 0 };
    switch (fact.kind) {
      case 'missing':
        if (tracked) stage.push(p); // deleted since the scan: stage the removal
        break;
      case 'dir':
        if (tracked) forceRemove.push(p); // a file became a directory; its files come as untracked
        break;
      case 'repo':
        // A nested repository with a new commit (or a file replaced by one): `git add` records its HEAD.
        // Dropped instead, the checkpoint would say it was deleted, and the next one that it was added.
        if (tracked) stage.push(p);
        break;
      case 'other':
        if (tracked) forceRemove.push(p); // fifo, socket: git cannot store it
        break;
      case 'beyond-symlink':
        if (tracked) forceRemove.push(p); // gone from here; the link itself comes as untracked
        break;
      case 'too-long':
        skipped.push({ path: p, reason: 'path-too-long' });
        if (tracked) forceRemove.push(p);
        break;
      case 'file':
      case 'symlink':
        if (fact.kind === 'file' && fact.size > settings.maxFileBytes) {
          skipped.push({ path: p, reason: 'too-large', size: fact.size });
          if (tracked) forceRemove.push(p);
        } else {
          stage.push(p);
          sizes.set(p, fact.size);
        }
        break;
    }
  };
  // Modified, then untracked, then the files of new directories: one pass, no list of them all.
  for (const p of scan.modified) consider(p, true);
  for (const p of scan.untracked) consider(p, false);
  for (const files of expansion.files.values()) for (const p of files) consider(p, false);
  for (const p of scan.deleted) {
    if (inNested.has(p)) continue;
    const kind = facts.get(p)?.kind;
    if (kind === 'dir' || kind === 'beyond-symlink' || !isUtf8Path(p)) forceRemove.push(p);
    else stage.push(p);
  }
  return { stage, forceRemove, skipped, sizes };
}

/** Pure: the end index of the next batch of units from `from`, bounded in files and bytes (at least one unit). */
export function takeBatch(units: readonly StageUnit[], from: number, maxCount: number, maxBytes: number): number {
  let end = from;
  let count = 0;
  let bytes = 0;
  while (end < units.length) {
    const unit = units[end]!;
    if (end > from && (count + unit.count > maxCount || bytes + unit.bytes > maxBytes)) break;
    count += unit.count;
    bytes += unit.bytes;
    end++;
  }
  return end;
}

export interface BatchLimits {
  maxCount: number;
  maxBytes: number;
}

/**
 * Pure: how big the next hashing batch may be. Without a budget, batches are
 * large (fewer packs). With one, a batch aims at a third of the remaining time
 * at the throughput measured so far, so a kill loses little and every attempt
 * makes progress.
 */
export function batchLimits(
  remainingMs: number | undefined,
  measured: { files: number; bytes: number; ms: number } | undefined,
): BatchLimits {
  const LARGE: BatchLimits = { maxCount: 20_000, maxBytes: 1024 * 1024 * 1024 };
  if (remainingMs === undefined) return LARGE;
  if (!measured || measured.ms <= 0 || measured.files === 0) return { maxCount: 256, maxBytes: 8 * 1024 * 1024 };
  const targetMs = Math.max(50, remainingMs / 3);
  return {
    maxCount: Math.max(16, Math.min(LARGE.maxCount, Math.floor((measured.files / measured.ms) * targetMs))),
    maxBytes: Math.max(1024 * 1024, Math.min(LARGE.maxBytes, Math.floor((Math.max(measured.bytes, 1) / measured.ms) * targetMs))),
  };
}

/** One pathspec for `git add`: a file, or a directory (`dir/`) standing for `count` staged files. */
export interface StageUnit {
  pathspec: string;
  count: number;
  bytes: number;
  isDir: boolean;
}

/** What a directory holds of the staged paths, and whether it may stand for them. */
interface DirTally {
  count: number;
  bytes: number;
  /** Something at or below it must stay out, or it is staged as itself (a gitlink, a file turned folder). */
  blocked: boolean;
}

/**
 * Pure: fold staged paths into directory pathspecs where that is exact, because
 * git matches a pathspec list linearly against the whole index: 50,000 file
 * pathspecs cost minutes where 500 directories cost milliseconds. A directory
 * stands for its files only when nothing below it must stay out (`blocked`:
 * skipped or force-removed paths), and when it holds at most `maxUnit` files,
 * so that batches stay small enough for the time budget. Only directories are
 * tallied, never a node per file: a first snapshot of a million files holds
 * its path list and a tally per folder, nothing more.
 */
export function stageUnits(stage: readonly string[], sizes: Map<string, number>, blocked: Iterable<string>, maxUnit: number): StageUnit[] {
  const dirs = new Map<string, DirTally>();
  const tally = (dir: string): DirTally => {
    let t = dirs.get(dir);
    if (!t) {
      t = { count: 0, bytes: 0, blocked: false };
      dirs.set(dir, t);
    }
    return t;
  };
  const bare = (p: string) => (p.endsWith('/') ? p.slice(0, -1) : p);
  if (maxUnit > 0) {
    for (const p of stage) {
      const size = sizes.get(p) ?? 0;
      for (const dir of ancestorsOf(bare(p))) {
        const t = tally(dir);
        t.count++;
        t.bytes += size;
      }
    }
    for (const p of blocked) for (const dir of [...ancestorsOf(bare(p)), bare(p)]) tally(dir).blocked = true;
    // A path staged as itself that also has staged paths below (a gitlink, a file that is a folder now).
    for (const p of stage) {
      const t = dirs.get(bare(p));
      if (t) t.blocked = true;
    }
  }
  const foldable = (dir: string) => {
    const t = dirs.get(dir);
    return t !== undefined && !t.blocked && t.count > 0 && t.count <= maxUnit;
  };
  const units: StageUnit[] = [];
  const folded = new Set<string>();
  for (const p of [...stage].sort(byComponents)) {
    const outer = maxUnit > 0 ? ancestorsOf(bare(p)).find(foldable) : undefined;
    if (outer === undefined) units.push({ pathspec: p, count: 1, bytes: sizes.get(p) ?? 0, isDir: false });
    else if (!folded.has(outer)) {
      folded.add(outer);
      const t = dirs.get(outer)!;
      units.push({ pathspec: `${outer}/`, count: t.count, bytes: t.bytes, isDir: true });
    }
  }
  return units;
}

/** Pure: path order with `/` before every other character, so a folder's paths stay together. */
function byComponents(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return (x === 47 ? -1 : x) - (y === 47 ? -1 : y);
  }
  return a.length - b.length;
}
