/**
 * Inspection: git's diffs between checkpoint trees, and which tree a
 * checkpoint's own change is shown against. `diffArgs` and `showBase` are pure.
 */
import { shortId } from '../model/short-ids.js';
import type { CheckpointRecord } from '../model/ledger.js';
import { EMPTY_TREE } from '../model/oid.js';
import type { DegradedMap } from '../store/probe.js';
import { objectSizes } from '../git/objects.js';
import { git, type GitArg } from '../git/runner.js';
import type { StorePaths } from '../store/store.js';

export type DiffFormat = 'patch' | 'stat' | 'name-status' | 'patch-with-stat';

/** How a diff is asked for: its format, colour, and whether binary content comes as git's base85 patch. */
export interface DiffOptions {
  format: DiffFormat;
  color: boolean;
  /** The whole binary patch (`--binary`); by default a binary file is one line with its sizes, as people read it. */
  binary?: boolean;
}

/** Pure: diff-tree's options; never the user's diff drivers or textconv (bytes as stored). */
function diffArgs({ format, color, binary }: DiffOptions): GitArg[] {
  const args: GitArg[] = ['-r', '--no-renames', color ? '--color=always' : '--color=never', '--no-ext-diff', '--no-textconv'];
  const byFormat: Record<DiffFormat, GitArg[]> = {
    stat: ['--stat'],
    'name-status': ['--name-status'],
    patch: ['-p'],
    'patch-with-stat': ['--patch-with-stat'],
  };
  return [...args, ...byFormat[format], ...(binary && format !== 'stat' && format !== 'name-status' ? ['--binary' as const] : [])];
}

const ANSI = /\x1b\[[0-9;]*m/g;
const INDEX_LINE = /^index ([0-9a-f]+)\.\.([0-9a-f]+)/;
const BINARY_LINE = /^Binary files (.*) differ$/;

/**
 * Pure: the blob ids of each binary file's `index` line in a patch, before and after (the all-zero id of
 * a side that does not exist stays out).
 */
function binaryBlobs(patch: string): string[] {
  const ids = new Set<string>();
  let index: [string, string] | null = null;
  for (const raw of patch.split('\n')) {
    const line = raw.replace(ANSI, '');
    const m = INDEX_LINE.exec(line);
    if (m) index = [m[1]!, m[2]!];
    else if (line.startsWith('diff --git ')) index = null;
    else if (index && BINARY_LINE.test(line)) for (const id of index) if (!/^0+$/.test(id)) ids.add(id);
  }
  return [...ids];
}

/** Pure: each `Binary files … differ` line with the sizes of its two sides, as git's --stat gives them ("0 -> 30000 bytes"). */
function withBinarySizes(patch: string, sizes: ReadonlyMap<string, number>): string {
  let index: [string, string] | null = null;
  const size = (id: string) => (/^0+$/.test(id) ? 0 : sizes.get(id));
  return patch
    .split('\n')
    .map((raw) => {
      const line = raw.replace(ANSI, '');
      const m = INDEX_LINE.exec(line);
      if (m) index = [m[1]!, m[2]!];
      else if (line.startsWith('diff --git ')) index = null;
      else if (index && BINARY_LINE.test(line)) {
        const [before, after] = index.map(size);
        if (before !== undefined && after !== undefined) return `${raw} (${before} -> ${after} bytes)`;
      }
      return raw;
    })
    .join('\n');
}

/**
 * Pure: the tree a checkpoint's own change is shown against: its parent's, or,
 * when gc dropped the parent or it is degraded, the nearest older checkpoint
 * still whole (`base` says so), or the empty tree.
 */
export function showBase(
  records: readonly CheckpointRecord[],
  degraded: DegradedMap,
  record: CheckpointRecord,
): { from: string; base?: { id: string | null; reason: string } } {
  if (!record.parent) return { from: EMPTY_TREE };
  const parent = records.find((r) => r.id === record.parent);
  if (parent && !degraded[parent.id]) return { from: parent.tree };
  const older = records
    .slice(
      0,
      Math.max(
        0,
        records.findIndex((r) => r.id === record.id),
      ),
    )
    .reverse()
    .find((r) => !degraded[r.id]);
  return {
    from: older?.tree ?? EMPTY_TREE,
    base: { id: older?.id ?? null, reason: `its parent ${shortId(record.parent)} ${parent ? 'is degraded' : 'was dropped by gc'}` },
  };
}

/** git's diff between two trees of the store, optionally limited to workspace paths. */
export async function diffTrees(
  store: StorePaths,
  from: string,
  to: string,
  options: DiffOptions,
  paths?: string[],
  scratchObjectDir?: string,
): Promise<string> {
  const repo = { gitDir: store.gitDir, cwd: store.dir, scratchObjectDir };
  const { stdout } = await git({
    verb: 'diff-tree',
    args: [...diffArgs(options), { oid: from }, { oid: to }],
    paths: paths?.length ? paths : undefined,
    ...repo,
  });
  const patch = stdout.toString('utf8');
  const binaries = options.binary ? [] : binaryBlobs(patch);
  return binaries.length ? withBinarySizes(patch, await objectSizes(repo, binaries)) : patch;
}
