/**
 * Inspection: git's diffs between checkpoint trees, and which tree a
 * checkpoint's own change is shown against. `diffArgs` and `showBase` are pure.
 */
import { shortId } from '../model/short-ids.js';
import type { CheckpointRecord } from '../model/ledger.js';
import { EMPTY_TREE } from '../model/oid.js';
import type { DegradedMap } from '../store/probe.js';
import { git, type GitArg } from '../git/runner.js';
import type { StorePaths } from '../store/store.js';

export type DiffFormat = 'patch' | 'stat' | 'name-status' | 'patch-with-stat';

/** Pure: diff-tree's options for a format; never the user's diff drivers or textconv (bytes as stored). */
function diffArgs(format: DiffFormat, color: boolean): GitArg[] {
  const args: GitArg[] = ['-r', '--no-renames', color ? '--color=always' : '--color=never', '--no-ext-diff', '--no-textconv'];
  const byFormat: Record<DiffFormat, GitArg[]> = {
    stat: ['--stat'],
    'name-status': ['--name-status'],
    patch: ['-p', '--binary'],
    'patch-with-stat': ['--patch-with-stat', '--binary'],
  };
  return [...args, ...byFormat[format]];
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
  format: DiffFormat,
  color: boolean,
  paths?: string[],
  scratchObjectDir?: string,
): Promise<string> {
  const { stdout } = await git({
    verb: 'diff-tree',
    args: [...diffArgs(format, color), { oid: from }, { oid: to }],
    paths: paths?.length ? paths : undefined,
    gitDir: store.gitDir,
    cwd: store.dir,
    scratchObjectDir,
  });
  return stdout.toString('utf8');
}
