// Three-way revert: one checkpoint, a turn range, a whole agent session, with
// later edits by the user or by another agent kept where they do not overlap.
// Sessions are played through the real hook entry script, as agents run it.
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import {
  ROOT,
  ckpt,
  ckptError,
  ckptJson,
  flushDaemonSync,
  libPath,
  ledgerLines,
  sandbox,
  storeDir,
  treeState,
  workspaceState,
  write,
} from './helpers.mjs';

const ENTRY = path.join(ROOT, 'hooks', 'git-ckpt-hook');

/** One hook event through the entry script, as Claude Code runs it. */
function hook(box, phase, payload) {
  const r = spawnSync('sh', [ENTRY, 'claude', phase], { cwd: box.ws, env: box.env, input: JSON.stringify({ cwd: box.ws, ...payload }) });
  if (r.status !== 0) throw new Error(`hook ${phase}: ${r.stderr}`);
  flushDaemonSync(box.store);
}

/** A tool call of a session: pre hook, the edit, post hook. */
let calls = 0;
function toolCall(box, session, prompt, edit) {
  const id = `toolu_${++calls}`;
  const base = { session_id: session, prompt_id: prompt, tool_name: 'Bash', tool_use_id: id, tool_input: { command: 'edit' } };
  hook(box, 'pre', { ...base, hook_event_name: 'PreToolUse' });
  edit();
  hook(box, 'post', { ...base, hook_event_name: 'PostToolUse' });
}
const prompt = (box, session, id, text) =>
  hook(box, 'turn-start', { session_id: session, prompt_id: id, hook_event_name: 'UserPromptSubmit', prompt: text });

const lines = (n, tag = 'line') => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}`);
const file = (box, rel) => readFileSync(path.join(box.ws, rel), 'utf8');
/** Replace line `at` (1-based) of a file. */
function editLine(box, rel, at, text) {
  const all = file(box, rel).split('\n');
  all[at - 1] = text;
  writeFileSync(path.join(box.ws, rel), all.join('\n'));
}

test('two sessions in one workspace: reverting A keeps exactly B’s changes and the user’s own edits, in the same file too', async (t) => {
  const box = sandbox();
  write(box, 'shared.txt', `${lines(30).join('\n')}\n`);
  write(box, 'a-only.txt', 'before A\n');
  await ckptJson(box, ['snapshot', '-m', 'baseline']);
  prompt(box, 'sess-A', 'pa1', 'A: top of shared, a-only, a new file');
  prompt(box, 'sess-B', 'pb1', 'B: bottom of shared, its own file');
  toolCall(box, 'sess-A', 'pa1', () => editLine(box, 'shared.txt', 2, 'line 2 by A'));
  toolCall(box, 'sess-B', 'pb1', () => editLine(box, 'shared.txt', 28, 'line 28 by B'));
  toolCall(box, 'sess-A', 'pa1', () => {
    write(box, 'a-only.txt', 'after A\n');
    write(box, 'a-new.txt', 'made by A\n');
  });
  // The user edits between tool calls: the next pre hook records it, not as a tool call's change.
  editLine(box, 'shared.txt', 15, 'line 15 by the user');
  toolCall(box, 'sess-B', 'pb1', () => write(box, 'b-new.txt', 'made by B\n'));
  toolCall(box, 'sess-A', 'pa1', () => editLine(box, 'shared.txt', 4, 'line 4 by A'));

  // Bytes, not times: git freshens the mtime of an object it is asked to write again, even from a dry run's scratch folder.
  const storeBytes = () =>
    `${treeState(box.ws, { skip: ['.git'] })}\n${treeState(storeDir(box), { mtime: false, skip: ['hook.log', 'probe.json'] })}`;
  const before = storeBytes();
  const dry = await ckptJson(box, ['revert', '--session', 'sess-A', '--dry-run']);
  t.true(dry.dryRun);
  const plan = Object.fromEntries(dry.files.map((f) => [f.path, `${f.action}: ${f.reason ?? ''}`]));
  t.is(plan['shared.txt'], 'restore: merged, keeping later edits');
  t.is(plan['a-only.txt'], 'restore: reverted');
  t.is(plan['a-new.txt'], 'delete: reverted');
  t.is(plan['b-new.txt'], undefined, 'B’s file is not in the plan');

  t.is(storeBytes(), before, 'the dry run wrote nothing');
  const afterSessions = workspaceState(box);
  const done = await ckptJson(box, ['revert', '--session', 'sess-A']);
  t.is(done.counts.failed, 0);
  const expected = lines(30);
  expected[14] = 'line 15 by the user';
  expected[27] = 'line 28 by B';
  t.is(file(box, 'shared.txt'), `${expected.join('\n')}\n`, 'A’s lines are back; B’s and the user’s stay');
  t.is(file(box, 'a-only.txt'), 'before A\n');
  t.is(file(box, 'b-new.txt'), 'made by B\n');
  t.throws(() => file(box, 'a-new.txt'), { code: 'ENOENT' });
  const record = ledgerLines(box).at(-1);
  t.is(record.kind, 'revert');
  t.is(record.op.reverted.length, 3, 'the record names the three tool calls it reverted');
  await ckptJson(box, ['undo']);
  t.is(workspaceState(box), afterSessions, 'undo brings back the pre-revert bytes exactly');
});

test('a turn range: turns 1–2 of a session are undone, its turn 3 kept where it does not overlap', async (t) => {
  const box = sandbox();
  write(box, 'f.txt', `${lines(20).join('\n')}\n`);
  await ckptJson(box, ['snapshot']);
  for (const [turn, at] of [
    [1, 3],
    [2, 8],
    [3, 16],
  ]) {
    prompt(box, 'sess-R', `p${turn}`, `turn ${turn}`);
    toolCall(box, 'sess-R', `p${turn}`, () => editLine(box, 'f.txt', at, `line ${at} in turn ${turn}`));
  }
  const r = await ckptJson(box, ['revert', 'turn:1..turn:2@sess-R']);
  t.is(r.counts.failed, 0);
  const expected = lines(20);
  expected[15] = 'line 16 in turn 3';
  t.is(file(box, 'f.txt'), `${expected.join('\n')}\n`);
  const one = await ckptJson(box, ['revert', '--session', 'sess-R', '--turn', '3', '--dry-run']);
  t.deepEqual(
    one.files.map((f) => f.path),
    ['f.txt'],
  );
});

test('with git older than 2.38 (GIT_CKPT_ASSUME_GIT=2.37): a path changed since is skipped whole, naming git 2.38; the others are reverted; a range or a session is a usage error', async (t) => {
  const oldGit = { env: { GIT_CKPT_ASSUME_GIT: '2.37' } };
  const box = sandbox();
  write(box, 'f.txt', `${lines(20).join('\n')}\n`);
  write(box, 'g.txt', 'before\n');
  await ckptJson(box, ['snapshot']);
  prompt(box, 'sess-O', 'p1', 'edit both');
  toolCall(box, 'sess-O', 'p1', () => {
    editLine(box, 'f.txt', 3, 'line 3 by the agent');
    write(box, 'g.txt', 'after\n');
  });
  prompt(box, 'sess-O', 'p2', 'edit again');
  toolCall(box, 'sess-O', 'p2', () => write(box, 'h.txt', 'made in turn 2\n'));
  const agent = ledgerLines(box).find((r) => r.call && r.turn === 1 && r.phase === 'post');
  // A later edit in other lines of f.txt: a three-way revert keeps it, a whole-file one cannot.
  editLine(box, 'f.txt', 18, 'line 18 by the user');
  const now = file(box, 'f.txt');

  const modern = await ckptJson(box, ['revert', agent.id, '--dry-run']);
  t.is(modern.files.find((f) => f.path === 'f.txt')?.reason, 'merged, keeping later edits', 'this git merges three-way');

  const preview = await ckpt(box, ['revert', agent.id, '--dry-run', '--json'], oldGit);
  t.is(preview.code, 1, `a preview with a skip exits 1: ${preview.stderr}`);
  const dry = JSON.parse(preview.stdout);
  const plan = Object.fromEntries(dry.files.map((f) => [f.path, f]));
  t.is(plan['f.txt']?.action, 'skip', JSON.stringify(dry.files));
  t.regex(plan['f.txt']?.reason ?? '', /git 2\.38 or newer/, 'the reason names the git that would keep later edits');
  t.is(plan['g.txt']?.action, 'restore');

  const done = await ckpt(box, ['revert', agent.id, '--json'], oldGit);
  t.is(done.code, 1, `a partial revert exits 1: ${done.stderr}`);
  t.is(file(box, 'f.txt'), now, 'the path changed since is left as it is');
  t.is(file(box, 'g.txt'), 'before\n', 'the path nobody touched since is reverted');
  t.is(file(box, 'h.txt'), 'made in turn 2\n', 'a later checkpoint’s file stays');

  for (const args of [
    ['revert', 'turn:1..turn:2@sess-O'],
    ['revert', '--session', 'sess-O'],
  ]) {
    const before = workspaceState(box);
    const refused = await ckptError(box, args, oldGit);
    t.like(refused, { exit: 2, code: 'usage' }, args.join(' '));
    t.regex(refused.message, /needs git 2\.38 or newer/);
    t.is(workspaceState(box), before, `${args.join(' ')} wrote nothing`);
  }
  t.is((await ckptJson(box, ['revert', 'turn:1..turn:2@sess-O', '--dry-run'])).dryRun, true, 'this git reverts the range');
});

test('overlapping edits conflict with their line ranges: kept as they are by default, conflict markers on request; exit 1', async (t) => {
  const box = sandbox();
  write(box, 'f.txt', `${lines(10).join('\n')}\n`);
  await ckptJson(box, ['snapshot']);
  write(
    box,
    'f.txt',
    `${lines(10)
      .map((l, i) => (i === 4 ? 'line 5 by the agent' : l))
      .join('\n')}\n`,
  );
  const agent = await ckptJson(box, ['snapshot', '-m', 'agent']);
  editLine(box, 'f.txt', 5, 'line 5 by the user, later');
  editLine(box, 'f.txt', 9, 'line 9 by the user');
  const now = file(box, 'f.txt');

  const kept = await ckpt(box, ['revert', agent.id.slice(0, 8), '--json']);
  t.is(kept.code, 1, 'a partial revert exits 1');
  const report = JSON.parse(kept.stdout);
  t.deepEqual(report.files, [
    { path: 'f.txt', action: 'skip', reason: `conflict: line 5 changed since (reverting ${agent.id.slice(0, 8)}); left as it is` },
  ]);
  t.is(file(box, 'f.txt'), now, 'the conflicting file is left as it is');

  const marked = await ckpt(box, ['revert', agent.id.slice(0, 8), '--conflict=markers', '--json']);
  t.is(marked.code, 1);
  const text = file(box, 'f.txt');
  t.regex(text, /<<<<<<< [0-9a-f]+\nline 5 by the user, later\n=======\nline 5\n>>>>>>> [0-9a-f]+\n/);
  t.regex(text, /line 9 by the user/, 'the non-overlapping edit is kept');
  await ckptJson(box, ['undo']);
  t.is(file(box, 'f.txt'), now);
});

test('binary files, symlinks, modes and file-versus-directory changes conflict whole; a deleted file nobody touched comes back; a created one edited since is a conflict, not a deletion', async (t) => {
  const box = sandbox();
  write(box, 'bin.dat', Buffer.from([0, 1, 2, 3, 0, 5]));
  write(box, 'run.sh', '#!/bin/sh\necho 1\n');
  write(box, 'gone.txt', 'deleted by the agent\n');
  symlinkSync('bin.dat', path.join(box.ws, 'link'));
  write(box, 'fd', 'a file that becomes a directory\n');
  await ckptJson(box, ['snapshot']);
  rmSync(path.join(box.ws, 'fd'));
  write(box, 'fd/inner.txt', 'inside\n');
  write(box, 'bin.dat', Buffer.from([0, 9, 9, 9, 0, 5]));
  write(box, 'run.sh', '#!/bin/sh\necho 2\n');
  rmSync(path.join(box.ws, 'gone.txt'));
  rmSync(path.join(box.ws, 'link'));
  symlinkSync('run.sh', path.join(box.ws, 'link'));
  write(box, 'made.txt', 'created by the agent\n');
  const agent = await ckptJson(box, ['snapshot', '-m', 'agent']);
  // Later: the user changes each of them again (but not gone.txt).
  write(box, 'bin.dat', Buffer.from([0, 7, 7, 7, 0, 5]));
  chmodSync(path.join(box.ws, 'run.sh'), 0o755);
  rmSync(path.join(box.ws, 'link'));
  symlinkSync('made.txt', path.join(box.ws, 'link'));
  write(box, 'made.txt', 'created by the agent\nedited by the user\n');
  write(box, 'fd/inner.txt', 'inside, edited\n');
  await ckptJson(box, ['snapshot']);
  const r = await ckpt(box, ['revert', agent.id.slice(0, 8), '--json']);
  t.is(r.code, 1);
  const files = Object.fromEntries(JSON.parse(r.stdout).files.map((f) => [f.path, `${f.action}: ${f.reason}`]));
  t.regex(files['bin.dat'], /^skip: conflict: a binary file changed since/);
  t.regex(files.link, /^skip: conflict: a symlink changed since/);
  t.regex(files['run.sh'], /^skip: conflict: its mode changed since/);
  t.regex(files['made.txt'], /^skip: conflict: changed since on one side and deleted on the other/);
  t.regex(files.fd, /^skip: conflict: a file and a directory at this path since/);
  t.is(file(box, 'fd/inner.txt'), 'inside, edited\n');
  t.is(files['gone.txt'], 'recreate: reverted');
  t.is(file(box, 'gone.txt'), 'deleted by the agent\n');
  t.is(file(box, 'made.txt'), 'created by the agent\nedited by the user\n', 'not deleted');
});

test('a file made since where the reverted change removed a directory wins whole: kept, not replaced by the directory', async (t) => {
  const box = sandbox();
  write(box, 'docs/readme', 'the old docs\n');
  write(box, 'keep.txt', 'k\n');
  await ckptJson(box, ['snapshot']);
  rmSync(path.join(box.ws, 'docs'), { recursive: true });
  write(box, 'keep.txt', 'k2\n');
  const agent = await ckptJson(box, ['snapshot', '-m', 'agent removed docs/']);
  write(box, 'docs', 'a file the user made since\n');
  const r = await ckpt(box, ['revert', agent.id.slice(0, 10), '--json']);
  t.is(r.code, 1, r.stderr);
  const files = Object.fromEntries(JSON.parse(r.stdout).files.map((f) => [f.path, `${f.action}: ${f.reason}`]));
  t.regex(files.docs, /^skip: conflict: a file and a directory at this path since/);
  t.is(files['docs/readme'], undefined, 'nothing under the path is planned');
  t.is(files['keep.txt'], 'restore: reverted');
  t.is(file(box, 'docs'), 'a file the user made since\n');
  t.is(file(box, 'keep.txt'), 'k\n');
});

/** A seeded generator (mulberry32), so a failing seed replays. */
function seeded(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (n) => Math.floor(next() * n), pick: (items) => items[Math.floor(next() * items.length)], chance: (p) => next() < p };
}

test('a revert applied in memory where git’s merge has one answer gives git’s tree and conflicts exactly (random sessions of edits, renames, folder swaps, modes, and edits since)', async (t) => {
  const { revertTrees } = await import(libPath('merge'));
  const { listTree, treeChanges } = await import(libPath('objects'));
  const box = sandbox();
  const repo = { gitDir: path.join(box.ws, '.git'), cwd: box.ws };
  const git = (...args) => {
    const r = spawnSync('git', args, { cwd: box.ws, env: box.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const PATHS = ['a.txt', 'b.txt', 'd1/x.txt', 'd1/y.txt', 'd2/z.txt', 'd2/sub/w.txt', 'd3/v.txt'];
  let quickSteps = 0;
  for (const seed of [1, 2, 3, 4]) {
    const rng = seeded(seed);
    const text = () => `${lines(6, `s${seed}-${rng.int(1000)}`).join('\n')}\n`;
    const at = (rel) => path.join(box.ws, rel);
    const present = () => PATHS.filter((p) => spawnSync('test', ['-f', at(p)]).status === 0);
    /** Write a file, first removing a file that stands where one of its folders must be. */
    const put = (rel) => {
      for (let slash = rel.indexOf('/'); slash > 0; slash = rel.indexOf('/', slash + 1))
        if (spawnSync('test', ['-f', at(rel.slice(0, slash))]).status === 0) rmSync(at(rel.slice(0, slash)));
      write(box, rel, text());
    };
    for (const d of ['d1', 'd2', 'd3']) rmSync(at(d), { recursive: true, force: true });
    for (const p of PATHS) put(p);
    const edit = () => {
      const files = present();
      const kind = rng.pick(['line', 'line', 'line', 'add', 'delete', 'rename', 'folder', 'mode', 'swap']);
      const victim = files.length ? rng.pick(files) : undefined;
      if (kind === 'line' && victim) editLine(box, victim, 1 + rng.int(6), `edit ${rng.int(1e6)}`);
      else if (kind === 'delete' && victim) rmSync(at(victim));
      else if (kind === 'rename' && victim) spawnSync('mv', [at(victim), at(`${victim}.moved`)]);
      else if (kind === 'folder') rmSync(at(rng.pick(['d1', 'd2', 'd3'])), { recursive: true, force: true });
      else if (kind === 'mode' && victim) chmodSync(at(victim), 0o755);
      else if (kind === 'swap') {
        // A file where a folder was, or the other way round.
        rmSync(at('d3'), { recursive: true, force: true });
        if (rng.chance(0.5)) writeFileSync(at('d3'), 'a file now\n');
        else put('d3/v.txt');
      } else put(rng.pick(PATHS));
    };
    git('add', '-A');
    git('commit', '-qm', 'start', '--allow-empty');
    const steps = [];
    for (let i = 0; i < 16; i++) {
      edit();
      git('add', '-A');
      git('commit', '-qm', `step ${i}`, '--allow-empty');
      const id = git('rev-parse', 'HEAD');
      const parentTree = git('rev-parse', 'HEAD~1^{tree}');
      steps.unshift({ id, tree: git('rev-parse', 'HEAD^{tree}'), parentTree, changes: await treeChanges(repo, parentTree, id) });
    }
    // Edits since the session, some on the paths it touched: a line here and there, and one more of any kind.
    for (let i = 0; i < 2; i++) if (present().length) editLine(box, rng.pick(present()), 1 + rng.int(6), `since ${rng.int(1e6)}`);
    if (seed % 2 === 0) edit();
    git('add', '-A');
    const tree = git('write-tree');
    const now = { tree, entries: await listTree(repo, tree) };
    for (const range of [steps, steps.filter((_, i) => i % 3 === 0)]) {
      for (const mode of ['keep', 'markers']) {
        const byGit = await revertTrees(repo, now, range, mode, { quick: false });
        const inMemory = await revertTrees(repo, now, range, mode);
        t.is(inMemory.tree, byGit.tree, `seed ${seed}, ${range.length} steps, ${mode}: the same tree`);
        t.deepEqual(inMemory.conflicts, byGit.conflicts, `seed ${seed}: the same conflicts`);
        t.is(byGit.inMemory, 0);
        quickSteps += inMemory.inMemory;
      }
    }
  }
  t.log(`${quickSteps} of the walks' steps reverted in memory`);
  t.true(quickSteps > 0, 'the in-memory path was taken');
});
