/**
 * Pure planning for a snapshot: given what the stat pass reported and the facts
 * about each candidate path, decide what to stage, what to drop from the shadow
 * index, and what to skip (with a reason). No I/O here.
 */
import type { Ignore } from 'ignore';
import type { SkippedPath } from '../model/ledger.js';
import { isUtf8Path } from '../model/paths.js';
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
export function parseScan(entries: string[]): ScanResult {
  const modified = new Set<string>();
  const deleted = new Set<string>();
  const untracked: string[] = [];
  const newDirs: string[] = [];
  for (const entry of entries) {
    if (entry.length < 3 || entry[1] !== ' ') continue;
    const tag = entry[0];
    const p = entry.slice(2);
    if (tag === 'C') modified.add(p);
    else if (tag === 'R') deleted.add(p);
    else if (tag === '?') (p.endsWith('/') ? newDirs : untracked).push(p);
  }
  for (const p of deleted) modified.delete(p);
  return { modified: [...modified], deleted: [...deleted], untracked, newDirs, nestedRepos: [] };
}

export interface PathFacts {
  /**
   * 'beyond-symlink': an ancestor directory was replaced by a symlink (git refuses to stage through it).
   * 'too-long': the path is past PATH_MAX, so it cannot be read.
   */
  kind: 'file' | 'symlink' | 'dir' | 'other' | 'missing' | 'beyond-symlink' | 'too-long';
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
  return ignore({ ignorecase: !matchCase }).add(patterns);
}

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
  const candidates: Array<{ path: string; tracked: boolean }> = [
    ...scan.modified.map((p) => ({ path: p, tracked: true })),
    ...scan.untracked.map((p) => ({ path: p, tracked: false })),
  ];
  for (const files of expansion.files.values()) {
    for (const p of files) candidates.push({ path: p, tracked: false });
  }

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
  for (const { path: p, tracked } of candidates) {
    if (inNested.has(p)) continue;
    if (p.endsWith('/')) {
      stage.push(p); // an embedded repository: git records its HEAD as a gitlink
      continue;
    }
    if (!isUtf8Path(p)) {
      skipped.push({ path: p, reason: 'name-not-utf8' });
      if (tracked) forceRemove.push(p);
      continue;
    }
    // What `git ckpt forget --path` removed from every checkpoint is never captured again.
    if (forgotten.ignores(p) || secrets.ignores(p)) {
      skipped.push({ path: p, reason: forgotten.ignores(p) ? 'forgotten' : 'secret' });
      if (tracked) forceRemove.push(p);
      continue;
    }
    const fact = facts.get(p) ?? { kind: 'missing', size: 0 };
    switch (fact.kind) {
      case 'missing':
        if (tracked) stage.push(p); // deleted since the scan: stage the removal
        break;
      case 'dir':
        if (tracked) forceRemove.push(p); // a file became a directory; its files come as untracked
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
  }
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

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Staged file at exactly this path. */
  staged: boolean;
  count: number;
  bytes: number;
  blocked: boolean;
  /** Staged as an embedded repository (`dir/`). */
  gitlink: boolean;
}

const newNode = (): TrieNode => ({ children: new Map(), staged: false, count: 0, bytes: 0, blocked: false, gitlink: false });

/**
 * Pure: fold staged paths into directory pathspecs where that is exact, because
 * git matches a pathspec list linearly against the whole index: 50,000 file
 * pathspecs cost minutes where 500 directories cost milliseconds. A directory
 * stands for its files only when nothing below it must stay out (`blocked`:
 * skipped or force-removed paths), and when it holds at most `maxUnit` files,
 * so that batches stay small enough for the time budget.
 */
export function stageUnits(stage: readonly string[], sizes: Map<string, number>, blocked: Iterable<string>, maxUnit: number): StageUnit[] {
  const root = newNode();
  /** The nodes from the root to `p`, created as needed. */
  const walk = (p: string): TrieNode[] => {
    const chain = [root];
    let node = root;
    for (const part of p.replace(/\/$/, '').split('/')) {
      let next = node.children.get(part);
      if (!next) {
        next = newNode();
        node.children.set(part, next);
      }
      node = next;
      chain.push(node);
    }
    return chain;
  };
  for (const p of blocked) for (const node of walk(p)) node.blocked = true;
  for (const p of stage) {
    const chain = walk(p);
    const size = sizes.get(p) ?? 0;
    for (const node of chain) {
      node.count++;
      node.bytes += size;
    }
    const leaf = chain[chain.length - 1]!;
    leaf.staged = true;
    // An embedded repository (`dir/`) must stay as named: it is a gitlink, not a folder of files.
    if (p.endsWith('/')) leaf.blocked = leaf.gitlink = true;
  }
  const units: StageUnit[] = [];
  const emit = (node: TrieNode, prefix: string, isRoot: boolean) => {
    if (!isRoot && node.children.size > 0 && !node.blocked && !node.staged && node.count <= maxUnit) {
      units.push({ pathspec: `${prefix}/`, count: node.count, bytes: node.bytes, isDir: true });
      return;
    }
    if (node.staged) units.push({ pathspec: node.gitlink ? `${prefix}/` : prefix, count: 1, bytes: sizes.get(prefix) ?? 0, isDir: false });
    for (const [name, child] of [...node.children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (child.count > 0) emit(child, isRoot ? name : `${prefix}/${name}`, false);
    }
  };
  emit(root, '', true);
  return units;
}
