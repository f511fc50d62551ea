/**
 * forget: checkpoints, a session, everything before a date, or paths from
 * every checkpoint, removed from the store for good. The caller holds the
 * workspace lock. What goes is planned purely (forget-plan.ts); this module
 * reads what the plan needs and writes what it says.
 *
 *   1. the new chain's objects: trees without the forgotten paths, commits
 *      with new parents (the nearest kept ancestor) and the same metadata,
 *      hashed here, written by `git hash-object` and checked against git's ids;
 *      a dry run writes them into a scratch object folder outside the store;
 *   2. one new `.keep` pack with exactly what the new chain and the new shadow
 *      index need, fsync'd (gc.ts's replaceObjects);
 *   3. the commit point, in this order: the forgotten patterns (never captured
 *      again), the shadow index without them, the ledger (temp file, rename);
 *   4. every older pack and loose object deleted: the forgotten bytes are gone.
 * A marker (`forget.json`, the request) lives from before 1 to after 4: a kill
 * anywhere leaves the old chain whole (before 3) or the new one (after), and
 * running the same forget again finishes it.
 */
import { shortId, shortSession } from '../model/short-ids.js';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAddress, resolveAddress, resolveInView, resolveSession } from '../model/address.js';
import { gitCall, type StoreContext } from '../store/context.js';
import { CkptError } from '../model/errors.js';
import {
  changeSummary,
  checkPatterns,
  objectId,
  parseBefore,
  parseTree,
  planChain,
  requestCommand,
  planDrop,
  rewriteCommit,
  rewriteRecord,
  summaryWithout,
  TreeRewriter,
  type ChangeSummary,
  type ChainStep,
  type DropReason,
  type ForgetRequest,
  type ForgetSelection,
  type PathTest,
  type RemovedEntry,
  type TreeItem,
} from './forget-plan.js';
import { replaceObjects } from './gc.js';
import { readPackState } from '../capture/housekeeping.js';
import { journalBlobs, readJournal, type Journal } from '../store/journal.js';
import { assertWritableSchema, readLedger, type CheckpointRecord } from '../model/ledger.js';
import { forEachObject, treeChanges, type RepoAccess } from '../git/objects.js';
import { findDebris, indexBlobs, indexEntries, presentObjects, recordObjects } from '../store/packs.js';
import { EMPTY_TREE } from '../model/oid.js';
import { probeDegraded, type DegradedMap } from '../store/probe.js';
import type { TreeChange } from '../model/tree.js';
import { git, splitZ } from '../git/runner.js';
import { readForgotten } from '../capture/scan.js';
import { forgetSessionState } from '../store/sessions.js';
import { dirSize, fsyncFolder, writeFileAtomic, writeFileDurable, type StorePaths } from '../store/store.js';

export interface ForgetOptions {
  /** Say what would go and the bytes it frees; change nothing. */
  dryRun?: boolean;
  /** The time `--before` ages count from (tests). */
  now?: number;
}

export interface ForgetReport {
  dryRun: boolean;
  /** The request as a command line: what to run again after an interruption. */
  command: string;
  selection: ForgetSelection;
  /** Checkpoints dropped, oldest first, each with why. */
  dropped: { id: string; time: number; session: string | null; kind: string; why: DropReason }[];
  /** Kept checkpoints whose commit was rewritten: old id → new id (the old ids still resolve). */
  rewritten: { from: string; to: string }[];
  kept: number;
  /** --path: each path removed, and from how many checkpoints. */
  paths: { path: string; checkpoints: number }[];
  /** --path: removed paths whose bytes stay, because a kept path holds the same content. */
  stillStored: string[];
  /** File versions whose bytes leave the store, by the path they were found at. */
  content: { path: string; versions: number }[];
  /** Objects removed from the store, and among them ones nothing needed before (leftovers of killed processes). */
  objects: number;
  leftovers: number;
  bytesBefore: number;
  /** Measured after the run; an estimate in a dry run. */
  bytesAfter: number;
  /** --path: the file whose patterns are never captured again. */
  forgottenFile: string | null;
  /** Whether the shadow index changed (paths taken out, or the dropped latest checkpoint's entries put back). */
  indexChanged: boolean;
  /** This run finished a forget that was interrupted. */
  resumed: boolean;
}

interface Marker {
  v: 1;
  started: number;
  request: ForgetRequest;
  selection: ForgetSelection;
}

function sameRequest(a: ForgetRequest, b: ForgetRequest): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The marker of an interrupted forget, validated whole (a tampered one is refused, never acted on). */
function readMarker(paths: StorePaths): Marker | undefined {
  let text: string;
  try {
    text = readFileSync(paths.forgetMarker, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CkptError('store', `cannot read ${paths.forgetMarker}: ${(err as Error).message}`);
  }
  const bad = () =>
    new CkptError(
      'store',
      `${paths.forgetMarker} is invalid; nothing was changed (delete it, then run git ckpt gc to clean up after the interrupted forget)`,
    );
  let m: Marker;
  try {
    m = JSON.parse(text) as Marker;
  } catch {
    throw bad();
  }
  const s = m?.selection as Partial<Record<string, unknown>> | undefined;
  const ok =
    m?.v === 1 &&
    typeof m.request === 'object' &&
    m.request !== null &&
    !!s &&
    ((s.kind === 'checkpoints' && Array.isArray(s.ids) && s.ids.every((id) => typeof id === 'string' && /^[0-9a-f]{40,64}$/.test(id))) ||
      (s.kind === 'session' && typeof s.session === 'string') ||
      (s.kind === 'before' && Number.isFinite(s.time)) ||
      (s.kind === 'paths' && Array.isArray(s.patterns) && s.patterns.length > 0 && s.patterns.every((p) => typeof p === 'string')));
  if (!ok) throw bad();
  if (m.selection.kind === 'paths') checkPatterns(m.selection.patterns);
  return m;
}

/** An interrupted forget in words, with the command that finishes it (for status); undefined when there is none. */
export function interruptedForget(paths: StorePaths): string | undefined {
  try {
    const m = readMarker(paths);
    return m && `a forget did not finish; run it again: ${requestCommand(m.request)}`;
  } catch (err) {
    return (err as Error).message;
  }
}

/** gitignore matching of the patterns, case-sensitive as git's (directories tested with a trailing slash, as git does). */
async function pathTest(patterns: string[]): Promise<PathTest> {
  const { default: ignore } = await import('ignore');
  const ig = ignore({ ignorecase: false }).add(patterns);
  return (p, dir) => {
    try {
      return ig.ignores(dir ? `${p}/` : p);
    } catch {
      return false; // a name `ignore` refuses to test (never one forget could match)
    }
  };
}

/** The request resolved against the ledger: addresses to ids (degraded ones may be named), a session prefix, a date. */
function resolveSelection(
  root: string,
  records: readonly CheckpointRecord[],
  degraded: DegradedMap,
  request: ForgetRequest,
  now: number,
): ForgetSelection {
  if ('checkpoints' in request) {
    const ids = request.checkpoints.map((a) =>
      parseAddress(a).kind === 'prefix' ? resolveAddress(records, a).id : resolveInView({ records: [...records], degraded }, a).id,
    );
    return { kind: 'checkpoints', ids: [...new Set(ids)] };
  }
  if ('session' in request) return { kind: 'session', session: resolveSession(records, request.session) };
  if ('before' in request) return { kind: 'before', time: parseBefore(request.before, now) };
  // An absolute path inside the workspace is taken as the path it names, anchored at the root.
  const patterns = request.paths.map((p) => {
    const rel = path.isAbsolute(p) ? path.relative(root, p) : undefined;
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? `/${rel.split(path.sep).join('/')}` : p;
  });
  return { kind: 'paths', patterns: checkPatterns(patterns) };
}

/** Every tree below the roots, read level by level (one `cat-file --batch` per level). */
async function readTrees(repo: RepoAccess, roots: readonly string[]): Promise<Map<string, TreeItem[]>> {
  const trees = new Map<string, TreeItem[]>();
  const oidBytes = (roots[0]?.length ?? 40) / 2;
  let level = [...new Set(roots)];
  while (level.length) {
    const next = new Set<string>();
    await forEachObject(repo, level, (oid, content) => {
      const items = parseTree(content, oidBytes);
      trees.set(oid, items);
      for (const i of items) if (i.mode === '40000' && !trees.has(i.oid)) next.add(i.oid);
    });
    level = [...next].filter((oid) => !trees.has(oid));
  }
  return trees;
}

/** Write objects whose ids were computed here; git must hash each one to the same id. */
async function writeObjects(
  paths: StorePaths,
  type: 'tree' | 'commit',
  bodies: ReadonlyMap<string, Buffer | string>,
  scratch: string,
  objectDir: string | undefined,
): Promise<void> {
  // Only the missing ones: git "freshens" an object it is asked to write again (its mtime), and a dry run changes no byte.
  const present = await objectSizes({ gitDir: paths.gitDir, cwd: paths.dir, scratchObjectDir: objectDir }, bodies.keys(), '%(objectsize)');
  const expected = [...bodies.keys()].filter((oid) => !present.has(oid));
  if (expected.length === 0) return;
  const dir = path.join(scratch, `${type}s`);
  mkdirSync(dir, { recursive: true });
  for (const [i, oid] of expected.entries()) writeFileSync(path.join(dir, String(i)), bodies.get(oid)!);
  const { stdout } = await git({
    verb: 'hash-object',
    args: ['-t', { literal: type }, '-w', '--no-filters', '--stdin-paths'],
    gitDir: paths.gitDir,
    cwd: dir,
    input: `${expected.map((_, i) => String(i)).join('\n')}\n`,
    scratchObjectDir: objectDir,
  });
  const got = stdout.toString('utf8').split('\n').filter(Boolean);
  if (got.length !== expected.length || got.some((id, i) => id !== expected[i]))
    throw new CkptError('internal', `git hashed a rewritten ${type} differently than forget did; nothing was changed`);
}

/** Each tree pair's changes, from one `diff-tree --stdin` (it echoes every pair before its changes). */
async function diffPairs(repo: RepoAccess & { scratchObjectDir?: string }, pairs: readonly string[]): Promise<Map<string, TreeChange[]>> {
  const out = new Map<string, TreeChange[]>();
  if (pairs.length === 0) return out;
  const { stdout } = await git({
    verb: 'diff-tree',
    args: ['--stdin', '-r', '-z', '--raw', '--no-renames'],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
    input: `${pairs.join('\n')}\n`,
    scratchObjectDir: repo.scratchObjectDir,
  });
  const parts = splitZ(stdout);
  let current: TreeChange[] | undefined;
  const zero = /^0+$/;
  for (let i = 0; i < parts.length; ) {
    let part = parts[i]!;
    for (let h = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64})\n/.exec(part); h; h = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64})\n/.exec(part)) {
      current = [];
      out.set(`${h[1]} ${h[2]}`, current);
      part = part.slice(h[0].length);
    }
    if (part === '') {
      i++;
      continue;
    }
    const [oldMode, newMode, oldOid, newOid] = part.replace(/^:/, '').split(' ');
    const entry = (mode: string, oid: string) => (zero.test(mode) ? null : { mode, oid });
    current?.push({ path: parts[i + 1]!, before: entry(oldMode!, oldOid!), after: entry(newMode!, newOid!) });
    i += 2;
  }
  return out;
}

/** Sizes (bytes, or bytes on disk) of objects, from one `cat-file --batch-check`; missing ones are 0. */
async function objectSizes(
  repo: RepoAccess & { scratchObjectDir?: string },
  oids: Iterable<string>,
  format: '%(objectsize)' | '%(objectsize:disk)',
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
  for (const line of stdout.toString('utf8').split('\n')) {
    const [id, size] = line.split(' ');
    if (id && size && /^\d+$/.test(size)) sizes.set(id, Number(size));
  }
  return sizes;
}

/** Every object in the store: its type and its size on disk. */
async function storeObjects(repo: RepoAccess): Promise<Map<string, { type: string; size: number }>> {
  const { stdout } = await git({
    verb: 'cat-file',
    args: ['--batch-all-objects', '--batch-check=%(objectname) %(objecttype) %(objectsize:disk)'],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
  });
  const all = new Map<string, { type: string; size: number }>();
  for (const line of stdout.toString('utf8').split('\n')) {
    const [id, type, size] = line.split(' ');
    if (id && type && size) all.set(id, { type, size: Number(size) });
  }
  return all;
}

/**
 * A record's `parentTree` (the base gc kept of a dropped parent) after the
 * chain is rewritten: gone once its parent is a kept record again, and
 * without the forgotten paths when they were removed.
 */
function withBaseTree(r: CheckpointRecord, parentKept: boolean, rewritten: string | undefined): CheckpointRecord {
  if (!r.parentTree) return r;
  if (parentKept) {
    const { parentTree: _dropped, ...rest } = r;
    return rest;
  }
  return rewritten && rewritten !== r.parentTree ? { ...r, parentTree: rewritten } : r;
}

/** `rev-list --objects` of checkpoints (their own objects, not their parents') and of trees: the listing, and id → path. */
async function objectsOf(
  repo: RepoAccess & { scratchObjectDir?: string },
  ids: readonly string[],
): Promise<{ listing: string; names: Map<string, string> }> {
  const names = new Map<string, string>();
  if (ids.length === 0) return { listing: '', names };
  const { stdout } = await git({
    verb: 'rev-list',
    args: ['--objects', '--no-walk', '--missing=allow-any', '--stdin'],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
    input: `${ids.join('\n')}\n`,
    scratchObjectDir: repo.scratchObjectDir,
  });
  const listing = stdout.toString('utf8');
  for (const line of listing.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) names.set(line, '');
    else names.set(line.slice(0, space), line.slice(space + 1));
  }
  names.delete('');
  return { listing, names };
}

/** A pending journal that needs what this forget removes: refused, with the reason. */
function refuseForJournal(
  journal: Journal | undefined,
  drop: ReadonlyMap<string, DropReason>,
  steps: readonly ChainStep[],
  test?: PathTest,
): void {
  if (!journal) return;
  const rewritten = new Set(steps.filter((s) => s.rewrite).map((s) => s.record.id));
  const hit = [journal.guard, journal.target].find((id) => drop.has(id) || rewritten.has(id));
  const path = test ? journal.entries.find(([p]) => test(p, false))?.[0] : undefined;
  if (!hit && path === undefined) return;
  const what =
    hit !== undefined
      ? `checkpoint ${shortId(hit)}, which this forget would ${drop.has(hit) ? 'drop' : 'rewrite'}`
      : `the content of ${JSON.stringify(path).slice(0, 80)}, which this forget removes`;
  throw new CkptError(
    'pending',
    `forget refused: an interrupted ${journal.op} (journal ${journal.id}) still needs ${what}; finish it first with git ckpt restore --continue, or roll it back with git ckpt restore --abort`,
  );
}

/** What "nothing to forget" means for each kind of selection. */
function nothingMessage(selection: ForgetSelection): string {
  switch (selection.kind) {
    case 'paths':
      return `no checkpoint holds a path matching ${selection.patterns.map((p) => JSON.stringify(p)).join(', ')}; nothing to forget`;
    case 'before':
      return `no checkpoint is older than ${new Date(selection.time).toISOString()}; nothing to forget`;
    case 'session':
      return `session ${shortSession(selection.session)} has no checkpoints; nothing to forget`;
    default:
      return 'nothing to forget';
  }
}

/** The shadow index after forget, built in the scratch folder: none when nothing changes, null to remove it. */
async function planIndex(
  ctx: StoreContext,
  scratch: string,
  records: readonly CheckpointRecord[],
  drop: ReadonlyMap<string, DropReason>,
  test: PathTest | undefined,
): Promise<{ file: string | null } | undefined> {
  const { paths } = ctx;
  const file = path.join(scratch, 'index');
  const copy = () => {
    copyFileSync(paths.indexFile, file);
    return file;
  };
  if (!existsSync(paths.indexFile)) return undefined;
  if (test) {
    const gone = (await indexEntries(paths)).filter((e) => test(e.path, e.mode === '160000')).map((e) => e.path);
    if (gone.length === 0) return undefined;
    await git(
      gitCall(ctx, { verb: 'update-index', args: ['--force-remove', '-z', '--stdin'], indexFile: copy(), input: `${gone.join('\0')}\0` }),
    );
    return { file };
  }
  // The index holds the latest checkpoint's blobs: when that checkpoint goes, its entries go back to the new latest's.
  const latest = records.at(-1);
  const next = records.filter((r) => !drop.has(r.id)).at(-1);
  if (!latest || !drop.has(latest.id)) return undefined;
  if (!next) return { file: null };
  let changes: TreeChange[] | undefined;
  try {
    changes = await treeChanges({ gitDir: paths.gitDir, cwd: paths.dir }, latest.tree, next.tree);
  } catch {
    changes = undefined; // the dropped one's tree is missing: the whole index from the new latest
  }
  if (!changes) {
    await git(gitCall(ctx, { verb: 'read-tree', args: [{ oid: next.tree }], indexFile: file }));
    return { file };
  }
  // --index-info: "<mode> <oid>\t<path>" sets an entry (without stat data: the next snapshot hashes it again); mode 0 removes it.
  const lines = changes.map((c) => `${c.after ? `${c.after.mode} ${c.after.oid}` : `0 ${'0'.repeat(latest.tree.length)}`}\t${c.path}`);
  if (lines.length)
    await git(gitCall(ctx, { verb: 'update-index', args: ['-z', '--index-info'], indexFile: copy(), input: `${lines.join('\0')}\0` }));
  else copy();
  return { file };
}

/** Add patterns to the store's forgotten file (durably, before the ledger commit). */
function rememberPatterns(paths: StorePaths, patterns: readonly string[]): void {
  const known = readForgotten(paths);
  const fresh = patterns.filter((p) => !known.includes(p));
  if (fresh.length === 0) return;
  let text = '';
  try {
    text = readFileSync(paths.forgotten, 'utf8');
  } catch {
    text =
      '# Patterns `git ckpt forget --path` removed from every checkpoint (gitignore syntax).\n' +
      '# Files they match are never captured again; delete a line to capture them again.\n';
  }
  if (text && !text.endsWith('\n')) text += '\n';
  writeFileDurable(paths.forgotten, `${text}${fresh.join('\n')}\n`);
}

/**
 * Ledger backups (`fsck --rebuild-ledger` keeps the ledger it replaced) without
 * the dropped checkpoints' records: their messages, inputs and prompt titles go too.
 */
function purgeBackups(paths: StorePaths, dropped: readonly CheckpointRecord[]): void {
  if (dropped.length === 0) return;
  const gone = new Set(dropped.flatMap((r) => [r.id, ...(r.formerIds ?? [])]));
  const prefix = `${path.basename(paths.ledger)}.bak-`;
  for (const name of readdirSync(paths.dir)) {
    if (!name.startsWith(prefix)) continue;
    const file = path.join(paths.dir, name);
    const lines = readFileSync(file, 'utf8').split('\n');
    const kept = lines.filter((line) => {
      try {
        const id = (JSON.parse(line) as { id?: unknown } | null)?.id;
        return !(typeof id === 'string' && gone.has(id));
      } catch {
        return true;
      }
    });
    if (kept.length !== lines.length) writeFileDurable(file, kept.join('\n'));
  }
}

/** Remove scratch folders that killed forgets left behind (only forget makes them, under the lock). */
function removeOldScratch(paths: StorePaths): void {
  for (const name of readdirSync(paths.dir))
    if (name.startsWith('forget.tmp-')) rmSync(path.join(paths.dir, name), { recursive: true, force: true });
}

export async function forgetLocked(ctx: StoreContext, request: ForgetRequest, options: ForgetOptions = {}): Promise<ForgetReport> {
  const { paths } = ctx;
  const dryRun = options.dryRun ?? false;
  const repo: RepoAccess = { gitDir: paths.gitDir, cwd: paths.dir };
  const ledger = readLedger(paths.ledger);
  assertWritableSchema(ledger.newestSchema);
  if (ledger.warnings.length)
    throw new CkptError(
      'store',
      `forget refused: ${ledger.warnings.length} ledger line(s) cannot be read, and rewriting the ledger would lose them; run git ckpt fsck --rebuild-ledger first`,
    );
  const records = ledger.records;
  let journal: Journal | undefined;
  try {
    journal = readJournal(paths.dir);
  } catch (err) {
    throw new CkptError('pending', `forget refused: ${(err as Error).message}`, {}, { cause: err });
  }
  const marker = readMarker(paths);
  if (marker && !sameRequest(marker.request, request))
    throw new CkptError('pending', `an interrupted forget did not finish; run it again first: ${requestCommand(marker.request)}`);
  // The probe's cache is left as it is: a forget refused or given nothing to do changes no byte of the store.
  const degraded = await probeDegraded(paths, records, false);
  const selection = marker?.selection ?? resolveSelection(ctx.location.root, records, degraded, request, options.now ?? Date.now());
  const drop = planDrop(records, selection);
  const test = selection.kind === 'paths' ? await pathTest(selection.patterns) : undefined;

  // --path: every checkpoint's tree without what the patterns match.
  const newTrees = new Map<string, string>();
  const newParentTrees = new Map<string, string>();
  const removedBy = new Map<string, RemovedEntry[]>();
  let rewriter: TreeRewriter | undefined;
  if (test && records.length) {
    const broken = records.filter((r) => degraded[r.id]);
    if (broken.length)
      throw new CkptError(
        'degraded',
        `forget --path needs every checkpoint whole, and ${broken.length} ${broken.length === 1 ? 'is' : 'are'} degraded (${shortId(broken[0]!.id)}${broken.length > 1 ? ', …' : ''}; see git ckpt fsck); forget those first: git ckpt forget ${broken.map((r) => shortId(r.id)).join(' ')}`,
      );
    rewriter = new TreeRewriter(
      await readTrees(
        repo,
        records.flatMap((r) => (r.parentTree ? [r.tree, r.parentTree] : [r.tree])),
      ),
      test,
      records[0]!.id.length,
    );
    for (const r of records) {
      const { oid, removed } = rewriter.root(r.tree);
      if (oid !== r.tree) newTrees.set(r.id, oid);
      if (removed.length) removedBy.set(r.id, removed);
      // The tree gc kept of a dropped parent holds the same paths: it loses them too.
      if (r.parentTree) newParentTrees.set(r.id, rewriter.root(r.parentTree).oid);
    }
  }
  const steps = planChain(records, new Set(drop.keys()), newTrees);
  const rewriting = steps.filter((s) => s.rewrite);
  for (const s of rewriting)
    if (degraded[s.record.id])
      throw new CkptError(
        'degraded',
        `forget would rewrite checkpoint ${shortId(s.record.id)}, which is degraded (see git ckpt fsck); forget it too: git ckpt forget ${shortId(s.record.id)}`,
      );
  refuseForJournal(journal, drop, steps, test);

  const bytesBefore = dirSize(paths.dir);
  if (!dryRun) {
    for (const file of findDebris(paths, true)) rmSync(file, { recursive: true, force: true });
    removeOldScratch(paths);
  }
  const scratch = dryRun ? mkdtempSync(path.join(tmpdir(), 'git-ckpt-forget-')) : path.join(paths.dir, `forget.tmp-${process.pid}`);
  try {
    mkdirSync(scratch, { recursive: true });
    const objectDir = dryRun ? path.join(scratch, 'objects') : undefined;
    if (objectDir) mkdirSync(objectDir);
    const read = { ...repo, scratchObjectDir: objectDir };
    const index = await planIndex(ctx, scratch, records, drop, test);
    if (rewriting.length === 0 && drop.size === 0 && !index && !marker)
      throw new CkptError('nothing', nothingMessage(selection), { notFound: true });
    // From here on a kill leaves a marker: the same forget run again finishes the work.
    if (!dryRun && !marker)
      writeFileDurable(paths.forgetMarker, JSON.stringify({ v: 1, started: Date.now(), request, selection } satisfies Marker));

    // 1. The new chain's objects.
    if (rewriter) await writeObjects(paths, 'tree', rewriter.written, scratch, objectDir);
    const byId = new Map(records.map((r) => [r.id, r]));
    const stepById = new Map(steps.map((s) => [s.record.id, s]));
    const summaries = await chainSummaries(read, rewriting, byId, stepById, test);
    const raws = new Map<string, string>();
    await forEachObject(
      repo,
      rewriting.map((s) => s.record.id),
      (id, content) => {
        raws.set(id, content.toString('utf8'));
      },
    );
    const ids = new Map<string, string>();
    const commits = new Map<string, string>();
    for (const s of rewriting) {
      const r = s.record;
      const parent = s.parent === null ? null : (ids.get(s.parent) ?? s.parent);
      const text = rewriteCommit(raws.get(r.id)!, {
        tree: s.tree,
        parent,
        ids,
        stats: summaries.get(r.id)?.stats,
        formerIds: [...(r.formerIds ?? []), r.id],
      });
      const id = objectId('commit', Buffer.from(text), r.id.length);
      ids.set(r.id, id);
      commits.set(id, text);
    }
    await writeObjects(paths, 'commit', commits, scratch, objectDir);
    const keptIds = new Set(steps.map((s) => s.record.id));
    const next = steps.map((s) =>
      withBaseTree(
        s.rewrite
          ? rewriteRecord(s.record, {
              id: ids.get(s.record.id)!,
              parent: s.parent === null ? null : (ids.get(s.parent) ?? s.parent),
              tree: s.tree,
              ids,
              summary: summaries.get(s.record.id),
            })
          : s.record,
        s.parent !== null && keptIds.has(s.parent),
        newParentTrees.get(s.record.id),
      ),
    );
    // The ledger keeps its order.
    const position = new Map(records.map((r, i) => [r.id, i]));
    const ledgerOrder = steps.map((s, i) => ({ at: position.get(s.record.id)!, r: next[i]! })).sort((a, b) => a.at - b.at);
    const newRecords = ledgerOrder.map((x) => x.r);

    // 2. What the store keeps: the new chain's objects and the new index's blobs; what leaves.
    // A checkpoint whose commit is gone has nothing to list (rev-list refuses a missing start).
    const whole = (r: CheckpointRecord) => degraded[r.id] !== 'commit';
    const after = await objectsOf(read, recordObjects(newRecords.filter(whole)));
    const indexFile = index ? index.file : paths.indexFile;
    // A pending journal this forget leaves alone (one it would touch is refused) keeps its blobs, as gc does.
    const blobs = [
      ...(indexFile && existsSync(indexFile) ? await indexBlobs(paths, indexFile) : []),
      ...(await presentObjects(paths, journalBlobs(journal))),
    ];
    const keep = new Set([...after.names.keys(), ...blobs]);
    const before = await objectsOf(
      repo,
      records.filter(whole).map((r) => r.id),
    );
    for (const e of existsSync(paths.indexFile) ? await indexEntries(paths) : [])
      if (!before.names.has(e.oid)) before.names.set(e.oid, e.path);
    const all = await storeObjects(repo);
    let leaving = 0;
    let leavingBytes = 0;
    let leftovers = 0;
    const versions = new Map<string, number>();
    for (const [id, { type, size }] of all) {
      if (keep.has(id)) continue;
      leaving++;
      leavingBytes += size;
      const name = before.names.get(id);
      if (name === undefined) leftovers++;
      else if (type === 'blob' && name !== '') versions.set(name, (versions.get(name) ?? 0) + 1);
    }
    const removedPaths = new Map<string, number>();
    const stillStored = new Set<string>();
    for (const removed of removedBy.values())
      for (const e of removed) {
        removedPaths.set(e.path, (removedPaths.get(e.path) ?? 0) + 1);
        if (keep.has(e.oid) && e.mode !== '160000') stillStored.add(e.path);
      }
    const report: ForgetReport = {
      dryRun,
      command: requestCommand(request),
      selection,
      dropped: records
        .filter((r) => drop.has(r.id))
        .map((r) => ({ id: r.id, time: r.time, session: r.session, kind: r.kind, why: drop.get(r.id)! })),
      rewritten: rewriting.map((s) => ({ from: s.record.id, to: ids.get(s.record.id)! })),
      kept: newRecords.length,
      paths: [...removedPaths].map(([p, n]) => ({ path: p, checkpoints: n })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      stillStored: [...stillStored].sort(),
      content: [...versions].map(([p, n]) => ({ path: p, versions: n })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      objects: leaving,
      leftovers,
      bytesBefore,
      bytesAfter: Math.max(0, bytesBefore - leavingBytes + (objectDir ? dirSize(objectDir) : 0)),
      forgottenFile: test ? paths.forgotten : null,
      indexChanged: index !== undefined,
      resumed: marker !== undefined,
    };
    if (dryRun) return report;

    // 3 and 4: the new pack, the commit point, the old objects deleted.
    await replaceObjects(paths, `${after.listing}${blobs.join('\n')}\n`, () => {
      if (selection.kind === 'paths') rememberPatterns(paths, selection.patterns);
      if (index?.file) renameSync(index.file, paths.indexFile);
      else if (index) rmSync(paths.indexFile, { force: true });
      if (index) fsyncFolder(paths.dir);
      purgeBackups(
        paths,
        records.filter((r) => drop.has(r.id)),
      );
      writeFileDurable(paths.ledger, newRecords.map((r) => `${JSON.stringify(r)}\n`).join(''));
    });
    if (selection.kind === 'session') await forgetSessionState(paths.dir, selection.session);
    const packState = readPackState(paths);
    writeFileAtomic(paths.packState, JSON.stringify({ ...packState, looseEstimate: 0 }));
    rmSync(paths.forgetMarker, { force: true });
    fsyncFolder(paths.dir);
    report.bytesAfter = dirSize(paths.dir);
    return report;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Each rewritten checkpoint's change, when its parent's tree or its own tree
 * changed: from git's diff of the new pair, or (its parent unknown, gc dropped
 * it) the record's own list without the forgotten paths.
 */
async function chainSummaries(
  read: RepoAccess & { scratchObjectDir?: string },
  rewriting: readonly ChainStep[],
  byId: ReadonlyMap<string, CheckpointRecord>,
  stepById: ReadonlyMap<string, ChainStep>,
  test: PathTest | undefined,
): Promise<Map<string, ChangeSummary>> {
  const summaries = new Map<string, ChangeSummary>();
  const pairs = new Map<string, string>();
  for (const s of rewriting) {
    const r = s.record;
    const treeOf = (id: string | null, tree: (rec: CheckpointRecord) => string | undefined) =>
      id === null ? EMPTY_TREE : byId.has(id) ? tree(byId.get(id)!) : undefined;
    const oldBase = treeOf(r.parent, (p) => p.tree);
    const newBase = treeOf(s.parent, (p) => stepById.get(p.id)?.tree ?? p.tree);
    if (newBase !== undefined) {
      if (newBase !== oldBase || s.tree !== r.tree) pairs.set(r.id, `${newBase} ${s.tree}`);
    } else if (s.tree !== r.tree && test) summaries.set(r.id, summaryWithout(r, test));
  }
  const changes = await diffPairs(read, [...new Set(pairs.values())]);
  const sizes = await objectSizes(
    read,
    [...changes.values()].flat().flatMap((c) => (c.after && c.after.mode !== '160000' ? [c.after.oid] : [])),
    '%(objectsize)',
  );
  for (const [id, pair] of pairs)
    summaries.set(
      id,
      changeSummary(changes.get(pair) ?? [], (oid) => sizes.get(oid) ?? 0),
    );
  return summaries;
}
