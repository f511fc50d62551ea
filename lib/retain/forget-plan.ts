/**
 * Pure planning for `git ckpt forget`: what goes and how the chain is
 * rewritten. No I/O: the caller (forget.ts) reads the ledger and the trees,
 * and writes what these functions return.
 *
 *   - which checkpoints are dropped (named, a session, older than a date), with
 *     the operation records that go with their guard (an undo needs it);
 *   - the chain after it: each kept checkpoint's new parent (the nearest kept
 *     ancestor), its tree, and whether its commit must be rewritten;
 *   - trees without the entries a path pattern matches (entries are only
 *     removed, so git's order stays), object ids, commit texts and ledger
 *     records of the rewritten chain, which name their former ids.
 */
import { shortId } from '../model/short-ids.js';
import { createHash } from 'node:crypto';
import { CkptError } from '../model/errors.js';
import { PATHS_KEPT, type ChangedPath, type CheckpointRecord } from '../model/ledger.js';
import type { TreeChange } from '../model/tree.js';
import { oneLine, shellWord } from '../model/text.js';

/** What forget is asked to remove, as a person or a tool names it. */
export type ForgetRequest = { checkpoints: string[] } | { session: string } | { before: string } | { paths: string[] };

/** The request resolved against the ledger: exact ids, a whole session id, a time, checked patterns. */
export type ForgetSelection =
  | {
      kind: 'checkpoints';
      ids: string[] /** Checkpoints fetched from other stores, named: each goes with the rest of its chain after it. */;
      fetched?: string[];
    }
  | { kind: 'session'; session: string /** A session fetched from another store (`<session>@<writer>`). */; foreign?: true }
  | { kind: 'before'; time: number }
  | { kind: 'paths'; patterns: string[] };

/** Why a checkpoint is dropped. */
export type DropReason = 'named' | 'session' | 'before' | 'guard';

/** A request as a front end collects it: at most one of these may be given. */
export type ForgetInput = Partial<{ checkpoints: string[]; session: string; before: string; paths: string[] }>;

/** Pure: the request's one selector, or a usage error (exactly one kind, each well formed). */
export function checkRequest(request: ForgetInput): ForgetRequest {
  const given = (['checkpoints', 'session', 'before', 'paths'] as const).filter((k) => {
    const v = request[k];
    return Array.isArray(v) ? v.length > 0 : v !== undefined;
  });
  if (given.length === 0)
    throw new CkptError('usage', 'name what to forget: checkpoints, --session <id>, --before <date> or --path <pattern>');
  if (given.length > 1)
    throw new CkptError('usage', `forget takes one kind of selection at a time, not ${given.map((k) => SELECTOR_NAMES[k]).join(' and ')}`);
  const kind = given[0]!;
  if (kind === 'checkpoints') return { checkpoints: request.checkpoints!.map(String) };
  if (kind === 'paths') return { paths: checkPatterns(request.paths!) };
  const value = String(request[kind]);
  if (value.trim() === '' || value.startsWith('-'))
    throw new CkptError(
      'usage',
      `--${kind} takes a value, not ${JSON.stringify(value).slice(0, 80)}${value.startsWith('-') ? ' (looks like an option)' : ''}`,
    );
  return kind === 'session' ? { session: value } : { before: value };
}

const SELECTOR_NAMES = { checkpoints: 'checkpoints', session: '--session', before: '--before', paths: '--path' } as const;

/** Pure: a request as the command line that makes it (shell-quoted where needed). */
export function requestCommand(request: ForgetRequest): string {
  const q = shellWord;
  const words =
    'checkpoints' in request
      ? request.checkpoints.map(q)
      : 'session' in request
        ? ['--session', q(request.session)]
        : 'before' in request
          ? ['--before', q(request.before)]
          : request.paths.flatMap((p) => ['--path', q(p)]);
  return `git ckpt forget ${words.join(' ')}`;
}

/**
 * Pure: check `--path` patterns. They are gitignore patterns relative to the
 * workspace root (the syntax of ckpt.secretPatterns and .ckptignore): a name
 * matches at any depth, a path with a slash is anchored at the root, a
 * trailing slash names a directory and everything below it. Refused whole:
 * empty ones, negations (`!`: forget takes what matches), comments, `..`,
 * control characters, what looks like an option, and patterns that match
 * every path.
 */
export function checkPatterns(patterns: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of patterns) {
    const p = String(raw);
    const say = (why: string) => new CkptError('usage', `bad --path pattern ${JSON.stringify(p).slice(0, 80)}: ${why}`);
    if (p.trim() === '') throw say('it is empty');
    if (/[\0-\x1f\x7f]/.test(p)) throw say('it holds a control character');
    if (p.startsWith('-')) throw say('it looks like an option (write /-name for a file named -name)');
    if (p.startsWith('!'))
      throw say('negations are not supported: forget removes what its patterns match (write \\! for a name starting with !)');
    if (p.startsWith('#')) throw say('it is a comment in gitignore syntax (write \\# for a name starting with #)');
    const segments = p.replace(/^\/+|\/+$/g, '').split('/');
    if (segments.includes('..') || segments.includes('.'))
      throw say('"." and ".." segments are not allowed (patterns are relative to the workspace root)');
    if (segments.every((s) => /^\**$/.test(s))) throw say('it matches every path (forget checkpoints with --before or --session instead)');
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

/**
 * Pure: `--before`'s date as milliseconds since the epoch. A date
 * (`2024-05-01`, local midnight), a date and time (`2024-05-01T14:30`, local,
 * or with `Z` or an offset), `@<unix seconds>`, or an age (`90m`, `12h`, `30d`,
 * `2w`: that long before `now`). Anything else is a usage error.
 */
export function parseBefore(text: string, now: number): number {
  const t = text.trim();
  const bad = (why = 'expected a date like 2024-05-01, 2024-05-01T14:30, @1714000000, or an age like 12h, 30d, 2w') =>
    new CkptError('usage', `bad --before date ${JSON.stringify(text).slice(0, 80)}: ${why}`);
  const age = /^(\d{1,9})\s*(m|h|d|w)$/.exec(t);
  if (age) return now - Number(age[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[age[2] as 'm' | 'h' | 'd' | 'w'];
  const unix = /^@(\d{1,12})$/.exec(t);
  if (unix) return Number(unix[1]) * 1000;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(t);
  if (!m) throw bad();
  const [y, mo, d, h = '0', mi = '0', s = '0'] = m.slice(1, 7).map((v) => v ?? undefined) as string[];
  const parts = [Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s)] as const;
  if (parts[1] < 1 || parts[1] > 12 || parts[2] < 1 || parts[3] > 23 || parts[4] > 59 || parts[5] > 59) throw bad('no such date or time');
  const zone = m[7];
  let time: number;
  if (zone === undefined) {
    const local = new Date(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5]);
    if (local.getDate() !== parts[2] || local.getMonth() !== parts[1] - 1) throw bad('no such date');
    time = local.getTime();
  } else {
    const utc = Date.UTC(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5]);
    if (new Date(utc).getUTCDate() !== parts[2]) throw bad('no such date');
    const off = zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
    time = utc - off * 60_000;
  }
  return time;
}

/** A path test: whether forget takes this workspace path (`dir`: a directory or a submodule). */
export type PathTest = (path: string, dir: boolean) => boolean;

/**
 * Pure: the checkpoints a selection drops, each with its reason. An operation
 * record (restore, revert, undo) whose guard goes goes too: undo could no
 * longer reverse it (and an undo record's guard may be the operation before).
 */
export function planDrop(records: readonly CheckpointRecord[], selection: ForgetSelection): Map<string, DropReason> {
  const drop = new Map<string, DropReason>();
  if (selection.kind === 'paths' || (selection.kind === 'session' && selection.foreign)) return drop;
  for (const r of records) {
    if (
      selection.kind === 'checkpoints'
        ? selection.ids.includes(r.id)
        : selection.kind === 'session'
          ? r.session === selection.session
          : r.time < selection.time
    )
      drop.set(r.id, selection.kind === 'checkpoints' ? 'named' : selection.kind);
  }
  for (let grew = drop.size > 0; grew; ) {
    grew = false;
    for (const r of records) {
      if (r.op && !drop.has(r.id) && drop.has(r.op.guard)) {
        drop.set(r.id, 'guard');
        grew = true;
      }
    }
  }
  return drop;
}

/** One kept checkpoint of the chain after forget. */
export interface ChainStep {
  record: CheckpointRecord;
  /** The old id of its new parent: the nearest kept ancestor (an id gc already dropped stays as it is), or null. */
  parent: string | null;
  /** Its tree after forget (a new one when --path removed entries). */
  tree: string;
  /** Whether its commit is rewritten (its tree, its parent, or an id its trailers name changes). */
  rewrite: boolean;
}

/** Pure: steps with every (new) parent before its children: the ledger's order, unless it was rebuilt oddly. */
function parentsFirst(steps: ChainStep[]): ChainStep[] {
  const byId = new Map(steps.map((s) => [s.record.id, s]));
  const out: ChainStep[] = [];
  const placed = new Set<string>();
  const place = (s: ChainStep) => {
    if (placed.has(s.record.id)) return;
    placed.add(s.record.id);
    const parent = s.parent ? byId.get(s.parent) : undefined;
    if (parent) place(parent);
    out.push(s);
  };
  for (const s of steps) place(s);
  return out;
}

/**
 * Pure: the chain after forget, every new parent before its children. `drop`
 * holds ids of the ledger's records; `trees` the new tree of every checkpoint
 * --path changed.
 */
export function planChain(
  records: readonly CheckpointRecord[],
  drop: ReadonlySet<string>,
  trees: ReadonlyMap<string, string>,
  /** Checkpoints whose commit text changes (a text naming a forgotten path): rewritten whatever their tree. */
  texts: ReadonlySet<string> = new Set(),
): ChainStep[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const kept: ChainStep[] = [];
  for (const r of records) {
    if (drop.has(r.id)) continue;
    let parent = r.parent;
    const seen = new Set<string>();
    while (parent !== null && drop.has(parent) && !seen.has(parent)) {
      seen.add(parent);
      parent = byId.get(parent)?.parent ?? null;
    }
    const tree = trees.get(r.id) ?? r.tree;
    kept.push({ record: r, parent, tree, rewrite: tree !== r.tree || parent !== r.parent || texts.has(r.id) });
  }
  const steps = parentsFirst(kept);
  // A new id travels down: children of a rewritten checkpoint, and operation records naming one, are rewritten too.
  const rewritten = new Set(steps.filter((s) => s.rewrite).map((s) => s.record.id));
  for (let grew = rewritten.size > 0; grew; ) {
    grew = false;
    for (const s of steps) {
      if (s.rewrite) continue;
      const names = s.record.op ? [s.record.op.target, s.record.op.guard] : [];
      if ((s.parent !== null && rewritten.has(s.parent)) || names.some((id) => rewritten.has(id))) {
        s.rewrite = true;
        rewritten.add(s.record.id);
        grew = true;
      }
    }
  }
  return steps;
}

// Trees: git's binary format, `<mode> <name>\0<raw id>` per entry, sorted. Forget only removes
// entries (and subtrees that end up empty), which keeps git's order without re-sorting.

export interface TreeItem {
  mode: string;
  name: string;
  oid: string;
  /** `<mode> <name>\0`, the entry's bytes before its id. */
  head: Buffer;
}

/** Pure: a tree object's entries. */
export function parseTree(body: Buffer, oidBytes: number): TreeItem[] {
  const items: TreeItem[] = [];
  for (let at = 0; at < body.length; ) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 1 + oidBytes > body.length) throw new CkptError('store', 'a tree object in the store is malformed');
    items.push({
      mode: body.toString('latin1', at, space),
      name: body.toString('utf8', space + 1, nul),
      oid: body.toString('hex', nul + 1, nul + 1 + oidBytes),
      head: body.subarray(at, nul + 1),
    });
    at = nul + 1 + oidBytes;
  }
  return items;
}

function serializeTree(items: readonly TreeItem[]): Buffer {
  return Buffer.concat(items.flatMap((i) => [i.head, Buffer.from(i.oid, 'hex')]));
}

/** Pure: git's id of an object (sha1, or sha256 for a repository of 64-digit ids). */
export function objectId(type: 'tree' | 'commit', body: Buffer, oidLength: number): string {
  return createHash(oidLength === 64 ? 'sha256' : 'sha1')
    .update(`${type} ${body.length}\0`)
    .update(body)
    .digest('hex');
}

/** A file (or submodule, or symlink) forget removes from a tree. */
export interface RemovedEntry {
  path: string;
  mode: string;
  oid: string;
}

interface Rewritten {
  /** The new id, the same when nothing below matched, null when nothing is left. */
  oid: string | null;
  removed: RemovedEntry[];
}

/**
 * Pure: trees without what `test` matches. `trees` must hold every tree below
 * the roots (forget.ts reads them level by level); results are shared between
 * checkpoints through a memo keyed by directory and tree id, so a chain of
 * small changes costs little more than its first tree.
 */
export class TreeRewriter {
  private readonly memo = new Map<string, Rewritten>();
  /** New tree objects by id. */
  readonly written = new Map<string, Buffer>();

  constructor(
    private readonly trees: ReadonlyMap<string, TreeItem[]>,
    private readonly test: PathTest,
    private readonly oidLength: number,
  ) {}

  /** A root tree rewritten: its new id (the empty tree when nothing is left) and what went. */
  root(oid: string): Rewritten & { oid: string } {
    const r = this.rewrite('', oid);
    if (r.oid !== null) return { oid: r.oid, removed: r.removed };
    const empty = objectId('tree', Buffer.alloc(0), this.oidLength);
    this.written.set(empty, Buffer.alloc(0));
    return { oid: empty, removed: r.removed };
  }

  private items(oid: string): TreeItem[] {
    const items = this.trees.get(oid);
    if (!items) throw new CkptError('internal', `tree ${shortId(oid)} was not read`);
    return items;
  }

  private rewrite(dir: string, oid: string): Rewritten {
    const key = `${dir}\0${oid}`;
    const known = this.memo.get(key);
    if (known) return known;
    const kept: TreeItem[] = [];
    const removed: RemovedEntry[] = [];
    let changed = false;
    for (const item of this.items(oid)) {
      const full = dir ? `${dir}/${item.name}` : item.name;
      const isTree = item.mode === '40000';
      if (this.test(full, isTree || item.mode === '160000')) {
        changed = true;
        if (isTree) this.everything(full, item.oid, removed);
        else removed.push({ path: full, mode: item.mode, oid: item.oid });
        continue;
      }
      if (!isTree) {
        kept.push(item);
        continue;
      }
      const sub = this.rewrite(full, item.oid);
      for (const e of sub.removed) removed.push(e);
      if (sub.oid === item.oid) kept.push(item);
      else {
        changed = true;
        if (sub.oid !== null) kept.push({ ...item, oid: sub.oid });
      }
    }
    let result: Rewritten;
    if (!changed) result = { oid, removed };
    else if (kept.length === 0) result = { oid: null, removed };
    else {
      const body = serializeTree(kept);
      const id = objectId('tree', body, this.oidLength);
      this.written.set(id, body);
      result = { oid: id, removed };
    }
    this.memo.set(key, result);
    return result;
  }

  /** Whether a tree holds anything `test` matches (nothing is written). */
  holds(oid: string): boolean {
    return this.matches('', oid);
  }

  private readonly held = new Map<string, boolean>();

  private matches(dir: string, oid: string): boolean {
    const key = `${dir}\0${oid}`;
    const known = this.held.get(key);
    if (known !== undefined) return known;
    let found = false;
    for (const item of this.items(oid)) {
      const full = dir ? `${dir}/${item.name}` : item.name;
      const isTree = item.mode === '40000';
      if (this.test(full, isTree || item.mode === '160000') || (isTree && this.matches(full, item.oid))) {
        found = true;
        break;
      }
    }
    this.held.set(key, found);
    return found;
  }

  /** Every file below a removed directory. */
  private everything(dir: string, oid: string, into: RemovedEntry[]): void {
    for (const item of this.items(oid)) {
      const full = `${dir}/${item.name}`;
      if (item.mode === '40000') this.everything(full, item.oid, into);
      else into.push({ path: full, mode: item.mode, oid: item.oid });
    }
  }
}

/**
 * Pure: the fetched checkpoints a forget drops: those named, and every later one of their chains (a
 * chain cannot skip one: each record's parent is the one before it), and a chain's base once nothing
 * after it is kept (it is only there as the state its session started from).
 */
export function planFetchedDrop(fetched: readonly CheckpointRecord[], named: Iterable<string>): Set<string> {
  const drop = new Set(named);
  for (let grew = drop.size > 0; grew; ) {
    grew = false;
    for (const r of fetched)
      if (!drop.has(r.id) && r.parent !== null && drop.has(r.parent)) {
        drop.add(r.id);
        grew = true;
      }
  }
  const children = new Map<string, string[]>();
  for (const r of fetched) if (r.parent !== null) children.set(r.parent, [...(children.get(r.parent) ?? []), r.id]);
  for (const r of fetched) {
    const kids = children.get(r.id) ?? [];
    if (r.session === null && r.parent === null && kids.length > 0 && kids.every((k) => drop.has(k))) drop.add(r.id);
  }
  return drop;
}

/** The texts of a record that came from the agent or a person: what a forgotten path may be named in. */
export type RecordTexts = Partial<Pick<CheckpointRecord, 'message' | 'input' | 'error' | 'prompt'>>;

/**
 * Pure: whether a text names a path the patterns take: a word of it (split at spaces, quotes and shell
 * operators, an absolute path inside the workspace made relative) that is a forgotten file or lies
 * below a forgotten folder. `echo hunter2 > creds.txt` names `creds.txt`; `npm run build` does not name
 * the folder `build/` (a word is a folder only when it ends with `/`).
 */
export function namesForgottenPath(text: string, test: PathTest, root: string): boolean {
  for (const raw of text.split(/[\s'"`<>|;&(){}=,]+/)) {
    let word = raw.replace(/[:.,;!?]+$/, '');
    if (word.startsWith(`${root}/`)) word = word.slice(root.length + 1);
    word = word.replace(/^(?:\.\/)+/, '');
    if (!word || word.startsWith('/') || word.startsWith('-') || word.split('/').includes('..')) continue;
    const dir = word.endsWith('/');
    const name = word.replace(/\/+$/, '');
    if (name && test(name, dir)) return true;
  }
  return false;
}

/**
 * Pure: a record's texts that name a forgotten path, replaced by a mark that says so; undefined when
 * none does. A hook checkpoint's message repeats its input: only that part of it is replaced.
 */
export function textsWithout(r: CheckpointRecord, test: PathTest, root: string, patterns: readonly string[]): RecordTexts | undefined {
  const mark = (what: string) => `[${what} removed by forget --path ${patterns.join(' --path ')}]`;
  const out: RecordTexts = {};
  const names = (text: string | undefined): text is string => text !== undefined && text !== '' && namesForgottenPath(text, test, root);
  if (names(r.input)) out.input = mark('input');
  if (names(r.error)) out.error = mark('error');
  if (names(r.prompt)) out.prompt = mark('prompt');
  if (names(r.message)) {
    const message = r.input && out.input && r.message.includes(r.input) ? r.message.split(r.input).join(out.input) : r.message;
    out.message = names(message) ? mark('message') : message;
  }
  return Object.keys(out).length ? out : undefined;
}

/** What a checkpoint's record says about its change. */
export type ChangeSummary = Pick<CheckpointRecord, 'stats' | 'paths' | 'changed' | 'bytes'>;

/** Pure: a checkpoint's change from its parent's tree, as its record keeps it (sizes of what was added or changed). */
export function changeSummary(changes: readonly TreeChange[], size: (oid: string) => number): ChangeSummary {
  const kind = (mode: string) => (mode === '120000' ? 'l' : mode === '160000' ? 'g' : 'f');
  const paths: ChangedPath[] = changes.map((c) => ({
    path: c.path,
    status: !c.before ? 'A' : !c.after ? 'D' : kind(c.before.mode) === kind(c.after.mode) ? 'M' : 'T',
  }));
  let bytes = 0;
  for (const c of changes) if (c.after) bytes += size(c.after.oid);
  return {
    stats: {
      added: paths.filter((p) => p.status === 'A').length,
      modified: paths.filter((p) => p.status === 'M' || p.status === 'T').length,
      deleted: paths.filter((p) => p.status === 'D').length,
    },
    paths: paths.slice(0, PATHS_KEPT),
    changed: paths.length,
    bytes,
  };
}

/**
 * Pure: a summary without the paths `test` matches, when the parent's tree is
 * unknown (gc dropped it): only the changed paths the record lists can be taken out.
 */
export function summaryWithout(r: CheckpointRecord, test: PathTest): ChangeSummary {
  const gone = r.paths.filter((p) => test(p.path, false));
  const count = (s: ChangedPath['status'][]) => gone.filter((p) => s.includes(p.status)).length;
  return {
    stats: {
      added: Math.max(0, r.stats.added - count(['A'])),
      modified: Math.max(0, r.stats.modified - count(['M', 'T'])),
      deleted: Math.max(0, r.stats.deleted - count(['D'])),
    },
    paths: r.paths.filter((p) => !gone.includes(p)),
    changed: Math.max(0, r.changed - gone.length),
    bytes: r.bytes,
  };
}

/**
 * Pure: a checkpoint commit's text with a new tree and parent. Everything else
 * stays: author, committer and their dates, the message and its trailers,
 * except the ids `Ckpt-Target` and `Ckpt-Guard` name (mapped to their new ids),
 * `Ckpt-Stats` (when the change is new), and `Ckpt-Former-Ids`, the ids the
 * checkpoint had before (so `fsck --rebuild-ledger` keeps the mapping).
 */
export function rewriteCommit(
  raw: string,
  change: {
    tree: string;
    parent: string | null;
    ids: ReadonlyMap<string, string>;
    stats?: CheckpointRecord['stats'];
    formerIds: string[];
    /** Texts replaced (a forgotten path named in them): the subject and the trailers that carry them. */
    texts?: RecordTexts;
  },
): string {
  const split = raw.indexOf('\n\n');
  if (split < 0) throw new CkptError('store', 'a checkpoint commit in the store is malformed');
  const header: string[] = [];
  for (const line of raw.slice(0, split).split('\n')) {
    if (line.startsWith('parent ')) continue;
    if (line.startsWith('tree ')) {
      header.push(`tree ${change.tree}`);
      if (change.parent !== null) header.push(`parent ${change.parent}`);
    } else header.push(line);
  }
  let body = raw.slice(split + 2);
  if (!body.endsWith('\n')) body += '\n';
  const texts = change.texts ?? {};
  const trailerOf: Record<string, string | undefined> = {
    'Ckpt-Input': texts.input,
    'Ckpt-Error': texts.error,
    'Ckpt-Prompt': texts.prompt,
  };
  const lines = body
    .slice(0, -1)
    .split('\n')
    .filter((l) => !l.startsWith('Ckpt-Former-Ids: '))
    .map((l, i) => {
      if (i === 0) return texts.message !== undefined ? oneLine(texts.message || 'checkpoint', 500) : l;
      const trailer = /^(Ckpt-(?:Input|Error|Prompt)): /.exec(l)?.[1];
      if (trailer && trailerOf[trailer] !== undefined) return `${trailer}: ${oneLine(trailerOf[trailer]!, 500)}`;
      const named = /^(Ckpt-(?:Target|Guard)): ([0-9a-f]{40,64})$/.exec(l);
      if (named) return `${named[1]}: ${change.ids.get(named[2]!) ?? named[2]}`;
      if (change.stats && l.startsWith('Ckpt-Stats: '))
        return `Ckpt-Stats: +${change.stats.added} ~${change.stats.modified} -${change.stats.deleted}`;
      return l;
    });
  lines.push(`Ckpt-Former-Ids: ${change.formerIds.join(' ')}`);
  return `${header.join('\n')}\n\n${lines.join('\n')}\n`;
}

/** Pure: a kept checkpoint's record after the rewrite: new id, parent and tree, ids it names mapped, its former ids kept. */
export function rewriteRecord(
  r: CheckpointRecord,
  next: { id: string; parent: string | null; tree: string; ids: ReadonlyMap<string, string>; summary?: ChangeSummary; texts?: RecordTexts },
): CheckpointRecord {
  const map = (id: string) => next.ids.get(id) ?? id;
  const out: CheckpointRecord = {
    ...r,
    id: next.id,
    parent: next.parent,
    tree: next.tree,
    ...(next.summary ?? {}),
    ...(next.texts ?? {}),
    formerIds: [...(r.formerIds ?? []), r.id],
  };
  if (r.op)
    out.op = { ...r.op, target: map(r.op.target), guard: map(r.op.guard), ...(r.op.reverted ? { reverted: r.op.reverted.map(map) } : {}) };
  return out;
}
