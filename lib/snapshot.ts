/**
 * Snapshot: one stat pass (`git ls-files -m -d -o` against the persistent shadow
 * index), hashing of the changed files only (`git add` in bounded batches, so a
 * budget kill keeps every finished batch), `write-tree`, and a `commit-tree` whose
 * parent is the previous checkpoint. Large batches are streamed straight into a
 * pack (core.bigFileThreshold), so a first snapshot never leaves tens of thousands
 * of loose objects behind.
 */
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, existsSync } from 'node:fs';
import { planRetention, retentionPolicy } from './retention.js';
import { probeDegraded } from './probe.js';
import path from 'node:path';
import { batchLimits, parentDirs, parseScan, stageUnits, takeBatch, planCapture, secretMatcher, NO_SECRETS, type NewDirExpansion, type PathFacts, type ScanResult } from './capture-plan.js';
import { CkptError, isCkptError } from './errors.js';
import { appendRecord, assertWritableSchema, LEDGER_SCHEMA, PATHS_KEPT, readLatest, readLedger, SKIPPED_KEPT, type ChangedPath, type CheckpointKind, type CheckpointRecord, type HookFields, type OperationInfo, type SkippedPath } from './ledger.js';
import { TMP_PREFIX, unsafePathReason } from './paths.js';
import { cliEntry } from './layout.js';
import { CHECKPOINT_AUTHOR, commitMessage } from './trailers.js';
import { EMPTY_TREE, findDebris, keepAllPacks, looseObjects } from './objects.js';
import { git, splitZ, type GitCall } from './runner.js';
import type { Settings } from './settings.js';
import { writeFileAtomic, type StorePaths } from './store.js';
import type { WorkspaceLocation } from './locate.js';

export interface SnapshotOptions {
  message?: string;
  session?: string;
  turn?: number;
  step?: number;
  tool?: string;
  kind?: CheckpointKind;
  /** Agent hooks: who made the change and how (agent, phase, tool call, input summary, failure, subagent, turn title). */
  hook?: HookFields;
  /**
   * Workspace-relative files to leave as the latest checkpoint has them (files a
   * running subagent call is writing: its own post will capture them).
   */
  holdPaths?: string[];
  /** Override the time budget (ms); 0 disables it. */
  timeBudgetMs?: number;
  /** Called while files are hashed. */
  onProgress?: (progress: SnapshotProgress) => void;
  signal?: AbortSignal;
  /** Stage the workspace and write its tree, but create no checkpoint (diff and status use this). */
  dryCommit?: boolean;
  /** Create a checkpoint even when the tree equals the latest one (restore records). */
  force?: boolean;
  /**
   * The changed files hold content the store already has (right after a restore):
   * hash into loose objects, which git skips writing when they exist, instead of
   * streaming every blob into a new pack.
   */
  knownContent?: boolean;
  /** Restore, revert and undo records: what the operation did, given the captured tree (it verifies against it). */
  operation?: (tree: string) => Promise<OperationInfo>;
}

export interface SnapshotProgress {
  hashed: number;
  total: number;
  elapsedMs: number;
  first: boolean;
}

export interface SnapshotResult {
  created: boolean;
  /** The new checkpoint, or the latest one when nothing changed (undefined in an empty store). */
  id?: string;
  /** The workspace's tree as captured. */
  tree?: string;
  record?: CheckpointRecord;
  skipped: SkippedPath[];
  skippedCount: number;
  elapsedMs: number;
}



/**
 * zlib level of the packs snapshots stream into. git's default (6) spent a
 * third more time on a 3,000-file first snapshot for 2.4% less disk than 4
 * (measured: 1.11 s / 12.9 MB against 0.77 s / 13.2 MB); 1 saved little more
 * time for 11% more disk.
 */
const PACK_COMPRESSION = 4;

/** Below this many files a batch writes loose objects; above it, one pack. */
const PACK_BATCH_MIN = 64;
/** A directory pathspec stands for at most this many files. */
const MAX_DIR_UNIT = 500;
/** Fold files into directory pathspecs only from this many staged paths on (git matches pathspecs linearly). */
const FOLD_MIN_PATHS = 1000;
/** Consider a background gc every this many new checkpoints. */
const AUTO_GC_EVERY = 200;
/** Pack loose objects once roughly this many have accumulated. */
const LOOSE_PACK_THRESHOLD = 1000;

/**
 * Start `git ckpt gc --auto` in the background when the retention policy has
 * something to drop or the store is over its quota. Checked every
 * AUTO_GC_EVERY checkpoints, and cheap: the pack folder's sizes and a parse of
 * the ledger. The gc waits for this snapshot's lock, so the hook never waits for it.
 */
function maybeStartBackgroundGc(ctx: SnapshotContext): void {
  try {
    const { records } = readLedger(ctx.paths.ledger);
    let bytes = 0;
    const dir = path.join(ctx.paths.gitDir, 'objects', 'pack');
    for (const name of readdirSync(dir)) bytes += statSync(path.join(dir, name)).size;
    const { settings } = ctx;
    const plan = planRetention({ records, now: Date.now(), policy: retentionPolicy(settings), storeBytes: bytes });
    if (plan.drop.length === 0 && bytes <= settings.maxBytes) return;
    const cli = cliEntry();
    // The store root is passed on: a library caller may have opened the workspace with its own.
    const env = { ...process.env, GIT_CKPT_HOME: path.dirname(ctx.paths.dir) };
    const child = spawn(process.execPath, [cli, '-C', ctx.location.root, 'gc', '--auto'], { detached: true, stdio: 'ignore', env });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    /* housekeeping only: the next check tries again */
  }
}

/** The newest checkpoint whose commit object still exists, or null. */
async function newestIntactParent(ctx: SnapshotContext): Promise<string | null> {
  const { records } = readLedger(ctx.paths.ledger);
  const degraded = await probeDegraded(ctx.paths, records);
  for (let i = records.length - 1; i >= 0; i--) if (degraded[records[i]!.id] !== 'commit') return records[i]!.id;
  return null;
}

export interface SnapshotContext {
  location: WorkspaceLocation;
  paths: StorePaths;
  settings: Settings;
  /**
   * A throw-away index and object directory: the capture runs as usual but the
   * store stays byte-identical (restore --dry-run). Implies dryCommit.
   */
  scratch?: { indexFile: string; objectDir: string };
}

function gitCall(ctx: SnapshotContext, call: GitCall): GitCall {
  return {
    gitDir: ctx.paths.gitDir,
    workTree: ctx.location.root,
    indexFile: ctx.scratch?.indexFile ?? ctx.paths.indexFile,
    scratchObjectDir: ctx.scratch?.objectDir,
    cwd: ctx.location.root,
    ...call,
  };
}

/** A deadline that aborts running git children when the budget runs out. */
/**
 * A snapshot's time budget. It runs out only once the snapshot has made
 * progress (`arm()`, called after its first batch is staged): a scan that
 * alone outlasts the budget still hashes one batch, so repeated runs on a
 * huge workspace or a slow disk always converge. An outer abort is immediate.
 */
export class Deadline {
  readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private armed = false;
  private expired?: CkptError;
  readonly start = Date.now();
  constructor(budgetMs: number, outer?: AbortSignal) {
    if (budgetMs > 0) {
      this.timer = setTimeout(() => {
        this.expired = new CkptError('budget', `time budget of ${budgetMs} ms ran out`);
        if (this.armed) this.controller.abort(this.expired);
      }, budgetMs);
      this.timer.unref();
    }
    outer?.addEventListener('abort', () => this.controller.abort(outer.reason), { once: true });
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  /** From now on the budget stops the snapshot (at once, if it already ran out). */
  arm(): void {
    this.armed = true;
    if (this.expired) this.controller.abort(this.expired);
  }
  elapsed(): number {
    return Date.now() - this.start;
  }
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

/**
 * The shadow repository's exclude file: the user's `.git/info/exclude` plus the
 * workspace's `.ckptignore`. Rewritten only when its sources change.
 */
export function syncExcludes(location: WorkspaceLocation, paths: StorePaths, readOnly = false): void {
  const parts = ['# generated by git-ckpt from the sources named below; do not edit\n', `# restore's temporary files\n${TMP_PREFIX}*\n`];
  const read = (file: string, label: string) => {
    try {
      parts.push(`# ${label}\n`, readFileSync(file, 'utf8'), '\n');
    } catch {
      /* absent */
    }
  };
  if (location.userCommonDir) read(path.join(location.userCommonDir, 'info', 'exclude'), 'from .git/info/exclude');
  read(path.join(location.root, '.ckptignore'), 'from .ckptignore');
  // A store root set inside the workspace (GIT_CKPT_HOME, XDG_STATE_HOME) must never capture itself.
  const storeInside = path.relative(location.root, path.dirname(paths.dir));
  if (storeInside === '') parts.push(`# the store\n/${path.basename(paths.dir)}/\n`);
  else if (!storeInside.startsWith('..') && !path.isAbsolute(storeInside)) parts.push(`# the store root\n/${storeInside.split(path.sep).join('/')}/\n`);
  const wanted = parts.join('');
  let current = '';
  try {
    current = readFileSync(paths.excludeFile, 'utf8');
  } catch {
    /* first time */
  }
  if (current !== wanted && !readOnly) writeFileAtomic(paths.excludeFile, wanted);
}

/** Remove what a killed git child leaves behind. Only called while holding the workspace lock. */
export function removeGitDebris(paths: StorePaths): void {
  for (const file of findDebris(paths, false)) rmSync(file, { recursive: true, force: true });
}

async function scanWorkspace(ctx: SnapshotContext, directoryMode: boolean, signal: AbortSignal): Promise<ScanResult> {
  const args = ['-z', '-t', '-m', '-d', '-o', '--exclude-standard'];
  if (directoryMode) args.push('--directory', '--no-empty-directory');
  const { stdout } = await git(gitCall(ctx, { verb: 'ls-files', args, signal }));
  return parseScan(splitZ(stdout));
}

/**
 * List the files of new directories, stopping early on a directory that is over
 * the limit: ls-files prints in path order, so once a directory overflows the
 * listing is cut and restarted on the directories not yet known.
 */
async function expandNewDirs(ctx: SnapshotContext, dirs: string[], maxNewFiles: number, signal: AbortSignal): Promise<NewDirExpansion> {
  const files = new Map<string, string[]>();
  const overLimit = new Map<string, number>();
  let pending = [...dirs].sort();
  while (pending.length) {
    const counts = new Map<string, string[]>(pending.map((d) => [d, []]));
    let overflowed: string | undefined;
    const stop = new AbortController();
    const onOuter = () => stop.abort(signal.reason);
    signal.addEventListener('abort', onOuter, { once: true });
    let carry = Buffer.alloc(0);
    const dirOf = (p: string) => pending.find((d) => p.startsWith(d));
    try {
      await git(
        gitCall(ctx, {
          verb: 'ls-files',
          args: ['-z', '-o', '--exclude-standard'],
          paths: pending,
          signal: stop.signal,
          onStdout(chunk) {
            if (overflowed) return;
            const buf = Buffer.concat([carry, chunk]);
            let start = 0;
            for (let i = 0; i < buf.length; i++) {
              if (buf[i] !== 0) continue;
              const p = buf.toString('utf8', start, i);
              start = i + 1;
              const d = dirOf(p);
              if (!d) continue;
              const list = counts.get(d)!;
              list.push(p);
              if (list.length > maxNewFiles) {
                overflowed = d;
                stop.abort(new Error('overflow'));
                return;
              }
            }
            carry = buf.subarray(start);
          },
        }),
      );
    } catch (err) {
      if (!overflowed) throw err;
    } finally {
      signal.removeEventListener('abort', onOuter);
    }
    if (!overflowed) {
      for (const [d, list] of counts) files.set(d, list);
      break;
    }
    overLimit.set(overflowed, counts.get(overflowed)!.length);
    pending = pending.filter((d) => d !== overflowed);
  }
  return { files, overLimit };
}

function collectFacts(root: string, candidates: Iterable<string>): Map<string, PathFacts> {
  const facts = new Map<string, PathFacts>();
  const linkDirs = new Map<string, boolean>();
  const isLink = (dir: string) => {
    let link = linkDirs.get(dir);
    if (link === undefined) {
      try {
        link = lstatSync(path.join(root, dir)).isSymbolicLink();
      } catch {
        link = false;
      }
      linkDirs.set(dir, link);
    }
    return link;
  };
  for (const p of candidates) {
    if (p.endsWith('/')) continue;
    if ([...parentDirs(p)].some(isLink)) {
      facts.set(p, { kind: 'beyond-symlink', size: 0 });
      continue;
    }
    try {
      const st = lstatSync(path.join(root, p));
      const kind = st.isFile() ? 'file' : st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : 'other';
      facts.set(p, { kind, size: st.size });
    } catch {
      facts.set(p, { kind: 'missing', size: 0 });
    }
  }
  return facts;
}

const ERROR_LINE_RE = /^error: '(.+?)' does not have a commit checked out$/;

async function stageBatch(ctx: SnapshotContext, batch: string[], files: number, packed: boolean, signal: AbortSignal, onHashed: (n: number) => void): Promise<SkippedPath[]> {
  const skipped: SkippedPath[] = [];
  const result = await git(
    gitCall(ctx, {
      verb: 'add',
      args: ['-A', '--ignore-errors', '--verbose', '--pathspec-from-file=-', '--pathspec-file-nul'],
      // One pack per batch instead of a loose file per object.
      configOverrides: packed && files >= PACK_BATCH_MIN ? { 'core.bigFileThreshold': '1', 'pack.compression': String(PACK_COMPRESSION) } : {},
      input: `${batch.join('\0')}\0`,
      okCodes: [1],
      signal,
      onStdout(chunk) {
        let n = 0;
        for (const byte of chunk) if (byte === 10) n++;
        if (n) onHashed(n);
      },
    }),
  );
  for (const line of result.stderr.split('\n')) {
    const m = ERROR_LINE_RE.exec(line);
    if (m) skipped.push({ path: m[1]!, reason: 'nested-repo-without-commit' });
    else if (line.startsWith('error: ') || line.startsWith('warning: could not open')) {
      const quoted = /'([^']+)'/.exec(line) ?? /"([^"]+)"/.exec(line);
      if (quoted) skipped.push({ path: quoted[1]!, reason: 'unreadable' });
    }
  }
  if (result.code !== 0 && skipped.length === 0) {
    throw new CkptError('git', `git add failed: ${result.stderr.split('\n').find((l) => l.trim()) ?? `exit ${result.code}`}`);
  }
  return skipped;
}

/** Drop paths from the shadow index without touching the disk. */
async function forceRemove(ctx: SnapshotContext, paths: string[], signal: AbortSignal): Promise<void> {
  if (paths.length === 0) return;
  await git(gitCall(ctx, { verb: 'update-index', args: ['--force-remove', '-z', '--stdin'], input: `${paths.join('\0')}\0`, signal }));
}

/**
 * Put the given paths back in the index as the latest tree has them (or take
 * them out when it has none). Their index entries then carry no stat data, so
 * the next snapshot hashes them again and captures what is on disk by then.
 */
async function holdBack(ctx: SnapshotContext, paths: string[], latestTree: string | null, signal: AbortSignal): Promise<void> {
  const safe = paths.filter((p) => !unsafePathReason(p));
  if (!safe.length) return;
  const before = new Map<string, string>();
  if (latestTree) {
    const { stdout } = await git(gitCall(ctx, { verb: 'ls-tree', args: ['-r', '-z', '--full-tree', { oid: latestTree }], paths: safe, signal }));
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

/** Index entries below the given directories that the plan did not stage (files that appeared after the scan). */
async function lateArrivals(ctx: SnapshotContext, dirs: string[], planned: Set<string>, signal: AbortSignal): Promise<string[]> {
  const dirSet = new Set(dirs.map((d) => d.slice(0, -1)));
  const { stdout } = await git(gitCall(ctx, { verb: 'ls-files', args: ['-z'], signal }));
  const late: string[] = [];
  for (const p of splitZ(stdout)) {
    if (planned.has(p)) continue;
    for (const dir of parentDirs(p)) {
      if (dirSet.has(dir)) {
        late.push(p);
        break;
      }
    }
  }
  return late;
}

function indexStamp(paths: StorePaths): string | undefined {
  try {
    const st = statSync(paths.indexFile, { bigint: true });
    return `${st.mtimeNs}:${st.size}:${st.ino}`;
  } catch {
    return undefined;
  }
}

interface Stamp {
  tree: string;
  /** When the index's stat data was last refreshed (ms since the epoch). */
  refreshed: number;
  /** When the index was last written by staging files (ms since the epoch). */
  staged: number;
}

/** The tree the index held after the last snapshot, if the index has not changed since. */
function readStamp(paths: StorePaths): Stamp | undefined {
  try {
    const [stamp, tree, refreshed, staged] = readFileSync(paths.indexStamp, 'utf8').trim().split(' ');
    if (stamp && tree && stamp === indexStamp(paths)) return { tree, refreshed: Number(refreshed) || 0, staged: Number(staged) || 0 };
  } catch {
    /* no stamp */
  }
  return undefined;
}

function writeStamp(paths: StorePaths, tree: string, times: { refreshed: number; staged: number }): void {
  const stamp = indexStamp(paths);
  if (stamp) writeFileAtomic(paths.indexStamp, `${stamp} ${tree} ${times.refreshed} ${times.staged}\n`);
}

/**
 * Whether an unchanged snapshot should refresh the index's stat data. Files
 * staged in the same instant the index was written are "racily clean", and so
 * is a file rewritten with the same bytes (`git stash && git stash pop`, a
 * build): every later scan re-hashes them, and no snapshot rewrites the index
 * because nothing changed. So: once, a little after files were staged, and at
 * most every REFRESH_EVERY_MS otherwise.
 */
export function refreshDue(stamp: Pick<Stamp, 'refreshed' | 'staged'> | undefined, now: number): boolean {
  if (!stamp) return true;
  if (stamp.staged > stamp.refreshed) return now - stamp.staged > RACY_SETTLE_MS;
  return now - stamp.refreshed > REFRESH_EVERY_MS;
}

/** Past this, files staged at the index's last write are no longer racy against a new write. */
const RACY_SETTLE_MS = 1500;
const REFRESH_EVERY_MS = 30_000;

async function changedPaths(ctx: SnapshotContext, parent: string | null, commit: string, signal: AbortSignal): Promise<{ changes: ChangedPath[]; added: string[]; modified: string[] }> {
  const args: GitCall['args'] = ['-r', '-z', '--no-renames', '--no-commit-id', '--raw'];
  args.push({ oid: parent ?? EMPTY_TREE }, { oid: commit });
  const { stdout } = await git(gitCall(ctx, { verb: 'diff-tree', args, signal }));
  const parts = splitZ(stdout);
  const changes: ChangedPath[] = [];
  const added: string[] = [];
  const modified: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i]!.split(' ').at(-1)![0] as ChangedPath['status'];
    const p = parts[i + 1]!;
    changes.push({ path: p, status });
    if (status === 'A') added.push(p);
    else if (status === 'M' || status === 'T') modified.push(p);
  }
  return { changes, added, modified };
}

/** Pure: how many trees a change rewrites (the root and every directory on a changed path). */
export function changedDirectories(changes: ChangedPath[]): number {
  const dirs = new Set<string>(['']);
  for (const { path: p } of changes) for (const dir of parentDirs(p)) dirs.add(dir);
  return dirs.size;
}

interface PackState {
  /** Roughly how many loose objects snapshots have written since the last packing. */
  looseEstimate: number;
  /** Checkpoints created since gc last ran or was considered. */
  sinceGc: number;
}

function packStateFile(paths: StorePaths): string {
  return paths.packState;
}

function readPackState(paths: StorePaths): PackState {
  try {
    const state = JSON.parse(readFileSync(packStateFile(paths), 'utf8')) as Partial<PackState>;
    if (Number.isFinite(state.looseEstimate)) return { looseEstimate: state.looseEstimate!, sinceGc: Number.isFinite(state.sinceGc) ? state.sinceGc! : 0 };
  } catch {
    /* none yet */
  }
  return { looseEstimate: 0, sinceGc: 0 };
}

/**
 * Pack the loose objects into one pack and drop the loose copies: thousands of
 * loose trees cost a disk block each, the same content packed costs a fraction.
 */
async function packLooseObjects(ctx: SnapshotContext, state: PackState, signal: AbortSignal): Promise<void> {
  const ids = looseObjects(ctx.paths.gitDir);
  if (ids.length) {
    const packDir = path.join(ctx.paths.gitDir, 'objects', 'pack');
    mkdirSync(packDir, { recursive: true });
    await git({ verb: 'pack-objects', args: ['-q', { literal: 'pack' }], gitDir: ctx.paths.gitDir, cwd: packDir, input: `${ids.join('\n')}\n`, signal });
    keepAllPacks(ctx.paths.gitDir);
    await git({ verb: 'prune-packed', args: ['-q'], gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir, signal });
  }
  writeFileAtomic(packStateFile(ctx.paths), JSON.stringify({ ...state, looseEstimate: 0 }));
}

/**
 * Take one snapshot. The caller holds the workspace lock.
 */
export async function snapshotLocked(ctx: SnapshotContext, opts: SnapshotOptions): Promise<SnapshotResult> {
  const budget = opts.timeBudgetMs ?? ctx.settings.timeBudgetMs;
  const deadline = new Deadline(budget, opts.signal);
  const signal = deadline.signal;
  let hashed = 0;
  let total = 0;
  try {
    const latestRead = readLatest(ctx.paths.ledger);
    assertWritableSchema(latestRead.newestSchema);
    const latest = latestRead.record;
    if (latest && !existsSync(ctx.scratch?.indexFile ?? ctx.paths.indexFile)) {
      // Index lost: rebuild it from the latest tree; stat data is empty, so git rehashes what it must.
      await git(gitCall(ctx, { verb: 'read-tree', args: [{ oid: latest.tree }], signal }));
    }
    syncExcludes(ctx.location, ctx.paths, ctx.scratch !== undefined);
    const first = !latest;

    const scan = await scanWorkspace(ctx, !first, signal);
    const expansion = scan.newDirs.length ? await expandNewDirs(ctx, scan.newDirs, ctx.settings.maxNewFiles, signal) : { files: new Map(), overLimit: new Map() };
    const candidates = [...scan.modified, ...scan.untracked, ...scan.deleted];
    for (const list of expansion.files.values()) candidates.push(...list);
    const facts = collectFacts(ctx.location.root, candidates);
    const secrets = candidates.length ? await secretMatcher(ctx.settings.secretPatterns) : NO_SECRETS;
    const plan = planCapture(scan, expansion, facts, ctx.settings, secrets);
    const skipped = [...plan.skipped];

    const unchanged = plan.stage.length === 0 && plan.forceRemove.length === 0;
    const stamp = unchanged && !ctx.scratch ? readStamp(ctx.paths) : undefined;
    let tree = stamp?.tree;
    if (!tree) {
      total = plan.stage.length;
      const report = () => opts.onProgress?.({ hashed: Math.min(hashed, total), total, elapsedMs: deadline.elapsed(), first });
      const measured = { files: 0, bytes: 0, ms: 0 };
      // Small change sets stay one pathspec per file: folding costs a listing of the whole index afterwards.
      const maxUnit = plan.stage.length >= FOLD_MIN_PATHS ? MAX_DIR_UNIT : 0;
      const units = stageUnits(plan.stage, plan.sizes, [...skipped.map((s) => s.path), ...plan.forceRemove], maxUnit);
      for (let from = 0; from < units.length; ) {
        if (from > 0) deadline.arm();
        deadline.check();
        const limits = batchLimits(budget > 0 ? budget - deadline.elapsed() : undefined, measured.files ? measured : undefined);
        const end = takeBatch(units, from, limits.maxCount, limits.maxBytes);
        const batch = units.slice(from, end);
        const files = batch.reduce((n, u) => n + u.count, 0);
        const started = Date.now();
        skipped.push(
          ...(await stageBatch(ctx, batch.map((u) => u.pathspec), files, !opts.knownContent, signal, (n) => {
            hashed += n;
            report();
          })),
        );
        measured.files += files;
        measured.bytes += batch.reduce((n, u) => n + u.bytes, 0);
        measured.ms += Date.now() - started;
        from = end;
      }
      await forceRemove(ctx, plan.forceRemove, signal);
      const dirUnits = units.filter((u) => u.isDir).map((u) => u.pathspec);
      if (dirUnits.length) {
        // A directory pathspec also takes files that appeared after the scan: hold them to the same limits.
        const late = await lateArrivals(ctx, dirUnits, new Set(plan.stage), signal);
        const latePlan = planCapture({ modified: [], deleted: [], untracked: late, newDirs: [] }, { files: new Map(), overLimit: new Map() }, collectFacts(ctx.location.root, late), ctx.settings, secrets);
        skipped.push(...latePlan.skipped);
        await forceRemove(ctx, latePlan.skipped.map((s) => s.path), signal);
      }
      if (opts.holdPaths?.length) await holdBack(ctx, opts.holdPaths, latest?.tree ?? null, signal);
      tree = (await git(gitCall(ctx, { verb: 'write-tree', signal }))).stdout.toString('utf8').trim();
    }

    const skippedView = { skipped: skipped.slice(0, SKIPPED_KEPT), skippedCount: skipped.length };
    if ((latest && latest.tree === tree && !opts.force) || opts.dryCommit || ctx.scratch) {
      if (latest?.tree === tree && !ctx.scratch) {
        const times = { refreshed: stamp?.refreshed ?? 0, staged: stamp?.staged ?? 0 };
        if (unchanged && refreshDue(stamp, Date.now())) {
          await git(gitCall(ctx, { verb: 'update-index', args: ['-q', '--refresh'], okCodes: [1], signal }));
          times.refreshed = Date.now();
        }
        if (!stamp || times.refreshed !== stamp.refreshed) writeStamp(ctx.paths, tree, times);
      }
      return { created: false, id: latest?.id, tree, record: latest, ...skippedView, elapsedMs: deadline.elapsed() };
    }

    const now = Date.now();
    const meta = {
      time: now,
      session: opts.session ?? null,
      turn: opts.turn ?? null,
      step: opts.step ?? null,
      tool: opts.tool ?? null,
      kind: opts.kind ?? 'manual',
      message: opts.message ?? '',
      stats: { added: 0, modified: 0, deleted: 0 },
      bytes: 0,
      paths: [] as ChangedPath[],
      changed: 0,
      ...skippedView,
      ...(opts.operation ? { op: await opts.operation(tree) } : {}),
      ...opts.hook,
    };
    const isoDate = `@${Math.floor(now / 1000)} +0000`;
    const commitArgs: GitCall['args'] = [{ oid: tree }];
    if (latest) commitArgs.push('-p', { oid: latest.id });
    const identity = {
      GIT_AUTHOR_NAME: CHECKPOINT_AUTHOR.name,
      GIT_AUTHOR_EMAIL: CHECKPOINT_AUTHOR.email,
      GIT_AUTHOR_DATE: isoDate,
      GIT_COMMITTER_NAME: CHECKPOINT_AUTHOR.name,
      GIT_COMMITTER_EMAIL: CHECKPOINT_AUTHOR.email,
      GIT_COMMITTER_DATE: isoDate,
    };
    // The stats trailer needs the diff, and the diff needs a commit: diff the trees first.
    const diff = await changedPaths(ctx, latest?.tree ?? null, tree, signal).catch(async () => ({ changes: [], added: [], modified: [] }));
    meta.stats = {
      added: diff.changes.filter((c) => c.status === 'A').length,
      modified: diff.changes.filter((c) => c.status === 'M' || c.status === 'T').length,
      deleted: diff.changes.filter((c) => c.status === 'D').length,
    };
    meta.bytes = [...diff.added, ...diff.modified].reduce((sum, p) => sum + (plan.sizes.get(p) ?? 0), 0);
    meta.paths = diff.changes.slice(0, PATHS_KEPT);
    meta.changed = diff.changes.length;
    let parent = latest?.id ?? null;
    let committed;
    try {
      committed = await git(gitCall(ctx, { verb: 'commit-tree', args: commitArgs, input: commitMessage(meta), env: identity, signal }));
    } catch (err) {
      if (!latest || signal.aborted) throw err;
      // The latest checkpoint lost its commit (a damaged store): chain to the newest one still whole.
      parent = await newestIntactParent(ctx);
      const args: GitCall['args'] = [{ oid: tree }, ...(parent ? ['-p', { oid: parent }] : [])];
      committed = await git(gitCall(ctx, { verb: 'commit-tree', args, input: commitMessage(meta), env: identity, signal }));
    }
    const id = committed.stdout.toString('utf8').trim();
    const record: CheckpointRecord = { v: LEDGER_SCHEMA, id, parent, tree, ...meta };
    appendRecord(ctx.paths.ledger, record);
    writeStamp(ctx.paths, tree, { refreshed: 0, staged: Date.now() });

    // Packs written by this snapshot's batches are marked .keep at once, so no git command ever drops them.
    if (total >= PACK_BATCH_MIN && !opts.knownContent) keepAllPacks(ctx.paths.gitDir);
    const packState = readPackState(ctx.paths);
    // New loose objects: blobs of small batches, one tree per directory on a changed path, the commit.
    packState.looseEstimate += (total < PACK_BATCH_MIN ? total : 0) + changedDirectories(diff.changes) + 1;
    packState.sinceGc += 1;
    if (packState.sinceGc >= AUTO_GC_EVERY) {
      packState.sinceGc = 0;
      maybeStartBackgroundGc(ctx);
    }
    if (packState.looseEstimate >= LOOSE_PACK_THRESHOLD) {
      // Housekeeping: a failure here leaves loose objects, never a broken checkpoint.
      await packLooseObjects(ctx, packState, signal).catch(() => writeFileAtomic(packStateFile(ctx.paths), JSON.stringify(packState)));
    } else {
      writeFileAtomic(packStateFile(ctx.paths), JSON.stringify(packState));
    }
    return { created: true, id, tree, record, ...skippedView, elapsedMs: deadline.elapsed() };
  } catch (err) {
    if (signal.aborted) {
      removeGitDebris(ctx.paths);
      const reason = signal.reason;
      if (isCkptError(reason, 'budget')) {
        throw new CkptError(
          'budget',
          `snapshot stopped by its ${Math.round(budget / 100) / 10}s time budget after hashing ${hashed} of ${total || '?'} files; the work done is kept, run it again to resume (or raise ckpt.timeBudget)`,
          { hashed, total },
        );
      }
      throw reason;
    }
    throw err;
  } finally {
    deadline.dispose();
  }
}
