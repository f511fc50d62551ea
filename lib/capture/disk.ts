/**
 * The workspace on disk as restore sees it: what kind each path is (never
 * following a symlink), and what a file or symlink would be as a tree entry,
 * hashed here without writing an object.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, lstatSync, openSync, readdirSync, readlinkSync, readSync, type Stats } from 'node:fs';
import path from 'node:path';
import { ancestorsOf, unsafePathReason } from '../model/paths.js';
import { GITLINK, SYMLINK, type DiskFact, type DiskKind, type TreeEntry, type Want } from '../model/tree.js';

/** Pure: the kind of an lstat result; the one classifier capture and restore share. */
export function diskKind(st: Stats): Exclude<DiskKind, 'missing'> {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  return 'other';
}

/** git's blob id of some bytes (SHA-1: the shadow repository's format). */
function blobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Read through a buffer of this size: an uncaptured file is often one too large to hold in memory. */
const HASH_CHUNK = 1 << 20;

/** git's blob id of a file, read a chunk at a time, so memory stays bounded whatever its size. */
function fileBlobId(full: string, size: number): string {
  const hash = createHash('sha1').update(`blob ${size}\0`);
  const fd = openSync(full, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    const chunk = Buffer.allocUnsafe(Math.min(HASH_CHUNK, Math.max(1, size)));
    let total = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
      total += n;
    }
    // Changed while read: no id, so it never counts as equal.
    if (total !== size) throw new Error('file changed while hashed');
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * What a file or symlink on disk is as a tree entry (mode and blob id), hashed
 * here without writing any object; undefined for anything else, or when it
 * cannot be read (so it never counts as equal).
 */
export function diskEntry(full: string, st: Stats): TreeEntry | undefined {
  try {
    if (st.isSymbolicLink()) return { mode: SYMLINK, oid: blobId(readlinkSync(full, { encoding: 'buffer' })) };
    if (st.isFile()) return { mode: (st.mode & 0o100) !== 0 ? '100755' : '100644', oid: fileBlobId(full, st.size) };
  } catch {
    /* unreadable */
  }
  return undefined;
}

export function tryLstat(full: string): Stats | undefined {
  try {
    return lstatSync(full);
  } catch {
    return undefined;
  }
}

/** Non-directory entries below a directory, without following symlinks. */
function filesBelow(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(path.join(root, rel));
    } catch {
      return;
    }
    for (const name of names) {
      const child = `${rel}/${name}`;
      const st = tryLstat(path.join(root, child));
      if (st?.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  walk(dir);
  return out;
}

/**
 * What the disk holds at each wanted path: its kind, the first ancestor that is
 * not a directory, the files of a directory standing where a file is wanted,
 * and the blob id of uncaptured content (so an ignored file that already holds
 * the wanted bytes counts as unchanged).
 */
export function gatherDiskFacts(root: string, want: Map<string, Want>, live: Map<string, TreeEntry>): Map<string, DiskFact> {
  const dirKinds = new Map<string, DiskKind>();
  const kindAt = (rel: string): DiskKind => {
    let kind = dirKinds.get(rel);
    if (kind === undefined) {
      const st = tryLstat(path.join(root, rel));
      kind = st ? diskKind(st) : 'missing';
      dirKinds.set(rel, kind);
    }
    return kind;
  };
  const facts = new Map<string, DiskFact>();
  for (const [p, wanted] of want) {
    if (unsafePathReason(p)) continue;
    let blocker: DiskFact['blocker'];
    for (const dir of ancestorsOf(p)) {
      const kind = kindAt(dir);
      if (kind === 'missing') break;
      if (kind !== 'dir') {
        blocker = { path: dir, kind };
        break;
      }
    }
    if (blocker) {
      facts.set(p, { kind: 'missing', blocker });
      continue;
    }
    const full = path.join(root, p);
    const st = tryLstat(full);
    const fact: DiskFact = { kind: st ? diskKind(st) : 'missing' };
    if (wanted && wanted.mode !== GITLINK && fact.kind === 'dir' && !live.has(p)) fact.dirFiles = filesBelow(root, p);
    if (wanted && !live.has(p) && st) fact.entry = diskEntry(full, st);
    facts.set(p, fact);
  }
  return facts;
}

/** One path to bring to a state: an entry to write, or null to delete. */
