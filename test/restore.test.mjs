import test from 'ava';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  chmodSync,
  writeFileSync,
  unlinkSync,
} from 'node:fs';
import path from 'node:path';
import { ckpt, ckptError, ckptJson, ledgerLines, lsTree, sandbox, sh, storeDir, treeState, workspaceState, write } from './helpers.mjs';

/** A workspace with a regular file, an executable, a symlink, a nested file; checkpoint A. */
async function baseline() {
  const box = sandbox();
  write(box, 'a.txt', 'alpha\n');
  write(box, 'bin/run.sh', '#!/bin/sh\necho hi\n', 0o755);
  write(box, 'src/deep/x.js', 'x = 1\n');
  symlinkSync('a.txt', path.join(box.ws, 'link'));
  const a = await ckptJson(box, ['snapshot', '-m', 'A']);
  return { box, a: a.id, stateA: workspaceState(box) };
}

/** Change everything about the baseline: modify, delete, chmod, retarget the link, add a file; checkpoint B. */
async function changeAll(box) {
  write(box, 'a.txt', 'ALPHA changed\n');
  chmodSync(path.join(box.ws, 'bin/run.sh'), 0o644);
  rmSync(path.join(box.ws, 'src'), { recursive: true });
  unlinkSync(path.join(box.ws, 'link'));
  symlinkSync('bin/run.sh', path.join(box.ws, 'link'));
  write(box, 'new.txt', 'new file\n');
  return (await ckptJson(box, ['snapshot', '-m', 'B'])).id;
}

function storeState(box) {
  return treeState(storeDir(box));
}

/** The store without its caches (the degraded probe's and the settings'), which any read may refresh. */
function storeData(box) {
  return storeState(box)
    .split('\n')
    .filter((l) => !/ (probe\.json|settings\.cache) /.test(l))
    .join('\n');
}

test('restore brings back modified and deleted files, the executable bit and symlinks; leftovers stay', async (t) => {
  const { box, a, stateA } = await baseline();
  await changeAll(box);
  const r = await ckptJson(box, ['restore', a]);
  t.is(r.op, 'restore');
  t.is(r.target, a);
  t.regex(r.guard, /^[0-9a-f]{40}$/);
  t.deepEqual(r.leftovers, ['new.txt']);
  t.is(r.counts.restore, 3); // a.txt, bin/run.sh (mode), link
  t.is(r.counts.recreate, 1); // src/deep/x.js
  t.is(r.counts.delete, 0);
  t.is(r.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'alpha\n');
  t.is(lstatSync(path.join(box.ws, 'bin/run.sh')).mode & 0o111, 0o111);
  t.is(readlinkSync(path.join(box.ws, 'link')), 'a.txt');
  t.is(readFileSync(path.join(box.ws, 'new.txt'), 'utf8'), 'new file\n', 'never deleted without --delete-new');
  rmSync(path.join(box.ws, 'new.txt'));
  t.is(workspaceState(box), stateA);
  const record = ledgerLines(box).at(-1);
  t.is(record.kind, 'restore');
  t.is(record.op.target, a);
  t.is(record.op.guard, r.guard);
  t.is(record.parent, r.guard, "the record's parent is the guard, so show prints exactly the restore's effect");
  t.false(existsSync(path.join(storeDir(box), 'journal.json')));
});

test('human output names counts, leftovers and the guard with the undo hint', async (t) => {
  const { box, a } = await baseline();
  await changeAll(box);
  const r = await ckpt(box, ['restore', a]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /3 restored, 1 recreated, 0 deleted, 0 skipped, 0 failed/);
  t.regex(r.stdout, /leftovers: 1/);
  t.regex(r.stdout, /new\.txt/);
  t.regex(r.stdout, /guard checkpoint [0-9a-f]{8}.*git ckpt undo/);
});

test('--dry-run changes nothing (workspace, store, ledger) and plans what the real run does', async (t) => {
  const { box, a } = await baseline();
  await changeAll(box);
  write(box, 'a.txt', 'uncheckpointed edit\n');
  const ws = treeState(box.ws);
  const store = storeState(box);
  const plan = await ckptJson(box, ['restore', a, '--dry-run', '--delete-new']);
  const human = await ckpt(box, ['restore', a, '-n']);
  t.is(human.code, 0);
  t.regex(human.stdout, /dry run, nothing was changed/);
  t.regex(human.stdout, /restore\s+a\.txt/);
  t.is(treeState(box.ws), ws, 'workspace byte-identical, mtimes included');
  t.is(storeState(box), store, 'store byte-identical, ledger included');
  t.true(plan.dryRun);
  t.is(plan.guard, null);
  const real = await ckptJson(box, ['restore', a, '--delete-new']);
  t.deepEqual(real.files, plan.files);
  t.deepEqual(real.counts, plan.counts);
  t.is(plan.files.find((f) => f.path === 'new.txt').action, 'delete');
  t.is(plan.files.find((f) => f.path === 'src/deep/x.js').action, 'recreate');
});

test('restoring to the state the workspace already has plans zero actions and writes nothing', async (t) => {
  const { box, a } = await baseline();
  const ledgerBefore = ledgerLines(box).length;
  const r = await ckptJson(box, ['restore', a]);
  t.deepEqual(r.counts, { restore: 0, recreate: 0, delete: 0, unchanged: 4, skip: 0, failed: 0 });
  t.is(r.record, null);
  t.is(ledgerLines(box).length, ledgerBefore);
});

test('--delete-new deletes captured leftovers only; ignored and too-large files are never touched', async (t) => {
  const { box, a } = await baseline();
  sh(box, ['config', '--global', 'ckpt.maxFileBytes', '1000']);
  write(box, '.gitignore', '*.log\n');
  write(box, 'debug.log', 'ignored\n');
  write(box, 'big.bin', Buffer.alloc(5000, 7));
  write(box, 'captured-new.txt', 'new\n');
  mkdirSync(path.join(box.ws, 'newdir/inner'), { recursive: true });
  write(box, 'newdir/inner/f.txt', 'f\n');
  const r = await ckptJson(box, ['restore', a, '--delete-new']);
  t.is(r.counts.failed, 0);
  t.false(existsSync(path.join(box.ws, 'captured-new.txt')));
  t.false(existsSync(path.join(box.ws, '.gitignore')));
  t.false(existsSync(path.join(box.ws, 'newdir')), 'directories emptied by the deletion go too');
  t.is(readFileSync(path.join(box.ws, 'debug.log'), 'utf8'), 'ignored\n');
  t.is(readFileSync(path.join(box.ws, 'big.bin')).length, 5000);
  t.true(r.uncaptured.some((s) => s.path === 'big.bin' && s.reason === 'too-large'));
  t.true(r.leftovers.includes('big.bin'), 'an uncaptured leftover is reported');
});

test('a file that was never captured is not overwritten where the checkpoint has that path', async (t) => {
  const { box, a } = await baseline();
  sh(box, ['config', '--global', 'ckpt.maxFileBytes', '1000']);
  write(box, 'a.txt', Buffer.alloc(4000, 1)); // now too large to capture
  const r = await ckptJson(box, ['restore', a]);
  const entry = r.files.find((f) => f.path === 'a.txt');
  t.is(entry.action, 'skip');
  t.regex(entry.reason, /never captured/);
  t.is(readFileSync(path.join(box.ws, 'a.txt')).length, 4000);
});

test('selected paths: only they are touched; an unknown path fails the whole command and writes nothing', async (t) => {
  const { box, a } = await baseline();
  await changeAll(box);
  const r = await ckptJson(box, ['restore', a, '--', 'a.txt', 'src']);
  t.is(r.counts.restore + r.counts.recreate, 2);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'alpha\n');
  t.true(existsSync(path.join(box.ws, 'src/deep/x.js')));
  t.is(readlinkSync(path.join(box.ws, 'link')), 'bin/run.sh', 'unselected paths untouched');
  t.is(lstatSync(path.join(box.ws, 'bin/run.sh')).mode & 0o111, 0);

  // From a subdirectory, paths are relative to it, like git.
  write(box, 'src/deep/x.js', 'edited\n');
  const sub = await ckptJson(box, ['restore', a, '--', 'x.js'], { cwd: path.join(box.ws, 'src/deep') });
  t.is(sub.counts.restore, 1);
  t.is(readFileSync(path.join(box.ws, 'src/deep/x.js'), 'utf8'), 'x = 1\n');
  // `..` that stays inside the workspace is fine from a subdirectory, as it is for diff and for git.
  write(box, 'a.txt', 'edited from below\n');
  const up = await ckptJson(box, ['restore', a, '--', '../../a.txt'], { cwd: path.join(box.ws, 'src/deep') });
  t.is(up.counts.restore, 1);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'alpha\n');

  write(box, 'a.txt', 'edited again\n');
  const ws = treeState(box.ws);
  const store = storeData(box);
  for (const bad of [
    ['nope.txt'],
    ['a.txt', 'missing/dir'],
    ['../outside'],
    ['src/../../outside'],
    ['/etc/passwd'],
    ['.git/config'],
    ['src/.GIT/x'],
  ]) {
    t.like(await ckptError(box, ['restore', a, '--', ...bad]), { exit: 1, code: 'path' }, bad.join(' '));
    t.is(treeState(box.ws), ws, `${bad} wrote nothing`);
    t.is(storeData(box), store, `${bad} took no guard`);
  }
});

test('a symlinked directory pointing outside the workspace: nothing is written through it', async (t) => {
  const box = sandbox();
  write(box, 'sub/file.txt', 'inside\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  const outside = path.join(box.base, 'outside');
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'file.txt'), 'OUTSIDE\n');
  rmSync(path.join(box.ws, 'sub'), { recursive: true });
  symlinkSync(outside, path.join(box.ws, 'sub'));
  const outsideBefore = treeState(outside);

  const r = await ckptJson(box, ['restore', a]);
  const entry = r.files.find((f) => f.path === 'sub/file.txt');
  t.is(entry.action, 'skip');
  t.regex(entry.reason, /symlink in the path: sub/);
  t.deepEqual(r.leftovers, ['sub']);
  t.is(treeState(outside), outsideBefore);

  // --delete-new removes the captured link itself (never its target), then recreates the directory.
  const d = await ckptJson(box, ['restore', a, '--delete-new']);
  t.is(d.counts.failed, 0);
  t.is(treeState(outside), outsideBefore);
  t.true(lstatSync(path.join(box.ws, 'sub')).isDirectory());
  t.is(readFileSync(path.join(box.ws, 'sub/file.txt'), 'utf8'), 'inside\n');
});

test('a symlink where the checkpoint has a file is replaced only under --delete-new', async (t) => {
  const box = sandbox();
  write(box, 'conf', 'real file\n');
  write(box, 'target.txt', 'the link target\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  rmSync(path.join(box.ws, 'conf'));
  symlinkSync('target.txt', path.join(box.ws, 'conf'));
  const r = await ckptJson(box, ['restore', a]);
  t.is(r.files.find((f) => f.path === 'conf').action, 'skip');
  t.true(lstatSync(path.join(box.ws, 'conf')).isSymbolicLink());
  const d = await ckptJson(box, ['restore', a, '--delete-new']);
  t.is(d.files.find((f) => f.path === 'conf').action, 'restore');
  t.true(lstatSync(path.join(box.ws, 'conf')).isFile());
  t.is(readFileSync(path.join(box.ws, 'conf'), 'utf8'), 'real file\n');
  t.is(readFileSync(path.join(box.ws, 'target.txt'), 'utf8'), 'the link target\n');
});

test('a directory where the checkpoint has a file, and a file where it has a directory', async (t) => {
  const box = sandbox();
  write(box, 'thing', 'a file\n');
  write(box, 'tree/leaf.txt', 'leaf\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  rmSync(path.join(box.ws, 'thing'));
  write(box, 'thing/inside.txt', 'now a dir\n');
  rmSync(path.join(box.ws, 'tree'), { recursive: true });
  write(box, 'tree', 'now a file\n');
  await ckptJson(box, ['snapshot']);

  const plain = await ckptJson(box, ['restore', a]);
  t.is(plain.files.find((f) => f.path === 'thing').action, 'skip');
  t.is(plain.files.find((f) => f.path === 'tree/leaf.txt').action, 'skip');
  t.is(readFileSync(path.join(box.ws, 'tree'), 'utf8'), 'now a file\n');

  // Ignored content inside the directory in the way: never deleted, so the file is skipped even with --delete-new.
  write(box, '.git/info/exclude', '*.keep\n');
  write(box, 'thing/precious.keep', 'uncaptured\n');
  const guarded = await ckptJson(box, ['restore', a, '--delete-new']);
  t.is(guarded.files.find((f) => f.path === 'thing').action, 'skip');
  t.regex(guarded.files.find((f) => f.path === 'thing').reason, /directory is in the way/);
  t.is(readFileSync(path.join(box.ws, 'thing/precious.keep'), 'utf8'), 'uncaptured\n');
  t.is(readFileSync(path.join(box.ws, 'tree/leaf.txt'), 'utf8'), 'leaf\n', 'the file in the way was captured, so it went');

  rmSync(path.join(box.ws, 'thing/precious.keep'));
  const full = await ckptJson(box, ['restore', a, '--delete-new']);
  t.is(full.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'thing'), 'utf8'), 'a file\n');
});

test('undo brings back the exact pre-restore state, new files included; undo again redoes', async (t) => {
  const { box, a } = await baseline();
  await changeAll(box);
  write(box, 'later/extra.txt', 'created after B\n');
  const before = workspaceState(box);
  const r = await ckptJson(box, ['restore', a, '--delete-new']);
  t.true(r.counts.delete >= 2);
  const restored = workspaceState(box);
  t.not(restored, before);

  const dry = await ckptJson(box, ['undo', '--dry-run']);
  t.true(dry.dryRun);
  t.is(workspaceState(box), restored);

  const u = await ckptJson(box, ['undo']);
  t.is(u.op, 'undo');
  t.is(u.target, r.record);
  t.is(workspaceState(box), before, 'byte for byte, modes and links included');

  const redo = await ckptJson(box, ['undo']);
  t.is(redo.target, u.record);
  t.is(workspaceState(box), restored);
});

test('stale undo: refused when a file the restore touched changed since; --force does it anyway', async (t) => {
  const { box, a } = await baseline();
  await changeAll(box);
  await ckptJson(box, ['restore', a]);
  write(box, 'a.txt', 'edited after the restore\n');
  const ws = treeState(box.ws);
  const ledger = ledgerLines(box).length;
  const r = await ckptError(box, ['undo']);
  t.like(r, { exit: 1, code: 'stale' });
  t.regex(r.message, /^undo refused: 1 file changed since the restore \(a\.txt\)/, 'it names the file');
  t.is(treeState(box.ws), ws, 'nothing changed');
  t.is(ledgerLines(box).length, ledger + 1, 'only the guard of the current state was recorded');
  const forced = await ckptJson(box, ['undo', '--force']);
  t.is(forced.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'ALPHA changed\n');
  // The forced undo kept the overwritten edit in its guard: undo again brings it back.
  await ckptJson(box, ['undo']);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'edited after the restore\n');
});

test('undo with nothing to undo is a clear one-line error', async (t) => {
  const { box } = await baseline();
  const r = await ckpt(box, ['undo']);
  t.is(r.code, 1);
  t.is(r.stderr, 'git-ckpt: nothing to undo: no restore, revert or undo has been recorded\n');
  t.like(await ckptError(box, ['undo']), { exit: 1, code: 'nothing' });
});

test('revert undoes exactly one checkpoint: added deleted, deleted recreated, modified back', async (t) => {
  const box = sandbox();
  write(box, 'keep.txt', 'keep\n');
  write(box, 'gone.txt', 'will be deleted\n');
  write(box, 'mod.txt', 'v1\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'mod.txt', 'v2\n');
  rmSync(path.join(box.ws, 'gone.txt'));
  write(box, 'added.txt', 'added\n');
  const c = (await ckptJson(box, ['snapshot'])).id;
  write(box, 'keep.txt', 'later change, not part of c\n');
  await ckptJson(box, ['snapshot']);

  const r = await ckptJson(box, ['revert', c]);
  t.is(r.op, 'revert');
  t.is(r.counts.restore, 1);
  t.is(r.counts.recreate, 1);
  t.is(r.counts.delete, 1);
  t.is(readFileSync(path.join(box.ws, 'mod.txt'), 'utf8'), 'v1\n');
  t.is(readFileSync(path.join(box.ws, 'gone.txt'), 'utf8'), 'will be deleted\n');
  t.false(existsSync(path.join(box.ws, 'added.txt')));
  t.is(readFileSync(path.join(box.ws, 'keep.txt'), 'utf8'), 'later change, not part of c\n');
  // Reverting again finds every path already at the parent's version.
  const again = await ckptJson(box, ['revert', c]);
  t.is(again.counts.unchanged, 3);
  t.is(again.record, null);
});

test('revert with conflicts: changed paths are listed and skipped, the rest is reverted, exit 1', async (t) => {
  const box = sandbox();
  write(box, 'one.txt', '1\n');
  write(box, 'two.txt', '2\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'one.txt', '1 by agent\n');
  write(box, 'two.txt', '2 by agent\n');
  const c = (await ckptJson(box, ['snapshot'])).id;
  write(box, 'two.txt', '2 edited by the user since\n');
  const r = await ckpt(box, ['revert', c, '--json']);
  t.is(r.code, 1);
  const report = JSON.parse(r.stdout);
  const two = report.files.find((f) => f.path === 'two.txt');
  t.is(two.action, 'skip');
  t.regex(two.reason, /conflict/);
  t.is(readFileSync(path.join(box.ws, 'one.txt'), 'utf8'), '1\n');
  t.is(readFileSync(path.join(box.ws, 'two.txt'), 'utf8'), '2 edited by the user since\n');
});

test('weird file names restore byte for byte', async (t) => {
  const box = sandbox();
  const names = [
    'sp ace.txt',
    'new\nline.txt',
    'tab\there',
    'ünïcødé/名前.txt',
    '-dash.txt',
    '--output=x',
    'q"uote\'s',
    'glob*?[x].txt',
    'back\\slash',
    ' lead',
    'trail ',
    'dir with space/é.md',
  ];
  for (const [i, n] of names.entries()) write(box, n, `content ${i}\r\n\0binary\n`);
  const a = (await ckptJson(box, ['snapshot'])).id;
  const stateA = workspaceState(box);
  for (const n of names) write(box, n, 'clobbered');
  rmSync(path.join(box.ws, 'ünïcødé'), { recursive: true });
  const r = await ckptJson(box, ['restore', a]);
  t.is(r.counts.failed, 0);
  t.is(r.counts.skip, 0);
  t.is(workspaceState(box), stateA);
});

test('byte-exact restore whatever autocrlf and .gitattributes say', async (t) => {
  const box = sandbox();
  sh(box, ['config', '--global', 'core.autocrlf', 'true']);
  write(box, '.gitattributes', '* text=auto eol=crlf\n*.txt filter=evil\n');
  sh(box, ['config', '--global', 'filter.evil.smudge', 'tr a-z A-Z']);
  write(box, 'lf.txt', 'line one\nline two\n');
  write(box, 'crlf.txt', 'dos\r\nline\r\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  const stateA = workspaceState(box);
  write(box, 'lf.txt', 'x');
  rmSync(path.join(box.ws, 'crlf.txt'));
  await ckptJson(box, ['restore', a]);
  t.is(workspaceState(box), stateA);
});

test('a tampered journal is refused whole and never becomes a write', async (t) => {
  const { box, a } = await baseline();
  const store = storeDir(box);
  const oid = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
  const journal = (entries) =>
    JSON.stringify({ v: 1, id: 'abc123', op: 'restore', started: Date.now(), target: a, guard: a, counts: {}, leftovers: 0, entries });
  const outside = path.join(box.base, 'evil.txt');
  for (const entries of [
    [['../evil.txt', { mode: '100644', oid }, null]],
    [['ok.txt', { mode: '100644', oid: '--output=/tmp/x' }, null]],
    [['.git/hooks/pre-commit', { mode: '100755', oid }, null]],
    [['/abs', { mode: '100644', oid }, null]],
    [['ok.txt', { mode: '040000', oid }, null]],
  ]) {
    writeFileSync(path.join(store, 'journal.json'), journal(entries));
    const ws = treeState(box.ws);
    for (const action of ['--continue', '--abort']) {
      const r = await ckptError(box, ['restore', action]);
      t.like(r, { exit: 1, code: 'store' });
      t.regex(r.message, /^restore journal .* is invalid/);
      t.is(treeState(box.ws), ws);
    }
    t.false(existsSync(outside));
    const status = await ckpt(box, ['status']);
    t.regex(status.stdout, /interrupted: .*invalid/);
  }
  writeFileSync(path.join(store, 'journal.json'), '{not json');
  for (const args of [
    ['restore', '--abort'],
    ['restore', a],
  ]) {
    const r = await ckptError(box, args);
    t.like(r, { exit: 1, code: 'store' }, args.join(' '));
    t.regex(r.message, /not valid JSON/, `${args.join(' ')}: a new restore refuses too`);
  }
});

test('a tampered ledger record cannot become a restore target or undo guard', async (t) => {
  const { box, a } = await baseline();
  await changeAll(box);
  await ckptJson(box, ['restore', a]);
  const file = path.join(storeDir(box), 'ledger.jsonl');
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const last = JSON.parse(lines.at(-1));
  last.op.guard = '--output=/tmp/pwned';
  lines[lines.length - 1] = JSON.stringify(last);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const r = await ckpt(box, ['undo']);
  t.is(r.code, 1);
  t.is(
    r.stderr,
    'git-ckpt: nothing to undo: no restore, revert or undo has been recorded (1 unreadable ledger line was skipped; see git ckpt log)\n',
  );
  t.regex((await ckpt(box, ['log'])).stderr, /bad operation ids/);
  t.false(existsSync('/tmp/pwned'));
});

test('options smuggled in as checkpoint ids are bad addresses', async (t) => {
  const { box } = await baseline();
  for (const args of [
    ['restore', '--output=/tmp/x'],
    ['revert', '--exec=sh'],
    ['restore', '-Ooops'],
  ]) {
    t.like(await ckptError(box, args), { exit: 1, code: 'bad-address' }, args.join(' '));
  }
  t.like(await ckptError(box, ['restore', '--continue', '--abort']), { exit: 2, code: 'usage' });
});

test('a file that cannot be written is recorded as failed and the pass goes on (exit 1)', async (t) => {
  const { box } = await baseline();
  // A checkpoint with a name no filesystem takes (a 300-byte segment), crafted in the shadow repository.
  const gitDir = path.join(storeDir(box), 'git');
  const git = (args, input) => {
    const r = spawnSync('git', args, { env: { ...box.env, GIT_DIR: gitDir }, input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return r.stdout.trim();
  };
  const ok = git(['hash-object', '-w', '--stdin'], 'fine\n');
  const tree = git(['mktree'], `100644 blob ${ok}\tok.txt\n100644 blob ${ok}\t${'n'.repeat(300)}.txt\n`);
  const latest = ledgerLines(box).at(-1);
  const commit = git(['commit-tree', tree, '-p', latest.id, '-m', 'crafted']);
  const record = { ...latest, id: commit, parent: latest.id, tree, message: 'crafted', time: Date.now() };
  writeFileSync(path.join(storeDir(box), 'ledger.jsonl'), `${JSON.stringify(record)}\n`, { flag: 'a' });
  const r = await ckpt(box, ['restore', commit, '--json']);
  t.is(r.code, 1);
  const report = JSON.parse(r.stdout);
  t.is(report.counts.failed, 1);
  t.regex(report.failures[0].path, /^n{300}\.txt$/);
  t.regex(report.failures[0].error, /ENAMETOOLONG|name too long/i);
  t.is(readFileSync(path.join(box.ws, 'ok.txt'), 'utf8'), 'fine\n', 'the other file was written');
  t.is(ledgerLines(box).at(-1).op.counts.failed, 1, 'the failure is in the record');
  t.false(existsSync(path.join(storeDir(box), 'journal.json')));
});

/** A git repository of its own inside the workspace, with one commit; returns its HEAD. */
function nestedRepo(box, rel, files) {
  const dir = path.join(box.ws, rel);
  mkdirSync(dir, { recursive: true });
  sh(box, ['init', '-q'], { cwd: dir });
  for (const [name, content] of Object.entries(files)) write(box, `${rel}/${name}`, content);
  sh(box, ['add', '.'], { cwd: dir });
  sh(box, ['commit', '-qm', 'nested'], { cwd: dir });
  return sh(box, ['rev-parse', 'HEAD'], { cwd: dir }).stdout.trim();
}

test('nested repositories: restore, undo and --delete-new never enter one, whatever the checkpoint holds there', async (t) => {
  const box = sandbox();
  write(box, 'main.txt', 'main A\n');
  const first = nestedRepo(box, 'vendor/dep', { 'dep.js': 'dep 1\n' });
  const a = await ckptJson(box, ['snapshot', '-m', 'A']);
  const treeA = lsTree(box, a.id);
  t.deepEqual(treeA.get('vendor/dep'), { mode: '160000', type: 'commit', oid: first }, 'captured as a gitlink, not as files');
  t.false(treeA.has('vendor/dep/dep.js'));

  // Since A: the nested repository moved on (a commit, and an uncommitted edit), and a new one appeared.
  write(box, 'main.txt', 'main B\n');
  write(box, 'vendor/dep/dep.js', 'dep 2\n');
  sh(box, ['commit', '-qam', 'two'], { cwd: path.join(box.ws, 'vendor/dep') });
  write(box, 'vendor/dep/dep.js', 'dep 3, uncommitted\n');
  nestedRepo(box, 'tools/new', { 'n.js': 'new\n' });
  const nested = ['vendor/dep', 'tools/new'];
  const before = Object.fromEntries(nested.map((rel) => [rel, treeState(path.join(box.ws, rel))]));

  const dry = await ckptJson(box, ['restore', a.id, '--delete-new', '--dry-run']);
  const r = await ckptJson(box, ['restore', a.id, '--delete-new']);
  t.deepEqual(r.files, dry.files, 'the dry run planned what the real run did');
  t.is(r.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'main.txt'), 'utf8'), 'main A\n', 'the rest of the workspace is restored');
  const byPath = Object.fromEntries(r.files.map((f) => [f.path, f]));
  t.deepEqual(byPath['vendor/dep'], {
    path: 'vendor/dep',
    action: 'skip',
    reason: 'a nested repository (submodule); its content is not captured, so it is left alone',
  });
  t.deepEqual(byPath['tools/new'], { path: 'tools/new', action: 'skip', reason: 'a nested repository; its content is not captured' });
  t.false(
    r.files.some((f) => nested.some((rel) => f.path.startsWith(`${rel}/`))),
    'no path inside a nested repository is planned',
  );
  // Every nested repository is exactly as it was: files, its .git, even mtimes.
  for (const rel of nested) t.is(treeState(path.join(box.ws, rel)), before[rel], rel);

  // Undo goes around them the same way.
  const undo = await ckptJson(box, ['undo']);
  t.is(undo.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'main.txt'), 'utf8'), 'main B\n');
  for (const rel of nested) t.is(treeState(path.join(box.ws, rel)), before[rel], `${rel} after undo`);
});

// A directory whose files a checkpoint holds, turned into a repository of its own afterwards: the
// next capture records it as a gitlink (its files leave the shadow index), so a restore never
// writes inside it.
test('nested repositories: a captured directory that became a repository of its own is not written into', async (t) => {
  const box = sandbox();
  write(box, 'lib/x.js', 'x A\n');
  const a = await ckptJson(box, ['snapshot', '-m', 'A']);
  nestedRepo(box, 'lib', { 'x.js': 'x in its own repo\n' });
  const before = treeState(path.join(box.ws, 'lib'));
  const r = await ckptJson(box, ['restore', a.id, '--delete-new']);
  t.is(r.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'lib/x.js'), 'utf8'), 'x in its own repo\n');
  t.is(treeState(path.join(box.ws, 'lib')), before);
});

/** The journal a restore wrote, rebuilt from its record: every path where the guard and the result differ. */
function journalOf(box, record) {
  const entry = (e) => (e ? { mode: e.mode, oid: e.oid } : null);
  const before = lsTree(box, record.op.guard);
  const after = lsTree(box, record.id);
  const entries = [];
  for (const p of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const from = entry(before.get(p));
    const want = entry(after.get(p));
    if (JSON.stringify(from) !== JSON.stringify(want)) entries.push([p, want, from]);
  }
  const { restore, recreate, delete: del, unchanged, skip } = record.op.counts;
  return {
    v: 1,
    id: record.op.journal,
    op: record.kind,
    started: record.time,
    target: record.op.target,
    guard: record.op.guard,
    counts: { restore, recreate, delete: del, unchanged, skip },
    leftovers: 0,
    entries,
  };
}

test('killed after the record was appended but before the journal went: --continue just closes it, --abort undoes the recorded restore', async (t) => {
  const { box, a, stateA } = await baseline();
  await changeAll(box);
  const stateB = workspaceState(box);
  await ckptJson(box, ['restore', a, '--delete-new']);
  t.is(workspaceState(box), stateA);
  const record = ledgerLines(box).at(-1);
  t.is(record.kind, 'restore');
  const journal = journalOf(box, record);
  t.true(journal.entries.length >= 5, `${journal.entries.length} journaled paths`);
  const journalFile = path.join(storeDir(box), 'journal.json');
  const records = ledgerLines(box).length;

  // --continue: the operation is complete; the journal goes, nothing is written or recorded.
  writeFileSync(journalFile, JSON.stringify(journal));
  t.regex((await ckpt(box, ['status'])).stdout, /interrupted: a restore/);
  const cont = await ckptJson(box, ['restore', '--continue']);
  t.like(cont, { action: 'continue', alreadyRecorded: true, record: record.id, journal: record.op.journal });
  t.false(existsSync(journalFile));
  t.is(workspaceState(box), stateA);
  t.is(ledgerLines(box).length, records);

  // --abort: the restore is rolled back through an undo of its record, back to the exact pre-restore bytes.
  writeFileSync(journalFile, JSON.stringify(journal));
  const abort = await ckptJson(box, ['restore', '--abort']);
  t.like(abort, { action: 'abort', alreadyRecorded: true, failures: [] });
  t.false(existsSync(journalFile));
  t.is(workspaceState(box), stateB);
  const undo = ledgerLines(box).at(-1);
  t.is(undo.kind, 'undo');
  t.is(undo.op.target, record.id, 'the undo names the recorded restore');
  t.is(abort.record, undo.id);
  // And it is an ordinary operation: undo again redoes the restore.
  await ckptJson(box, ['undo']);
  t.is(workspaceState(box), stateA);
});
