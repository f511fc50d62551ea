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
import { randomBytes } from 'node:crypto';
import { constants, lstatSync, mkdirSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { crashPoint } from '../model/crash-point.js';
import { tryLstat } from '../capture/disk.js';
import { forEachObject, type RepoAccess } from '../git/objects.js';
import { ancestorsOf, unsafePathReason } from '../model/paths.js';
import { SYMLINK, GITLINK, type TreeEntry, type Want } from '../model/tree.js';
import { TMP_PREFIX } from '../model/paths.js';

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
        const existing = tryLstat(dest);
        const mode = fileMode(entry.mode === '100755', existing?.isFile() ? existing.mode : undefined);
        const handle = await fsp.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode.create);
        try {
          await handle.writeFile(content);
          if (mode.exact !== undefined) await handle.chmod(mode.exact);
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

/**
 * Pure: the permission bits of a written file. git records only the executable
 * bit, so an existing file keeps the rest of its bits as they are (a 0600 file
 * stays private, a 0444 one read-only); a new file gets the user's umask, as
 * git's checkout gives it. `exact` is set when the bits must be forced past the umask.
 */
function fileMode(executable: boolean, existingMode: number | undefined, umask = UMASK): { create: number; exact?: number } {
  if (existingMode === undefined) {
    const create = executable ? 0o755 : 0o644;
    // A umask that takes the owner's own x bit away would make the checkpoint's executable file plain.
    return executable && (create & ~umask & 0o100) === 0 ? { create, exact: (create & ~umask) | 0o100 } : { create };
  }
  const rw = existingMode & 0o666;
  const bits = executable ? rw | ((existingMode & 0o444) >> 2) | 0o100 : rw;
  // A chmod per file only where the umask would cut the bits (most files: none).
  return (bits & ~umask) === bits ? { create: bits } : { create: bits, exact: bits };
}

/** Runs at most `limit` tasks at once; `admit` resolves once there is room again. */
class WritePool {
  private running = 0;
  private waiters: (() => void)[] = [];
  private readonly all = new Set<Promise<void>>();
  constructor(private readonly limit: number) {}
  /** Start `task` once fewer than `limit` tasks run; resolves when it has started. */
  async run(task: () => Promise<void>): Promise<void> {
    while (this.running >= this.limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.running++;
    const p = task().finally(() => {
      this.running--;
      this.all.delete(p);
      this.waiters.shift()?.();
    });
    this.all.add(p);
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
  // Each write waits for a free slot, and cat-file waits for the writes: never more than 8 in flight.
  await forEachObject(repo, [...byOid.keys()], async (oid, content) => {
    for (const e of byOid.get(oid) ?? []) {
      await pool.run(() =>
        writer.write(e.path, e.want, content).then(
          () => {
            result.written++;
            crashPoint(`write:${result.written}`);
          },
          (err: unknown) => {
            fail(e.path, err);
          },
        ),
      );
    }
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
    let names: string[];
    try {
      names = readdirSync(full);
    } catch {
      continue; // unreadable: the pass records its paths there as failures, and a later run clears what it left
    }
    for (const name of names) {
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
