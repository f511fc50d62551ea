/**
 * Three-way revert on trees, with git's own merge (`merge-tree --write-tree`,
 * git ≥ 2.38), without a work tree. Reverting checkpoint C from the present P
 * is the merge of P and C's parent with C itself as the base: for that git must
 * see C as their merge base, so both sides are committed (unreferenced) with C
 * as their parent. Steps chain: each revert starts from the previous result,
 * so a session's calls are undone newest first, each keeping what came after.
 * Every object goes to `scratchObjectDir` when one is given (dry runs).
 */
import { quickRevert, TreeInMemory, type RevertConflict } from './revert-plan.js';
import { randomBytes } from 'node:crypto';
import { diffArrays } from 'diff';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { listTree, parseTreeLine, treeChanges } from '../git/objects.js';
import { EMPTY_TREE } from '../model/oid.js';
import { sameEntry, type TreeChange, type TreeEntry } from '../model/tree.js';
import { git, splitZ, type GitCall } from '../git/runner.js';
import { CHECKPOINT_AUTHOR } from '../model/trailers.js';

export interface MergeRepo {
  gitDir: string;
  cwd: string;
  scratchObjectDir?: string;
}

export type { RevertConflict } from './revert-plan.js';

export interface RevertStep {
  /** The checkpoint to revert. */
  id: string;
  /** Its tree: the merge's base. */
  tree: string;
  /** Its parent's tree (the state before it), or the empty tree. */
  parentTree: string | null;
  /** What it changed: its parent's tree against it. */
  changes: TreeChange[];
}

export type ConflictMode = 'keep' | 'markers';

const call = (repo: MergeRepo, c: Omit<GitCall, 'gitDir' | 'cwd' | 'scratchObjectDir'>): GitCall => ({
  gitDir: repo.gitDir,
  cwd: repo.cwd,
  scratchObjectDir: repo.scratchObjectDir,
  ...c,
});

const IDENTITY = {
  GIT_AUTHOR_NAME: CHECKPOINT_AUTHOR.name,
  GIT_AUTHOR_EMAIL: CHECKPOINT_AUTHOR.email,
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: CHECKPOINT_AUTHOR.name,
  GIT_COMMITTER_EMAIL: CHECKPOINT_AUTHOR.email,
  GIT_COMMITTER_DATE: '@0 +0000',
};

async function commitOn(repo: MergeRepo, tree: string, parent?: string): Promise<string> {
  const args = parent ? [{ oid: tree }, '-p', { oid: parent }] : [{ oid: tree }];
  const { stdout } = await git(call(repo, { verb: 'commit-tree', args, input: 'git-ckpt revert side\n', env: IDENTITY }));
  return stdout.toString('utf8').trim();
}

/** Pure: `merge-tree --write-tree -z` output: the result tree and each conflicted path's stages (mode and oid by stage). @public (tests use it) */
export function parseMergeTree(stdout: string): { tree: string; stages: Map<string, Map<number, TreeEntry>> } {
  const fields = stdout.split('\0');
  const tree = fields[0]!;
  const stages = new Map<string, Map<number, TreeEntry>>();
  for (let i = 1; i < fields.length && fields[i] !== ''; i++) {
    const line = fields[i]!;
    const tab = line.indexOf('\t');
    const [mode, oid, stage] = line.slice(0, tab).split(' ');
    const file = line.slice(tab + 1);
    const byStage = stages.get(file) ?? new Map<number, TreeEntry>();
    byStage.set(Number(stage), { mode: mode!, oid: oid! });
    stages.set(file, byStage);
  }
  return { tree, stages };
}

/**
 * Pure: the line ranges of the present file that the conflicts cover, from the
 * merged text git wrote with conflict markers (CRLF files included). The text
 * outside the blocks already carries the clean part of the revert, so line
 * numbers are mapped back to the present file through a line diff.
 * @public (tests use it)
 */
export function conflictRanges(merged: string, present: string): [number, number][] {
  const resolved: string[] = [];
  const blocks: [number, number][] = [];
  let side: 'none' | 'ours' | 'theirs' = 'none';
  let start = 0;
  for (const raw of merged.split('\n')) {
    const text = raw.replace(/\r$/, '');
    if (side === 'none' && text.startsWith('<<<<<<< ')) {
      side = 'ours';
      start = resolved.length;
    } else if (side === 'ours' && (text === '=======' || text.startsWith('||||||| '))) {
      side = 'theirs';
      blocks.push([start, resolved.length]);
    } else if (side === 'theirs') {
      if (text.startsWith('>>>>>>> ')) side = 'none';
    } else resolved.push(raw);
  }
  // Each resolved line that the present file has unchanged, by its index there.
  const at = new Map<number, number>();
  let i = 0;
  let j = 0;
  for (const part of diffArrays(resolved, present.split('\n'))) {
    const n = part.count ?? part.value.length;
    if (part.added) j += n;
    else if (part.removed) i += n;
    else for (let k = 0; k < n; k++) at.set(i++, j++);
  }
  /** The present file's index (0-based) of resolved line `index`, or as far past the nearest unchanged line before it. */
  const near = (index: number): number => {
    for (let k = index; k >= 0; k--) if (at.has(k)) return at.get(k)! + (index - k);
    return index;
  };
  return blocks.map(([from, to]): [number, number] => {
    if (to > from) return [near(from) + 1, near(to - 1) + 1];
    // An empty present side (lines the change added, deleted since): where they were.
    const where = from > 0 ? near(from - 1) + 2 : 1;
    return [where, where];
  });
}

/** Pure: why a conflicted path conflicts whole, from its stages; undefined for a text conflict git could mark. @public (tests use it) */
export function wholeConflict(byStage: Map<number, TreeEntry>): string | undefined {
  const ours = byStage.get(2);
  const theirs = byStage.get(3);
  if (!ours || !theirs) return 'changed since on one side and deleted on the other';
  const modes = [...byStage.values()].map((e) => e.mode);
  if (modes.some((m) => m === '120000')) return 'a symlink changed since';
  if (modes.some((m) => m === '160000')) return 'a submodule changed since';
  if (new Set(modes).size > 1) return 'its mode changed since';
  return undefined;
}

/**
 * The paths the step's checkpoint changed that changed again since: for each,
 * its entries [base (the checkpoint), present, parent] (null where absent).
 */
async function bothSidesChanged(repo: MergeRepo, present: string, step: RevertStep): Promise<Map<string, (TreeEntry | null)[]>> {
  const { changes } = step;
  const out = new Map<string, (TreeEntry | null)[]>();
  if (changes.length === 0) return out;
  const { stdout } = await git(
    call(repo, { verb: 'ls-tree', args: ['-r', '-z', '--full-tree', { oid: present }], paths: changes.map((c) => c.path) }),
  );
  const now = new Map<string, TreeEntry>();
  for (const line of splitZ(stdout)) {
    const parsed = parseTreeLine(line);
    if (parsed) now.set(...parsed);
  }
  for (const c of changes) {
    const present = now.get(c.path) ?? null;
    if (c.before && c.after && present && !sameEntry(present, c.after)) out.set(c.path, [c.after, present, c.before]);
  }
  return out;
}

/** Set paths of a tree to entries (null removes), in a temporary index: the new tree. */
async function withEntries(repo: MergeRepo, tree: string, entries: Map<string, TreeEntry | null>): Promise<string> {
  if (entries.size === 0) return tree;
  const indexFile = path.join(tmpdir(), `git-ckpt-merge-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await git(call(repo, { verb: 'read-tree', args: [{ oid: tree }], indexFile }));
    const lines = [...entries].map(([p, e]) => `${e ? `${e.mode} ${e.oid}` : `0 ${'0'.repeat(40)}`}\t${p}`);
    await git(call(repo, { verb: 'update-index', args: ['-z', '--index-info'], input: `${lines.join('\0')}\0`, indexFile }));
    return (await git(call(repo, { verb: 'write-tree', indexFile }))).stdout.toString('utf8').trim();
  } finally {
    rmSync(indexFile, { force: true });
  }
}

/**
 * Revert the steps, newest first, from the tree `present` (whose entries are
 * `presentEntries`). A conflicted path keeps its present content (mode `keep`)
 * or, for a text conflict, gets git's conflict markers (mode `markers`); either
 * way it is reported with its ranges. A step whose merge has only one possible
 * answer (quickRevert) is applied in memory: a session of 200 edits, most of
 * them untouched since, costs git processes only for the steps edited again.
 * `quick: false` merges every step with git (the reference the quick path is tested against);
 * `inMemory` counts the steps that needed no merge.
 */
export async function revertTrees(
  repo: MergeRepo,
  present: { tree: string; entries: ReadonlyMap<string, TreeEntry> },
  steps: readonly RevertStep[],
  mode: ConflictMode,
  { quick = true }: { quick?: boolean } = {},
): Promise<{ tree: string; conflicts: RevertConflict[]; inMemory: number }> {
  let inMemory = 0;
  /** The tree git last wrote; `pending` holds the quick steps applied in memory since. */
  let ours = present.tree;
  const now = new TreeInMemory(present.entries);
  const pending = new Map<string, TreeEntry | null>();
  const conflicts: RevertConflict[] = [];
  /** `now` follows what a git merge changed (diff-tree: as many paths as it changed). */
  const follow = async (from: string, to: string) => {
    if (from !== to) for (const c of await treeChanges(repo, from, to, undefined, repo.scratchObjectDir)) now.set(c.path, c.after);
  };
  for (const step of steps) {
    const settled = quick ? quickRevert(now, step.changes) : undefined;
    if (settled) {
      for (const [p, entry] of settled) {
        now.set(p, entry);
        pending.set(p, entry);
      }
      inMemory++;
      continue;
    }
    ours = await withEntries(repo, ours, pending);
    pending.clear();
    const mergedFrom = ours;
    const mergeOn = async (base: string) => {
      const oursCommit = await commitOn(repo, ours, base);
      const theirsCommit = await commitOn(repo, step.parentTree ?? EMPTY_TREE, base);
      const result = await git(
        call(repo, { verb: 'merge-tree', args: ['--write-tree', '-z', { oid: oursCommit }, { oid: theirsCommit }], okCodes: [1] }),
      );
      return { stdout: result.stdout, sides: [oursCommit, theirsCommit] };
    };
    // The checkpoint itself is the base; git's merge-base search walks its ancestry, and where gc
    // trimmed that, a root commit of its tree serves instead (three more git processes, only then).
    const { stdout, sides } = await mergeOn(step.id).catch(async (err: unknown) => {
      if (!/Could not read|bad object|unable to read|missing/i.test((err as Error).message)) throw err;
      return mergeOn(await commitOn(repo, step.tree));
    });
    const { tree, stages } = parseMergeTree(stdout.toString('utf8'));
    // git merges a mode change on one side with a content change on the other; a revert must not
    // flip an executable bit it did not set: a path changed on both sides whose modes differ conflicts whole.
    for (const [file, entries] of await bothSidesChanged(repo, ours, step)) {
      const modes = new Set(entries.filter((e): e is TreeEntry => e !== null).map((e) => e.mode));
      if (modes.size > 1 && !stages.has(file)) stages.set(file, new Map(entries.flatMap((e, i) => (e ? [[i + 1, e] as const] : []))));
    }
    if (stages.size === 0) {
      ours = tree;
      await follow(mergedFrom, tree);
      continue;
    }
    const before = await listTree(repo, ours, undefined, repo.scratchObjectDir);
    const merged = await listTree(repo, tree, undefined, repo.scratchObjectDir);
    const keep = new Map<string, TreeEntry | null>();
    const setAside = new RegExp(`^(.+)~(?:${sides[0]}|${sides[1]})$`);
    for (const [file, byStage] of stages) {
      // A file-versus-directory conflict: git keeps the directory at the path and moves the file
      // aside as `name~<commit>`. The present wins whole: the path and all below it as they are now.
      const aside = setAside.exec(file);
      if (aside) {
        const name = aside[1]!;
        conflicts.push({ path: name, ranges: [], checkpoint: step.id, whole: 'a file and a directory at this path since' });
        keep.set(file, null);
        for (const p of new Set([...before.keys(), ...merged.keys()]))
          if (p === name || p.startsWith(`${name}/`)) keep.set(p, before.get(p) ?? null);
        continue;
      }
      let whole = wholeConflict(byStage);
      let ranges: [number, number][] = [];
      const result = merged.get(file);
      if (!whole && result) {
        const text = async (oid: string) => (await git(call(repo, { verb: 'cat-file', args: ['-p', { oid }] }))).stdout.toString('utf8');
        const now = before.get(file);
        ranges = conflictRanges(await text(result.oid), now ? await text(now.oid) : '');
        if (ranges.length === 0) whole = 'a binary file changed since';
      }
      conflicts.push({ path: file, ranges, checkpoint: step.id, ...(whole ? { whole } : {}) });
      if (whole || mode === 'keep') keep.set(file, before.get(file) ?? null);
    }
    // Paths git set aside for a file-versus-directory conflict are not ours to keep.
    for (const file of merged.keys()) if (!before.has(file) && setAside.test(file)) keep.set(file, null);
    ours = await withEntries(repo, tree, keep);
    await follow(mergedFrom, ours);
  }
  return { tree: await withEntries(repo, ours, pending), conflicts, inMemory };
}
