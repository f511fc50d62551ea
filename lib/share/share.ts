/**
 * Checkpoints that travel: `share init`, `push`, `fetch`, `bundle` and `unpush`, on git's own
 * transports from the shadow repository. Nothing is pushed before `share init` names a remote, never
 * as a side effect of the user's own `git push`, and never by force. The user's repository is only
 * asked (where a remote points, what .gitignore ignores) and lent as a read-only alternate at a push,
 * so the push leaves out what the remote already has of the project.
 *
 * Every share command holds the store's share lock for its whole run; the workspace lock only while
 * it makes the export or records what it fetched, so hooks are never held up by the network.
 */
import { appendFileSync, existsSync, realpathSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { resolveSession } from '../model/address.js';
import { CkptError, isCkptError } from '../model/errors.js';
import { isRemoteLabel, isShareId, LEDGER_SCHEMA, readLedger, type CheckpointRecord } from '../model/ledger.js';
import { EMPTY_TREE, isObjectId } from '../model/oid.js';
import {
  capProblem,
  exportRef,
  NO_SESSION,
  sessionWords,
  importedRecordProblem,
  missingPrerequisites,
  parsePorcelain,
  parseShareRef,
  pushRefusal,
  readExportCommit,
  REFS_PER_PUSH,
  SHARE_REFS,
  REMOTE_REFS,
  sessionRefPart,
  type ShareRef,
} from '../model/share-plan.js';
import { forEachObject, treeChanges } from '../git/objects.js';
import { readCommitText } from '../model/trailers.js';
import { oneLine, withArticle } from '../model/text.js';
import { changeSummary } from '../retain/forget-plan.js';
import { git, urlProblem, type GitCall } from '../git/runner.js';
import type { StoreContext } from '../store/context.js';
import { withLock } from '../store/lock.js';
import { presentObjects } from '../store/packs.js';
import { copyObjects, makeExports, planExports, type ExportOptions, type SessionExport } from './export.js';

export type { SessionExport };
import {
  appendFetched,
  initialState,
  newShareId,
  readFetched,
  readShareState,
  requireShareState,
  writeShareState,
  type ShareState,
} from '../store/share-state.js';

/** Runs `fn` under the workspace lock with a fresh context (the Workspace's lock door). */
export type Locked = <T>(fn: (ctx: StoreContext) => Promise<T>) => Promise<T>;

/** What every share command starts from: the workspace's context (outside the lock) and its lock door. */
export interface ShareAccess {
  ctx: StoreContext;
  locked: Locked;
}

/** The label a remote given as a URL gets. */
const URL_LABEL = 'ckpt';
/** The label of what `bundle import` brought in. */
const BUNDLE_LABEL = 'bundle';

async function underShareLock<T>(access: ShareAccess, fn: () => Promise<T>): Promise<T> {
  return withLock(access.ctx.paths.shareLock, access.ctx.settings.lockTimeoutMs, fn);
}

/** A network git call from the shadow repository, with the user's credentials and nothing else of theirs. */
function networkCall(ctx: StoreContext, call: GitCall): GitCall {
  return { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir, baseEnv: ctx.env, network: true, ...call };
}

/** A network call whose git failure is the remote's: reported as the remote error, with git's reason. */
async function networkGit(ctx: StoreContext, call: GitCall): ReturnType<typeof git> {
  try {
    return await git(networkCall(ctx, call));
  } catch (err) {
    throw isCkptError(err, 'git') ? remoteError(err) : err;
  }
}

/** A question to the user's own repository (read-only; their config read, as git itself would). */
async function askUserRepo(ctx: StoreContext, args: GitCall['args'], okCodes: number[] = []): Promise<{ out: string; code: number }> {
  const r = await git({ verb: 'remote', args, cwd: ctx.location.root, userConfig: true, baseEnv: ctx.env, okCodes });
  return { out: r.stdout.toString('utf8').trim(), code: r.code };
}

const looksLikeUrl = (s: string) => s.includes('://') || s.startsWith('/') || s.startsWith('.') || /^[^/\s]+:/.test(s);

/** Same repository, as far as a URL tells: case, a trailing slash and `.git` aside. */
const sameUrl = (a: string, b: string) => {
  const norm = (u: string) =>
    u
      .trim()
      .replace(/\/+$/, '')
      .replace(/\.git$/, '')
      .toLowerCase();
  return norm(a) === norm(b);
};

export interface ShareInitOptions {
  /** A remote of the user's repository by name, or a URL. */
  remote?: string;
  /** Join this shared workspace id instead of the one the remote holds or a new one. */
  ws?: string;
  /** Share to the same URL as origin anyway. */
  yes?: boolean;
}

export interface ShareInitReport {
  remote: string;
  url: string;
  ws: string;
  writer: string;
  /** The workspace id was already on the remote (another machine's store of this project). */
  joined: boolean;
  sameAsOrigin: boolean;
  /** Other workspace ids the remote holds. */
  others: string[];
}

/** `share init`: where checkpoints go, and the ids that name this workspace and this store there. */
export async function shareInit(access: ShareAccess, options: ShareInitOptions): Promise<ShareInitReport> {
  const { ctx } = access;
  if (options.ws !== undefined && !isShareId(options.ws))
    throw new CkptError(
      'usage',
      `--ws takes a shared workspace id (12 hex digits, as git ckpt fetch --list shows): ${JSON.stringify(options.ws).slice(0, 40)}`,
    );
  const given = options.remote ?? (ctx.location.userGitDir ? 'ckpt' : undefined);
  if (!given) throw new CkptError('usage', 'name where checkpoints go: git ckpt share init --remote <name|url>');
  let label: string;
  let url: string;
  if (looksLikeUrl(given)) {
    const problem = urlProblem(given);
    if (problem) throw new CkptError('usage', `not a remote URL (${problem}): ${JSON.stringify(given).slice(0, 80)}`);
    label = URL_LABEL;
    url = given;
  } else {
    if (!isRemoteLabel(given)) throw new CkptError('usage', `not a remote name or URL: ${JSON.stringify(given).slice(0, 80)}`);
    if (!ctx.location.userGitDir)
      throw new CkptError('usage', `${given}: this workspace is no git repository, so it has no remotes; give a URL`);
    const r = await askUserRepo(ctx, [{ literal: 'get-url' }, '--push', { literal: given }], [2, 128]);
    if (r.code !== 0 || !r.out)
      throw new CkptError(
        'usage',
        options.remote === undefined
          ? 'name where checkpoints go: git ckpt share init --remote <name|url> (this repository has no remote named ckpt)'
          : `your repository has no remote named ${given}`,
      );
    label = given;
    url = r.out;
    const problem = urlProblem(url);
    if (problem) throw new CkptError('usage', `remote ${given} has a URL git ckpt does not use (${problem})`);
  }
  url = localUrl(ctx, url);
  const origin = ctx.location.userGitDir ? await remoteUrls(ctx, 'origin') : [];
  const sameAsOrigin = origin.some((o) => sameUrl(o, url));
  if (sameAsOrigin && !options.yes)
    throw new CkptError(
      'refused',
      `${url} is your origin: everyone who can read it could fetch the checkpoints, every push to it is advertised their refs, and deleting a ref does not purge it; share to a private repository of its own, or run again with --yes`,
    );
  return underShareLock(access, async () => {
    const listed = await lsRemote(ctx, url, `${SHARE_REFS}/*`);
    const wsIds = [...new Set(listed.map((r) => r.ws))];
    const previous = readShareState(ctx.paths);
    let ws = options.ws ?? previous?.ws;
    let joined = false;
    if (!ws) {
      if (wsIds.length > 1)
        throw new CkptError('usage', `the remote holds ${wsIds.length} shared workspaces (${wsIds.join(', ')}): choose one with --ws <id>`);
      ws = wsIds[0] ?? newShareId();
      joined = wsIds.length === 1;
    } else joined = wsIds.includes(ws);
    const state = initialState(previous, ws, { name: label, url, sameAsOrigin });
    writeShareState(ctx.paths, state);
    return { remote: label, url, ws, writer: state.writer, joined, sameAsOrigin, others: wsIds.filter((w) => w !== ws) };
  });
}

/**
 * A remote on this disk, made absolute (a relative one is the workspace's, as git reads it, not the
 * store's, where pushes run); one that is this workspace or its repository is refused: pushing there
 * would write your own `.git`.
 */
function localUrl(ctx: StoreContext, url: string): string {
  const local = url.startsWith('file://') ? url.slice('file://'.length) : /^[a-z][a-z0-9+.-]*:\/\/|^[^/\s]+:/i.test(url) ? undefined : url;
  if (local === undefined) return url;
  const absolute = path.resolve(ctx.location.root, local);
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const target = real(absolute);
  const own = [ctx.location.root, ctx.location.userGitDir, ctx.location.userCommonDir].filter((p): p is string => Boolean(p)).map(real);
  if (own.some((p) => target === p || target.startsWith(`${p}${path.sep}`) || p.startsWith(`${target}${path.sep}`)))
    throw new CkptError('refused', `${url} is this workspace or its own repository: checkpoints go to a repository of their own`);
  return url.startsWith('file://') ? `file://${absolute}` : absolute;
}

/** A remote's fetch and push URLs in the user's repository (none for a remote it does not have). */
async function remoteUrls(ctx: StoreContext, name: string): Promise<string[]> {
  const urls: string[] = [];
  for (const push of [false, true]) {
    const r = await askUserRepo(ctx, [{ literal: 'get-url' }, ...(push ? ['--push'] : []), { literal: name }], [2, 128]);
    if (r.code === 0 && r.out) urls.push(r.out);
  }
  return urls;
}

/** `git ls-remote <url> <pattern>`: the export refs the remote holds, with their tips. */
async function lsRemote(ctx: StoreContext, url: string, pattern: string): Promise<(ShareRef & { tip: string })[]> {
  const { stdout } = await networkGit(ctx, { verb: 'ls-remote', args: [{ url }, { ref: pattern }] });
  return shareRefLines(stdout.toString('utf8'));
}

/** The export refs among `<id> <ref>` lines, with their tips. */
function shareRefLines(text: string): (ShareRef & { tip: string })[] {
  return refLines(text).flatMap(({ tip, ref }) => {
    const parsed = parseShareRef(ref);
    return parsed ? [{ ...parsed, tip }] : [];
  });
}

function remoteError(err: CkptError): CkptError {
  const stderr = String(err.message.replace(/^git \S+ failed \([^)]*\): /, ''));
  return new CkptError('remote', pushRefusal(stderr).line);
}

/** The remote a command names (or the default), with its URL; a store copied from another host is refused. */
function chosenRemote(state: ShareState, name: string | undefined): { label: string; url: string } {
  const label = name ?? state.default;
  const remote = label ? state.remotes[label] : undefined;
  if (!remote)
    throw new CkptError(
      'usage',
      name
        ? `no remote named ${name} in this store: git ckpt share init --remote ${name} adds it`
        : 'sharing has no remote yet: git ckpt share init --remote <name|url> says where checkpoints go',
    );
  return { label, url: remote.url };
}

function assertOwnWriter(state: ShareState): void {
  if (state.host !== hostname())
    throw new CkptError(
      'refused',
      `this store's writer id was made on ${state.host}, and this is ${hostname()}: a copied store must not push as the writer it was copied from; run git ckpt share init to take a writer id of its own`,
    );
}

/** The sessions a command names: one by prefix, every one (`all`), or the latest session's. */
function chooseSessions(records: readonly CheckpointRecord[], session: string | undefined, all: boolean | undefined): (string | null)[] {
  const local = records.filter((r) => !r.origin);
  if (all) return [...new Set(local.map((r) => r.session))];
  if (session === NO_SESSION) return [null];
  if (session !== undefined) return [resolveSession(local, session)];
  const latest = [...local].reverse().find((r) => r.session !== null)?.session;
  if (!latest) throw new CkptError('nothing', 'no agent session has checkpoints here: name one with --session, or push --all');
  return [latest];
}

export interface PushOptions extends ExportOptions {
  remote?: string;
  session?: string;
  all?: boolean;
}

export interface PushedSession extends SessionExport {
  /** pushed: the remote took the new tip; up-to-date: it had it; rejected: see `reason`; withheld-only: nothing of it may go. */
  status: 'pushed' | 'up-to-date' | 'rejected' | 'nothing' | 'would-push';
  reason?: string;
}

export interface PushReport {
  remote: string;
  url: string;
  dryRun: boolean;
  sessions: PushedSession[];
  /** Pushes the remote's ref cap split up. */
  chunks: number;
}

/** `push`: export, check the caps, then push every session's tip that the remote lacks, fast-forward only. */
export async function push(access: ShareAccess, options: PushOptions): Promise<PushReport> {
  const { ctx } = access;
  return underShareLock(access, async () => {
    const state = requireShareState(ctx.paths);
    const { label, url } = chosenRemote(state, options.remote);
    assertOwnWriter(state);
    const userObjects = userObjectsDir(ctx);
    // A session unpushed goes again only when named.
    const chosen = (records: readonly CheckpointRecord[]) =>
      chooseSessions(records, options.session, options.all).filter(
        (session) => options.session !== undefined || !state.unpushed?.[exportRef(state.ws, session, state.writer)],
      );
    const newChain = chosen(readLedger(ctx.paths.ledger).records).some(
      (session) => !state.exports[exportRef(state.ws, session, state.writer)],
    );
    // What the remote has of the project, as the user's remote-tracking refs say (no network before the caps).
    let root = userObjects && newChain ? await sharedRoot(ctx, url) : undefined;
    const planned = async (lockedCtx: StoreContext, fresh: ShareState) => {
      const records = readLedger(lockedCtx.paths.ledger).records;
      const plans = await planExports(lockedCtx, fresh, records, chosen(records), { ...options, root, userObjects });
      const reports = plans.map((p) => p.report);
      const cap = capProblem(
        reports.flatMap((e) => e.tooLarge),
        reports.reduce((n, e) => n + e.bytes, 0),
      );
      // A dry run writes nothing, its scan cache neither (print means print): the real push reads again.
      if (!options.dryRun) writeShareState(lockedCtx.paths, fresh);
      if (cap) throw new CkptError('refused', cap);
      return { plans, ledgerTip: records.at(-1)?.id ?? null };
    };
    const first = await access.locked(async (lockedCtx) => planned(lockedCtx, requireShareState(lockedCtx.paths)));
    const report: PushReport = { remote: label, url, dryRun: Boolean(options.dryRun), sessions: [], chunks: 0 };
    if (options.dryRun) {
      report.sessions = first.plans.map((p) => ({ ...p.report, status: p.report.fresh || p.report.tip ? 'would-push' : 'nothing' }));
      return report;
    }
    // The remote-tracking refs may be stale: a root the remote lacks would send the project's history
    // unread by the filters, so a chain is parented on it only once the remote shows it has it.
    const rootUsed = first.plans.some((p) => p.rooted !== undefined && !p.chain.tip);
    if (root && rootUsed && !(await remoteHasCommit(ctx, url, root))) root = undefined;
    const exports = await access.locked(async (lockedCtx) => {
      const fresh = requireShareState(lockedCtx.paths);
      // The first plan holds unless the root was dropped or a checkpoint came meanwhile.
      const rootDropped = rootUsed && root === undefined;
      const ledgerSame = (readLedger(lockedCtx.paths.ledger).records.at(-1)?.id ?? null) === first.ledgerTip;
      const { plans } = !rootDropped && ledgerSame ? first : await planned(lockedCtx, fresh);
      const made = await makeExports(lockedCtx, fresh, plans);
      if (options.session !== undefined && fresh.unpushed) for (const p of plans) delete fresh.unpushed[p.report.ref];
      writeShareState(lockedCtx.paths, fresh);
      return made;
    });
    const remoteTips = new Map((await lsRemote(ctx, url, `${SHARE_REFS}/${state.ws}/*`)).map((r) => [r.ref, r.tip]));
    const pending: PushedSession[] = [];
    for (const e of exports) {
      if (!e.tip) report.sessions.push({ ...e, status: 'nothing' });
      else if (remoteTips.get(e.ref) === e.tip) report.sessions.push({ ...e, status: 'up-to-date' });
      else pending.push({ ...e, status: 'pushed' });
    }
    let size = REFS_PER_PUSH;
    let queue = pending;
    while (queue.length) {
      const chunk = queue.slice(0, size);
      const outcome = await pushChunk(
        ctx,
        url,
        chunk.map((s) => ({ src: s.tip!, dst: s.ref })),
      );
      report.chunks++;
      if (outcome.refCap !== undefined) {
        // The host caps refs a push: the same refs again, in pushes it takes.
        size = outcome.refCap;
        continue;
      }
      const dropped = requireShareState(ctx.paths).dropped ?? {};
      for (const s of chunk) {
        const rejected = outcome.rejected.get(s.ref);
        // The remote holds the chain this store dropped (forget took what it carried): say how to remove it.
        const reason = rejected !== undefined && dropped[s.ref] ? droppedChainLine(s.session) : rejected;
        report.sessions.push(reason === undefined ? s : { ...s, status: 'rejected', reason });
      }
      queue = queue.slice(chunk.length);
    }
    const pushed = report.sessions.filter((s) => s.status === 'pushed' || s.status === 'up-to-date');
    if (pushed.length) {
      const latest = requireShareState(ctx.paths);
      latest.pushed[label] ??= {};
      for (const s of pushed) {
        latest.pushed[label][s.ref] = s.tip!;
        noLongerDroppedOn(latest, s.ref, label);
      }
      writeShareState(ctx.paths, latest);
    }
    return report;
  });
}

/** Why a push of a session whose chain this store dropped is refused: the remote still has the old one. */
function droppedChainLine(session: string | null): string {
  const named = sessionWords(session);
  return `the remote holds this session's checkpoints as they were before git ckpt forget took some of them out: nothing was sent (nothing is forced); git ckpt unpush ${named} deletes that ref (the host keeps its objects until it purges them), then git ckpt push ${named} sends the session as it is now`;
}

/** A remote that no longer holds a dropped chain (it took the new one, or unpush deleted it): not named as holding it again. */
function noLongerDroppedOn(state: ShareState, ref: string, label: string): void {
  const entry = state.dropped?.[ref];
  if (!entry) return;
  entry.remotes = entry.remotes.filter((r) => r !== label);
  if (entry.remotes.length === 0) delete state.dropped![ref];
  if (Object.keys(state.dropped!).length === 0) delete state.dropped;
}

/** Whether the remote has `commit`: one of its branches points at it, or at a commit of the user's repository that descends from it. */
async function remoteHasCommit(ctx: StoreContext, url: string, commit: string): Promise<boolean> {
  const { stdout: heads } = await networkGit(ctx, { verb: 'ls-remote', args: ['--heads', { url }] });
  const tips = [...new Set(refLines(heads.toString('utf8')).map((r) => r.tip))];
  if (tips.includes(commit)) return true;
  for (const tip of tips.slice(0, 50)) {
    const r = await git({
      verb: 'merge-base',
      args: ['--is-ancestor', { oid: commit }, { oid: tip }],
      cwd: ctx.location.root,
      baseEnv: ctx.env,
      okCodes: [1, 128],
    });
    if (r.code === 0) return true;
  }
  return false;
}

/** `<id><tab or space><ref>` lines (ls-remote, for-each-ref, bundle list-heads) with a valid id. */
function refLines(text: string): { tip: string; ref: string }[] {
  const out: { tip: string; ref: string }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40}|[0-9a-f]{64})[\t ](\S+)$/.exec(line);
    if (m) out.push({ tip: m[1]!, ref: m[2]! });
  }
  return out;
}

/**
 * ckpt.share.auto=turn's push, started in the background at a turn's end: what it could not send, and
 * what it withheld, goes to the store's hook log (git ckpt status points there), never to a terminal.
 */
export async function autoPush(access: ShareAccess, session: string): Promise<void> {
  const lines: string[] = [];
  try {
    const report = await push(access, { session });
    for (const s of report.sessions) {
      if (s.status === 'rejected') lines.push(`not pushed to ${report.remote}: ${s.reason}`);
      if (s.withheld)
        lines.push(
          `withheld from ${report.remote}: ${s.withheld.count} checkpoint(s), ${s.withheld.path} looks like ${withArticle(s.withheld.rule)}`,
        );
    }
  } catch (err) {
    lines.push(`not pushed: ${(err as Error).message}`);
  }
  if (lines.length) {
    const stamp = new Date().toISOString();
    appendFileSync(access.ctx.paths.hookLog, lines.map((l) => `${stamp} share push ${session}: ${l}\n`).join(''));
  }
}

/** The user's object folder, lent read-only (a push's negotiation, a root's tree, a fetch's haves). */
function userObjectsDir(ctx: StoreContext): string | undefined {
  const dir = ctx.location.userCommonDir ?? ctx.location.userGitDir;
  return dir ? path.join(dir, 'objects') : undefined;
}

/** How far back in HEAD's history a root is looked for among the commits the remote is known to have. */
const ROOT_SEARCH = 1000;

/**
 * The newest commit of the user's HEAD that the remote has, as far as their repository knows without
 * asking the network (its remote-tracking refs of every remote with this URL), or undefined. A chain
 * parented on it sends only what the session changed; a parentless one sends every file again.
 */
async function sharedRoot(ctx: StoreContext, url: string): Promise<string | undefined> {
  const user = { cwd: ctx.location.root, baseEnv: ctx.env, userConfig: true };
  const config = await git({ ...user, verb: 'config', args: ['--list', '-z'], okCodes: [1] });
  const names = new Set<string>();
  for (const entry of config.stdout.toString('utf8').split('\0')) {
    const m = /^remote\.([A-Za-z0-9][A-Za-z0-9._-]*)\.(?:push)?url\n/.exec(entry);
    if (m) names.add(m[1]!);
  }
  const tips = new Set<string>();
  for (const name of names) {
    if (!(await remoteUrls(ctx, name)).some((u) => sameUrl(u, url))) continue;
    const refs = await git({ ...user, verb: 'for-each-ref', args: ['--format=%(objectname)', { refPrefix: `refs/remotes/${name}/` }] });
    for (const id of refs.stdout.toString('utf8').split('\n')) if (isObjectId(id)) tips.add(id);
  }
  if (tips.size === 0) return undefined;
  const history = await git({ ...user, verb: 'rev-list', args: [`--max-count=${ROOT_SEARCH}`, { literal: 'HEAD' }], okCodes: [128] });
  return history.stdout
    .toString('utf8')
    .split('\n')
    .find((id) => tips.has(id));
}

/**
 * After a fetch that lent the user's objects as haves: copy into the store what the new checkpoints'
 * trees need and only the user's repository holds (the remote left it out), so the store stands alone.
 * Level by level: a missing tree's entries show up once the tree is here.
 */
async function localize(ctx: StoreContext, commits: readonly string[]): Promise<void> {
  const userObjects = userObjectsDir(ctx);
  if (!userObjects || commits.length === 0) return;
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir };
  const here = new Set(await presentObjects(ctx.paths, commits));
  let missing = commits.filter((id) => !here.has(id));
  for (let depth = 0; depth < 64; depth++) {
    if (missing.length) await copyObjects(ctx, userObjects, missing);
    const { stdout } = await git({
      ...repo,
      verb: 'rev-list',
      args: ['--objects', '--no-walk', '--missing=print', '--stdin'],
      input: `${commits.join('\n')}\n`,
    });
    missing = stdout
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('?'))
      .map((l) => l.slice(1))
      .filter(isObjectId);
    if (missing.length === 0) return;
  }
  throw new CkptError('store', `the fetched checkpoints still lack ${missing.length} object(s) after copying from your repository`);
}

/** One push of some refs: which the remote rejected and why, and the host's ref cap if it named one. */
async function pushChunk(
  ctx: StoreContext,
  url: string,
  refspecs: { src: string; dst: string }[],
  extra: string[] = [],
): Promise<{ rejected: Map<string, string>; refCap?: number }> {
  const r = await git(
    networkCall(ctx, {
      verb: 'push',
      args: ['--porcelain', '--no-verify', ...extra, { url }, ...refspecs.map((refspec) => ({ refspec }))],
      okCodes: [1, 128],
      readAlternate: userObjectsDir(ctx),
    }),
  );
  const lines = parsePorcelain(r.stdout.toString('utf8'));
  const rejected = new Map<string, string>();
  const refused = lines.filter((l) => l.flag === '!');
  if (r.code === 0 && refused.length === 0) return { rejected };
  const why = pushRefusal(r.stderr, refused);
  // A cap is worth another try only when it is smaller than what was sent; otherwise it is the refusal.
  if (why.refCap !== undefined && why.refCap > 0 && why.refCap < refspecs.length) return { rejected, refCap: why.refCap };
  const took = new Set(lines.filter((l) => l.flag !== '!').map((l) => l.ref));
  for (const spec of refspecs) if (!took.has(spec.dst)) rejected.set(spec.dst, why.line);
  return { rejected };
}

export interface FetchOptions {
  remote?: string;
  /** List the remote's sessions instead of fetching. */
  list?: boolean;
  /** Only this session (its id as the remote names it). */
  session?: string;
}

export interface RemoteSession {
  ws: string;
  session: string;
  writer: string;
  tip: string;
  /** This store's own ref, and whether it is of the workspace this store shares. */
  mine: boolean;
  thisWorkspace: boolean;
}

export interface FetchReport {
  remote: string;
  url: string;
  /** `--list`: what the remote holds. */
  listed?: RemoteSession[];
  /** Per fetched ref: the checkpoints it brought that this store did not have. */
  fetched: { session: string; writer: string; added: number; total: number }[];
  /** Refs git would not move (not a fast-forward: the other store rewrote its chain). */
  rejected: string[];
  /** Chains refused whole, each in one line: a commit whose ids have no id's shape (another store's text never becomes an option here). */
  refused: string[];
}

/** `fetch`: the remote's chains of this workspace into refs/ckpt-remote/<remote>/…, their checkpoints into this store. */
export async function fetchCheckpoints(access: ShareAccess, options: FetchOptions): Promise<FetchReport> {
  const { ctx } = access;
  return underShareLock(access, async () => {
    const state = requireShareState(ctx.paths);
    const { label, url } = chosenRemote(state, options.remote);
    if (options.list) {
      const listed = (await lsRemote(ctx, url, `${SHARE_REFS}/*`)).map((r) => ({
        ws: r.ws,
        session: r.session,
        writer: r.writer,
        tip: r.tip,
        mine: r.writer === state.writer && r.ws === state.ws,
        thisWorkspace: r.ws === state.ws,
      }));
      return { remote: label, url, listed, fetched: [], rejected: [], refused: [] };
    }
    const part = options.session === undefined ? undefined : sessionRefPart(options.session);
    const from = `${SHARE_REFS}/${state.ws}/${part ? `${part}/` : ''}*`;
    const into = `${REMOTE_REFS}/${label}/${state.ws}/${part ? `${part}/` : ''}*`;
    return access.locked(async (lockedCtx) => {
      const tracked = `${REMOTE_REFS}/${label}/${state.ws}/`;
      await dropStaleTracking(lockedCtx, tracked, state);
      const rejected = await fetchInto(lockedCtx, { url }, from, into);
      const imported = await importTracked(lockedCtx, tracked, label, state);
      await dropStaleTracking(lockedCtx, tracked, state);
      return { remote: label, url, ...imported, rejected };
    });
  });
}

/**
 * The tracking refs under `prefix` that must not stay: this store's own chains come back through a remote
 * or a bundle (its checkpoints are here already, and a forget may drop their objects), and a ref whose tip
 * this store no longer has (an older git-ckpt's forget or gc took it) would fail every later fetch.
 */
async function dropStaleTracking(ctx: StoreContext, prefix: string, state: ShareState | undefined): Promise<void> {
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir };
  const { stdout } = await git({
    ...repo,
    verb: 'for-each-ref',
    args: ['--format=%(objectname) %(refname)', { ref: prefix.replace(/\/$/, '') }],
  });
  const refs = shareRefLines(stdout.toString('utf8'));
  if (!refs.length) return;
  const present = new Set(
    await presentObjects(
      ctx.paths,
      refs.map((r) => r.tip),
    ),
  );
  for (const r of refs) {
    const own = state !== undefined && r.writer === state.writer && r.ws === state.ws;
    if (own || !present.has(r.tip)) await git({ ...repo, verb: 'update-ref', args: [{ ref: r.ref }, { oid: '0'.repeat(r.tip.length) }] });
  }
}

/** `git fetch` without force: refs that would not fast-forward stay, and are named. */
async function fetchInto(ctx: StoreContext, source: { url: string } | { file: string }, from: string, into: string): Promise<string[]> {
  const r = await networkGit(ctx, {
    verb: 'fetch',
    args: ['--no-tags', '--no-write-fetch-head', '--no-auto-gc', '--no-prune', source, { refspec: { src: from, dst: into } }],
    okCodes: [1],
    // The user's repository's commits count as haves: a chain parented on one of them brings only the session.
    readAlternate: userObjectsDir(ctx),
  });
  const rejected = r.stderr
    .split('\n')
    .filter((l) => /\[rejected\]|non-fast-forward/.test(l))
    .map((l) => l.replace(/^\s*!\s*/, '').trim());
  if (r.code !== 0 && rejected.length === 0) throw new CkptError('remote', pushRefusal(r.stderr).line);
  return rejected;
}

/**
 * The checkpoints of the tracked chains under `prefix` this store does not have yet, appended to
 * its fetched records with their origin: oldest first per chain, each one's parent the one before it
 * (the chain's base is the first one's parent tree: what the session started from).
 */
async function importTracked(
  ctx: StoreContext,
  prefix: string,
  label: string,
  state: ShareState | undefined,
): Promise<Pick<FetchReport, 'fetched' | 'refused'>> {
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir };
  const refused: string[] = [];
  const { stdout } = await git({
    ...repo,
    verb: 'for-each-ref',
    args: ['--format=%(objectname) %(refname)', { ref: prefix.replace(/\/$/, '') }],
  });
  const known = new Set(readFetched(ctx.paths).records.map((r) => r.id));
  const report: FetchReport['fetched'] = [];
  for (const { tip, ...parsed } of shareRefLines(stdout.toString('utf8'))) {
    // This store's own chain, come back through a remote or a bundle: its checkpoints are here already.
    if (state && parsed.writer === state.writer && parsed.ws === state.ws) continue;
    const chain = await chainCommits(ctx, tip);
    await localize(ctx, chain);
    const raw = new Map<string, string>();
    await forEachObject(repo, chain, (oid, content) => void raw.set(oid, content.toString('utf8')));
    // Another store's text never becomes an option or a shell word here: a commit whose ids have no
    // id's shape refuses its chain whole (a chain cannot skip one), and its tracking ref goes.
    const problem = chain
      .map((id) => {
        const commit = readExportCommit(id, raw.get(id) ?? '');
        if (!commit) return undefined;
        const why = importedRecordProblem(commit.base ? { session: commit.session } : commit.record);
        return why && `checkpoint ${(commit.base ? id : commit.source).slice(0, 8)}: ${why}`;
      })
      .find(Boolean);
    if (problem) {
      await git({ ...repo, verb: 'update-ref', args: [{ ref: parsed.ref }, { oid: '0'.repeat(tip.length) }] });
      refused.push(`session ${oneLine(parsed.session, 80)} of writer ${parsed.writer} refused whole: ${problem}`);
      continue;
    }
    const added: CheckpointRecord[] = [];
    let parent: { id: string; tree: string } | undefined;
    let total = 0;
    for (const id of chain) {
      const commit = readExportCommit(id, raw.get(id) ?? '');
      if (!commit) continue;
      const tree = commit.base ? commit.tree : commit.record.tree;
      total++;
      if (!known.has(id)) {
        const changes = await treeChanges(repo, parent?.tree ?? EMPTY_TREE, tree);
        // An imported record's own size stays; the base's is counted as none.
        const { stats, paths, changed } = changeSummary(changes, () => 0);
        const origin = { remote: label, ws: commit.ws, writer: commit.writer, source: commit.base ? id : commit.source };
        // The chain's base is a checkpoint of no session (what the session started from): `turn:1` of the
        // session restores it, and a revert of the session never takes it back.
        const record: CheckpointRecord = commit.base
          ? {
              v: LEDGER_SCHEMA,
              id,
              parent: null,
              tree,
              time: commit.time,
              session: null,
              turn: null,
              step: null,
              tool: null,
              kind: 'manual',
              message: commit.message,
              stats,
              bytes: 0,
              paths,
              changed,
              skipped: [],
              skippedCount: 0,
              origin,
            }
          : (() => {
              const { formerIds: _, ...rest } = commit.record;
              // A checkpoint without a message was exported with its kind as the subject.
              const message = rest.message === `${rest.kind} checkpoint` ? '' : rest.message;
              return { ...rest, message, parent: parent?.id ?? null, stats, paths, changed, origin };
            })();
        added.push(record);
        known.add(id);
      }
      parent = { id, tree };
    }
    appendFetched(ctx.paths, added);
    report.push({ session: parsed.session, writer: parsed.writer, added: added.length, total });
  }
  return { fetched: report, refused };
}

/** A chain's commits, oldest first, down to its base: the user's commit under it (its root) is where the walk stops. */
async function chainCommits(ctx: StoreContext, tip: string): Promise<string[]> {
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir, readAlternate: userObjectsDir(ctx) };
  let root: string | null = null;
  await forEachObject(repo, [tip], (oid, content) => {
    root = readExportCommit(oid, content.toString('utf8'))?.root ?? null;
  });
  const walk = async (stop: string | null) =>
    (
      await git({ ...repo, verb: 'rev-list', args: ['--reverse', '--topo-order', { oid: tip }, ...(stop ? [{ notOid: stop }] : [])] })
    ).stdout
      .toString('utf8')
      .split('\n')
      .filter(isObjectId);
  try {
    return await walk(root);
  } catch {
    // The root is in neither the store nor the user's repository (or gc took the history a fetch
    // brought with it): follow the chain's own first parents down to its base instead.
    const chain: string[] = [];
    for (let id: string | null = tip; id && chain.length < 1_000_000; ) {
      let next: string | null = null;
      let base = false;
      await forEachObject(repo, [id], (_oid, content) => {
        const raw = content.toString('utf8');
        const commit = readExportCommit(id!, raw);
        base = !commit || commit.base;
        next = readCommitText(raw).parent;
      });
      chain.push(id);
      if (base) break;
      id = next;
    }
    return chain.reverse();
  }
}

export interface BundleCreateOptions extends ExportOptions {
  session?: string;
  /** Only what the last bundle did not hold: its tips become this one's prerequisites. */
  incremental?: boolean;
}

export interface BundleReport {
  file: string;
  bytes: number;
  sessions: SessionExport[];
  refs: number;
  /** Commits the bundle needs the importing store to have (an incremental one's). */
  prerequisites: string[];
}

/** `bundle create`: the export chains in one file, for a machine no remote reaches. */
export async function bundleCreate(access: ShareAccess, file: string, options: BundleCreateOptions): Promise<BundleReport> {
  const target = path.resolve(file);
  return underShareLock(access, async () => {
    return access.locked(async (lockedCtx) => {
      // Bundles need the ids a remote would (a store that never shared gets them now, with no remote).
      const state = readShareState(lockedCtx.paths) ?? initialState(undefined, newShareId());
      assertOwnWriter(state);
      const records = readLedger(lockedCtx.paths.ledger).records;
      const sessions =
        options.session === undefined ? chooseSessions(records, undefined, true) : chooseSessions(records, options.session, false);
      const made = await makeExports(lockedCtx, state, await planExports(lockedCtx, state, records, sessions, options));
      const carried = made.filter((e) => e.tip && !(options.incremental && state.bundled[e.ref] === e.tip));
      if (carried.length === 0) {
        writeShareState(lockedCtx.paths, state);
        throw new CkptError(
          'nothing',
          options.incremental ? 'nothing new since the last bundle' : 'no checkpoint here may go into a bundle',
        );
      }
      const previousTips = options.incremental ? carried.map((e) => state.bundled[e.ref]).filter((t): t is string => Boolean(t)) : [];
      // A chain parented on a commit of the user's repository needs that commit where it is imported, not its history.
      const roots = carried.map((e) => state.exports[e.ref]?.root).filter((r): r is string => Boolean(r));
      const prerequisites = [...new Set([...previousTips, ...roots])];
      await git({
        gitDir: lockedCtx.paths.gitDir,
        cwd: lockedCtx.paths.dir,
        readAlternate: userObjectsDir(lockedCtx),
        verb: 'bundle',
        args: [
          { literal: 'create' },
          '--version=3',
          '-q',
          { file: target },
          ...carried.map((e) => ({ ref: e.ref })),
          ...prerequisites.map((notOid) => ({ notOid })),
        ],
      });
      for (const e of carried) state.bundled[e.ref] = e.tip!;
      // Where each bundle went, so that a forget of what it holds can name the file.
      state.bundleFiles = { ...state.bundleFiles, [target]: carried.map((e) => e.ref) };
      writeShareState(lockedCtx.paths, state);
      return { file: target, bytes: statSync(target).size, sessions: made, refs: carried.length, prerequisites };
    });
  });
}

export interface BundleVerifyReport {
  file: string;
  refs: { ref: string; tip: string; ws: string; session: string; writer: string }[];
  prerequisites: string[];
  /** Prerequisites this store lacks: import the bundle they came in first. */
  missing: string[];
}

/** `bundle verify`: what the bundle holds, and whether this store has what it builds on. */
export async function bundleVerify(access: ShareAccess, file: string): Promise<BundleVerifyReport> {
  return access.locked((ctx) => verifyLocked(ctx, path.resolve(file)));
}

async function verifyLocked(ctx: StoreContext, file: string): Promise<BundleVerifyReport> {
  if (!existsSync(file)) throw new CkptError('path', `no such bundle: ${file}`);
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir, readAlternate: userObjectsDir(ctx) };
  const heads = await git({ ...repo, verb: 'bundle', args: [{ literal: 'list-heads' }, { file }], okCodes: [1, 128] });
  if (heads.code !== 0)
    throw new CkptError('remote', `${file} is not a git bundle (${heads.stderr.split('\n')[0]?.replace(/^(?:fatal|error): /, '') ?? ''})`);
  const refs: BundleVerifyReport['refs'] = shareRefLines(heads.stdout.toString('utf8')).map(({ ref, tip, ws, session, writer }) => ({
    ref,
    tip,
    ws,
    session,
    writer,
  }));
  if (refs.length === 0) throw new CkptError('remote', `${file} holds no checkpoints of git ckpt`);
  const verified = await git({ ...repo, verb: 'bundle', args: [{ literal: 'verify' }, { file }], okCodes: [1, 128] });
  const text = `${verified.stdout.toString('utf8')}\n${verified.stderr}`;
  const missing = verified.code === 0 ? [] : missingPrerequisites(text);
  if (verified.code !== 0 && missing.length === 0)
    throw new CkptError(
      'remote',
      `${file} cannot be used: ${verified.stderr.split('\n').find((l) => l.trim()) ?? 'git bundle verify failed'}`,
    );
  const requires = /requires (?:this|these \d+) refs?:?\n([\s\S]*?)(?:\n[A-Z]|$)/.exec(text)?.[1] ?? '';
  const prerequisites = [...requires.matchAll(/\b([0-9a-f]{40}|[0-9a-f]{64})\b/g)].map((m) => m[1]!);
  return { file, refs, prerequisites: [...new Set([...prerequisites, ...missing])], missing };
}

export interface BundleImportOptions {
  /** Take the chains of every workspace the bundle holds, not only this one's. */
  anyWorkspace?: boolean;
}

/**
 * `bundle import`: verify, then take the bundle's chains of this workspace as a fetch takes a remote's.
 * A store that never shared joins the one workspace the bundle holds (as `share init` joins a
 * remote's); chains of other workspaces are taken only with `anyWorkspace`, and named otherwise.
 */
export async function bundleImport(
  access: ShareAccess,
  file: string,
  options: BundleImportOptions = {},
): Promise<
  BundleVerifyReport &
    Pick<FetchReport, 'fetched' | 'rejected' | 'refused'> & { ws: string | null; otherWorkspaces: { ws: string; refs: number }[] }
> {
  const target = path.resolve(file);
  return underShareLock(access, () =>
    access.locked(async (ctx) => {
      const verified = await verifyLocked(ctx, target);
      if (verified.missing.length)
        throw new CkptError(
          'remote',
          `${target} builds on ${verified.missing.length} commit${verified.missing.length === 1 ? '' : 's'} this store lacks (${verified.missing.map((m) => m.slice(0, 12)).join(', ')}): import the bundle made before it first (or, for a commit of your project, fetch it into your repository)`,
        );
      const held = [...new Set(verified.refs.map((r) => r.ws))];
      let state = readShareState(ctx.paths);
      let ws: string | null = null;
      if (!options.anyWorkspace) {
        if (!state && held.length === 1) {
          state = initialState(undefined, held[0]!);
          writeShareState(ctx.paths, state);
        }
        if (!state)
          throw new CkptError(
            'usage',
            `${target} holds checkpoints of ${held.length} workspaces (${held.join(', ')}), and this store shares none yet: git ckpt share init --remote <url> --ws <id> names this one's, or bundle import --any-workspace takes them all`,
          );
        ws = state.ws;
        if (!held.includes(ws))
          throw new CkptError(
            'refused',
            `${target} holds checkpoints of workspace ${held.join(', ')}, not of this one (${ws}): nothing was imported; git ckpt bundle import --any-workspace takes them anyway`,
          );
      }
      const from = ws ? `${SHARE_REFS}/${ws}/*` : `${SHARE_REFS}/*`;
      const into = ws ? `${REMOTE_REFS}/${BUNDLE_LABEL}/${ws}/*` : `${REMOTE_REFS}/${BUNDLE_LABEL}/*`;
      await dropStaleTracking(ctx, into.slice(0, -1), state);
      const rejected = await fetchInto(ctx, { file: target }, from, into);
      const imported = await importTracked(ctx, into.slice(0, -1), BUNDLE_LABEL, state);
      await dropStaleTracking(ctx, into.slice(0, -1), state);
      const otherWorkspaces = held
        .filter((w) => ws !== null && w !== ws)
        .map((w) => ({ ws: w, refs: verified.refs.filter((r) => r.ws === w).length }));
      return { ...verified, ...imported, rejected, ws, otherWorkspaces };
    }),
  );
}

export interface UnpushReport {
  remote: string;
  url: string;
  ref: string;
  tip: string;
}

/** `unpush`: delete this store's ref of a session on the remote, with a lease (only if it is still the tip we saw). */
export async function unpush(access: ShareAccess, options: { remote?: string; session: string }): Promise<UnpushReport> {
  const { ctx } = access;
  return underShareLock(access, async () => {
    const state = requireShareState(ctx.paths);
    const { label, url } = chosenRemote(state, options.remote);
    assertOwnWriter(state);
    // The sessions this store exported, whether or not the ledger still has them (after forget or gc),
    // and those whose chain forget dropped while a remote held it.
    const exported = [...new Set([...Object.values(state.exports), ...Object.values(state.dropped ?? {})].map((c) => c.session))].filter(
      (s): s is string => s !== null,
    );
    const named = exported.filter((s) => s === options.session || s.startsWith(options.session));
    if (named.length > 1 && !named.includes(options.session))
      throw new CkptError('bad-address', `session prefix ${options.session} is ambiguous (${named.length} matches)`);
    const session = named.includes(options.session)
      ? options.session
      : (named[0] ?? chooseSessions(readLedger(ctx.paths.ledger).records, options.session, false)[0]!);
    const ref = exportRef(state.ws, session, state.writer);
    const tip = (await lsRemote(ctx, url, ref)).find((r) => r.ref === ref)?.tip;
    if (!tip) throw new CkptError('nothing', `the remote holds no checkpoints of session ${session ?? '(no session)'} from this store`);
    const outcome = await pushChunk(ctx, url, [{ src: '', dst: ref }], [`--force-with-lease=${ref}:${tip}`]);
    const why = outcome.rejected.get(ref);
    if (why) throw new CkptError('remote', why);
    const latest = requireShareState(ctx.paths);
    delete latest.pushed[label]?.[ref];
    noLongerDroppedOn(latest, ref, label);
    // `push --all` and the turn-end push leave it deleted; `push --session` sends it again.
    latest.unpushed = { ...latest.unpushed, [ref]: true };
    writeShareState(ctx.paths, latest);
    return { remote: label, url, ref, tip };
  });
}

/** The store's share settings for `git ckpt share` (no subcommand), or undefined before `share init`. */
export function shareSummary(ctx: StoreContext): (Omit<ShareState, 'scanned' | 'exports'> & { exports: number }) | undefined {
  const state = readShareState(ctx.paths);
  if (!state) return undefined;
  const { scanned: _scanned, exports, ...rest } = state;
  return { ...rest, exports: Object.keys(exports).length };
}
