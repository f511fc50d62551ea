// A model-based test of recovery (issue 32): a seeded random sequence of edits, ignore-rule changes, nested
// repositories, hook events, snapshots, restore, revert, undo, redo, resume, forget, gc, fetch and bundle import,
// checked after every step against a simple model of what the store has captured:
//   - every checkpoint holds what the disk held when it was taken: nothing eligible missing, nothing invented;
//   - every byte ever captured stays restorable (the trees the model knows are in the store; fsck is clean);
//   - nothing never captured is deleted or overwritten, and what a recovery's target did not see is left alone;
//   - undo returns to the state before the operation (every file, ignored ones included), and undo again redoes it;
//   - dry runs and --print change nothing; the user's .git never changes;
//   - fetched and imported history never changes what latest, turn:N or undo mean here.
// GIT_CKPT_MODEL_SEED and GIT_CKPT_MODEL_STEPS choose the run; a failure prints the steps to replay it.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { ckpt, sandbox, sh, shadowGit, storeDir, treeState } from './helpers.mjs';

const SEED = Number(process.env.GIT_CKPT_MODEL_SEED ?? 20261203);
const STEPS = Number(process.env.GIT_CKPT_MODEL_STEPS ?? 200);
/** ckpt.maxFileBytes in the sandboxes: files above it are never captured. */
const MAX_FILE_BYTES = 4096;
/** Step kinds left out (GIT_CKPT_MODEL_WITHOUT=resume,fetch): to narrow a failure down to the steps that matter. */
const WITHOUT = new Set((process.env.GIT_CKPT_MODEL_WITHOUT ?? '').split(',').filter(Boolean));
const SECRET_NAMES = [/^\.env$/, /^\.env\..*/, /\.pem$/, /\.key$/, /^id_rsa/, /^id_ed25519/];

/** mulberry32: a small seeded generator, so a seed replays the same steps. */
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
  };
}

const blobId = (bytes) => createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');

/**
 * The workspace as it is: path -> { mode, oid, bytes }, `.git` and the inside of nested repositories left out
 * (a nested repository is one entry, its HEAD commit, as a checkpoint holds it).
 */
function readDisk(box) {
  const out = new Map();
  const walk = (rel) => {
    for (const name of readdirSync(path.join(box.ws, rel)).sort()) {
      if (!rel && name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const full = path.join(box.ws, r);
      const st = lstatSync(full);
      if (st.isSymbolicLink()) {
        const bytes = Buffer.from(readlinkSync(full));
        out.set(r, { mode: '120000', oid: blobId(bytes), bytes });
      } else if (st.isDirectory()) {
        if (existsSync(path.join(full, '.git'))) {
          const head = spawnSync('git', ['rev-parse', '-q', '--verify', 'HEAD'], { cwd: full, env: box.env, encoding: 'utf8' });
          out.set(r, { mode: '160000', oid: head.status === 0 ? head.stdout.trim() : null, bytes: null });
        } else walk(r);
      } else {
        const bytes = readFileSync(full);
        out.set(r, { mode: st.mode & 0o100 ? '100755' : '100644', oid: blobId(bytes), bytes });
      }
    }
  };
  walk('');
  // What the rules ignore as they are now: a checkpoint taken of this disk was taken under them.
  out.ignored = ignoredNow(box, [...out.keys()]);
  return out;
}

/** The paths of `disk` the ignore rules in force when it was read ignore (.gitignore files, .git/info/exclude, .ckptignore). */
function ignoredNow(box, paths) {
  const r = spawnSync(
    'git',
    ['-c', `core.excludesFile=${path.join(box.ws, '.ckptignore')}`, 'check-ignore', '--no-index', '-z', '--stdin'],
    { cwd: box.ws, env: box.env, input: paths.join('\0'), encoding: 'utf8' },
  );
  return new Set(r.stdout.split('\0').filter(Boolean));
}

/** The paths of `disk` a full scan must capture: not ignored, not secret, not too large, not forgotten, a nested repository only with a commit. */
function eligible(disk, forgotten) {
  return new Set(
    [...disk.keys()].filter((p) => {
      const entry = disk.get(p);
      if (disk.ignored.has(p) || forgotten.has(p)) return false;
      if (SECRET_NAMES.some((re) => re.test(path.posix.basename(p)))) return false;
      if (entry.mode === '160000') return entry.oid !== null;
      return entry.mode === '120000' || entry.bytes.length <= MAX_FILE_BYTES;
    }),
  );
}

/** A checkpoint's tree: path -> { mode, oid }. */
function treeOf(box, id) {
  const out = new Map();
  for (const line of shadowGit(box, ['ls-tree', '-r', '-z', '--full-tree', id]).split('\0')) {
    if (!line) continue;
    const tab = line.indexOf('\t');
    const [mode, , oid] = line.slice(0, tab).split(' ');
    out.set(line.slice(tab + 1), { mode, oid });
  }
  return out;
}

const gitState = (box) => treeState(path.join(box.ws, '.git'));

/**
 * Every file of the store but its objects, with size and mtime in nanoseconds: any write to the ledger, the refs
 * or the journal changes it, so `records` can answer from its last `log` while the store is as it was.
 */
function storeStamp(box) {
  const out = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'objects') walk(p);
      } else {
        const st = lstatSync(p, { bigint: true });
        out.push(`${p} ${st.size} ${st.mtimeNs}`);
      }
    }
  };
  if (existsSync(box.store)) walk(box.store);
  return out.join('\n');
}

/**
 * Every record of the store, local and fetched, as `log --json --all` gives them. Asked before and after every
 * command, and each CLI start costs ~200 ms: the listing is reused while the store has not changed since.
 */
async function records(box) {
  const stamp = storeStamp(box);
  if (box.records?.stamp === stamp) return box.records.list;
  const r = await ckpt(box, ['log', '--all', '--json', '-n', '100000']);
  if (r.code !== 0) throw new Error(`log failed: ${r.stderr}`);
  box.records = { stamp, list: JSON.parse(r.stdout) };
  return box.records.list;
}

function describeDiff(a, b) {
  const out = [];
  for (const [p, e] of a)
    if (!b.has(p)) out.push(`-${p}`);
    else if (b.get(p).oid !== e.oid || b.get(p).mode !== e.mode) out.push(`~${p}`);
  for (const p of b.keys()) if (!a.has(p)) out.push(`+${p}`);
  return out.slice(0, 12).join(' ');
}

const sameFiles = (a, b) => a.size === b.size && [...a].every(([p, e]) => b.get(p)?.oid === e.oid && b.get(p)?.mode === e.mode);

/** The second machine: a clone of the workspace with its own HOME and store, which pushes and bundles sessions. */
function secondMachine(a) {
  const b = sandbox({ git: false });
  rmSync(b.ws, { recursive: true, force: true });
  spawnSync('git', ['clone', '-q', a.ws, b.ws], { env: b.env });
  appendFileSync(path.join(b.home, '.gitconfig'), `\tmaxFileBytes = ${MAX_FILE_BYTES}\n`);
  return b;
}

class Model {
  constructor(rng) {
    this.rng = rng;
    this.log = [];
    /** Checkpoint id -> its tree as verified when it was taken (for fetched ones: as imported). */
    this.known = new Map();
    /** Checkpoint id -> the paths on disk when it was taken that it did not capture (what it did not see). */
    this.unseen = new Map();
    this.local = new Set();
    this.forgotten = new Set();
    this.turns = { s1: 0, s2: 0 };
    this.calls = 0;
    /** The last restore, revert or undo: the disk before and after it, and whether anything changed since. */
    this.lastOp = null;
  }

  step(text) {
    this.log.push(text);
  }

  replay() {
    const steps = [...this.log.map((s, i) => `${i + 1}. ${s}`), `${this.log.length + 1}. (the step that failed)`];
    return `${this.where ? `(the sandboxes are left in ${this.where})\n` : ''}replay with GIT_CKPT_MODEL_SEED=${SEED} GIT_CKPT_MODEL_STEPS=${this.log.length + 1}${WITHOUT.size ? ` GIT_CKPT_MODEL_WITHOUT=${[...WITHOUT].join(',')}` : ''}; the steps:\n${steps.join('\n')}`;
  }
}

/**
 * Run one git-ckpt command and check what any command must keep: the user's .git unchanged, and every record it
 * made holding what the disk held (the guard before an operation, the operation's record after it).
 */
async function run(box, model, args, { before = readDisk(box), allow = [0] } = {}) {
  const git = gitState(box);
  const seen = new Set((await records(box)).map((r) => r.id));
  const r = await ckpt(box, args, { input: args[0] === 'hook' ? model.hookInput : undefined });
  if (!allow.includes(r.code)) throw new Error(`git ckpt ${args.join(' ')} exited ${r.code}: ${r.stderr}\n${model.replay()}`);
  const after = readDisk(box);
  if (gitState(box) !== git) throw new Error(`git ckpt ${args.join(' ')} changed the user's .git\n${model.replay()}`);
  // New records, not a forget's rewrites of old ones (which keep their former ids).
  const made = (await records(box))
    .filter((rec) => !seen.has(rec.id) && !rec.origin && !rec.formerIds.some((id) => seen.has(id)))
    .reverse();
  for (const rec of made) {
    const disk = ['restore', 'revert', 'undo'].includes(rec.kind) ? after : before;
    verifyCapture(box, model, rec.id, disk, `${rec.kind} checkpoint of git ckpt ${args.join(' ')}`);
  }
  return { ...r, made, after };
}

/** A new checkpoint against the disk it was taken from: sound (only what was there) and complete (all that is eligible). */
function verifyCapture(box, model, id, disk, what) {
  const tree = treeOf(box, id);
  for (const [p, e] of tree) {
    const d = disk.get(p);
    if (!d || d.oid !== e.oid || d.mode !== e.mode)
      throw new Error(
        `${what}: ${p} is ${e.mode} ${e.oid} in ${id.slice(0, 8)}, the disk had ${d ? `${d.mode} ${d.oid}` : 'nothing'}\n${model.replay()}`,
      );
  }
  for (const p of eligible(disk, model.forgotten))
    if (!tree.has(p)) throw new Error(`${what}: ${p} was on disk and eligible, but ${id.slice(0, 8)} lacks it\n${model.replay()}`);
  model.known.set(id, tree);
  model.local.add(id);
  model.unseen.set(id, new Set([...disk.keys()].filter((p) => !tree.has(p) && disk.get(p).mode !== '160000')));
}

/** Every checkpoint the model knows is still in the store with the same tree (forgotten paths aside), and fsck is clean. */
async function verifyStore(box, model, { fsck = true } = {}) {
  const present = new Map((await records(box)).map((r) => [r.id, r]));
  for (const [id, tree] of model.known) {
    if (!present.has(id)) throw new Error(`checkpoint ${id.slice(0, 8)} is gone from the store\n${model.replay()}`);
    let now;
    try {
      now = treeOf(box, id);
    } catch (err) {
      throw new Error(
        `checkpoint ${id.slice(0, 8)}${present.get(id).origin ? ' (fetched)' : ''} cannot be read: ${err.message.trim()}\n${model.replay()}`,
      );
    }
    const want = new Map([...tree].filter(([p]) => !model.forgotten.has(p)));
    if (!sameFiles(want, now)) throw new Error(`checkpoint ${id.slice(0, 8)} changed: ${describeDiff(want, now)}\n${model.replay()}`);
  }
  if (fsck) {
    const r = await ckpt(box, ['fsck', '--json']);
    const report = JSON.parse(r.stdout || '{}');
    if (r.code !== 0 || report.degraded?.length)
      throw new Error(`fsck is not clean (exit ${r.code}): ${r.stdout.slice(0, 400)} ${r.stderr}\n${model.replay()}`);
  }
}

const FILES = ['src/a.txt', 'src/b.txt', 'lib/c.js', 'docs/d.md', 'deep/x/y/z.txt', 'run.sh', 'notes/secret.txt'];
const IGNORED = ['build/out.bin', 'build/cache/obj.o', 'app.log', 'tmp/scratch.txt'];
const UNCAPTURED = ['.env', 'big.dat'];

function content(rng) {
  if (rng.chance(0.15)) return Buffer.from(Array.from({ length: 20 + rng.int(200) }, () => rng.int(256)));
  return Buffer.from(Array.from({ length: 1 + rng.int(4) }, () => `line ${rng.int(1000)}\n`).join(''));
}

function writeFile(box, rel, bytes) {
  const file = path.join(box.ws, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  if (lstatSync(path.dirname(file)).isSymbolicLink()) return;
  rmSync(file, { force: true, recursive: true });
  writeFileSync(file, bytes);
}

/** One random change to the workspace, as an agent's tool or a person would make it. */
function edit(box, model) {
  const { rng } = model;
  const kind = rng.pick(['write', 'write', 'write', 'delete', 'chmod', 'symlink', 'rename-dir', 'ignored', 'uncaptured']);
  if (kind === 'write') {
    const rel = rng.pick(FILES);
    writeFile(box, rel, content(rng));
    return `write ${rel}`;
  }
  if (kind === 'delete') {
    const rel = rng.pick([...FILES, ...IGNORED, 'deep']);
    rmSync(path.join(box.ws, rel), { recursive: true, force: true });
    return `delete ${rel}`;
  }
  if (kind === 'chmod') {
    const file = path.join(box.ws, 'run.sh');
    if (!existsSync(file)) writeFile(box, 'run.sh', Buffer.from('#!/bin/sh\n'));
    chmodSync(file, lstatSync(file).mode & 0o100 ? 0o644 : 0o755);
    return 'chmod run.sh';
  }
  if (kind === 'symlink') {
    const link = path.join(box.ws, 'link');
    rmSync(link, { force: true, recursive: true });
    const target = rng.pick(['src/a.txt', 'lib', 'missing']);
    symlinkSync(target, link);
    return `symlink link -> ${target}`;
  }
  if (kind === 'rename-dir') {
    const [from, to] = rng.chance(0.5) ? ['deep/x', 'deep/w'] : ['deep/w', 'deep/x'];
    if (!existsSync(path.join(box.ws, from)) || existsSync(path.join(box.ws, to))) return 'rename-dir (nothing to rename)';
    renameSync(path.join(box.ws, from), path.join(box.ws, to));
    return `rename ${from} ${to}`;
  }
  if (kind === 'ignored') {
    const rel = rng.pick(IGNORED);
    writeFile(box, rel, content(rng));
    return `write ${rel} (ignored unless a rule changed)`;
  }
  const rel = rng.pick(UNCAPTURED);
  writeFile(box, rel, rel === 'big.dat' ? Buffer.alloc(MAX_FILE_BYTES + 1 + rng.int(100), rng.int(256)) : content(rng));
  return `write ${rel} (secret or too large)`;
}

/** Toggle one ignore rule in one of the three sources. */
function toggleRule(box, model) {
  const [file, rule] = model.rng.pick([
    ['.gitignore', 'build/'],
    ['.ckptignore', '*.log'],
    ['.git/info/exclude', 'tmp/'],
    ['.gitignore', 'docs/'],
  ]);
  const full = path.join(box.ws, file);
  const lines = existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean) : [];
  const next = lines.includes(rule) ? lines.filter((l) => l !== rule) : [...lines, rule];
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, next.length ? `${next.join('\n')}\n` : '');
  return `${lines.includes(rule) ? 'drop' : 'add'} ${rule} in ${file}`;
}

function nestedRepo(box, model) {
  const dir = path.join(box.ws, 'vendor/lib');
  const git = (args) => spawnSync('git', args, { cwd: dir, env: box.env, encoding: 'utf8' });
  if (!existsSync(path.join(dir, '.git'))) {
    mkdirSync(dir, { recursive: true });
    git(['init', '-q']);
    writeFileSync(path.join(dir, 'lib.c'), `int v = ${model.rng.int(100)};\n`);
    git(['add', '-A']);
    git(['commit', '-qm', 'vendored']);
    return 'git init vendor/lib and commit';
  }
  writeFileSync(path.join(dir, 'lib.c'), `int v = ${model.rng.int(1000)};\n`);
  git(['commit', '-qam', 'update']);
  return 'commit inside vendor/lib';
}

/** A local checkpoint the model knows, or undefined. */
function someCheckpoint(model, filter = () => true) {
  const ids = [...model.local].filter(filter);
  return ids.length ? model.rng.pick(ids) : undefined;
}

/**
 * A restore, revert or undo: besides run()'s checks, nothing never captured is deleted or overwritten, and
 * what the target did not see (ignored then, skipped, secret) is left as it was.
 */
async function recovery(box, model, args, { target, allow = [0] } = {}) {
  const before = readDisk(box);
  const r = await run(box, model, [...args, '--json'], { before, allow });
  const after = r.after;
  const captured = new Set();
  for (const tree of model.known.values()) for (const [p, e] of tree) captured.add(`${p}\0${e.oid}`);
  for (const [p, e] of before) {
    if (e.mode === '160000' || captured.has(`${p}\0${e.oid}`)) continue;
    const now = after.get(p);
    if (!now || now.oid !== e.oid)
      throw new Error(
        `git ckpt ${args.join(' ')} ${now ? 'overwrote' : 'deleted'} ${p}, whose bytes no checkpoint holds\n${model.replay()}`,
      );
  }
  if (target && model.unseen.has(target)) {
    for (const p of model.unseen.get(target)) {
      const was = before.get(p);
      if (!was) continue;
      const now = after.get(p);
      if (!now || now.oid !== was.oid || now.mode !== was.mode)
        throw new Error(
          `git ckpt ${args.join(' ')} ${now ? 'changed' : 'deleted'} ${p}, which its target ${target.slice(0, 8)} did not capture (unknown there, not absent)\n${model.replay()}`,
        );
    }
  }
  let result = null;
  try {
    result = JSON.parse(r.stdout);
  } catch {
    /* a refusal: nothing more to check */
  }
  return { r, before, after, result };
}

/** What latest, turn:1 of the local session and undo name here: fetched history must not change them. */
async function localMeanings(box, model) {
  const resolve = async (address) => {
    const r = await ckpt(box, ['show', address, '--json', '--stat']);
    return r.code === 0 ? JSON.parse(r.stdout).id : `error ${r.code}`;
  };
  const undo = await ckpt(box, ['undo', '--dry-run', '--json']);
  return {
    latest: await resolve('latest'),
    turn1: model.turns.s1 ? await resolve('turn:1@s1') : null,
    undo: undo.code === 0 ? JSON.parse(undo.stdout).target : `refused ${undo.code}`,
  };
}

async function toolCall(box, model, session) {
  const { rng } = model;
  const base = { session_id: session, cwd: box.ws, transcript_path: path.join(box.base, `${session}.jsonl`) };
  const notes = [];
  if (model.turns[session] === 0 || rng.chance(0.3)) {
    model.turns[session] += 1;
    model.hookInput = JSON.stringify({
      ...base,
      hook_event_name: 'UserPromptSubmit',
      prompt: `turn ${model.turns[session]}`,
      prompt_id: `${session}-p${model.turns[session]}`,
    });
    await run(box, model, ['hook', 'claude', 'turn-start']);
    notes.push(`prompt ${model.turns[session]}`);
  }
  model.calls += 1;
  const call = {
    ...base,
    prompt_id: `${session}-p${model.turns[session]}`,
    tool_name: rng.pick(['Bash', 'Write', 'Edit']),
    tool_use_id: `call-${model.calls}`,
  };
  call.tool_input = call.tool_name === 'Bash' ? { command: 'make things' } : { file_path: path.join(box.ws, 'src/a.txt') };
  model.hookInput = JSON.stringify({ ...call, hook_event_name: 'PreToolUse' });
  await run(box, model, ['hook', 'claude', 'pre']);
  const edits = Array.from({ length: 1 + rng.int(3) }, () => edit(box, model));
  model.hookInput = JSON.stringify({ ...call, hook_event_name: 'PostToolUse', tool_response: {} });
  await run(box, model, ['hook', 'claude', 'post']);
  return `${session} ${notes.join(' ')} ${call.tool_name} call: ${edits.join(', ')}`;
}

async function readOnly(box, model, args) {
  const disk = readDisk(box);
  const ledger = readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8');
  const r = await run(box, model, args, { allow: [0, 1] });
  if (!sameFiles(disk, r.after))
    throw new Error(`git ckpt ${args.join(' ')} changed the workspace: ${describeDiff(disk, r.after)}\n${model.replay()}`);
  if (readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8') !== ledger)
    throw new Error(`git ckpt ${args.join(' ')} wrote a checkpoint\n${model.replay()}`);
}

/** The second machine runs a short session (sometimes under the same session id as ours) and hands it over. */
async function foreignSession(a, b, model, how) {
  const id = model.rng.chance(0.5) ? 's1' : `b-${model.rng.int(1000)}`;
  spawnSync('git', ['pull', '-q', '--ff-only'], { cwd: b.ws, env: b.env });
  writeFileSync(path.join(b.ws, 'Makefile'), `all:\n\techo from the other machine, step ${model.log.length} ${model.rng.int(1000)}\n`);
  const r = await ckpt(b, ['snapshot', '--kind', 'post', '--session', id, '--turn', '1', '--step', String(1 + model.rng.int(9)), '--json']);
  if (r.code !== 0) throw new Error(`second machine snapshot: ${r.stderr}\n${model.replay()}`);
  const meanings = await localMeanings(a, model);
  const seen = new Set((await records(a)).map((rec) => rec.id));
  if (how === 'bundle') {
    const file = path.join(b.base, `s-${model.log.length}.bundle`);
    const made = await ckpt(b, ['bundle', 'create', file, '--session', id]);
    if (made.code !== 0) throw new Error(`bundle create: ${made.stderr}\n${model.replay()}`);
    const imported = await ckpt(a, ['bundle', 'import', file]);
    if (imported.code !== 0) throw new Error(`bundle import exited ${imported.code}: ${imported.stderr}\n${model.replay()}`);
  } else {
    const pushed = await ckpt(b, ['push', '--session', id]);
    if (pushed.code !== 0)
      throw new Error(
        `push exited ${pushed.code}: ${pushed.stderr} (second machine in ${b.base}; its snapshot: ${r.stdout})\n${model.replay()}`,
      );
    const fetched = await ckpt(a, ['fetch']);
    if (fetched.code !== 0) throw new Error(`fetch exited ${fetched.code}: ${fetched.stderr}\n${model.replay()}`);
  }
  for (const rec of await records(a)) if (!seen.has(rec.id) && rec.origin) model.known.set(rec.id, treeOf(a, rec.id));
  const now = await localMeanings(a, model);
  if (JSON.stringify(now) !== JSON.stringify(meanings))
    throw new Error(
      `a ${how} of session ${id} changed what addresses mean here: ${JSON.stringify(meanings)} -> ${JSON.stringify(now)}\n${model.replay()}`,
    );
  return `${how} of the second machine's session ${id}`;
}

/** Anything done to the workspace after an operation: undo may then refuse, and is no longer checked for exactness. */
function touched(model) {
  if (model.lastOp) model.lastOp.changedSince = true;
}

async function restoreStep({ a, model }) {
  const { rng } = model;
  const useTurn = model.turns.s1 > 0 && rng.chance(0.3);
  const id = useTurn ? null : someCheckpoint(model);
  if (!useTurn && !id) return 'restore (nothing to restore yet)';
  const args = ['restore', useTurn ? `turn:${1 + rng.int(model.turns.s1)}@s1` : id];
  if (rng.chance(0.4)) args.push('--delete-new');
  if (rng.chance(0.2)) args.push('--', rng.pick([...FILES, 'src', 'build', 'deep']));
  // turn:N: its target is what the address resolves to, asked first.
  const target = useTurn ? JSON.parse((await ckpt(a, ['show', args[1], '--json', '--stat'])).stdout || '{}').id : id;
  const op = await recovery(a, model, args, { target, allow: [0, 1] });
  if (op.r.code === 1 && !/is in neither the checkpoint nor the workspace|no turn/.test(op.r.stderr))
    throw new Error(`git ckpt ${args.join(' ')} failed: ${op.r.stderr}\n${model.replay()}`);
  if (op.result?.record) model.lastOp = { before: op.before, after: op.after, changedSince: false, undone: 0 };
  return args.join(' ');
}

async function revertStep({ a, model }) {
  const id = someCheckpoint(model);
  if (!id) return 'revert (nothing yet)';
  const op = await recovery(a, model, ['revert', id], { allow: [0, 1] });
  if (op.r.code === 1 && !/conflict|nothing to revert|has no parent|no change/i.test(op.r.stderr + op.r.stdout))
    throw new Error(`git ckpt revert ${id} failed: ${op.r.stderr}\n${model.replay()}`);
  if (op.result?.record) model.lastOp = { before: op.before, after: op.after, changedSince: false, undone: 0 };
  return `revert ${id.slice(0, 8)}`;
}

async function undoStep({ a, model }) {
  const lastOp = model.lastOp;
  if (!lastOp) {
    await readOnly(a, model, ['undo', '--dry-run']);
    return 'undo --dry-run (nothing to undo)';
  }
  // What undo returns to is the guard of the operation it undoes: what that guard did not see stays as it is.
  const plan = await ckpt(a, ['undo', '--dry-run', '--json']);
  const target = plan.code === 0 ? JSON.parse(plan.stdout).target : undefined;
  // Right after the operation, undo returns to the disk before it, exactly (checked below): what the guard did
  // not see is then what the operation itself created, which undo takes back. After other changes, it is unknown.
  const op = await recovery(a, model, ['undo'], {
    target: lastOp.changedSince ? target : undefined,
    allow: lastOp.changedSince ? [0, 1] : [0],
  });
  if (op.r.code !== 0 || lastOp.changedSince) {
    model.lastOp = null;
    return 'undo (after other changes)';
  }
  // Undo returns to the state before the operation, every file (ignored ones too); again, it redoes it.
  const want = lastOp.undone % 2 === 0 ? lastOp.before : lastOp.after;
  if (!sameFiles(want, op.after))
    throw new Error(`undo did not return to the state before the operation: ${describeDiff(want, op.after)}\n${model.replay()}`);
  lastOp.undone += 1;
  return lastOp.undone % 2 === 1 ? 'undo' : 'undo (a redo)';
}

async function resumeStep({ a, model }) {
  if (!model.turns.s1) return 'resume (no session yet)';
  const n = 1 + model.rng.int(model.turns.s1);
  await readOnly(a, model, ['resume', `turn:${n}@s1`, '--print']);
  await readOnly(a, model, ['resume', `turn:${n}@s1`, '--dry-run']);
  return `resume turn:${n}@s1 --print, then --dry-run`;
}

async function dryRunStep({ a, model }) {
  const which = model.rng.pick([
    ['restore', 'latest', '--dry-run', '--delete-new'],
    ['gc', '--dry-run'],
    ['forget', '--path', 'src/b.txt', '--dry-run'],
    ['diff', '--stat'],
    ['status'],
    ['log', '-n', '5'],
  ]);
  await readOnly(a, model, which);
  return `git ckpt ${which.join(' ')}`;
}

async function forgetStep({ a, model }) {
  const rel = model.rng.pick(['notes/secret.txt', 'docs/d.md', 'app.log']);
  const r = await run(a, model, ['forget', '--path', rel, '--json'], { allow: [0, 1] });
  if (r.code === 1 && !/nothing to forget|no checkpoint/.test(r.stderr))
    throw new Error(`forget --path ${rel}: ${r.stderr}\n${model.replay()}`);
  if (r.code === 0) {
    model.forgotten.add(rel);
    const out = JSON.parse(r.stdout);
    for (const { from, to } of out.rewritten ?? []) {
      if (!model.known.has(from)) continue;
      model.known.set(to, model.known.get(from));
      model.unseen.set(to, model.unseen.get(from) ?? new Set());
      if (model.local.delete(from)) model.local.add(to);
      model.known.delete(from);
    }
    for (const dropped of out.dropped ?? []) {
      const id = typeof dropped === 'string' ? dropped : dropped.id;
      model.known.delete(id);
      model.local.delete(id);
    }
  }
  await verifyStore(a, model);
  return `forget --path ${rel}`;
}

async function gcStep({ a, model }) {
  const r = await run(a, model, ['gc', '--json']);
  const dropped = JSON.parse(r.stdout).dropped ?? [];
  if (dropped.length) throw new Error(`gc dropped ${dropped.length} checkpoint(s) within the default policy\n${model.replay()}`);
  await verifyStore(a, model);
  return 'gc';
}

async function shareStep({ a, b, model }) {
  const what = await foreignSession(a, b, model, model.rng.chance(0.5) ? 'bundle' : 'fetch');
  await verifyStore(a, model);
  return what;
}

async function commitStep({ a, model }) {
  touched(model);
  if (existsSync(path.join(a.ws, 'src'))) sh(a, ['add', '-A', 'src']);
  sh(a, ['commit', '-qm', `user commit ${model.log.length}`, '--allow-empty']);
  return 'the user commits src/ in their own repository';
}

/** The kinds of step and their weights (out of 100); each returns its line of the replay. */
const STEP_KINDS = [
  [
    'edit',
    22,
    async ({ a, model }) => {
      touched(model);
      return Array.from({ length: 1 + model.rng.int(3) }, () => edit(a, model)).join(', ');
    },
  ],
  [
    'rule',
    6,
    async ({ a, model }) => {
      touched(model);
      return toggleRule(a, model);
    },
  ],
  [
    'nested',
    3,
    async ({ a, model }) => {
      touched(model);
      return nestedRepo(a, model);
    },
  ],
  [
    'hook',
    19,
    async ({ a, model }) => {
      touched(model);
      return toolCall(a, model, model.rng.chance(0.75) ? 's1' : 's2');
    },
  ],
  [
    'snapshot',
    5,
    async ({ a, model }) => {
      await run(a, model, ['snapshot', '--json']);
      return 'snapshot';
    },
  ],
  ['restore', 10, restoreStep],
  ['revert', 4, revertStep],
  ['undo', 8, undoStep],
  ['resume', 3, resumeStep],
  ['dry-run', 4, dryRunStep],
  ['forget', 3, forgetStep],
  ['gc', 3, gcStep],
  ['share', 5, shareStep],
  ['commit', 5, commitStep],
];

async function oneStep(a, b, model) {
  let roll = model.rng.int(STEP_KINDS.reduce((sum, [, weight]) => sum + weight, 0));
  const [kind, , step] = STEP_KINDS.find(([, weight]) => (roll -= weight) < 0);
  if (WITHOUT.has(kind)) return `${kind} (left out)`;
  return step({ a, b, model });
}

test(`model-based recovery: ${STEPS} seeded steps (seed ${SEED}) keep every captured byte and never touch what was never captured`, async (t) => {
  t.timeout(20 * 60_000);
  const a = sandbox();
  appendFileSync(path.join(a.home, '.gitconfig'), `\tmaxFileBytes = ${MAX_FILE_BYTES}\n`);
  writeFileSync(path.join(a.ws, '.gitignore'), 'build/\n');
  writeFileSync(path.join(a.ws, 'README.md'), '# project\n');
  writeFileSync(path.join(a.ws, 'src-keep.txt'), 'kept\n');
  sh(a, ['add', '-A']);
  sh(a, ['commit', '-qm', 'start']);
  const remote = path.join(a.base, 'ckpt-remote.git');
  spawnSync('git', ['init', '-q', '--bare', remote], { env: a.env });
  const model = new Model(generator(SEED));
  model.where = a.base;
  await run(a, model, ['snapshot', '--json']);
  const init = await ckpt(a, ['share', 'init', '--remote', remote]);
  if (init.code !== 0) throw new Error(`share init: ${init.stderr}`);
  model.turns.s1 = 0;
  await toolCall(a, model, 's1');
  // A checkpoint of session s1 for certain (the random tool call may have changed nothing), pushed.
  writeFile(a, 'src/a.txt', Buffer.from('pushed at the start\n'));
  await run(a, model, ['snapshot', '--kind', 'post', '--session', 's1', '--turn', '1', '--step', '99', '--json']);
  const pushed = await ckpt(a, ['push', '--session', 's1']);
  if (pushed.code !== 0) throw new Error(`push: ${pushed.stderr}`);
  const b = secondMachine(a);
  const joined = await ckpt(b, ['share', 'init', '--remote', remote]);
  if (joined.code !== 0) throw new Error(`second machine share init: ${joined.stderr}`);
  for (let i = 0; i < STEPS; i++) {
    const text = await oneStep(a, b, model);
    model.step(text);
    if (i % 25 === 24) await verifyStore(a, model);
  }
  await verifyStore(a, model);
  t.log(`${STEPS} steps, ${model.known.size} checkpoints checked, ${model.forgotten.size} path(s) forgotten`);
  t.pass();
});
