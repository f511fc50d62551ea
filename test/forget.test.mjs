// git ckpt forget: checkpoints, sessions, everything before a date, or paths from every
// checkpoint, removed from the shadow store for good; the real CLI and git in temp dirs.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ckpt, ckptJson, killDuring, ledgerLines, lsTree, sandbox, sh, startCli, storeDir, treeState, write, libPath } from './helpers.mjs';

const plan = await import(libPath('forget-plan'));
const { commitMessage, recordFromCommit } = await import(libPath('trailers'));
const { resolveAddress } = await import(libPath('address'));

/** Whether the shadow store holds an object (`git cat-file -e`). */
function inStore(box, oid) {
  const r = spawnSync('git', ['cat-file', '-e', oid], { env: { ...box.env, GIT_DIR: path.join(storeDir(box), 'git') } });
  return r.status === 0;
}

/** The blob id git gives these bytes. */
function blobId(box, content) {
  return spawnSync('git', ['hash-object', '--stdin'], { input: content, env: box.env, encoding: 'utf8' }).stdout.trim();
}

/** The store's files (bytes, modes, mtimes) and the workspace's: what a dry run or a refusal must leave alone. */
function everything(box) {
  return `${treeState(box.ws, { skip: ['.git'] })}\n--store--\n${treeState(storeDir(box))}`;
}

/** A folder's bytes, as the store's size is counted (every file's length). */
function bytesOf(dir) {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? bytesOf(path.join(dir, e.name)) : lstatSync(path.join(dir, e.name)).size),
    0,
  );
}

/** The workspace without the given top-level names (the forgotten files, which restore never touches). */
function stateWithout(box, names) {
  return treeState(box.ws, { mtime: false, skip: ['.git', ...names] });
}

const byMessage = (records) => Object.fromEntries(records.map((r) => [r.message, r]));

test('pure: one selector, checked patterns and dates, the guard goes with its operation, the chain re-parented', (t) => {
  t.throws(() => plan.checkRequest({}), { message: /name what to forget/ });
  t.throws(() => plan.checkRequest({ checkpoints: ['abcd'], session: 's' }), { message: /one kind of selection at a time/ });
  t.throws(() => plan.checkRequest({ session: '--json' }), { message: /looks like an option/ });
  t.deepEqual(plan.checkRequest({ paths: ['a.txt', 'a.txt', 'secrets/'] }), { paths: ['a.txt', 'secrets/'] });
  for (const [bad, why] of [
    ['', /empty/],
    ['!keep', /negations/],
    ['#x', /comment/],
    ['-x', /option/],
    ['../x', /"\.\." segments/],
    ['a/./b', /segments/],
    ['**', /every path/],
    ['/', /every path/],
    ['a\nb', /control/],
  ])
    t.throws(() => plan.checkPatterns([bad]), { message: why }, JSON.stringify(bad));

  // What a rerun or the user types, quoted for a shell where needed.
  t.is(plan.requestCommand({ paths: ["my secrets/it's.json", 'a.txt'] }), `git ckpt forget --path 'my secrets/it'\\''s.json' --path a.txt`);
  t.is(plan.requestCommand({ checkpoints: ['latest~2', 'turn:3@s-1'] }), 'git ckpt forget latest~2 turn:3@s-1');
  t.is(plan.requestCommand({ before: '2024-05-01T10:00 +02:00' }), "git ckpt forget --before '2024-05-01T10:00 +02:00'");

  const now = Date.UTC(2025, 5, 15, 12);
  t.is(plan.parseBefore('30d', now), now - 30 * 86_400_000);
  t.is(plan.parseBefore('2w', now), now - 14 * 86_400_000);
  t.is(plan.parseBefore('@1714000000', now), 1_714_000_000_000);
  t.is(plan.parseBefore('2024-05-01T10:00Z', now), Date.UTC(2024, 4, 1, 10));
  t.is(plan.parseBefore('2024-05-01T10:00+02:00', now), Date.UTC(2024, 4, 1, 8));
  t.is(plan.parseBefore('2024-05-01', now), new Date(2024, 4, 1).getTime(), 'a bare date is local midnight');
  for (const bad of ['2024-02-30', '2024-13-01', 'yesterday', '1714000000', '2024-05-01T25:00', '-3d', '3 days ago', ''])
    t.throws(() => plan.parseBefore(bad, now), { message: /bad --before date/ }, bad);

  const id = (c) => c.repeat(40);
  const rec = (c, parent, extra = {}) => ({
    id: id(c),
    parent: parent && id(parent),
    tree: id('t'),
    time: 1,
    session: null,
    kind: 'post',
    ...extra,
  });
  const records = [
    rec('a', null),
    rec('b', 'a', { session: 's1' }),
    rec('c', 'b', { kind: 'guard' }),
    rec('d', 'c', { kind: 'restore', op: { target: id('a'), guard: id('c') } }),
    rec('e', 'd', { kind: 'undo', op: { target: id('d'), guard: id('d') } }),
    rec('f', 'e', { session: 's1' }),
  ];
  // Dropping the guard of a restore drops the restore (nothing could undo it), and the undo whose guard that was.
  const drop = plan.planDrop(records, { kind: 'checkpoints', ids: [id('c')] });
  t.deepEqual(
    [...drop],
    [
      [id('c'), 'named'],
      [id('d'), 'guard'],
      [id('e'), 'guard'],
    ],
  );
  const steps = plan.planChain(records, new Set(drop.keys()), new Map());
  t.deepEqual(
    steps.map((s) => [s.record.id[0], s.parent?.[0] ?? null, s.rewrite]),
    [
      ['a', null, false],
      ['b', 'a', false],
      ['f', 'b', true],
    ],
    'f is re-parented onto b, the nearest kept ancestor; a and b keep their ids',
  );
  t.deepEqual([...plan.planDrop(records, { kind: 'session', session: 's1' }).keys()], [id('b'), id('f')]);
  // A new tree for b rewrites everything after it, and a restore naming a rewritten checkpoint.
  const chain = plan.planChain(records, new Set(), new Map([[id('b'), id('9')]]));
  t.deepEqual(
    chain.map((s) => s.rewrite),
    [false, true, true, true, true, true],
  );

  const raw = `tree ${id('t')}\nparent ${id('c')}\nauthor git-ckpt <git-ckpt@localhost.invalid> 5 +0000\ncommitter git-ckpt <git-ckpt@localhost.invalid> 5 +0000\n\nrestore to aaaa\n\nCkpt-Kind: restore\nCkpt-Time: 5000\nCkpt-Stats: +1 ~0 -0\nCkpt-Target: ${id('a')}\nCkpt-Guard: ${id('c')}\n`;
  const rewritten = plan.rewriteCommit(raw, {
    tree: id('9'),
    parent: id('8'),
    ids: new Map([[id('c'), id('8')]]),
    stats: { added: 0, modified: 2, deleted: 0 },
    formerIds: [id('d')],
  });
  t.is(
    rewritten,
    `tree ${id('9')}\nparent ${id('8')}\nauthor git-ckpt <git-ckpt@localhost.invalid> 5 +0000\ncommitter git-ckpt <git-ckpt@localhost.invalid> 5 +0000\n\nrestore to aaaa\n\nCkpt-Kind: restore\nCkpt-Time: 5000\nCkpt-Stats: +0 ~2 -0\nCkpt-Target: ${id('a')}\nCkpt-Guard: ${id('8')}\nCkpt-Former-Ids: ${id('d')}\n`,
    'the same author, dates, message and trailers; the new tree, parent and guard; the former id kept',
  );
  // fsck --rebuild-ledger keeps the mapping: the trailer reads back as the record's formerIds.
  const back = recordFromCommit(id('9'), rewritten);
  t.deepEqual(back.formerIds, [id('d')]);
  t.deepEqual(back.op.guard, id('8'));
  t.regex(
    commitMessage({
      ...records[5],
      turn: null,
      step: null,
      tool: null,
      message: 'm',
      stats: { added: 0, modified: 0, deleted: 0 },
      formerIds: [id('1'), id('2')],
    }),
    /^Ckpt-Former-Ids: 1{40} 2{40}$/m,
  );
  // A former id's prefix resolves when no current id matches it; a current id always wins.
  const moved = [rec('a', null), { ...rec('b', 'a'), formerIds: [`${'c'.repeat(39)}0`] }, rec('c', 'b')];
  t.is(resolveAddress(moved, 'cccc').id, id('c'));
  t.is(resolveAddress(moved, `${'c'.repeat(39)}0`).id, id('b'));
  t.throws(() => resolveAddress(moved, 'eeee'), { message: /unknown checkpoint/ });
});

test('F3, pure: which texts name a forgotten path, and what replaces them', (t) => {
  const ig = ['creds.txt', 'secrets/', '/top.env'];
  const test = (p, dir) =>
    ig.some((g) =>
      g.endsWith('/') ? (p === g.slice(0, -1) ? dir : p.startsWith(g)) : g.startsWith('/') ? p === g.slice(1) : p.split('/').at(-1) === g,
    );
  const root = '/home/u/proj';
  for (const named of [
    'echo hunter2 > creds.txt',
    'echo hunter2>creds.txt',
    'cat ./creds.txt',
    `cat ${root}/sub/creds.txt`,
    'cat: creds.txt: No such file or directory',
    'vim secrets/key.pem',
    'cp x "secrets/a b"',
    'ls secrets/',
    'source top.env',
  ])
    t.true(plan.namesForgottenPath(named, test, root), named);
  for (const not of [
    'npm run build',
    'rm -rf secrets',
    'cat sub/top.env',
    'echo creds.txt.bak',
    'cat ../creds.txt',
    'git log --oneline',
    '',
  ])
    t.false(plan.namesForgottenPath(not, test, root), not);
  const r = {
    id: 'a'.repeat(40),
    message: 'claude post Bash: echo hunter2 > creds.txt',
    input: 'echo hunter2 > creds.txt',
    prompt: 'put hunter2 in creds.txt',
    error: 'exit 1',
  };
  t.deepEqual(plan.textsWithout(r, test, root, ['creds.txt']), {
    input: '[input removed by forget --path creds.txt]',
    prompt: '[prompt removed by forget --path creds.txt]',
    message: 'claude post Bash: [input removed by forget --path creds.txt]',
  });
  t.deepEqual(
    plan.textsWithout({ ...r, input: undefined, message: 'saved creds.txt by hand', prompt: undefined }, test, root, ['a', 'creds.txt']),
    {
      message: '[message removed by forget --path a --path creds.txt]',
    },
  );
  t.is(plan.textsWithout({ ...r, input: 'ls', message: 'claude post Bash: ls', prompt: 'list' }, test, root, ['creds.txt']), undefined);
});

/** A history with a secret captured by mistake: a.txt changes, credentials.json and secrets/ come in, a restore, an agent session. */
async function secretHistory(box) {
  write(box, 'a.txt', 'one\n');
  write(box, 'keep.txt', 'stays\n');
  write(box, 'src/app.js', 'app 1\n');
  await ckptJson(box, ['snapshot', '-m', 'A']);
  write(box, 'credentials.json', '{"token":"hunter2-not-a-pattern"}\n');
  write(box, 'secrets/deep/key.txt', 'deep secret\n');
  write(box, 'src/credentials.json', '{"nested":"also secret"}\n');
  write(box, 'docs/Credentials.json', 'a name that differs in case: not forgotten\n');
  write(box, 'a.txt', 'two\n');
  await ckptJson(box, ['snapshot', '-m', 'B']);
  write(box, 'a.txt', 'three\n');
  write(box, 'src/app.js', 'app 3\n');
  await ckptJson(box, ['snapshot', '-m', 'C', '--session', 'sess-1', '--turn', '1', '--kind', 'pre']);
  write(box, 'src/app.js', 'app 4\n');
  await ckptJson(box, ['snapshot', '-m', 'D', '--session', 'sess-1', '--turn', '1', '--kind', 'post']);
  write(box, 'a.txt', 'four\n');
  await ckptJson(box, ['snapshot', '-m', 'E', '--session', 'sess-1', '--turn', '2', '--kind', 'pre']);
  // A restore to A (the secrets are leftovers it leaves alone), and after it one more checkpoint.
  const restore = await ckptJson(box, ['restore', 'latest~4']);
  write(box, 'b.txt', 'after the restore\n');
  await ckptJson(box, ['snapshot', '-m', 'F']);
  return restore;
}

test('--path: the secret leaves every checkpoint and the store; other files, restores, addresses and undo keep working', async (t) => {
  const box = sandbox();
  const userGit = treeState(path.join(box.ws, '.git'));
  const restore = await secretHistory(box);
  const before = ledgerLines(box);
  const trees = Object.fromEntries(before.map((r) => [r.id, lsTree(box, r.id)]));
  const secretBlob = blobId(box, '{"token":"hunter2-not-a-pattern"}\n');
  const nestedBlob = blobId(box, '{"nested":"also secret"}\n');
  const deepBlob = blobId(box, 'deep secret\n');
  t.true(inStore(box, secretBlob) && inStore(box, nestedBlob) && inStore(box, deepBlob));
  const onDisk = readFileSync(path.join(box.ws, 'credentials.json'));
  const turn2 = (await ckptJson(box, ['log'])).find((r) => r.message === 'E');

  // The dry run says what goes and changes nothing, byte for byte.
  const snapshotOfAll = everything(box);
  const dry = await ckptJson(box, ['forget', '--path', 'credentials.json', '--path', 'secrets/', '--dry-run']);
  t.is(everything(box), snapshotOfAll, 'a dry run leaves the store and the workspace as they were');
  t.true(dry.dryRun);
  t.deepEqual(
    dry.paths.map((p) => p.path),
    ['credentials.json', 'secrets/deep/key.txt', 'src/credentials.json'],
  );
  // B, C, D, E, the guard (E itself), the restore record and F hold them (the restore left them in place).
  t.true(dry.paths.every((p) => p.checkpoints === before.length - 1));
  t.is(dry.rewritten.length, before.length - 1, 'every checkpoint after A gets a new commit');
  t.deepEqual(
    dry.content.map((c) => c.path),
    ['credentials.json', 'secrets/deep/key.txt', 'src/credentials.json'],
  );
  t.is(dry.command, 'git ckpt forget --path credentials.json --path secrets/');
  const text = await ckpt(box, ['forget', '--path', 'credentials.json', '--path', 'secrets/', '-n']);
  t.regex(text.stdout, /would remove 3 paths from every checkpoint/);
  t.regex(
    text.stdout,
    /dry run, nothing was changed; to forget for good \(there is no undo\): git ckpt forget --path credentials\.json --path secrets\//,
  );

  const report = await ckptJson(box, ['forget', '--path', 'credentials.json', '--path', 'secrets/']);
  // The run's size is the store's, measured after the repack; the dry run's is that repack counted
  // (caches aside), and a growth is said in words.
  t.is(report.bytesAfter, bytesOf(storeDir(box)));
  t.true(Math.abs(report.bytesAfter - dry.bytesAfter) <= 512, `${dry.bytesAfter} estimated, ${report.bytesAfter} measured`);
  t.regex(
    text.stdout,
    dry.bytesAfter > dry.bytesBefore ? /~[\d.]+ \S+ more: the objects kept are written into one new pack/ : /~[\d.]+ \S+ freed/,
  );
  t.false(report.dryRun);
  t.false(inStore(box, secretBlob), 'git cat-file -e: the secret blob is gone from the shadow store');
  t.false(inStore(box, nestedBlob));
  t.false(inStore(box, deepBlob));
  const fsck = await ckptJson(box, ['fsck']);
  t.deepEqual(fsck.degraded, []);
  t.is(fsck.orphans, 0);
  t.false(existsSync(path.join(storeDir(box), 'forget.json')));

  // Every other file of every checkpoint is as it was, under the same metadata.
  const after = ledgerLines(box);
  t.is(after.length, before.length);
  const map = Object.fromEntries(report.rewritten.map((r) => [r.from, r.to]));
  for (const [i, old] of before.entries()) {
    const now = after[i];
    t.is(now.id, map[old.id] ?? old.id);
    for (const key of ['time', 'session', 'turn', 'step', 'tool', 'kind', 'message'])
      t.deepEqual(now[key], old[key], `${old.message} ${key}`);
    const expected = new Map([...trees[old.id]].filter(([p]) => !/(^|\/)credentials\.json$|^secrets\//.test(p)));
    t.deepEqual(lsTree(box, now.id), expected, `checkpoint ${old.message}: the other files are intact`);
    if (map[old.id]) t.deepEqual(now.formerIds, [old.id]);
  }
  const records = byMessage(after);
  t.deepEqual(records.B.stats, { added: 1, modified: 1, deleted: 0 }, "B's change is now a.txt and docs/Credentials.json alone");
  t.deepEqual(
    records.B.paths.map((p) => p.path),
    ['a.txt', 'docs/Credentials.json'],
  );
  const op = after.find((r) => r.kind === 'restore');
  t.is(op.op.guard, map[restore.guard] ?? restore.guard, "the restore's guard is named by its new id");
  t.is(op.op.target, records.A.id);
  const commit = spawnSync('git', ['cat-file', 'commit', op.id], {
    env: { ...box.env, GIT_DIR: path.join(storeDir(box), 'git') },
    encoding: 'utf8',
  }).stdout;
  t.regex(commit, new RegExp(`^parent ${op.op.guard}$`, 'm'));
  t.regex(commit, new RegExp(`^Ckpt-Guard: ${op.op.guard}$`, 'm'));
  t.regex(commit, new RegExp(`^Ckpt-Former-Ids: ${restore.record}$`, 'm'));
  t.regex(commit, /^author git-ckpt <git-ckpt@localhost\.invalid> \d+ \+0000$/m);

  // Addresses: latest~N, turn:N, and a prefix of an old id, which resolves to the rewritten checkpoint.
  t.is((await ckptJson(box, ['show', 'latest~1', '--stat'])).id, op.id);
  t.is((await ckptJson(box, ['show', 'turn:2@sess-1', '--stat'])).id, map[turn2.id]);
  t.is((await ckptJson(box, ['show', turn2.id.slice(0, 8), '--stat'])).id, map[turn2.id], 'an old id prefix still resolves');
  const log = await ckpt(box, ['log']);
  t.is(log.code, 0);
  t.notRegex(log.stdout, /credentials/);

  // The forgotten files on disk are untouched, and never captured again (and said so).
  t.deepEqual(readFileSync(path.join(box.ws, 'credentials.json')), onDisk, "the user's file is untouched");
  t.true(existsSync(path.join(box.ws, 'secrets/deep/key.txt')));
  write(box, 'a.txt', 'five\n');
  write(box, 'credentials.json', '{"token":"rotated"}\n');
  const next = await ckptJson(box, ['snapshot', '-m', 'G']);
  t.true(next.skipped.some((s) => s.path === 'credentials.json' && s.reason === 'forgotten'));
  t.false(lsTree(box, next.id).has('credentials.json'));
  t.false(lsTree(box, next.id).has('src/credentials.json'));
  t.true(lsTree(box, next.id).has('docs/Credentials.json'), 'patterns match case, as git does');
  const status = await ckpt(box, ['status']);
  t.regex(status.stdout, /not captured: credentials\.json: forgotten \(git ckpt forget --path\)/);
  t.regex(readFileSync(path.join(storeDir(box), 'forgotten'), 'utf8'), /^credentials\.json\nsecrets\/\n$/m);
  const liveSecret = readFileSync(path.join(box.ws, 'credentials.json'));

  // undo of the restore made before the forget: back to E's files, the secrets never touched.
  write(box, 'a.txt', 'one\n');
  rmSync(path.join(box.ws, 'b.txt'));
  await ckptJson(box, ['snapshot', '-m', 'back to the restored state']);
  const undone = await ckptJson(box, ['undo']);
  t.is(undone.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'four\n', 'undo of the earlier restore brings back what it replaced');
  t.deepEqual(readFileSync(path.join(box.ws, 'credentials.json')), liveSecret);

  // Every checkpoint still restores byte for byte (the forgotten files aside, which restore leaves alone).
  const expectations = {
    A: { 'a.txt': 'one\n', 'src/app.js': 'app 1\n' },
    C: { 'a.txt': 'three\n', 'src/app.js': 'app 3\n' },
    E: { 'a.txt': 'four\n', 'src/app.js': 'app 4\n' },
  };
  for (const [message, files] of Object.entries(expectations)) {
    const r = await ckptJson(box, ['restore', records[message].id.slice(0, 10), '--delete-new']);
    t.is(r.counts.failed, 0);
    for (const [file, content] of Object.entries(files))
      t.is(readFileSync(path.join(box.ws, file), 'utf8'), content, `${message}: ${file}`);
    t.false(existsSync(path.join(box.ws, 'b.txt')));
    t.deepEqual(readFileSync(path.join(box.ws, 'credentials.json')), liveSecret, 'restore never touches a forgotten file');
    t.true(existsSync(path.join(box.ws, 'secrets/deep/key.txt')));
  }
  t.is(treeState(path.join(box.ws, '.git')), userGit, "the user's .git is untouched");
});

test('a checkpoint: it goes, its child is re-parented onto the nearest kept ancestor, content only it held leaves the store', async (t) => {
  const box = sandbox();
  const userGit = treeState(path.join(box.ws, '.git'));
  write(box, 'a.txt', '1\n');
  const a = await ckptJson(box, ['snapshot', '-m', 'A']);
  const stateA = stateWithout(box, []);
  write(box, 'a.txt', '2\n');
  write(box, 'only-b.txt', 'only B ever held this\n');
  const b = await ckptJson(box, ['snapshot', '-m', 'B']);
  rmSync(path.join(box.ws, 'only-b.txt'));
  write(box, 'a.txt', '3\n');
  const c = await ckptJson(box, ['snapshot', '-m', 'C']);
  const stateC = stateWithout(box, []);
  write(box, 'a.txt', '4\n');
  const d = await ckptJson(box, ['snapshot', '-m', 'D']);
  const onlyB = blobId(box, 'only B ever held this\n');
  const two = blobId(box, '2\n');

  const dry = await ckptJson(box, ['forget', b.id.slice(0, 8), '--dry-run']);
  t.deepEqual(
    dry.dropped.map((x) => [x.id, x.why]),
    [[b.id, 'named']],
  );
  t.deepEqual(dry.content.map((x) => x.path).sort(), ['a.txt', 'only-b.txt']);
  t.true(inStore(box, onlyB));

  const report = await ckptJson(box, ['forget', b.id.slice(0, 8)]);
  t.deepEqual(
    report.rewritten.map((r) => r.from),
    [c.id, d.id],
  );
  t.false(inStore(box, onlyB), 'the blob only B held is gone');
  t.false(inStore(box, two), "B's a.txt is gone");
  const records = ledgerLines(box);
  t.deepEqual(
    records.map((r) => r.message),
    ['A', 'C', 'D'],
  );
  const [ra, rc, rd] = records;
  t.is(ra.id, a.id, 'checkpoints before the forgotten one keep their ids');
  t.is(rc.parent, a.id, 'C is re-parented onto A');
  t.is(rd.parent, rc.id);
  t.deepEqual(rc.stats, { added: 0, modified: 1, deleted: 0 }, "C's change is now from A: a.txt 1 → 3");
  const show = await ckpt(box, ['show', c.id.slice(0, 8)]);
  t.is(show.code, 0);
  t.regex(show.stdout, /-1\n\+3/, "the diff from its new parent is meaningful: A's a.txt to C's");
  t.notRegex(show.stdout, /only-b/);
  t.deepEqual((await ckptJson(box, ['fsck'])).degraded, []);
  await ckptJson(box, ['restore', 'latest~1', '--delete-new']);
  t.is(stateWithout(box, []), stateC);
  await ckptJson(box, ['restore', a.id.slice(0, 8), '--delete-new']);
  t.is(stateWithout(box, []), stateA);
  t.is((await ckpt(box, ['show', b.id.slice(0, 8)])).stderr, `git-ckpt: unknown checkpoint: ${b.id.slice(0, 8)}\n`);

  // The latest checkpoint: the shadow index goes back to the new latest, so its content leaves too.
  write(box, 'a.txt', 'latest only\n');
  const latest = await ckptJson(box, ['snapshot', '-m', 'E']);
  const latestBlob = blobId(box, 'latest only\n');
  const dropLatest = await ckptJson(box, ['forget', 'latest']);
  t.deepEqual(
    dropLatest.dropped.map((x) => x.id),
    [latest.id],
  );
  t.true(dropLatest.indexChanged);
  t.false(inStore(box, latestBlob));
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'latest only\n', 'the workspace is never touched');
  t.deepEqual((await ckptJson(box, ['fsck'])).degraded, []);
  t.is(treeState(path.join(box.ws, '.git')), userGit, "the user's .git is untouched");
});

test('a session: every checkpoint of it goes with its state; the other session is re-parented and its turns still resolve', async (t) => {
  const box = sandbox();
  write(box, 'base.txt', 'base\n');
  await ckptJson(box, ['snapshot', '-m', 'base']);
  const steps = [
    ['s-alpha', 1, 'pre', 'alpha.txt', 'alpha 1\n'],
    ['s-beta', 1, 'pre', 'beta.txt', 'beta 1\n'],
    ['s-alpha', 1, 'post', 'alpha.txt', 'alpha 2\n'],
    ['s-beta', 2, 'pre', 'beta.txt', 'beta 2\n'],
    ['s-alpha', 2, 'pre', 'alpha.txt', 'alpha 3\n'],
  ];
  for (const [session, turn, kind, file, content] of steps) {
    write(box, file, content);
    await ckptJson(box, ['snapshot', '--session', session, '--turn', String(turn), '--kind', kind, '-m', `${session} ${content.trim()}`]);
  }
  const sessionsFile = path.join(storeDir(box), 'sessions.json');
  writeFileSync(sessionsFile, JSON.stringify({ 's-alpha': { turn: 2 }, 's-beta': { turn: 2 } }));
  // Checkpoints hold the whole workspace: beta's later ones captured alpha.txt as alpha left it (alpha 1, alpha 2),
  // and those stay; what only alpha's checkpoints held (alpha 3) goes.
  const alphaOnly = blobId(box, 'alpha 3\n');
  const alphaSeenByBeta = blobId(box, 'alpha 2\n');
  const betaTurn2 = await ckptJson(box, ['show', 'turn:2@s-beta', '--stat']);

  const report = await ckptJson(box, ['forget', '--session', 's-al']);
  t.is(report.dropped.length, 3);
  t.true(report.dropped.every((d) => d.session === 's-alpha' && d.why === 'session'));
  t.false(inStore(box, alphaOnly));
  t.true(inStore(box, alphaSeenByBeta));
  t.deepEqual(
    report.content.map((c) => c.path),
    ['alpha.txt'],
  );
  const records = ledgerLines(box);
  t.false(records.some((r) => r.session === 's-alpha'));
  t.is(records.length, 3);
  for (const [i, r] of records.entries()) t.is(r.parent, i === 0 ? null : records[i - 1].id, 'one linear chain');
  t.deepEqual(Object.keys(JSON.parse(readFileSync(sessionsFile, 'utf8'))), ['s-beta'], "the session's state is gone, the other one's kept");
  const nowTurn2 = await ckptJson(box, ['show', 'turn:2@s-beta', '--stat']);
  t.deepEqual(nowTurn2.formerIds, [betaTurn2.id]);
  t.is((await ckpt(box, ['log', '--session', 's-alpha'])).code, 1);
  t.deepEqual((await ckptJson(box, ['fsck'])).degraded, []);
  t.is(readFileSync(path.join(box.ws, 'alpha.txt'), 'utf8'), 'alpha 3\n', 'the workspace is never touched');
});

test('--before: everything older goes; a date in the future forgets everything, and the next snapshot starts afresh', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'old 1\n');
  await ckptJson(box, ['snapshot', '-m', 'old 1']);
  write(box, 'a.txt', 'old 2\n');
  await ckptJson(box, ['snapshot', '-m', 'old 2']);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const cut = Math.ceil(Date.now() / 1000);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  write(box, 'a.txt', 'new 1\n');
  await ckptJson(box, ['snapshot', '-m', 'new 1']);
  write(box, 'a.txt', 'new 2\n');
  await ckptJson(box, ['snapshot', '-m', 'new 2']);
  const old1 = blobId(box, 'old 1\n');

  const report = await ckptJson(box, ['forget', '--before', `@${cut}`]);
  t.deepEqual(
    report.dropped.map((d) => [d.why, ledgerLines(box).some((r) => r.id === d.id)]),
    [
      ['before', false],
      ['before', false],
    ],
  );
  t.deepEqual(
    ledgerLines(box).map((r) => r.message),
    ['new 1', 'new 2'],
  );
  t.is(ledgerLines(box)[0].parent, null, 'the oldest kept checkpoint is a root now');
  t.false(inStore(box, old1));
  t.is(
    (await ckpt(box, ['forget', '--before', `@${cut}`])).stderr.split('\n')[0].startsWith('git-ckpt: no checkpoint is older than'),
    true,
  );

  const all = await ckptJson(box, ['forget', '--before', '2999-01-01']);
  t.is(all.kept, 0);
  t.deepEqual(ledgerLines(box), []);
  t.false(inStore(box, blobId(box, 'new 2\n')), 'with no checkpoint left, the shadow index goes too');
  const fresh = await ckptJson(box, ['snapshot', '-m', 'fresh']);
  t.true(fresh.created);
  t.is(fresh.parent, null);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'new 2\n');
});

test('bad input: one line, the right exit code, and nothing changed', async (t) => {
  const box = sandbox();
  const userGit = treeState(path.join(box.ws, '.git'));
  write(box, 'a.txt', 'one\n');
  await ckptJson(box, ['snapshot', '-m', 'A']);
  write(box, 'credentials.json', 'x\n');
  await ckptJson(box, ['snapshot', '-m', 'B']);
  const state = everything(box);
  const cases = [
    [['forget'], 2, /name what to forget/],
    [['forget', '--output=/tmp/x'], 1, /not a checkpoint address: "--output=\/tmp\/x" \(looks like an option\)/],
    [['forget', '--', '--path'], 2, /forget takes no paths after --/],
    [['forget', 'zzzz'], 1, /not a checkpoint address/],
    [['forget', 'abc'], 1, /prefix too short/],
    [['forget', 'dead'], 1, /unknown checkpoint: dead/],
    [['forget', 'latest~9'], 1, /only 2 checkpoints exist/],
    [['forget', 'latest', '--session', 'x'], 2, /one kind of selection at a time/],
    [['forget', '--session', 'nope'], 1, /unknown session/],
    [['forget', '--before', '2024-02-30'], 2, /bad --before date "2024-02-30": no such date/],
    [['forget', '--before', 'last tuesday'], 2, /bad --before date/],
    [['forget', '--before', '-3d'], 2, /looks like an option/],
    [['forget', '--path', '!credentials.json'], 2, /negations are not supported/],
    [['forget', '--path', '*'], 2, /matches every path/],
    [['forget', '--path', '../outside'], 2, /"\.\." segments/],
    [['forget', '--path', '-rf'], 2, /looks like an option/],
    [['forget', '--path', 'no-such-file.txt'], 1, /no checkpoint holds a path matching "no-such-file\.txt"; nothing to forget/],
    [['forget', '--path', 'no-such-file.txt', '--dry-run'], 1, /nothing to forget/],
  ];
  for (const [args, code, message] of cases) {
    const r = await ckpt(box, args);
    t.is(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    t.is(r.stdout, '', args.join(' '));
    t.is(r.stderr.split('\n').length, 2, `${args.join(' ')}: one line`);
    t.regex(r.stderr, /^git-ckpt: /);
    t.regex(r.stderr, message, args.join(' '));
    t.is(everything(box), state, `${args.join(' ')} changed nothing`);
  }
  // With --json the error is one JSON object, even when the option's value swallowed --json.
  const json = await ckpt(box, ['forget', '--path', '--json']);
  t.is(json.code, 2);
  t.regex(json.stderr, /^\{"error":\{"code":"usage","message":"bad --path pattern \\"--json\\": it looks like an option/);
  // No store yet: nothing to forget, and none is made.
  const empty = sandbox();
  const none = await ckpt(empty, ['forget', '--path', 'x']);
  t.is(none.code, 1);
  t.is(none.stderr, 'git-ckpt: no checkpoints yet: nothing to forget\n');
  t.false(existsSync(empty.store));
  t.is(everything(box), state);
  t.is(treeState(path.join(box.ws, '.git')), userGit);
});

test('a pending journal (an interrupted restore) whose checkpoints or paths forget would remove is refused with the reason', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'one\n');
  const a = await ckptJson(box, ['snapshot', '-m', 'A']);
  write(box, 'credentials.json', 'secret\n');
  write(box, 'a.txt', 'two\n');
  const b = await ckptJson(box, ['snapshot', '-m', 'B']);
  // What a restore to A killed after its journal leaves (restore --continue and --abort read it).
  const journal = {
    v: 1,
    id: 'feedbeef',
    op: 'restore',
    started: Date.now(),
    target: a.id,
    guard: b.id,
    counts: { restore: 1, recreate: 0, delete: 0, unchanged: 0, skip: 0 },
    leftovers: 1,
    entries: [['a.txt', { mode: '100644', oid: blobId(box, 'one\n') }, { mode: '100644', oid: blobId(box, 'two\n') }]],
  };
  writeFileSync(path.join(storeDir(box), 'journal.json'), JSON.stringify(journal));
  const state = everything(box);
  for (const args of [
    ['forget', '--path', 'credentials.json'],
    ['forget', a.id.slice(0, 8)],
    ['forget', 'latest', '--dry-run'],
    ['forget', '--path', 'a.txt'],
  ]) {
    const r = await ckpt(box, args);
    t.is(r.code, 1, args.join(' '));
    t.regex(
      r.stderr,
      /^git-ckpt: forget refused: an interrupted restore \(journal feedbeef\) still needs (checkpoint [0-9a-f]{8}, which this forget would (drop|rewrite)|the content of "a\.txt", which this forget removes); finish it first with git ckpt restore --continue, or roll it back with git ckpt restore --abort\n$/,
      args.join(' '),
    );
    t.is(everything(box), state, `${args.join(' ')} changed nothing`);
  }
  // Once the restore is finished, the same forget goes through.
  t.is((await ckpt(box, ['restore', '--abort'])).code, 0);
  const done = await ckptJson(box, ['forget', '--path', 'credentials.json']);
  t.true(done.paths.length === 1);
  t.false(inStore(box, blobId(box, 'secret\n')));
});

test('forget killed with SIGKILL at random moments: fsck stays clean, nothing else is lost, and running it again finishes it', async (t) => {
  t.timeout(10 * 60 * 1000);
  const box = sandbox();
  const userGit = treeState(path.join(box.ws, '.git'));
  // A loaded machine can hash these 1,500 files slower than the default 15 s budget: the subject is the kills, not the budget.
  sh(box, ['config', '--global', 'ckpt.timeBudget', '10m']);
  for (let i = 0; i < 1500; i++) write(box, `d${i % 30}/f${i}.txt`, `file ${i} ${'x'.repeat(i % 200)}\n`);
  await ckptJson(box, ['snapshot', '-m', 'base']);
  const marker = path.join(storeDir(box), 'forget.json');
  const expected = new Map();
  /** Each checkpoint's files without the secrets: what every kill must leave, by message (ids change). */
  const record = () => {
    for (const r of ledgerLines(box))
      if (!expected.has(r.message))
        expected.set(
          r.message,
          [...lsTree(box, r.id)].filter(([p]) => !p.startsWith('secret-')),
        );
  };
  const windows = { before: 300, apply: 600, floor: 10 };
  const KILLS = 12;
  let landed = 0;
  const outcomes = { beforeMarker: 0, beforeLedger: 0, afterLedger: 0, finished: 0 };
  for (let kill = 0; kill < KILLS; kill++) {
    // A secret captured by mistake in a few checkpoints, among ordinary changes.
    const secret = `secret ${kill} ${Math.random()}\n`;
    write(box, `secret-${kill}.txt`, secret);
    for (let step = 0; step < 3; step++) {
      write(box, `d${step}/f${step}.txt`, `round ${kill} step ${step}\n`);
      await ckptJson(box, ['snapshot', '-m', `round ${kill} step ${step}`]);
    }
    record();
    const request = ['forget', '--path', `secret-${kill}.txt`];
    const end = await killDuring(startCli(box, request), kill, marker, windows, 60_000);
    if (end.signal) landed++;
    const held = ledgerLines(box).some((r) => lsTree(box, r.id).has(`secret-${kill}.txt`));
    outcomes[existsSync(marker) ? (held ? 'beforeLedger' : 'afterLedger') : held ? 'beforeMarker' : 'finished']++;
    const fsck = await ckptJson(box, ['fsck']);
    t.deepEqual(fsck.degraded, [], `kill ${kill}: no checkpoint degraded`);
    t.deepEqual(fsck.unreadableLines, [], `kill ${kill}: the ledger reads`);
    for (const r of ledgerLines(box))
      t.deepEqual(
        [...lsTree(box, r.id)].filter(([p]) => !p.startsWith('secret-')),
        expected.get(r.message),
        `kill ${kill}: ${r.message} is whole`,
      );
    if (existsSync(marker))
      t.regex((await ckpt(box, ['status'])).stdout, /interrupted: a forget did not finish; run it again: git ckpt forget --path secret-/);
    // The same forget again finishes it (or, when the kill came after it finished, finds nothing left).
    const again = await ckpt(box, request);
    t.true(again.code === 0 || /nothing to forget/.test(again.stderr), `kill ${kill}: ${again.stderr}`);
    t.false(existsSync(marker), `kill ${kill}: the marker is gone`);
    t.false(inStore(box, blobId(box, secret)), `kill ${kill}: the secret is gone from the store`);
    const clean = await ckptJson(box, ['fsck']);
    t.deepEqual(clean.degraded, []);
    t.is(clean.orphans, 0, `kill ${kill}: nothing left behind`);
    t.is(readFileSync(path.join(box.ws, `secret-${kill}.txt`), 'utf8'), secret, "the user's file is untouched");
    for (const r of ledgerLines(box)) t.false(lsTree(box, r.id).has(`secret-${kill}.txt`));
  }
  t.log(
    `${landed} of ${KILLS} kills landed while forget ran: ${JSON.stringify(outcomes)}; final windows ${Math.round(windows.before)} / ${Math.round(windows.apply)} ms`,
  );
  t.true(landed >= KILLS / 2, 'most kills landed while forget ran');
  t.true(outcomes.beforeLedger + outcomes.afterLedger >= 3, 'kills landed between the marker and the end');
  t.is(treeState(path.join(box.ws, '.git')), userGit, "the user's .git is untouched");
  // The store still works: a restore of the base checkpoint, byte for byte apart from the secrets left alone.
  const base = ledgerLines(box)[0];
  const r = await ckptJson(box, ['restore', base.id.slice(0, 10), '--delete-new']);
  t.is(r.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'd0/f0.txt'), 'utf8'), 'file 0 \n');
});

test('a forget interrupted after its ledger commit: another forget is refused, the same one run again prunes what is left', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'one\n');
  await ckptJson(box, ['snapshot', '-m', 'A']);
  write(box, 'credentials.json', 'left in an old pack\n');
  await ckptJson(box, ['snapshot', '-m', 'B']);
  const secret = blobId(box, 'left in an old pack\n');
  const objects = path.join(storeDir(box), 'git', 'objects');
  const saved = path.join(box.base, 'objects-before');
  cpSync(objects, saved, { recursive: true });
  await ckptJson(box, ['forget', '--path', 'credentials.json']);
  t.false(inStore(box, secret));
  // The state a kill right after the ledger's rewrite leaves: the new chain, the old objects, the marker.
  cpSync(saved, objects, { recursive: true, force: false, errorOnExist: false });
  const request = { paths: ['credentials.json'] };
  writeFileSync(
    path.join(storeDir(box), 'forget.json'),
    JSON.stringify({ v: 1, started: Date.now(), request, selection: { kind: 'paths', patterns: ['credentials.json'] } }),
  );
  t.true(inStore(box, secret), 'the secret is still in the old pack');
  const fsck = await ckptJson(box, ['fsck']);
  t.deepEqual(fsck.degraded, [], 'the new chain is whole');
  t.true(fsck.orphans > 0);
  t.regex(
    (await ckpt(box, ['status'])).stdout,
    /interrupted: a forget did not finish; run it again: git ckpt forget --path credentials\.json/,
  );
  const other = await ckpt(box, ['forget', 'latest']);
  t.is(other.code, 1);
  t.is(other.stderr, 'git-ckpt: an interrupted forget did not finish; run it again first: git ckpt forget --path credentials.json\n');
  const again = await ckptJson(box, ['forget', '--path', 'credentials.json']);
  t.true(again.resumed);
  t.deepEqual(again.rewritten, []);
  t.true(again.objects > 0);
  t.false(inStore(box, secret), 'running it again prunes what was left');
  t.is((await ckptJson(box, ['fsck'])).orphans, 0);
  t.false(existsSync(path.join(storeDir(box), 'forget.json')));
  t.regex((await ckpt(box, ['forget', '--path', 'credentials.json'])).stderr, /nothing to forget/);
});

test('a degraded checkpoint (its commit gone) can be forgotten; --path waits until none is degraded', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  await ckptJson(box, ['snapshot', '-m', 'A']);
  write(box, 'credentials.json', 'secret\n');
  write(box, 'a.txt', '2\n');
  const b = await ckptJson(box, ['snapshot', '-m', 'B']);
  write(box, 'a.txt', '3\n');
  await ckptJson(box, ['snapshot', '-m', 'C']);
  const loose = path.join(storeDir(box), 'git', 'objects', b.id.slice(0, 2), b.id.slice(2));
  t.true(existsSync(loose));
  rmSync(loose, { force: true });
  const refused = await ckpt(box, ['forget', '--path', 'credentials.json']);
  t.is(refused.code, 1);
  t.is(
    refused.stderr,
    `git-ckpt: forget --path needs every checkpoint whole, and 1 is degraded (${b.id.slice(0, 8)}; see git ckpt fsck); forget those first: git ckpt forget ${b.id.slice(0, 8)}\n`,
  );
  const report = await ckptJson(box, ['forget', b.id.slice(0, 10)]);
  t.deepEqual(
    report.dropped.map((d) => d.id),
    [b.id],
  );
  const fsck = await ckptJson(box, ['fsck']);
  t.deepEqual(fsck.degraded, []);
  t.is(fsck.orphans, 0);
  t.is(ledgerLines(box)[1].parent, ledgerLines(box)[0].id, 'C is re-parented onto A');
  t.is((await ckptJson(box, ['forget', '--path', 'credentials.json'])).paths[0].path, 'credentials.json');
  t.false(inStore(box, blobId(box, 'secret\n')));
});
