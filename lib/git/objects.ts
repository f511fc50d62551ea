/**
 * Reads of trees and objects in a repository (the shadow one, or a scratch
 * object folder beside it), shared by capture, restore, retain and inspect.
 */
import { CkptError } from '../model/errors.js';
import { git, splitZ, zSplitter } from './runner.js';
import type { TreeChange, TreeEntry } from '../model/tree.js';

export interface RepoAccess {
  gitDir: string;
  cwd: string;
  /** Objects read from this folder too (the user's repository, lent read-only; see GitCall.readAlternate). */
  readAlternate?: string;
}

/** One `ls-tree -z` line as [path, entry]. */
export function parseTreeLine(line: string): [string, TreeEntry] | undefined {
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

/** diff-tree's mode for the side of a change where the path does not exist (000000). */
const ABSENT_MODE = /^0+$/;

/** The paths that differ between two trees, with their entries on each side. */
export async function treeChanges(
  repo: RepoAccess,
  from: string,
  to: string,
  signal?: AbortSignal,
  scratchObjectDir?: string,
): Promise<TreeChange[]> {
  const { stdout } = await git({
    verb: 'diff-tree',
    args: ['-r', '-z', '--no-renames', '--raw', { oid: from }, { oid: to }],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
    signal,
    scratchObjectDir,
  });
  return parseRawDiff(stdout);
}

/** `--raw -z` output of diff-tree or diff-index, one change per path. */
function parseRawDiff(stdout: Buffer): TreeChange[] {
  const changes: TreeChange[] = [];
  rawDiffSplitter((c) => changes.push(c))(stdout);
  return changes;
}

/** parseRawDiff as a stream (for `onStdout`): each change is handed on as its path arrives. */
export function rawDiffSplitter(onChange: (change: TreeChange) => void): (chunk: Buffer) => void {
  let header: string | undefined;
  const entry = (mode: string, oid: string) => (ABSENT_MODE.test(mode) ? null : { mode, oid });
  return zSplitter((part) => {
    if (header === undefined) {
      header = part;
      return;
    }
    const [oldMode, newMode, oldOid, newOid] = header.replace(/^:/, '').split(' ');
    header = undefined;
    onChange({ path: part, before: entry(oldMode!, oldOid!), after: entry(newMode!, newOid!) });
  });
}

/** Object contents by id (blobs, commits …), streamed from one `cat-file --batch` per chunk of ids; `onObject` may return a promise (backpressure). */
export async function forEachObject(
  repo: RepoAccess,
  oids: string[],
  onObject: (oid: string, content: Buffer) => void | Promise<void>,
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
        const pending = onObject(done.oid, content);
        if (pending) waits.push(pending);
      }
      if (waits.length) return Promise.all(waits).then(() => undefined);
    };
    await git({
      verb: 'cat-file',
      args: ['--batch'],
      gitDir: repo.gitDir,
      cwd: repo.cwd,
      readAlternate: repo.readAlternate,
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

/**
 * Sizes of objects (bytes, or bytes on disk), from one `cat-file --batch-check`; an id may be abbreviated
 * (a diff's `index` line), and the map is keyed by the id as asked. Missing ones are absent.
 */
export async function objectSizes(
  repo: RepoAccess & { scratchObjectDir?: string },
  oids: Iterable<string>,
  format: '%(objectsize)' | '%(objectsize:disk)' = '%(objectsize)',
): Promise<Map<string, number>> {
  const ids = [...new Set(oids)];
  const sizes = new Map<string, number>();
  if (ids.length === 0) return sizes;
  const { stdout } = await git({
    verb: 'cat-file',
    args: [`--batch-check=%(objectname) ${format}`],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
    input: `${ids.join('\n')}\n`,
    scratchObjectDir: repo.scratchObjectDir,
  });
  // One answer line per id asked, in order: `<id> <size>`, or `<name> missing`.
  const lines = stdout.toString('utf8').split('\n');
  ids.forEach((id, i) => {
    const [, size] = (lines[i] ?? '').split(' ');
    if (size && /^\d+$/.test(size)) sizes.set(id, Number(size));
  });
  return sizes;
}
