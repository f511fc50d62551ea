/**
 * Pure planning for a snapshot: given what the stat pass reported and the facts
 * about each candidate path, decide what to stage, what to drop from the shadow
 * index, and what to skip (with a reason). No I/O here.
 */
import ignore, { type Ignore } from 'ignore';
import type { SkippedPath } from './ledger.js';
import type { Settings } from './settings.js';

export type ScanTag = 'modified' | 'deleted' | 'untracked';

export interface ScanResult {
  modified: string[];
  deleted: string[];
  /** Untracked files, and embedded repositories as `dir/`. */
  untracked: string[];
  /** Untracked directories holding no tracked file (directory mode only), as `dir/`. */
  newDirs: string[];
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
  return { modified: [...modified], deleted: [...deleted], untracked, newDirs };
}

export interface PathFacts {
  kind: 'file' | 'symlink' | 'dir' | 'other' | 'missing';
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

export function secretMatcher(patterns: string[]): Ignore {
  return ignore().add(patterns);
}

export interface NewDirExpansion {
  /** Files found in each new directory; absent when the directory was over the limit. */
  files: Map<string, string[]>;
  /** Directories over the limit, with the count seen when counting stopped. */
  overLimit: Map<string, number>;
}

/**
 * Pure: decide the capture. `facts` must hold every modified and untracked path
 * (including those of expanded new directories).
 */
export function planCapture(scan: ScanResult, expansion: NewDirExpansion, facts: Map<string, PathFacts>, settings: Settings, secrets: Ignore): CapturePlan {
  const stage: string[] = [];
  const forceRemove: string[] = [];
  const skipped: SkippedPath[] = [];
  const sizes = new Map<string, number>();

  for (const [dir, count] of expansion.overLimit) {
    skipped.push({ path: dir, reason: 'new-directory-too-many-files', size: count });
  }
  const candidates: Array<{ path: string; tracked: boolean }> = [
    ...scan.modified.map((p) => ({ path: p, tracked: true })),
    ...scan.untracked.map((p) => ({ path: p, tracked: false })),
  ];
  for (const files of expansion.files.values()) {
    for (const p of files) candidates.push({ path: p, tracked: false });
  }

  for (const { path: p, tracked } of candidates) {
    if (p.endsWith('/')) {
      stage.push(p); // an embedded repository: git records its HEAD as a gitlink
      continue;
    }
    if (secrets.ignores(p)) {
      skipped.push({ path: p, reason: 'secret' });
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
    if (facts.get(p)?.kind === 'dir') forceRemove.push(p);
    else stage.push(p);
  }
  return { stage, forceRemove, skipped, sizes };
}

/** Pure: split paths into batches bounded in count and bytes, so that progress survives a kill. */
export function batchPaths(paths: string[], sizes: Map<string, number>, maxCount: number, maxBytes: number): string[][] {
  const batches: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const p of paths) {
    const size = sizes.get(p) ?? 0;
    if (current.length > 0 && (current.length >= maxCount || bytes + size > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(p);
    bytes += size;
  }
  if (current.length) batches.push(current);
  return batches;
}
