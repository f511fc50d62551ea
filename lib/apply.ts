/**
 * The I/O side of restore: read trees, look at the disk, and write files.
 *
 * Writes go to a temporary file next to the destination (opened O_EXCL and
 * O_NOFOLLOW), then rename over it, so a reader or a crash sees the old bytes or
 * the new ones, never half a file. Every ancestor is checked with lstat and
 * created one level at a time, so nothing is ever written through a symlink.
 * Blob bytes come from `git cat-file --batch`, unfiltered: the bytes written are
 * the bytes captured, whatever .gitattributes or core.autocrlf say.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CkptError } from './errors.js';
import { ancestorsOf, unsafePathReason } from './paths.js';
import { SYMLINK, GITLINK, type DiskFact, type DiskKind, type TreeChange, type TreeEntry, type Want } from './restore-plan.js';
import { git, splitZ } from './runner.js';

import { TMP_PREFIX } from './paths.js';

export interface RepoAccess {
  gitDir: string;
  cwd: string;
}

function kindOf(st: Stats): DiskKind {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  return 'other';
}

function parseTreeLine(line: string): [string, TreeEntry] | undefined {
  const tab = line.indexOf('\t');
  if (tab < 0) return undefined;
  const [mode, , oid] = line.slice(0, tab).split(' ');
  return [line.slice(tab + 1), { mode: mode!, oid: oid! }];
}

/** Every entry of a tree (recursively), path → entry. */
export async function listTree(
  repo: RepoAccess,
  treeish: string,
  signal?: AbortSignal,
  scratchObjectDir?: string,
): Promise<Map<string, TreeEntry>> {
  const { stdout } = await git({
    verb: 'ls-tree',
    args: ['-r', '-z', '--full-tree', { oid: treeish }],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
    signal,
    scratchObjectDir,
  });
  const entries = new Map<string, TreeEntry>();
  for (const line of splitZ(stdout)) {
    const parsed = parseTreeLine(line);
    if (parsed) entries.set(parsed[0], parsed[1]);
  }
  return entries;
}

const ZERO_OID = /^0+$/;

/** The paths that differ between two trees, with their entries on each side. */
export async function treeChanges(repo: RepoAccess, from: string, to: string, signal?: AbortSignal): Promise<TreeChange[]> {
  const { stdout } = await git({
    verb: 'diff-tree',
    args: ['-r', '-z', '--no-renames', '--raw', { oid: from }, { oid: to }],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
    signal,
  });
  const parts = splitZ(stdout);
  const changes: TreeChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [oldMode, newMode, oldOid, newOid] = parts[i]!.replace(/^:/, '').split(' ');
    const entry = (mode: string, oid: string) => (ZERO_OID.test(mode) ? null : { mode, oid });
    changes.push({ path: parts[i + 1]!, before: entry(oldMode!, oldOid!), after: entry(newMode!, newOid!) });
  }
  return changes;
}

/** git's blob id of some bytes (SHA-1: the shadow repository's format). */
function blobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/**
 * What a file or symlink on disk is as a tree entry (mode and blob id), hashed
 * here without writing any object; undefined for anything else, or when it
 * cannot be read (so it never counts as equal).
 */
export function diskEntry(full: string, st: Stats): TreeEntry | undefined {
  try {
    if (st.isSymbolicLink()) return { mode: SYMLINK, oid: blobId(readlinkSync(full, { encoding: 'buffer' })) };
    if (st.isFile()) return { mode: (st.mode & 0o100) !== 0 ? '100755' : '100644', oid: blobId(readFileSync(full)) };
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
      kind = st ? kindOf(st) : 'missing';
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
    const fact: DiskFact = { kind: st ? kindOf(st) : 'missing' };
    if (wanted && wanted.mode !== GITLINK && fact.kind === 'dir' && !live.has(p)) fact.dirFiles = filesBelow(root, p);
    if (wanted && !live.has(p) && st) fact.entry = diskEntry(full, st);
    facts.set(p, fact);
  }
  return facts;
}

/** One path to bring to a state: an entry to write, or null to delete. */
export interface ApplyEntry {
  path: string;
  want: Want;
}

export interface ApplyFailure {
  path: string;
  error: string;
}

export interface ApplyResult {
  written: number;
  deleted: number;
  failures: ApplyFailure[];
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** Read once: process.umask() has no read-only form. */
const UMASK = (() => {
  const mask = process.umask(0o022);
  process.umask(mask);
  return mask;
})();

class Writer {
  /** Directories checked or created during this pass: a real directory stays one. */
  private readonly realDirs = new Set<string>(['']);
  private counter = 0;
  constructor(
    private readonly root: string,
    private readonly tag: string,
  ) {}

  /** Make sure every ancestor of `p` is a real directory, creating missing ones; refuse symlinks. */
  ensureParents(p: string): void {
    for (const dir of ancestorsOf(p)) {
      if (this.realDirs.has(dir)) continue;
      const full = path.join(this.root, dir);
      const st = tryLstat(full);
      if (!st) {
        try {
          mkdirSync(full);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const made = lstatSync(full);
        if (!made.isDirectory()) throw new Error(`${dir} is not a directory`);
      } else if (st.isSymbolicLink()) {
        throw new Error(`symlink in the path: ${dir}; nothing is written through a symlink`);
      } else if (!st.isDirectory()) {
        throw new Error(`not a directory: ${dir}`);
      }
      this.realDirs.add(dir);
    }
  }

  private tmpPath(p: string): string {
    return path.join(this.root, path.dirname(p), `${TMP_PREFIX}${this.tag}-${process.pid}-${this.counter++}`);
  }

  async write(p: string, entry: TreeEntry, content: Buffer): Promise<void> {
    this.ensureParents(p);
    const dest = path.join(this.root, p);
    const tmp = this.tmpPath(p);
    try {
      if (entry.mode === SYMLINK) {
        await fsp.symlink(content, tmp);
      } else {
        const mode = entry.mode === '100755' ? 0o755 : 0o644;
        const handle = await fsp.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode);
        try {
          await handle.writeFile(content);
          // The umask may have cut the mode; the checkpoint's executable bit is what counts.
          if ((mode & UMASK) !== 0) await handle.chmod(mode);
        } finally {
          await handle.close();
        }
      }
      try {
        await fsp.rename(tmp, dest);
      } catch (err) {
        // A directory stands here; the plan deleted its files first, so it is empty (rmdir refuses otherwise).
        if (
          !['EISDIR', 'ENOTEMPTY', 'EEXIST', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '') ||
          !tryLstat(dest)?.isDirectory()
        )
          throw err;
        rmdirSync(dest);
        await fsp.rename(tmp, dest);
      }
    } catch (err) {
      await fsp.unlink(tmp).catch(() => {});
      throw err;
    }
  }

  delete(p: string): void {
    for (const dir of ancestorsOf(p)) {
      const st = tryLstat(path.join(this.root, dir));
      if (!st) return;
      if (!st.isDirectory()) throw new Error(`${st.isSymbolicLink() ? 'symlink' : 'file'} in the path: ${dir}`);
    }
    const full = path.join(this.root, p);
    const st = tryLstat(full);
    if (st?.isDirectory()) throw new Error('a directory is there; left alone');
    if (st) unlinkSync(full);
    // Remove directories left empty (rmdir fails on anything else); even when the
    // file was already gone, a killed pass may have made its directory and no more.
    const dirs = ancestorsOf(p).reverse();
    for (const dir of dirs) {
      try {
        rmdirSync(path.join(this.root, dir));
        this.realDirs.delete(dir);
      } catch {
        break;
      }
    }
  }
}

/** Blob contents by id, streamed from one `cat-file --batch` per chunk of ids; `onBlob` may return a promise (backpressure). */
async function forEachBlob(
  repo: RepoAccess,
  oids: string[],
  onBlob: (oid: string, content: Buffer) => void | Promise<void>,
): Promise<void> {
  const CHUNK = 4000;
  for (let i = 0; i < oids.length; i += CHUNK) {
    const chunk = oids.slice(i, i + CHUNK);
    const missing: string[] = [];
    // Chunks are kept in a list and joined once per object: a 16 MB blob arrives in hundreds of pieces.
    let parts: Buffer[] = [];
    let buffered = 0;
    let header: { oid: string; size: number } | undefined;
    const take = (n: number): Buffer => {
      const all = parts.length === 1 ? parts[0]! : Buffer.concat(parts, buffered);
      parts = all.length > n ? [all.subarray(n)] : [];
      buffered = all.length - n;
      return all.subarray(0, n);
    };
    const consume = (data: Buffer): Promise<void> | void => {
      parts.push(data);
      buffered += data.length;
      const waits: Promise<void>[] = [];
      for (;;) {
        if (!header) {
          const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, buffered);
          parts = [joined];
          const nl = joined.indexOf(10);
          if (nl < 0) break;
          const line = take(nl + 1).toString('utf8', 0, nl);
          const m = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(line);
          if (!m) {
            missing.push(line.split(' ')[0] ?? line);
            continue;
          }
          header = { oid: m[1]!, size: Number(m[3]) };
        }
        if (buffered < header.size + 1) break;
        const content = Buffer.from(take(header.size + 1).subarray(0, header.size));
        const done = header;
        header = undefined;
        const pending = onBlob(done.oid, content);
        if (pending) waits.push(pending);
      }
      if (waits.length) return Promise.all(waits).then(() => undefined);
    };
    await git({
      verb: 'cat-file',
      args: ['--batch'],
      gitDir: repo.gitDir,
      cwd: repo.cwd,
      input: `${chunk.join('\n')}\n`,
      onStdout: consume,
      collectStdout: false,
    });
    if (missing.length)
      throw new CkptError(
        'store',
        `checkpoint content is missing from the store: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}`,
      );
  }
}

/** Runs at most `limit` tasks at once; `admit` resolves once there is room again. */
class WritePool {
  private running = 0;
  private waiters: (() => void)[] = [];
  private readonly all = new Set<Promise<void>>();
  constructor(private readonly limit: number) {}
  run(task: () => Promise<void>): Promise<void> | undefined {
    this.running++;
    const p = task().finally(() => {
      this.running--;
      this.all.delete(p);
      this.waiters.shift()?.();
    });
    this.all.add(p);
    if (this.running < this.limit) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  async drain(): Promise<void> {
    while (this.all.size) await Promise.all([...this.all]);
  }
}

/** Files written at once: creating files is latency-bound on most filesystems, so a few in flight pay off. */
const WRITES_IN_FLIGHT = 8;

/**
 * Bring each path to its wanted state: deletions first (deepest first, so a
 * directory empties before a file takes its place), then writes in path order.
 * A failure on one path is recorded and the pass goes on.
 */
export async function applyEntries(repo: RepoAccess, root: string, entries: readonly ApplyEntry[], tag: string): Promise<ApplyResult> {
  const writer = new Writer(root, tag);
  const result: ApplyResult = { written: 0, deleted: 0, failures: [] };
  const fail = (p: string, err: unknown) => result.failures.push({ path: p, error: (err as Error).message ?? String(err) });

  const deletes = entries.filter((e) => e.want === null).sort((a, b) => (a.path < b.path ? 1 : -1));
  for (const e of deletes) {
    const unsafe = unsafePathReason(e.path);
    if (unsafe) {
      fail(e.path, new Error(`unsafe path refused: ${unsafe}`));
      continue;
    }
    try {
      writer.delete(e.path);
      result.deleted++;
    } catch (err) {
      fail(e.path, err);
    }
  }

  const writes = entries
    .filter((e): e is ApplyEntry & { want: TreeEntry } => e.want !== null && e.want.mode !== GITLINK)
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const byOid = new Map<string, (ApplyEntry & { want: TreeEntry })[]>();
  for (const e of writes) {
    const unsafe = unsafePathReason(e.path);
    if (unsafe) {
      fail(e.path, new Error(`unsafe path refused: ${unsafe}`));
      continue;
    }
    const list = byOid.get(e.want.oid);
    if (list) list.push(e);
    else byOid.set(e.want.oid, [e]);
  }
  const pool = new WritePool(WRITES_IN_FLIGHT);
  await forEachBlob(repo, [...byOid.keys()], (oid, content) => {
    let wait: Promise<void> | undefined;
    for (const e of byOid.get(oid) ?? []) {
      wait = pool.run(() =>
        writer.write(e.path, e.want, content).then(
          () => {
            result.written++;
          },
          (err: unknown) => {
            fail(e.path, err);
          },
        ),
      );
    }
    return wait;
  });
  await pool.drain();
  return result;
}

/** Remove temporary files a killed restore left in the directories of these paths. */
export function removeTmpFiles(root: string, paths: Iterable<string>): number {
  const dirs = new Set<string>(['']);
  for (const p of paths) for (const d of ancestorsOf(p)) dirs.add(d);
  let removed = 0;
  for (const dir of dirs) {
    const full = path.join(root, dir);
    const st = tryLstat(full);
    if (!st?.isDirectory()) continue;
    for (const name of readdirSync(full)) {
      if (!name.startsWith(TMP_PREFIX)) continue;
      try {
        unlinkSync(path.join(full, name));
        removed++;
      } catch {
        /* already gone */
      }
    }
  }
  return removed;
}

/** A short random tag for temporary names and journal ids. */
export function randomTag(): string {
  return randomBytes(6).toString('hex');
}
