/**
 * Staging: hashing changed files into the shadow index in bounded batches (a
 * budget stop keeps every finished batch), and the index edits around it.
 */
import { gitCall, type StoreContext } from '../store/context.js';
import { CkptError } from '../model/errors.js';
import { pathMessages } from '../model/git-messages.js';
import type { SkippedPath } from '../model/ledger.js';
import { unsafePathReason } from '../model/paths.js';
import { git, nulTerminated, splitZ } from '../git/runner.js';

/**
 * zlib level of the packs snapshots stream into. git's default (6) spent a
 * third more time on a 3,000-file first snapshot for 2.4% less disk than 4
 * (measured: 1.11 s / 12.9 MB against 0.77 s / 13.2 MB); 1 saved little more
 * time for 11% more disk.
 */
const PACK_COMPRESSION = 4;

/** Below this many files a batch writes loose objects; above it, one pack. */
export const PACK_BATCH_MIN = 64;

export async function stageBatch(
  ctx: StoreContext,
  batch: string[],
  files: number,
  packed: boolean,
  signal: AbortSignal,
  onHashed: (n: number) => void,
): Promise<SkippedPath[]> {
  const result = await git(
    gitCall(ctx, {
      verb: 'add',
      args: ['-A', '--ignore-errors', '--verbose', '--pathspec-from-file=-', '--pathspec-file-nul'],
      // One pack per batch instead of a loose file per object.
      configOverrides:
        packed && files >= PACK_BATCH_MIN ? { 'core.bigFileThreshold': '1', 'pack.compression': String(PACK_COMPRESSION) } : {},
      input: nulTerminated(batch),
      okCodes: [1],
      signal,
      // `--verbose` is read only to count hashed files: a line per file is not kept.
      collectStdout: false,
      onStdout(chunk) {
        let n = 0;
        for (const byte of chunk) if (byte === 10) n++;
        if (n) onHashed(n);
      },
    }),
  );
  // Exit 1 means some path was not staged, or only that a named path lies below an ignored folder
  // (git still updates the tracked files there): either way the rest of the index is written.
  // An exit that neither explains is a real failure.
  const { skipped, other, ignoredAdvice } = pathMessages(result.stderr);
  if (result.code !== 0 && (other.length || (!skipped.length && !ignoredAdvice)))
    throw new CkptError('git', `git add failed: ${other[0] ?? `exit ${result.code}`}`);
  return skipped;
}

/** Drop paths from the shadow index without touching the disk. */
export async function forceRemove(ctx: StoreContext, paths: string[], signal: AbortSignal): Promise<void> {
  if (paths.length === 0) return;
  await git(gitCall(ctx, { verb: 'update-index', args: ['--force-remove', '-z', '--stdin'], input: nulTerminated(paths), signal }));
}

/**
 * Put the given paths back in the index as the latest tree has them (or take
 * them out when it has none). Their index entries then carry no stat data, so
 * the next snapshot hashes them again and captures what is on disk by then.
 */
export async function holdBack(ctx: StoreContext, paths: string[], latestTree: string | null, signal: AbortSignal): Promise<void> {
  const safe = paths.filter((p) => !unsafePathReason(p));
  if (!safe.length) return;
  const before = new Map<string, string>();
  if (latestTree) {
    const { stdout } = await git(
      gitCall(ctx, { verb: 'ls-tree', args: ['-r', '-z', '--full-tree', { oid: latestTree }], paths: safe, signal }),
    );
    for (const line of splitZ(stdout)) {
      const tab = line.indexOf('\t');
      const [mode, , oid] = line.slice(0, tab).split(' ');
      before.set(line.slice(tab + 1), `${mode} ${oid}`);
    }
  }
  // --index-info: "<mode> <oid>\t<path>" sets an entry; mode 0 removes it.
  const lines = safe.map((p) => `${before.get(p) ?? `0 ${'0'.repeat(40)}`}\t${p}`);
  await git(gitCall(ctx, { verb: 'update-index', args: ['-z', '--index-info'], input: `${lines.join('\0')}\0`, signal }));
}
