/**
 * The store: one folder per workspace under the store root. Every file in it is
 * a field of `StorePaths` below (docs/design.md's Storage section lists them
 * with what each holds):
 *
 *   <root>/hook.log           a hook's notes when its workspace's store cannot take them
 *   <root>/<name>-<hash16>/
 *     git/                    shadow GIT_DIR (bare layout, work tree passed per call):
 *                             HEAD, config, objects/, objects/pack/, info/exclude, info/attributes
 *     index, index.stamp      the shadow index (the stat cache) and its stamp
 *     ledger.jsonl            one JSON record per checkpoint
 *     workspace               the workspace's real path (collision and move detection)
 *     config                  optional [ckpt] settings for this workspace only
 *     lock                    cross-process lock
 *     journal.json            a restore, revert or undo in progress
 *     sessions.json, .lock    per-session counters, and their own lock
 *     pack-state.json         loose-object estimate, checkpoints since gc
 *     probe.json, settings.cache, gitlinks.json   caches keyed by stat data
 *     baseline.json           a background first snapshot while it runs
 *     hook.log, hook.skips    what hooks could not do, the last "not captured" note
 *     forgotten, forget.json  patterns forget removed for good, a forget in progress
 */
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CkptError } from '../model/errors.js';
import { assertGitVersion, git } from '../git/runner.js';

/** Every file of a workspace's store, named here and nowhere else (docs/design.md's Storage section mirrors it). */
export interface StorePaths {
  dir: string;
  /** The shadow GIT_DIR. */
  gitDir: string;
  /** The persistent shadow index: the stat cache. */
  indexFile: string;
  /** One JSON record per checkpoint. */
  ledger: string;
  /** The cross-process lock (pid + host). */
  lock: string;
  /** The workspace's real path: a store of another path is refused. */
  workspaceFile: string;
  /** Optional [ckpt] settings for this workspace. */
  config: string;
  /** The journal of a restore, revert or undo in progress. */
  journal: string;
  /** Per agent session: turn and step counters, open subagent calls, the turn's title; and its own lock. */
  sessions: string;
  sessionsLock: string;
  /** Per agent session: what its transcript told so far (read for rewinds inside the agent). */
  transcripts: string;
  /** Loose-object estimate and checkpoints since the last gc. */
  packState: string;
  /** Caches, each keyed by the stat data of what it was computed from. */
  indexStamp: string;
  probeCache: string;
  settingsCache: string;
  /** The index's gitlinks, keyed by the tree it holds. */
  gitlinks: string;
  /** The first snapshot taken in the background: its process and progress, while it runs. */
  baseline: string;
  /** What hooks could not do, and the last "not captured" note (logged only when it changes). */
  hookLog: string;
  hookSkips: string;
  /** Patterns `forget --path` removed from every checkpoint: never captured again. */
  forgotten: string;
  /** A forget in progress (its request): a rerun finishes it. */
  forgetMarker: string;
  /** Where checkpoints go (`share init`), the exports made and what was pushed and bundled (see share.ts); its own lock. */
  share: string;
  shareLock: string;
  /** Checkpoints fetched from other stores (a remote, a bundle): records like the ledger's, with their origin. */
  fetched: string;
  /** Inside the shadow GIT_DIR: its HEAD (there once the repository is made), its config (includes `config`). */
  shadowHead: string;
  shadowConfig: string;
  /** Inside the shadow GIT_DIR: the object store and its pack folder. */
  objectsDir: string;
  packDir: string;
  /** Generated from .git/info/exclude and .ckptignore. */
  excludeFile: string;
  /** Each version of the ignore rules outside the tree a checkpoint was taken with, by id (see capture/ignore-rules.ts). */
  ignoreRules: string;
  attributesFile: string;
}

/** The caches gc clears after it rewrites the object store (the others are keyed by config files). */
export const OBJECT_CACHES = ['indexStamp', 'probeCache'] as const satisfies readonly (keyof StorePaths)[];

export function storeRoot(env: NodeJS.ProcessEnv = process.env): string {
  return storeRootChoices(env)[0]!;
}

/** Where stores can be for this environment, the one in use first: GIT_CKPT_HOME, XDG_STATE_HOME, ~/.local/state. */
function storeRootChoices(env: NodeJS.ProcessEnv): string[] {
  const choices: string[] = [];
  if (env.GIT_CKPT_HOME) choices.push(path.resolve(env.GIT_CKPT_HOME));
  if (env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME)) choices.push(path.join(env.XDG_STATE_HOME, 'git-ckpt'));
  choices.push(path.join(homedir(), '.local', 'state', 'git-ckpt'));
  return choices;
}

/** A path with its symlinks resolved, as far as it exists (the rest appended as given). */
function resolveThroughLinks(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = path.dirname(p);
    return parent === p ? p : path.join(resolveThroughLinks(parent), path.basename(p));
  }
}

/** `inner` relative to `outer` with '/', when it lies inside it (or is it: ''); otherwise undefined. */
function relativeInside(outer: string, inner: string): string | undefined {
  const rel = path.relative(outer, inner);
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join('/');
}

/**
 * Every store root this environment could use that lies inside the workspace,
 * as given and through its symlinks, workspace-relative: never captured, never
 * written by a restore (another workspace's stores may be there).
 */
export function storeRootsInside(workspaceRoot: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const choices = storeRootChoices(env);
  const inside = [...choices, ...choices.map(resolveThroughLinks)].map((p) => relativeInside(workspaceRoot, p));
  return [...new Set(inside.filter((rel): rel is string => rel !== undefined && rel !== ''))];
}

/**
 * A store inside its own workspace (GIT_CKPT_HOME or XDG_STATE_HOME there, or a
 * symlink into it) is refused: an agent's `rm -rf` or `git clean -x` would take
 * the checkpoints with it, and a restore could write over them.
 */
function refuseStoreInWorkspace(workspaceRoot: string, storeDir: string): void {
  const real = resolveThroughLinks(storeDir);
  if (relativeInside(workspaceRoot, real) !== undefined)
    throw new CkptError(
      'store',
      `refusing a store inside its own workspace: ${real} (an rm -rf or git clean there would delete the checkpoints); set GIT_CKPT_HOME to a folder outside ${workspaceRoot}`,
    );
}

/** Where a workspace's store is (or will be), without creating it. */
export function storeDirFor(workspaceRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(storeRoot(env), storeName(workspaceRoot));
}

function storeName(workspaceRoot: string): string {
  const readable =
    path
      .basename(workspaceRoot)
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[.]+/, '')
      .slice(0, 40) || 'workspace';
  const hash = createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 16);
  return `${readable}-${hash}`;
}

const HOOK_LOG = 'hook.log';

/** The store root's own hook log: what a hook could not write into its workspace's store (none yet, or unwritable). */
export function rootHookLog(root: string): string {
  return path.join(root, HOOK_LOG);
}

/** The daemon's files, one set per store root (its folder name cannot be a store's: those end in a hash). */
export interface DaemonPaths {
  dir: string;
  /** Held for the daemon's life: one daemon per store root. */
  lock: string;
  /** The Unix socket hooks reach it through (mode 0600). */
  socket: string;
  /** Where it listens and who it is (pid, port, version), written once it listens. */
  endpoint: string;
  /** The per-install token an HTTP hook sends (mode 0600), kept across restarts: agents' configs name it. */
  token: string;
  /** The TCP port kept across restarts, for the same reason. */
  port: string;
  log: string;
}

export function daemonPaths(root: string): DaemonPaths {
  const dir = path.join(root, 'daemon');
  return {
    dir,
    lock: path.join(dir, 'lock'),
    socket: path.join(dir, 'socket'),
    endpoint: path.join(dir, 'endpoint.json'),
    token: path.join(dir, 'token'),
    port: path.join(dir, 'port'),
    log: path.join(dir, 'daemon.log'),
  };
}

export function storePaths(dir: string): StorePaths {
  const gitDir = path.join(dir, 'git');
  return {
    dir,
    gitDir,
    indexFile: path.join(dir, 'index'),
    ledger: path.join(dir, 'ledger.jsonl'),
    lock: path.join(dir, 'lock'),
    workspaceFile: path.join(dir, 'workspace'),
    config: path.join(dir, 'config'),
    journal: path.join(dir, 'journal.json'),
    sessions: path.join(dir, 'sessions.json'),
    sessionsLock: path.join(dir, 'sessions.lock'),
    transcripts: path.join(dir, 'transcripts'),
    packState: path.join(dir, 'pack-state.json'),
    indexStamp: path.join(dir, 'index.stamp'),
    probeCache: path.join(dir, 'probe.json'),
    settingsCache: path.join(dir, 'settings.cache'),
    gitlinks: path.join(dir, 'gitlinks.json'),
    baseline: path.join(dir, 'baseline.json'),
    hookLog: path.join(dir, HOOK_LOG),
    hookSkips: path.join(dir, 'hook.skips'),
    forgotten: path.join(dir, 'forgotten'),
    forgetMarker: path.join(dir, 'forget.json'),
    share: path.join(dir, 'share.json'),
    shareLock: path.join(dir, 'share.lock'),
    fetched: path.join(dir, 'fetched.jsonl'),
    shadowHead: path.join(gitDir, 'HEAD'),
    shadowConfig: path.join(gitDir, 'config'),
    objectsDir: path.join(gitDir, 'objects'),
    packDir: path.join(gitDir, 'objects', 'pack'),
    excludeFile: path.join(gitDir, 'info', 'exclude'),
    ignoreRules: path.join(dir, 'ignore-rules'),
    attributesFile: path.join(gitDir, 'info', 'attributes'),
  };
}

/**
 * The store folder for a workspace, created (mode 0700) when `create` is set.
 * A store whose recorded workspace differs is a hash collision: refused; so is
 * a store inside its workspace.
 */
export function openStoreDir(workspaceRoot: string, create: boolean, env: NodeJS.ProcessEnv = process.env): StorePaths | undefined {
  const root = storeRoot(env);
  const paths = storePaths(path.join(root, storeName(workspaceRoot)));
  refuseStoreInWorkspace(workspaceRoot, paths.dir);
  if (!existsSync(paths.dir)) {
    if (!create) return undefined;
    try {
      const made = mkdirSync(root, { recursive: true, mode: 0o700 });
      if (made) chmodSync(root, 0o700);
      mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new CkptError('store', `cannot create store ${paths.dir}: ${(err as Error).message}`, {}, { cause: err });
    }
  }
  let recorded: string | undefined;
  try {
    recorded = readFileSync(paths.workspaceFile, 'utf8').replace(/\n$/, '');
  } catch {
    recorded = undefined;
  }
  if (recorded === undefined) {
    if (create) writeFileAtomic(paths.workspaceFile, `${workspaceRoot}\n`);
  } else if (recorded !== workspaceRoot) {
    throw new CkptError('store', `store ${paths.dir} belongs to another workspace (${recorded}); refusing to mix them`);
  }
  return paths;
}

/** Stat data that changes when a file or folder changes ('-' when it is absent): the key of the store's caches. */
export function statStamp(p: string): string {
  try {
    const st = statSync(p);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return '-';
  }
}

/**
 * A JSON cache keyed by a stamp (stat data of what the value was computed
 * from): the cached value while the stamp is the same, else `compute()`,
 * stored for next time unless `write` is false (dry runs leave the store as it
 * was). `valid` checks what was read; a cache that cannot be read or written
 * only costs the computation.
 */
export async function stampedCache<T>(
  file: string,
  stamp: string,
  valid: (v: unknown) => v is T,
  compute: () => Promise<T>,
  write = true,
): Promise<T> {
  try {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as { stamp?: unknown; value?: unknown };
    if (cached.stamp === stamp && valid(cached.value)) return cached.value;
  } catch {
    /* no cache yet */
  }
  const value = await compute();
  if (write) {
    try {
      writeFileAtomic(file, JSON.stringify({ stamp, value }));
    } catch {
      /* a read-only store still works, uncached */
    }
  }
  return value;
}

export function fsyncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Make a rename or removal in a folder durable; a filesystem that refuses fsync on a folder still renames atomically. */
export function fsyncFolder(dir: string): void {
  try {
    fsyncFile(dir);
  } catch {
    /* not supported here */
  }
}

/** writeFileAtomic that also survives power loss: the data and the rename are fsync'd. */
export function writeFileDurable(file: string, data: string | Buffer): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, file);
  } catch (err) {
    // A full disk must leave no half-written temporary file behind to take the space.
    try {
      closeSync(fd);
    } catch {
      /* closed already */
    }
    rmSync(tmp, { force: true });
    throw err;
  }
  fsyncFolder(path.dirname(file));
}

export function writeFileAtomic(file: string, data: string | Buffer): void {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Settings of the shadow repository. They make capture byte-exact and keep git
 * from doing anything on its own: no autocrlf, no filters, no hooks, no auto gc,
 * and nothing pruned, since checkpoints are unreferenced on purpose.
 */
const SHADOW_CONFIG: Array<[string, string]> = [
  ['core.bare', 'false'],
  ['core.autocrlf', 'false'],
  ['core.safecrlf', 'false'],
  ['core.symlinks', 'true'],
  ['core.filemode', 'true'],
  ['core.fsmonitor', 'false'],
  ['core.untrackedCache', 'false'],
  ['core.quotePath', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.checkStat', 'default'],
  ['core.trustctime', 'true'],
  ['index.version', '4'],
  ['gc.auto', '0'],
  ['gc.autoPackLimit', '0'],
  ['gc.pruneExpire', 'never'],
  ['gc.reflogExpire', 'never'],
  ['gc.reflogExpireUnreachable', 'never'],
  ['maintenance.auto', 'false'],
  ['commit.gpgSign', 'false'],
  ['advice.addEmbeddedRepo', 'false'],
  ['advice.addIgnoredFile', 'false'],
  ['include.path', '../config'],
];

function shadowConfigText(): string {
  const sections = new Map<string, string[]>();
  for (const [key, value] of SHADOW_CONFIG) {
    const dot = key.indexOf('.');
    const section = key.slice(0, dot);
    const lines = sections.get(section) ?? [];
    lines.push(`\t${key.slice(dot + 1)} = ${value}`);
    sections.set(section, lines);
  }
  return [...sections].map(([section, lines]) => `[${section}]\n${lines.join('\n')}\n`).join('');
}

/** Git attributes with the highest precedence: store the bytes on disk, whatever .gitattributes says. */
const SHADOW_ATTRIBUTES = '* -text -eol -ident -filter -working-tree-encoding\n';

export async function initShadowRepo(paths: StorePaths): Promise<void> {
  if (existsSync(paths.shadowHead)) return;
  // A new store is the one moment git's version is checked: every later command relies on it.
  await assertGitVersion();
  // Build in a temporary folder and rename, so a crash never leaves a half-made repository.
  const tmp = `${paths.gitDir}.init-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  await git({ verb: 'init', args: ['--bare', '--quiet', '--template='], gitDir: tmp, cwd: paths.dir });
  // Appended as text: later sections win in git's config, and this costs no process per key.
  appendFileSync(path.join(tmp, 'config'), shadowConfigText());
  mkdirSync(path.join(tmp, 'info'), { recursive: true });
  writeFileSync(path.join(tmp, 'info', 'attributes'), SHADOW_ATTRIBUTES);
  writeFileSync(path.join(tmp, 'info', 'exclude'), '');
  try {
    renameSync(tmp, paths.gitDir);
  } catch (err) {
    // Another process made it first (callers hold the workspace lock, but an older git-ckpt may not).
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(paths.shadowHead)) throw err;
  }
}

/** Bytes of every file below a folder (apparent size; symlinks not followed). */
export function dirSize(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const full = path.join(dir, name);
    try {
      const st = lstatSync(full);
      total += st.isDirectory() ? dirSize(full) : st.size;
    } catch {
      /* vanished */
    }
  }
  return total;
}
