import test from 'ava';
import { getEventListeners } from 'node:events';
import { existsSync, readdirSync, rmSync, renameSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { ckpt, ckptJson, ledgerLines, lsTree, sandbox, sh, shadowGit, storeDir, storedBytes, write, libPath } from './helpers.mjs';

const { Workspace } = await import(libPath('index'));

test('first snapshot captures the workspace; a second with no change creates nothing', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'alpha\n');
  write(box, 'src/b.js', 'console.log(1)\n');
  const first = await ckptJson(box, ['snapshot']);
  t.true(first.created);
  t.regex(first.id, /^[0-9a-f]{40}$/);
  t.deepEqual(first.stats, { added: 2, modified: 0, deleted: 0 });
  const again = await ckptJson(box, ['snapshot']);
  t.false(again.created);
  t.is(again.id, first.id);
  const human = await ckpt(box, ['snapshot']);
  t.is(human.code, 0);
  t.regex(human.stdout, /nothing changed/);
  t.is(ledgerLines(box).length, 1);
});

test('edits, creations and deletions are captured, and each checkpoint is a child of the previous one', async (t) => {
  const box = sandbox();
  write(box, 'keep.txt', 'keep\n');
  write(box, 'edit.txt', 'v1\n');
  write(box, 'gone.txt', 'bye\n');
  const one = await ckptJson(box, ['snapshot']);
  write(box, 'edit.txt', 'v2\n');
  rmSync(path.join(box.ws, 'gone.txt'));
  write(box, 'new/deep/file.txt', 'hello\n');
  const two = await ckptJson(box, [
    'snapshot',
    '-m',
    'shell edits',
    '--session',
    'S1',
    '--turn',
    '2',
    '--step',
    '5',
    '--tool',
    'Bash',
    '--kind',
    'post',
  ]);
  t.true(two.created);
  t.is(two.parent, one.id);
  t.deepEqual(two.stats, { added: 1, modified: 1, deleted: 1 });
  const entries = lsTree(box, two.id);
  t.deepEqual([...entries.keys()].sort(), ['edit.txt', 'keep.txt', 'new/deep/file.txt']);
  t.is(storedBytes(box, two.id, 'edit.txt').toString(), 'v2\n');
  // The parent link is in the commit itself: the diff against it is exactly what happened.
  const diff = shadowGit(box, ['diff-tree', '-r', '--name-status', one.id, two.id]);
  t.is(diff.trim().split('\n').sort().join('|'), 'A\tnew/deep/file.txt|D\tgone.txt|M\tedit.txt');
  const [, record] = ledgerLines(box);
  t.like(record, { id: two.id, parent: one.id, session: 'S1', turn: 2, step: 5, tool: 'Bash', kind: 'post', message: 'shell edits', v: 1 });
  t.is(record.bytes, 'v2\n'.length + 'hello\n'.length);
});

test('checkpoints carry a fixed author, their metadata as trailers, and no ref is created', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  const one = await ckptJson(box, ['snapshot', '--session', 'sess-9', '--tool', 'Edit', '--kind', 'pre', '--turn', '3']);
  const raw = shadowGit(box, ['cat-file', 'commit', one.id]);
  t.regex(raw, /^author git-ckpt <git-ckpt@localhost\.invalid> /m);
  t.regex(raw, /^committer git-ckpt <git-ckpt@localhost\.invalid> /m);
  t.notRegex(raw, /Test User|test@example\.com/);
  t.regex(raw, /^Ckpt-Session: sess-9$/m);
  t.regex(raw, /^Ckpt-Kind: pre$/m);
  t.regex(raw, /^Ckpt-Turn: 3$/m);
  t.regex(raw, /^Ckpt-Tool: Edit$/m);
  const gitDir = path.join(storeDir(box), 'git');
  t.is(shadowGit(box, ['for-each-ref']).trim(), '');
  t.false(existsSync(path.join(gitDir, 'refs', 'heads', 'main')));
  t.false(existsSync(path.join(gitDir, 'logs')));
});

test('non-git directories are workspaces too, and -C works like git', async (t) => {
  const box = sandbox({ git: false });
  write(box, 'notes.md', '# notes\n');
  const r = await ckptJson(box, ['-C', box.ws, 'snapshot'], { cwd: box.base });
  t.true(r.created);
  const status = await ckptJson(box, ['-C', 'ws', 'status'], { cwd: box.base });
  t.is(status.workspace, box.ws);
  t.false(status.git);
  t.is(status.checkpoints, 1);
});

test('a subdirectory of a git work tree resolves to its toplevel', async (t) => {
  const box = sandbox();
  write(box, 'pkg/lib/x.txt', 'x\n');
  const r = await ckptJson(box, ['snapshot'], { cwd: path.join(box.ws, 'pkg', 'lib') });
  t.true(r.created);
  t.true(lsTree(box, r.id).has('pkg/lib/x.txt'));
  const status = await ckptJson(box, ['status'], { cwd: path.join(box.ws, 'pkg') });
  t.is(status.workspace, box.ws);
});

test('the store lives outside the workspace, mode 0700, and records the workspace path', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  const dir = storeDir(box);
  t.false(dir.startsWith(box.ws));
  t.regex(path.basename(dir), /^ws-[0-9a-f]{16}$/);
  const { statSync, readFileSync } = await import('node:fs');
  t.is(statSync(box.store).mode & 0o777, 0o700);
  t.is(readFileSync(path.join(dir, 'workspace'), 'utf8').trim(), box.ws);
  for (const name of ['git', 'index', 'ledger.jsonl']) t.true(existsSync(path.join(dir, name)), name);
  const status = await ckptJson(box, ['status']);
  t.is(status.store, dir);
  t.deepEqual(readdirSync(box.ws).sort(), ['.git', 'a.txt']);
});

test('a store that belongs to another path is refused', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path.join(storeDir(box), 'workspace'), '/somewhere/else\n');
  const r = await ckpt(box, ['snapshot']);
  t.is(r.code, 1);
  t.regex(r.stderr, /^git-ckpt: store .* belongs to another workspace/);
});

test('.gitignore, the user repo info/exclude and .ckptignore are honoured', async (t) => {
  const box = sandbox();
  write(box, '.gitignore', 'build/\n*.log\n');
  write(box, '.git/info/exclude', 'local-only.txt\n');
  write(box, '.ckptignore', 'scratch/\n');
  write(box, 'build/out.bin', 'x');
  write(box, 'debug.log', 'x');
  write(box, 'local-only.txt', 'x');
  write(box, 'scratch/tmp.txt', 'x');
  write(box, 'kept.txt', 'x');
  const r = await ckptJson(box, ['snapshot']);
  t.deepEqual([...lsTree(box, r.id).keys()].sort(), ['.ckptignore', '.gitignore', 'kept.txt']);
});

test('a lost shadow index is rebuilt from the latest checkpoint', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  write(box, 'big/dir/b.txt', 'b\n');
  const one = await ckptJson(box, ['snapshot']);
  rmSync(path.join(storeDir(box), 'index'));
  const again = await ckptJson(box, ['snapshot']);
  t.false(again.created);
  t.is(again.id, one.id);
  write(box, 'a.txt', 'changed\n');
  const two = await ckptJson(box, ['snapshot']);
  t.deepEqual(two.stats, { added: 0, modified: 1, deleted: 0 });
});

test('a moved workspace gets a store of its own', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  const moved = path.join(box.base, 'moved');
  renameSync(box.ws, moved);
  const r = await ckptJson(box, ['snapshot'], { cwd: moved });
  t.true(r.created);
  t.is(readdirSync(box.store).length, 2);
});

test('works as a git subcommand: `git ckpt` finds git-ckpt on PATH', async (t) => {
  const box = sandbox();
  const { symlinkSync, mkdirSync: mkdir } = await import('node:fs');
  const { CLI, sh } = await import('./helpers.mjs');
  const bin = path.join(box.base, 'bin');
  mkdir(bin);
  symlinkSync(CLI, path.join(bin, 'git-ckpt'));
  write(box, 'a.txt', 'a\n');
  const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}` };
  const r = sh(box, ['ckpt', 'snapshot', '--json'], { env });
  t.true(JSON.parse(r.stdout).created);
  const fromOutside = sh(box, ['-C', box.ws, 'ckpt', 'log', '--oneline'], { env, cwd: box.base });
  t.regex(fromOutside.stdout, /^[0-9a-f]{8} /);
});

test('a caller’s AbortSignal: many snapshots leave no listener on it, and one already aborted stops the next at once', async (t) => {
  const box = sandbox();
  const ws = Workspace.open(box.ws, { env: box.env });
  const caller = new AbortController();
  for (let i = 0; i < 12; i++) {
    write(box, 'a.txt', `${i}\n`);
    t.true((await ws.snapshot({ signal: caller.signal })).created);
  }
  t.is(getEventListeners(caller.signal, 'abort').length, 0);
  caller.abort(new Error('the caller gave up'));
  write(box, 'a.txt', 'after the abort\n');
  await t.throwsAsync(ws.snapshot({ signal: caller.signal }), { message: /the caller gave up/ });
  t.is(ledgerLines(box).length, 12);
});

test('a first snapshot streamed in chunks of 7 paths captures the same tree and the same skips as one read whole', async (t) => {
  // Chunk edges fall inside folders, between a folder and its subfolders, on a secret, on a file
  // over the size limit and on an embedded repository: the streamed plan must not fold across them.
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.maxFileBytes', '1k']);
  sh(box, ['config', '--global', 'ckpt.timeBudget', '0']);
  for (let i = 0; i < 1200; i++) write(box, `pkg${i % 3}/mod${i % 7}/f${i}.txt`, `${i}\n`);
  for (let i = 0; i < 40; i++) write(box, `flat/f${String(i).padStart(2, '0')}.txt`, `${i}\n`);
  write(box, 'pkg1/mod3/.env', 'TOKEN=hunter2\n');
  write(box, 'pkg2/mod5/big.bin', 'x'.repeat(5000));
  write(box, 'pkg0/run.sh', '#!/bin/sh\n', 0o755);
  symlinkSync('mod1/f1.txt', path.join(box.ws, 'pkg1/link'));
  write(box, 'ignored/junk.log', 'junk\n');
  write(box, '.gitignore', 'ignored/\n');
  write(box, 'pkg2/inner/README', 'inner\n');
  sh({ ...box, ws: path.join(box.ws, 'pkg2', 'inner') }, ['init', '-q']);
  sh({ ...box, ws: path.join(box.ws, 'pkg2', 'inner') }, ['add', '-A']);
  sh({ ...box, ws: path.join(box.ws, 'pkg2', 'inner') }, ['commit', '-qm', 'inner']);
  const whole = await ckptJson(box, ['init']);
  const streamedStore = path.join(box.base, 'store-streamed');
  const streamed = await ckptJson(box, ['init'], { env: { GIT_CKPT_HOME: streamedStore, GIT_CKPT_TEST_FIRST_CHUNK: '7' } });
  t.is(streamed.tree, whole.tree, 'the same tree');
  const tree = lsTree(box, whole.id);
  t.is(tree.size, 1200 + 40 + 4, 'every file, the link, the script, .gitignore and the gitlink');
  t.is(tree.get('pkg2/inner')?.mode, '160000');
  t.is(tree.get('pkg0/run.sh')?.mode, '100755');
  t.is(tree.get('pkg1/link')?.mode, '120000');
  t.false(tree.has('pkg1/mod3/.env'));
  t.false(tree.has('pkg2/mod5/big.bin'));
  const reasons = (r) => r.skipped.map((s) => `${s.path}:${s.reason}`).sort();
  t.deepEqual(reasons(streamed), reasons(whole));
  t.deepEqual(reasons(whole), ['pkg1/mod3/.env:secret', 'pkg2/mod5/big.bin:too-large']);
  t.deepEqual(streamed.stats, { added: 1244, modified: 0, deleted: 0 });
});
