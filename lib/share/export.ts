/**
 * The export copy (see model/share-plan.ts): per session, the chain of commits a push or a bundle
 * carries, made in the shadow repository under the workspace lock and kept under its export ref.
 * Filters fail closed: a path the user's .gitignore ignores (unless asked), a file the secret patterns
 * name, and every outgoing blob read for credential shapes; a hit withholds that checkpoint and the
 * rest of its session. Bytes are never rewritten: what a restore on another machine writes is exact.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { secretMatcher } from '../capture/capture-plan.js';
import { forEachObject } from '../git/objects.js';
import { git, nulTerminated, splitZ } from '../git/runner.js';
import type { CheckpointRecord } from '../model/ledger.js';
import { BYTES_SCAN_VERSION, FILE_RULES_VERSION, findOwnToken, findSecretInBytes } from '../model/redact.js';
import {
  BLOB_CAP_BYTES,
  baseMessage,
  exportCommitEnv,
  exportMessage,
  exportRef,
  sessionExport,
  type OutgoingBlob,
} from '../model/share-plan.js';
import type { StoreContext } from '../store/context.js';
import { currentDaemonToken } from '../store/daemon-client.js';
import { presentObjects } from '../store/packs.js';
import type { ExportChain, ShareState } from '../store/share-state.js';

export interface ExportOptions {
  /** Also carry what the user's .gitignore ignores. */
  includeIgnored?: boolean;
  /** Count and check, make nothing: no commit, no ref, the store unchanged but for the scan cache. */
  dryRun?: boolean;
  /**
   * A commit of the user's repository the remote already has: a new chain's base is parented on it,
   * so what the push sends is what the session changed. Read through `userObjects`, never copied.
   */
  root?: string;
  userObjects?: string;
}

/** What one session's export holds, and what it left out and why. */
export interface SessionExport {
  session: string | null;
  ref: string;
  /** The chain's tip (null: nothing of the session can go). */
  tip: string | null;
  /** Checkpoints in the chain, and how many this export added. */
  checkpoints: number;
  fresh: number;
  /** The first checkpoint a credential was found in: it and the rest of the session stay here. */
  withheld: { checkpoint: string; path: string; rule: string; line: number; count: number } | null;
  /** Paths left out of every tree: ignored by the user's .gitignore, or named by the secret patterns (at most 20 of each). */
  ignored: string[];
  ignoredCount: number;
  secret: string[];
  secretCount: number;
  /** Bytes of the blobs the new commits bring (at most what a push sends), and those over the size a push may carry. */
  bytes: number;
  tooLarge: OutgoingBlob[];
}

interface TreeEntryFact {
  mode: string;
  type: string;
  oid: string;
  size: number;
}

const LISTED = 20;

/** One session's export as planned: what its commits will hold, before any is made. */
interface SessionPlan {
  report: SessionExport;
  chain: ExportChain;
  kept: ExportItem[];
  listings: Map<string, Map<string, TreeEntryFact>>;
  dropped: (path: string) => boolean;
  rooted: string | undefined;
  userObjects: string | undefined;
  /** The chain share.json names lost its commits: this plan makes it again from the start. */
  lost: boolean;
}

interface ExportItem {
  /** null: the chain's base, the workspace before the session. */
  record: CheckpointRecord | null;
  tree: string;
  time: number;
}

/**
 * The exports of the sessions named (`null`: checkpoints of no session), planned: what each would
 * carry, leave out and withhold, and its bytes; nothing is made (the scan cache in `state` grows).
 * The caller holds the lock; caps are checked on the plans before `makeExports` writes a commit.
 */
export async function planExports(
  ctx: StoreContext,
  state: ShareState,
  records: readonly CheckpointRecord[],
  sessions: readonly (string | null)[],
  options: ExportOptions = {},
): Promise<SessionPlan[]> {
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir };
  const secrets = await secretMatcher(ctx.settings.secretPatterns);
  const token = currentDaemonToken(ctx.env);
  // The cache holds verdicts of this rule table read this way; the daemon token is a rule too: any of them
  // changed, every blob is read again (the token's hash only, never its value, in share.json).
  const rules = createHash('sha256')
    .update(`${BYTES_SCAN_VERSION}\n${FILE_RULES_VERSION}\n${token ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  if (state.scannedWith !== rules) {
    // A new credential table: every blob is read again.
    state.scanned = {};
    state.scannedWith = rules;
  }
  const plans: SessionPlan[] = [];
  // A chain whose commits are gone (an older git-ckpt's forget deleted them) is made again from scratch:
  // the same checkpoints make the same commits, so the remote's ref still fast-forwards when they are all kept.
  const known = sessions.flatMap((session) => {
    const c = state.exports[exportRef(state.ws, session, state.writer)];
    return c ? [c.tip, ...(c.base ? [c.base] : []), ...Object.values(c.sources)] : [];
  });
  const whole = new Set(await presentObjects(ctx.paths, [...new Set(known)]));
  for (const session of sessions) {
    const ref = exportRef(state.ws, session, state.writer);
    const made = state.exports[ref];
    const lost =
      made !== undefined && [made.tip, ...(made.base ? [made.base] : []), ...Object.values(made.sources)].some((id) => !whole.has(id));
    const chain: ExportChain = (!lost && structuredClone(made)) || { session, tip: '', sources: {} };
    const { steps, baseTree, baseTime } = sessionExport(records, session);
    const present = new Set(await presentObjects(ctx.paths, [...steps.flatMap((r) => [r.id, r.tree]), ...(baseTree ? [baseTree] : [])]));
    // A checkpoint whose objects are gone (degraded) is left out: the chain goes on from the one before it.
    // A checkpoint forget rewrote is the one exported under its former id: not exported twice.
    const exported = (r: CheckpointRecord) => Boolean(chain.sources[r.id]) || (r.formerIds ?? []).some((id) => chain.sources[id]);
    const fresh = steps.filter((r) => !exported(r) && present.has(r.id) && present.has(r.tree));
    const items: ExportItem[] = [];
    if (!chain.tip && baseTree && present.has(baseTree) && fresh.length)
      items.push({ record: null, tree: baseTree, time: baseTime ?? fresh[0]!.time });
    for (const r of fresh) items.push({ record: r, tree: r.tree, time: r.time });
    // A new chain with a base is parented on the root the push found; an existing one keeps its own.
    const rooted = chain.tip ? chain.root : items[0]?.record === null && options.userObjects ? options.root : undefined;
    const readUser = rooted ? { readAlternate: options.userObjects } : {};

    const listings = new Map<string, Map<string, TreeEntryFact>>();
    for (const item of items) if (!listings.has(item.tree)) listings.set(item.tree, await listTreeFacts(repo, item.tree));
    const allPaths = new Set<string>();
    for (const listing of listings.values()) for (const p of listing.keys()) allPaths.add(p);
    const ignored = options.includeIgnored ? new Set<string>() : await ignoredPaths(ctx, [...allPaths]);
    const secret = new Set([...allPaths].filter((p) => !ignored.has(p) && secrets.ignores(p)));
    const dropped = (p: string) => ignored.has(p) || secret.has(p);

    // What the new commits bring that the chain so far (or its root) does not hold, and each blob read once for credentials.
    const previous =
      items.length && (chain.tip || rooted)
        ? await listTreeFacts({ ...repo, ...readUser }, chain.tip || rooted!)
        : new Map<string, TreeEntryFact>();
    const had = new Set([...previous.values()].map((e) => e.oid));
    const outgoing = new Map<string, OutgoingBlob>();
    for (const item of items)
      for (const [p, e] of listings.get(item.tree)!)
        if (e.type === 'blob' && !dropped(p) && !had.has(e.oid) && !outgoing.has(e.oid)) outgoing.set(e.oid, { path: p, size: e.size });
    await scanBlobs(repo, state, outgoing, token);

    let withheld: SessionExport['withheld'] = null;
    let kept = items;
    for (const [i, item] of items.entries()) {
      const hit = [...listings.get(item.tree)!].find(([p, e]) => e.type === 'blob' && !dropped(p) && state.scanned[e.oid]);
      if (!hit) continue;
      const [ruleName, line] = state.scanned[hit[1].oid]!.split('\0');
      const first = item.record ?? items.find((x) => x.record)?.record;
      withheld = {
        checkpoint: first?.id ?? '',
        path: hit[0],
        rule: ruleName!,
        line: Number(line ?? 0),
        count: items.slice(i).filter((x) => x.record).length,
      };
      kept = items.slice(0, i);
      break;
    }
    // A base without a checkpoint after it carries nothing of the session.
    if (kept.length === 1 && kept[0]!.record === null) kept = [];
    const keptBlobs = new Set(kept.flatMap((x) => [...listings.get(x.tree)!.values()].map((e) => e.oid)));
    const sent = [...outgoing].filter(([oid]) => keptBlobs.has(oid));
    const fresher = kept.filter((x) => x.record).length;
    plans.push({
      report: {
        session,
        ref,
        tip: chain.tip || null,
        checkpoints: Object.keys(chain.sources).length + fresher,
        fresh: fresher,
        withheld,
        ignored: [...ignored].sort().slice(0, LISTED),
        ignoredCount: ignored.size,
        secret: [...secret].sort().slice(0, LISTED),
        secretCount: secret.size,
        bytes: sent.reduce((n, [, b]) => n + b.size, 0),
        tooLarge: sent.map(([, b]) => b).filter((b) => b.size > BLOB_CAP_BYTES),
      },
      chain,
      kept,
      listings,
      dropped,
      rooted,
      userObjects: options.userObjects,
      lost,
    });
  }
  return plans;
}

/** Make the planned commits and move the export refs; `state` records each chain. The caller holds the lock and writes it. */
export async function makeExports(ctx: StoreContext, state: ShareState, plans: readonly SessionPlan[]): Promise<SessionExport[]> {
  const repo = { gitDir: ctx.paths.gitDir, cwd: ctx.paths.dir };
  for (const { report, chain, kept, listings, dropped, rooted, userObjects, lost } of plans) {
    if (lost) forgetLostChain(state, report.ref, report.session);
    if (!kept.length) continue;
    const readUser = rooted ? { readAlternate: userObjects } : {};
    const identity = { ws: state.ws, writer: state.writer, root: rooted };
    let tip = chain.tip;
    const filtered = new Map<string, string>();
    for (const item of kept) {
      const drop = [...listings.get(item.tree)!.keys()].filter(dropped);
      if (!filtered.has(item.tree)) filtered.set(item.tree, drop.length ? await treeWithout(ctx, item.tree, drop) : item.tree);
      const message = item.record ? exportMessage(item.record, identity) : baseMessage(report.session, item.time, identity);
      const parent = tip || (item.record === null ? rooted : undefined);
      const args = [{ oid: filtered.get(item.tree)! }, ...(parent ? ['-p', { oid: parent }] : [])];
      const { stdout } = await git({ ...repo, ...readUser, verb: 'commit-tree', args, input: message, env: exportCommitEnv(item.time) });
      tip = stdout.toString('utf8').trim();
      if (item.record) chain.sources[item.record.id] = tip;
      else chain.base = tip;
    }
    // git writes no object its alternate already has: a commit the user's repository happens to hold is copied in.
    if (rooted && userObjects) {
      const made = [...Object.values(chain.sources), ...(chain.base ? [chain.base] : [])];
      const here = new Set(await presentObjects(ctx.paths, made));
      const elsewhere = made.filter((id) => !here.has(id));
      if (elsewhere.length) await copyObjects(ctx, userObjects, elsewhere);
    }
    await git({ ...repo, verb: 'update-ref', args: [{ ref: report.ref }, { oid: tip }] });
    chain.tip = tip;
    if (rooted && chain.base) chain.root = rooted;
    state.exports[report.ref] = chain;
    report.tip = tip;
  }
  return plans.map((p) => p.report);
}

/**
 * A chain whose commits are gone, out of the share state: no export, no tip pushed or bundled. A remote
 * that was given it is remembered (`dropped`): if the chain made again is not the same, a push there is
 * refused with the step that removes the old one.
 */
function forgetLostChain(state: ShareState, ref: string, session: string | null): void {
  const remotes = Object.entries(state.pushed)
    .filter(([, tips]) => tips[ref])
    .map(([label]) => label);
  if (remotes.length)
    state.dropped = { ...state.dropped, [ref]: { session, remotes: [...new Set([...(state.dropped?.[ref]?.remotes ?? []), ...remotes])] } };
  delete state.exports[ref];
  delete state.bundled[ref];
  for (const tips of Object.values(state.pushed)) delete tips[ref];
}

/** Every entry of a tree with its type and size (`ls-tree -r -l`). */
async function listTreeFacts(
  repo: { gitDir: string; cwd: string; readAlternate?: string },
  treeish: string,
): Promise<Map<string, TreeEntryFact>> {
  const { stdout } = await git({ ...repo, verb: 'ls-tree', args: ['-r', '-l', '-z', '--full-tree', { oid: treeish }] });
  const entries = new Map<string, TreeEntryFact>();
  for (const line of splitZ(stdout)) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, oid, size] = line.slice(0, tab).split(/ +/);
    entries.set(line.slice(tab + 1), { mode: mode!, type: type!, oid: oid!, size: Number(size) || 0 });
  }
  return entries;
}

/**
 * The paths the user's ignore rules ignore: asked of their own repository (tracked files are never
 * ignored there, as git sees them), read-only; a workspace that is no repository is asked through the
 * shadow one, whose rules are the workspace's .gitignore files and the excludes git-ckpt keeps.
 */
async function ignoredPaths(ctx: StoreContext, paths: string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  const inUserRepo = ctx.location.userGitDir !== undefined;
  const { stdout } = await git({
    verb: 'check-ignore',
    args: inUserRepo ? ['--stdin', '-z'] : ['--stdin', '-z', '--no-index'],
    cwd: ctx.location.root,
    ...(inUserRepo ? { userConfig: true } : { gitDir: ctx.paths.gitDir, workTree: ctx.location.root }),
    baseEnv: ctx.env,
    // A name starting with ':' would read as pathspec magic (check-ignore takes no --literal-pathspecs): './' keeps it a name.
    input: nulTerminated(paths.map((p) => (p.startsWith(':') ? `./${p}` : p))),
    okCodes: [1],
  });
  return new Set(splitZ(stdout).map((p) => (p.startsWith('./:') ? p.slice(2) : p)));
}

/**
 * Read the blobs not read before for git-ckpt's own token (in any file) and for credential shapes: text,
 * UTF-16 text, and binary files too (see findSecretInBytes).
 */
async function scanBlobs(
  repo: { gitDir: string; cwd: string },
  state: ShareState,
  blobs: Map<string, OutgoingBlob>,
  token: string | undefined,
): Promise<void> {
  const unread = [...blobs].filter(([oid]) => state.scanned[oid] === undefined).map(([oid]) => oid);
  await forEachObject(repo, unread, (oid, content) => {
    const hit = findOwnToken(content, token) ?? findSecretInBytes(content);
    state.scanned[oid] = hit ? `${hit.rule}\0${hit.line}` : '';
  });
}

/** `tree` without `drop`, written through a scratch index. */
async function treeWithout(ctx: StoreContext, tree: string, drop: string[]): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'git-ckpt-export-'));
  const call = { gitDir: ctx.paths.gitDir, workTree: ctx.location.root, cwd: ctx.paths.dir, indexFile: path.join(dir, 'index') };
  try {
    await git({ ...call, verb: 'read-tree', args: [{ oid: tree }] });
    await git({ ...call, verb: 'update-index', args: ['--force-remove', '-z', '--stdin'], input: nulTerminated(drop) });
    return (await git({ ...call, verb: 'write-tree' })).stdout.toString('utf8').trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The objects `ids` read from the user's repository, written into one pack of the store's. */
export async function copyObjects(ctx: StoreContext, userObjects: string, ids: readonly string[]): Promise<void> {
  mkdirSync(ctx.paths.packDir, { recursive: true });
  await git({
    gitDir: ctx.paths.gitDir,
    cwd: ctx.paths.packDir,
    verb: 'pack-objects',
    args: ['-q', { literal: 'pack' }],
    readAlternate: userObjects,
    input: `${ids.join('\n')}\n`,
  });
}
