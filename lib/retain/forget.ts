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
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAddress, resolveAddress, resolveInView, resolveSession } from '../model/address.js';
import { gitCall, type StoreContext } from '../store/context.js';
import { CkptError } from '../model/errors.js';
import {
  changeSummary,
  checkPatterns,
  namesForgottenPath,
  planFetchedDrop,
  textsWithout,
  type RecordTexts,
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
import { forEachObject, objectSizes, treeChanges, type RepoAccess } from '../git/objects.js';
import { findDebris, indexBlobs, indexEntries, looseObjectPath, looseObjects, presentObjects, recordObjects } from '../store/packs.js';
import { EMPTY_TREE, isObjectId } from '../model/oid.js';
import { probeDegraded, type DegradedMap } from '../store/probe.js';
import type { TreeChange } from '../model/tree.js';
import { git, splitZ } from '../git/runner.js';
import { readForgotten } from '../capture/scan.js';
import { forgetSessionState, scrubSessionTexts } from '../store/sessions.js';
import { readFetched, readShareState, writeShareState, type ShareState } from '../store/share-state.js';
import { parseShareRef, readExportCommit, REMOTE_REFS } from '../model/share-plan.js';
import { readCommitText } from '../model/trailers.js';
import { dirSize, fsyncFolder, OBJECT_CACHES, writeFileAtomic, writeFileDurable, type StorePaths } from '../store/store.js';

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
  /** --path: records whose texts (message, input, error, prompt title) named a forgotten path, now replaced by a mark. */
  texts: number;
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
  /**
   * Export chains that carried what went (dropped here; the next push makes the session's chain again),
   * with the remotes that were given them and the bundle files this store made with them: those still
   * hold it until `unpush` and the host's purge, or the file's deletion.
   */
  shared: { ref: string; session: string | null; remotes: { label: string; url: string }[]; bundles: string[] }[];
  /** Fetched checkpoints dropped (named, or a fetched session), by session, with the remotes they came from. */
  fetchedDropped: { session: string | null; checkpoints: number; remotes: string[] }[];
  /** --path: fetched sessions that hold a matched path: another store's history, kept; `forget --session <it>` drops one. */
  fetchedHolding: { session: string; checkpoints: number }[];
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
  const ids = (v: unknown) => Array.isArray(v) && v.every(isObjectId);
  const ok =
    m?.v === 1 &&
    typeof m.request === 'object' &&
    m.request !== null &&
    !!s &&
    ((s.kind === 'checkpoints' && ids(s.ids) && (s.fetched === undefined || ids(s.fetched))) ||
      (s.kind === 'session' && typeof s.session === 'string' && (s.foreign === undefined || s.foreign === true)) ||
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

/**
 * The request resolved against the ledger: addresses to ids (degraded ones may be named), a session
 * prefix, a date. Checkpoints fetched from other stores are forgotten only when named: by an address
 * that finds no checkpoint of this workspace's, or as a fetched session (`<session>@<writer>`).
 */
function resolveSelection(
  root: string,
  records: readonly CheckpointRecord[],
  fetched: readonly CheckpointRecord[],
  degraded: DegradedMap,
  request: ForgetRequest,
  now: number,
): ForgetSelection {
  if ('checkpoints' in request) {
    const all = [...fetched, ...records];
    const own: string[] = [];
    const foreign: string[] = [];
    for (const a of request.checkpoints) {
      let r: CheckpointRecord;
      if (parseAddress(a).kind !== 'prefix') r = resolveInView({ records: all, degraded }, a);
      else {
        try {
          r = resolveAddress(records, a);
        } catch (err) {
          if (!fetched.length || !(err instanceof CkptError) || err.data.notFound !== true) throw err;
          r = resolveAddress(fetched, a);
        }
      }
      (r.origin ? foreign : own).push(r.id);
    }
    return { kind: 'checkpoints', ids: [...new Set(own)], ...(foreign.length ? { fetched: [...new Set(foreign)] } : {}) };
  }
  if ('session' in request) {
    const session = resolveSession([...fetched, ...records], request.session);
    const foreign = !records.some((r) => r.session === session);
    return { kind: 'session', session, ...(foreign ? { foreign: true as const } : {}) };
  }
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

/** Every object in the store, with its type. */
async function storeObjects(repo: RepoAccess): Promise<Map<string, string>> {
  const { stdout } = await git({
    verb: 'cat-file',
    args: ['--batch-all-objects', '--batch-check=%(objectname) %(objecttype)'],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
  });
  const all = new Map<string, string>();
  for (const line of stdout.toString('utf8').split('\n')) {
    const [id, type] = line.split(' ');
    if (id && type) all.set(id, type);
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

/** The store's forgotten file with these patterns added (undefined: it has them all already). */
function forgottenText(paths: StorePaths, patterns: readonly string[]): string | undefined {
  const known = readForgotten(paths);
  const fresh = patterns.filter((p) => !known.includes(p));
  if (fresh.length === 0) return undefined;
  let text = '';
  try {
    text = readFileSync(paths.forgotten, 'utf8');
  } catch {
    text =
      '# Patterns `git ckpt forget --path` removed from every checkpoint (gitignore syntax).\n' +
      '# Files they match are never captured again; delete a line to capture them again.\n';
  }
  if (text && !text.endsWith('\n')) text += '\n';
  return `${text}${fresh.join('\n')}\n`;
}

/** A file's size now (0 when there is none). */
function fileBytes(file: string): number {
  try {
    return lstatSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * Ledger backups (`fsck --rebuild-ledger` keeps the ledger it replaced) without
 * the dropped checkpoints' records: their messages, inputs and prompt titles go too;
 * with `scrub` (--path), the texts of the records kept that name a forgotten path are replaced.
 */
function purgeBackups(
  paths: StorePaths,
  dropped: readonly CheckpointRecord[],
  scrub?: (r: CheckpointRecord) => RecordTexts | undefined,
): void {
  if (dropped.length === 0 && !scrub) return;
  const gone = new Set(dropped.flatMap((r) => [r.id, ...(r.formerIds ?? [])]));
  const prefix = `${path.basename(paths.ledger)}.bak-`;
  for (const name of readdirSync(paths.dir)) {
    if (!name.startsWith(prefix)) continue;
    const file = path.join(paths.dir, name);
    const lines = readFileSync(file, 'utf8').split('\n');
    let changed = false;
    const kept = lines.flatMap((line) => {
      let r: CheckpointRecord | null;
      try {
        r = JSON.parse(line) as CheckpointRecord | null;
      } catch {
        return [line];
      }
      if (typeof r?.id === 'string' && gone.has(r.id)) {
        changed = true;
        return [];
      }
      const texts = r && typeof r === 'object' && scrub ? scrub(r) : undefined;
      if (!texts) return [line];
      changed = true;
      return [JSON.stringify({ ...r, ...texts })];
    });
    if (changed) writeFileDurable(file, kept.join('\n'));
  }
}

/** Remove scratch folders that killed forgets left behind (only forget makes them, under the lock). */
function removeOldScratch(paths: StorePaths): void {
  for (const name of readdirSync(paths.dir))
    if (name.startsWith('forget.tmp-')) rmSync(path.join(paths.dir, name), { recursive: true, force: true });
}

export async function forgetLocked(ctx: StoreContext, request: ForgetRequest, options: ForgetOptions = {}): Promise<ForgetReport> {
  const { paths } = ctx;
  const root = ctx.location.root;
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
  // What travels (export chains) and what came from other stores (fetched checkpoints): kept, as gc
  // keeps them, unless this forget takes what they hold (a tampered share.json is refused, never guessed at).
  const share = readShareState(paths);
  const fetched = readFetched(paths).records;
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
  const selection = marker?.selection ?? resolveSelection(root, records, fetched, degraded, request, options.now ?? Date.now());
  const drop = planDrop(records, selection);
  const fetchedDrop = planFetchedDrop(
    fetched,
    selection.kind === 'checkpoints'
      ? (selection.fetched ?? [])
      : selection.kind === 'session' && selection.foreign
        ? fetched.filter((r) => r.session === selection.session).map((r) => r.id)
        : [],
  );
  const test = selection.kind === 'paths' ? await pathTest(selection.patterns) : undefined;
  const shared = await readShared(paths, share, fetched);

  // --path: every checkpoint's tree without what the patterns match, and every text that names one.
  const newTrees = new Map<string, string>();
  const newParentTrees = new Map<string, string>();
  const removedBy = new Map<string, RemovedEntry[]>();
  const texts = new Map<string, RecordTexts>();
  let rewriter: TreeRewriter | undefined;
  if (test && selection.kind === 'paths') {
    const broken = records.filter((r) => degraded[r.id]);
    if (broken.length)
      throw new CkptError(
        'degraded',
        `forget --path needs every checkpoint whole, and ${broken.length} ${broken.length === 1 ? 'is' : 'are'} degraded (${shortId(broken[0]!.id)}${broken.length > 1 ? ', …' : ''}; see git ckpt fsck); forget those first: git ckpt forget ${broken.map((r) => shortId(r.id)).join(' ')}`,
      );
    rewriter = new TreeRewriter(
      await readTrees(repo, [...records.flatMap((r) => (r.parentTree ? [r.tree, r.parentTree] : [r.tree])), ...shared.trees]),
      test,
      (records[0]?.id ?? shared.trees[0] ?? '').length || 40,
    );
    for (const r of records) {
      const { oid, removed } = rewriter.root(r.tree);
      if (oid !== r.tree) newTrees.set(r.id, oid);
      if (removed.length) removedBy.set(r.id, removed);
      // The tree gc kept of a dropped parent holds the same paths: it loses them too.
      if (r.parentTree) newParentTrees.set(r.id, rewriter.root(r.parentTree).oid);
      const scrubbed = textsWithout(r, test, root, selection.patterns);
      if (scrubbed) texts.set(r.id, scrubbed);
    }
  }
  const steps = planChain(records, new Set(drop.keys()), newTrees, new Set(texts.keys()));
  const rewriting = steps.filter((s) => s.rewrite);
  for (const s of rewriting)
    if (degraded[s.record.id])
      throw new CkptError(
        'degraded',
        `forget would rewrite checkpoint ${shortId(s.record.id)}, which is degraded (see git ckpt fsck); forget it too: git ckpt forget ${shortId(s.record.id)}`,
      );
  refuseForJournal(journal, drop, steps, test);

  // The export chains that carry what this forget takes: a path it removes (in a tree or named in a
  // text), or a checkpoint it drops. They go whole (a chain cannot skip a commit); the next push makes
  // the session's chain again from what is kept.
  const droppedIds = new Set(records.filter((r) => drop.has(r.id)).flatMap((r) => [r.id, ...(r.formerIds ?? [])]));
  const goneChains = new Set<string>();
  const holdsPath = (c: SharedChain['commits'][number]) =>
    rewriter !== undefined &&
    test !== undefined &&
    selection.kind === 'paths' &&
    ((c.tree !== undefined && shared.present.has(c.tree) && rewriter.holds(c.tree)) ||
      (c.record !== undefined && textsWithout(c.record, test, root, selection.patterns) !== undefined));
  for (const chain of shared.chains) {
    const carries = rewriter ? chain.commits.some(holdsPath) : Object.keys(chain.sources).some((id) => droppedIds.has(id));
    if (carries) goneChains.add(chain.ref);
  }
  // Fetched checkpoints holding a forgotten path are another store's history: kept, and named.
  const fetchedHolding = new Map<string, number>();
  if (rewriter)
    for (const r of fetched)
      if (shared.present.has(r.tree) && rewriter.holds(r.tree)) {
        const key = r.session ?? `(no session, from ${r.origin!.remote}/${r.origin!.writer.slice(0, 6)})`;
        fetchedHolding.set(key, (fetchedHolding.get(key) ?? 0) + 1);
      }

  const bytesBefore = storeBytes(paths);
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
    if (rewriting.length === 0 && drop.size === 0 && fetchedDrop.size === 0 && goneChains.size === 0 && !index && !marker)
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
        texts: texts.get(r.id),
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
              texts: texts.get(s.record.id),
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

    // 2. What the store keeps: the new chain's objects, the new index's blobs, the export chains and
    // fetched checkpoints this forget leaves; what leaves.
    // A checkpoint whose commit is gone has nothing to list (rev-list refuses a missing start).
    const whole = (r: CheckpointRecord) => degraded[r.id] !== 'commit';
    const keptShared = shared.starts(goneChains, fetchedDrop);
    const after = await objectsOf(read, [...recordObjects(newRecords.filter(whole)), ...keptShared]);
    const indexFile = index ? index.file : paths.indexFile;
    // A pending journal this forget leaves alone (one it would touch is refused) keeps its blobs, as gc does.
    const blobs = [
      ...(indexFile && existsSync(indexFile) ? await indexBlobs(paths, indexFile) : []),
      ...(await presentObjects(paths, journalBlobs(journal))),
    ];
    const keep = new Set([...after.names.keys(), ...blobs]);
    const packList = `${after.listing}${blobs.join('\n')}\n`;
    const before = await objectsOf(repo, [...records.filter(whole).map((r) => r.id), ...shared.starts(new Set(), new Set())]);
    for (const e of existsSync(paths.indexFile) ? await indexEntries(paths) : [])
      if (!before.names.has(e.oid)) before.names.set(e.oid, e.path);
    const all = await storeObjects(repo);
    let leaving = 0;
    let leftovers = 0;
    const versions = new Map<string, number>();
    for (const [id, type] of all) {
      if (keep.has(id)) continue;
      leaving++;
      const name = before.names.get(id);
      if (name === undefined) leftovers++;
      else if (type === 'blob' && name !== '') versions.set(name, (versions.get(name) ?? 0) + 1);
    }
    // The files the commit point rewrites, as they will be, and the caches the repack clears: a dry run counts them too.
    const ledgerText = newRecords.map((r) => `${JSON.stringify(r)}\n`).join('');
    const forgotten = selection.kind === 'paths' ? forgottenText(paths, selection.patterns) : undefined;
    const fileChanges =
      Buffer.byteLength(ledgerText) -
      fileBytes(paths.ledger) +
      (forgotten === undefined ? 0 : Buffer.byteLength(forgotten) - fileBytes(paths.forgotten)) +
      (index ? (index.file ? fileBytes(index.file) : 0) - fileBytes(paths.indexFile) : 0) -
      OBJECT_CACHES.reduce((n, cache) => n + fileBytes(paths[cache]), 0);
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
      texts: texts.size,
      content: [...versions].map(([p, n]) => ({ path: p, versions: n })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      objects: leaving,
      leftovers,
      bytesBefore,
      // A run measures after the repack (below); a dry run packs what is kept into a byte count, as the run would.
      bytesAfter: objectDir ? bytesBefore - objectFileBytes(paths) + packFiles(await packSize(read, packList)) + fileChanges : bytesBefore,
      forgottenFile: test ? paths.forgotten : null,
      indexChanged: index !== undefined,
      resumed: marker !== undefined,
      shared: [...goneChains].map((ref) => whoHolds(share!, ref)),
      fetchedDropped: fetchedGroups(fetched.filter((r) => fetchedDrop.has(r.id))),
      fetchedHolding: [...fetchedHolding].map(([session, checkpoints]) => ({ session, checkpoints })),
    };
    if (dryRun) return report;

    // 3 and 4: the refs of what goes, the new pack, the commit point, the old objects deleted.
    await deleteRefs(
      ctx,
      [...goneChains, ...(await trackingRefsOf(ctx, fetchedDrop))],
      records[0]?.id.length ?? fetched[0]?.id.length ?? 40,
    );
    await replaceObjects(paths, packList, () => {
      // The forgotten patterns, durably, before the ledger commit: never captured again.
      if (forgotten !== undefined) writeFileDurable(paths.forgotten, forgotten);
      if (index?.file) renameSync(index.file, paths.indexFile);
      else if (index) rmSync(paths.indexFile, { force: true });
      if (index) fsyncFolder(paths.dir);
      if (share && goneChains.size) writeShareState(paths, withoutChains(share, goneChains));
      if (fetchedDrop.size) writeLinesWithout(paths.fetched, fetchedDrop);
      purgeBackups(
        paths,
        records.filter((r) => drop.has(r.id)),
        test && selection.kind === 'paths' ? (r) => textsWithout(r, test, root, selection.patterns) : undefined,
      );
      writeFileDurable(paths.ledger, ledgerText);
    });
    if (selection.kind === 'session' && !selection.foreign) await forgetSessionState(paths.dir, selection.session);
    if (test && selection.kind === 'paths') {
      const mark = (what: string) => `[${what} removed by forget --path ${selection.patterns.join(' --path ')}]`;
      await scrubSessionTexts(paths.dir, (text, what) => (namesForgottenPath(text, test, root) ? mark(what) : undefined));
    }
    const packState = readPackState(paths);
    writeFileAtomic(paths.packState, JSON.stringify({ ...packState, looseEstimate: 0 }));
    rmSync(paths.forgetMarker, { force: true });
    fsyncFolder(paths.dir);
    // Measured once the scratch folder (the new objects' files, the index copy) is gone too.
    rmSync(scratch, { recursive: true, force: true });
    report.bytesAfter = storeBytes(paths);
    return report;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** An export chain as forget weighs it: its commits (their trees and, for checkpoints, their records), and what it exported. */
interface SharedChain {
  ref: string;
  sources: Record<string, string>;
  commits: { id: string; tree?: string; record?: CheckpointRecord }[];
}

/**
 * What sharing keeps in the store besides the ledger's checkpoints: the export chains (share.json) and
 * the fetched checkpoints (fetched.jsonl, read whole: a record the views leave out keeps its objects
 * too), with the commits and trees of theirs the store still holds.
 */
async function readShared(
  paths: StorePaths,
  share: ShareState | undefined,
  fetched: readonly CheckpointRecord[],
): Promise<{
  chains: SharedChain[];
  trees: string[];
  present: Set<string>;
  starts: (goneChains: ReadonlySet<string>, goneFetched: ReadonlySet<string>) => string[];
}> {
  const rawFetched = readLedger(paths.fetched).records;
  const chainIds = Object.entries(share?.exports ?? {}).map(([ref, c]) => ({
    ref,
    sources: c.sources,
    ids: [...new Set([...(c.base ? [c.base] : []), ...Object.values(c.sources), c.tip])],
  }));
  const wanted = [...chainIds.flatMap((c) => c.ids), ...rawFetched.flatMap((r) => [...recordObjects([r]), r.tree])];
  const present = new Set(await presentObjects(paths, [...new Set(wanted)]));
  const raw = new Map<string, string>();
  await forEachObject(
    { gitDir: paths.gitDir, cwd: paths.dir },
    chainIds.flatMap((c) => c.ids).filter((id) => present.has(id)),
    (id, content) => void raw.set(id, content.toString('utf8')),
  );
  const chains = chainIds.map(({ ref, sources, ids }) => ({
    ref,
    sources,
    commits: ids
      .filter((id) => raw.has(id))
      .map((id) => {
        const text = raw.get(id)!;
        const commit = readExportCommit(id, text);
        return { id, tree: readCommitText(text).tree, ...(commit && !commit.base ? { record: commit.record } : {}) };
      }),
  }));
  const trees = [
    ...chains.flatMap((c) => c.commits.flatMap((x) => (x.tree && isObjectId(x.tree) ? [x.tree] : []))),
    ...fetched.filter((r) => present.has(r.tree)).map((r) => r.tree),
  ];
  // A tree listed here must be readable: one whose objects are gone is left out (its chain is lost anyway).
  const treesPresent = new Set(await presentObjects(paths, [...new Set(trees)]));
  return {
    chains,
    trees: [...treesPresent],
    present: new Set([...present, ...treesPresent]),
    starts: (goneChains, goneFetched) =>
      [
        ...chainIds.filter((c) => !goneChains.has(c.ref)).flatMap((c) => c.ids),
        ...rawFetched.filter((r) => !goneFetched.has(r.id)).flatMap((r) => recordObjects([r])),
      ].filter((id) => present.has(id)),
  };
}

/** Who still holds an export chain forget drops: the remotes that were given it, and the bundle files this store made with it. */
function whoHolds(share: ShareState, ref: string): ForgetReport['shared'][number] {
  const remotes = Object.entries(share.pushed)
    .filter(([, tips]) => tips[ref])
    .map(([label]) => ({ label, url: share.remotes[label]?.url ?? '' }));
  const bundles = Object.entries(share.bundleFiles ?? {})
    .filter(([file, refs]) => refs.includes(ref) && existsSync(file))
    .map(([file]) => file);
  return { ref, session: share.exports[ref]?.session ?? null, remotes, bundles };
}

/**
 * Pure: the share state without the chains forget dropped: no export, no tip pushed or bundled; a chain
 * a remote was given is remembered as dropped there, so the next push of its session says to `unpush`
 * first (the chain made again does not continue the remote's, and nothing is forced).
 */
function withoutChains(share: ShareState, gone: ReadonlySet<string>): ShareState {
  const next: ShareState = structuredClone(share);
  for (const ref of gone) {
    const remotes = Object.entries(next.pushed)
      .filter(([, tips]) => tips[ref])
      .map(([label]) => label);
    if (remotes.length) {
      const had = next.dropped?.[ref]?.remotes ?? [];
      next.dropped = {
        ...next.dropped,
        [ref]: { session: next.exports[ref]?.session ?? null, remotes: [...new Set([...had, ...remotes])] },
      };
    }
    delete next.exports[ref];
    delete next.bundled[ref];
    for (const tips of Object.values(next.pushed)) delete tips[ref];
  }
  return next;
}

/** Fetched checkpoints by session (a chain's base with the session it is the start of), with the remotes they came from. */
function fetchedGroups(dropped: readonly CheckpointRecord[]): ForgetReport['fetchedDropped'] {
  const groups = new Map<string, { session: string | null; checkpoints: number; remotes: Set<string> }>();
  const sessionAfter = new Map(dropped.flatMap((r) => (r.parent !== null && r.session !== null ? [[r.parent, r.session] as const] : [])));
  for (const r of dropped) {
    const session = r.session ?? sessionAfter.get(r.id) ?? null;
    const key = session ?? `${r.origin!.writer}`;
    const g = groups.get(key) ?? { session, checkpoints: 0, remotes: new Set<string>() };
    g.checkpoints++;
    g.remotes.add(r.origin!.remote);
    groups.set(key, g);
  }
  return [...groups.values()].map((g) => ({ session: g.session, checkpoints: g.checkpoints, remotes: [...g.remotes] }));
}

/** The refs under refs/ckpt-remote/ whose tip is a fetched checkpoint this forget drops. */
async function trackingRefsOf(ctx: StoreContext, dropped: ReadonlySet<string>): Promise<string[]> {
  if (dropped.size === 0) return [];
  const { stdout } = await git({
    gitDir: ctx.paths.gitDir,
    cwd: ctx.paths.dir,
    verb: 'for-each-ref',
    // Every ref (the shadow repository holds only git-ckpt's): a pattern would match one level only.
    args: ['--format=%(objectname) %(refname)'],
  });
  return stdout
    .toString('utf8')
    .split('\n')
    .flatMap((line) => {
      const [tip, ref] = line.split(' ');
      return tip && ref?.startsWith(`${REMOTE_REFS}/`) && dropped.has(tip) && parseShareRef(ref) ? [ref] : [];
    });
}

/** Delete git-ckpt's own refs in the shadow repository (an update to the null id deletes a ref). */
async function deleteRefs(ctx: StoreContext, refs: readonly string[], oidLength: number): Promise<void> {
  const none = '0'.repeat(oidLength);
  for (const ref of refs)
    await git({ gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir, verb: 'update-ref', args: [{ ref }, { oid: none }], okCodes: [1, 128] });
}

/** A JSONL file (fetched checkpoints) without the records of these ids, durably; unreadable lines stay as they were. */
function writeLinesWithout(file: string, ids: ReadonlySet<string>): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  const kept = lines.filter((line) => {
    try {
      const id = (JSON.parse(line) as { id?: unknown } | null)?.id;
      return !(typeof id === 'string' && ids.has(id));
    } catch {
      return true;
    }
  });
  writeFileDurable(file, kept.join('\n'));
}

/** The store's size as it stays: the locks this forget holds (links naming their owner) are not counted. */
function storeBytes(paths: StorePaths): number {
  return dirSize(paths.dir) - fileBytes(paths.lock) - fileBytes(paths.shareLock);
}

/** The bytes of the store's object files: its loose objects and its packs (what replaceObjects replaces by one pack). */
function objectFileBytes(paths: StorePaths): number {
  let loose = 0;
  for (const id of looseObjects(paths))
    try {
      loose += lstatSync(looseObjectPath(paths, id)).size;
    } catch {
      /* gone */
    }
  return dirSize(paths.packDir) + loose;
}

/**
 * The pack `replaceObjects` would write of these objects (the same `pack-objects` run, its deltas
 * included), counted as it streams by, never written: its bytes and how many objects it holds.
 */
async function packSize(repo: RepoAccess & { scratchObjectDir?: string }, list: string): Promise<{ bytes: number; objects: number }> {
  let bytes = 0;
  let head = Buffer.alloc(0);
  await git({
    verb: 'pack-objects',
    args: ['-q', '--window=10', '--stdout'],
    gitDir: repo.gitDir,
    cwd: repo.cwd,
    scratchObjectDir: repo.scratchObjectDir,
    input: list
      .split('\n')
      .filter(Boolean)
      .map((line) => `${line}\n`)
      .join(''),
    collectStdout: false,
    onStdout: (chunk) => {
      bytes += chunk.length;
      if (head.length < 12) head = Buffer.concat([head, chunk.subarray(0, 12 - head.length)]);
    },
  });
  return { bytes, objects: head.length === 12 ? head.readUInt32BE(8) : 0 };
}

/**
 * Pure: the files a pack of `objects` makes in the store: the pack, its index (git's version 2: a
 * fan-out table and 28 bytes an object, more past 2 GiB) and its `.keep` mark. On a store of a few
 * loose objects that is more than what leaves: it grows, and the report says so.
 */
function packFiles(pack: { bytes: number; objects: number }): number {
  const bigOffsets = pack.bytes > 2 ** 31 ? pack.objects * 8 : 0;
  return pack.bytes + 8 + 256 * 4 + pack.objects * 28 + bigOffsets + 40 + 'git-ckpt\n'.length;
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
