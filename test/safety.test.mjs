import test from 'ava';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ckpt,
  ckptError,
  ckptJson,
  ledgerLines,
  sandbox,
  sh,
  shadowGit,
  storeDir,
  storedBytes,
  treeState,
  write,
  libPath,
} from './helpers.mjs';

const runner = await import(libPath('runner'));
const { isObjectId } = await import(libPath('oid'));

/** A user repository with history, a staged change, an untracked file and a stash-like state. */
function userRepo() {
  const box = sandbox();
  write(box, 'README.md', 'hello\n');
  write(box, 'src/app.js', 'let a = 1;\n');
  sh(box, ['add', '.']);
  sh(box, ['commit', '-qm', 'first']);
  write(box, 'src/app.js', 'let a = 2;\n');
  sh(box, ['add', 'src/app.js']);
  write(box, 'README.md', 'hello, world\n');
  write(box, 'notes.txt', 'untracked\n');
  return box;
}

test("every command leaves the user's .git byte-for-byte unchanged, and each one did what it says", async (t) => {
  const box = userRepo();
  const gitDir = path.join(box.ws, '.git');
  const before = treeState(gitDir);
  const work = () => readFileSync(path.join(box.ws, 'work.txt'), 'utf8');
  const kinds = () => (existsSync(path.join(box.store)) && readdirSync(box.store).length ? ledgerLines(box).map((r) => r.kind) : []);
  const last = () => kinds().at(-1);
  const outside = path.join(box.base, 'smuggled-output');
  const shareRemote = path.join(box.base, 'share-remote.git');
  sh(box, ['init', '-q', '--bare', shareRemote], { cwd: box.base });
  const remoteRefs = () => sh(box, ['--git-dir', shareRemote, 'for-each-ref', '--format=%(refname)'], { cwd: box.base }).stdout.trim();
  const bundleFile = path.join(box.base, 'safety.bundle');
  // Each row: the command, its exit code, and (where cheap) a check that it did something, or nothing.
  // `touch: false` leaves work.txt as the previous command left it (an undo or revert of a file
  // changed since would be refused, and that is not what the row is about).
  const rows = [
    { args: ['init'], code: 0, check: (r, k) => t.deepEqual(k, ['manual'], r.stderr) },
    { args: ['snapshot', '-m', 'one'], code: 0, check: (_r, k, k0) => t.is(k.length, k0.length + 1) },
    { args: ['snapshot', '--json'], code: 0, check: (r) => t.true(JSON.parse(r.stdout).created) },
    { args: ['log'], code: 0, check: (r) => t.is(r.stdout.trim().split('\n').length, 3) },
    { args: ['log', '--json', '--stat'], code: 0, check: (r) => t.is(JSON.parse(r.stdout).length, 3) },
    { args: ['show', 'latest'], code: 0, check: (r) => t.regex(r.stdout, /^checkpoint [0-9a-f]{40}/) },
    { args: ['diff'], code: 0, check: (r) => t.regex(r.stdout, /^\+diff$/m) },
    { args: ['diff', 'latest', '--stat'], code: 0, check: (r) => t.regex(r.stdout, /work\.txt \| 2 \+-/) },
    { args: ['status'], code: 0, check: (r) => t.regex(r.stdout, /checkpoints: 3/) },
    { args: ['status', '--json'], code: 0, check: (r) => t.is(JSON.parse(r.stdout).checkpoints, 3) },
    { args: ['show', `--output=${outside}`], code: 1, check: () => t.false(existsSync(outside)) },
    { args: ['nonsense'], code: 2 },
    { args: ['snapshot', '-m', 'two'], code: 0, check: (_r, k, k0) => t.is(k.length, k0.length + 1) },
    // latest~1 is the `snapshot --json` checkpoint.
    {
      args: ['restore', 'latest~1', '--dry-run'],
      code: 0,
      check: (_r, k, k0) => {
        t.deepEqual(k, k0);
        t.is(work(), 'restore latest~1 --dry-run\n');
      },
    },
    {
      args: ['restore', 'latest~1', '--json'],
      code: 0,
      check: (r) => {
        t.is(JSON.parse(r.stdout).counts.restore, 1);
        t.is(last(), 'restore');
        t.is(work(), 'snapshot --json\n');
      },
    },
    {
      args: ['undo', '--dry-run'],
      touch: false,
      code: 0,
      check: (_r, k, k0) => {
        t.deepEqual(k, k0);
        t.is(work(), 'snapshot --json\n');
      },
    },
    {
      args: ['undo'],
      touch: false,
      code: 0,
      check: () => {
        t.is(last(), 'undo');
        t.is(work(), 'restore latest~1 --json\n');
      },
    },
    {
      args: ['undo'],
      code: 1,
      check: (r) => {
        t.regex(r.stderr, /undo refused: 1 file changed since the undo \(work\.txt\)/);
        t.is(work(), 'undo\n');
      },
    },
    {
      args: ['undo', '--force'],
      code: 0,
      check: () => {
        t.is(last(), 'undo');
        t.is(work(), 'snapshot --json\n');
      },
    },
    {
      args: ['restore', 'latest~2', '--delete-new'],
      code: 0,
      check: () => {
        t.is(last(), 'restore');
        t.not(work(), 'restore latest~2 --delete-new\n');
      },
    },
    // The restore just recorded, reverted: work.txt goes back to what the restore replaced.
    {
      args: ['revert', 'latest'],
      touch: false,
      code: 0,
      check: () => {
        t.is(last(), 'revert');
        t.is(work(), 'restore latest~2 --delete-new\n');
      },
    },
    // work.txt changed since that revert: a conflict, reported with exit 1, and nothing written.
    {
      args: ['revert', 'latest', '--dry-run'],
      code: 1,
      check: (r, k, k0) => {
        t.regex(r.stdout, /conflict: line 1 changed since/);
        t.deepEqual(k, k0);
      },
    },
    {
      args: ['restore', 'latest~1', '--', 'src/app.js'],
      prepare: () => write(box, 'src/app.js', 'let a = 3;\n'),
      code: 0,
      check: () => {
        t.is(readFileSync(path.join(box.ws, 'src/app.js'), 'utf8'), 'let a = 2;\n');
        t.is(work(), 'restore latest~1 -- src/app.js\n', 'only the named path was restored');
      },
    },
    { args: ['restore', '--continue'], code: 1, check: (r) => t.regex(r.stderr, /no interrupted restore/) },
    { args: ['restore', '--abort'], code: 1, check: (r) => t.regex(r.stderr, /no interrupted restore/) },
    { args: ['restore', `--output=${outside}`], code: 1, check: () => t.false(existsSync(outside)) },
    {
      args: ['gc', '--dry-run'],
      code: 0,
      check: (r, k, k0) => {
        t.regex(r.stdout, /^would drop 0 checkpoints/);
        t.deepEqual(k, k0);
      },
    },
    { args: ['gc'], code: 0, check: (r) => t.regex(r.stdout, /^dropped 0 checkpoints/) },
    { args: ['fsck'], code: 0, check: (r) => t.regex(r.stdout, /no checkpoint degraded/) },
    {
      args: ['fsck', '--rebuild-ledger'],
      code: 0,
      check: (r, k, k0) => {
        t.regex(r.stdout, /^recovered \d+ checkpoint record/);
        t.deepEqual(k, k0);
      },
    },
    { args: ['stores'], code: 0, check: (r) => t.true(r.stdout.includes(box.ws)) },
    { args: ['hooks', 'status'], code: 0, check: (r) => t.regex(r.stdout, /no agent is wired here|not wired/) },
    { args: ['mcp', 'install', '--agent', 'claude'], code: 0, check: () => t.true(existsSync(path.join(box.ws, '.mcp.json'))) },
    { args: ['mcp', 'status', '--agent', 'claude'], code: 0, check: (r) => t.regex(r.stdout, /claude\s+project\s+installed/) },
    { args: ['mcp', 'uninstall', '--agent', 'claude'], code: 0, check: (r) => t.regex(r.stdout, /removed/) },
    // Interrupted after its journal (a crash point), then recovered, previewed first.
    { args: ['restore', 'latest~1'], env: { GIT_CKPT_TEST_CRASH: 'journal' }, code: null },
    {
      args: ['restore', '--continue', '--dry-run'],
      touch: false,
      code: 0,
      check: (r) => t.regex(r.stdout, /dry run, nothing was changed/),
    },
    { args: ['restore', '--abort'], touch: false, code: 0, check: () => t.is(last(), 'restore') },
    { args: ['snapshot'], prepare: () => write(box, 'secret.txt', 'oops\n'), code: 0 },
    { args: ['forget', '--path', 'secret.txt', '--dry-run'], code: 0, check: (r) => t.regex(r.stdout, /secret\.txt/) },
    { args: ['forget', '--path', 'secret.txt'], code: 0, check: () => t.true(existsSync(path.join(box.ws, 'secret.txt'))) },
    { args: ['forget', 'latest~1', '--dry-run'], code: 0 },
    { args: ['forget', 'latest~1'], code: 0 },
    // An agent session's change, then a three-way revert of the whole session.
    { args: ['snapshot', '--session', 'sess-safety', '--turn', '1', '--kind', 'post'], code: 0 },
    // A session no agent hook made has no conversation to resume (test/rewind-events.test.mjs resumes one).
    {
      args: ['resume', 'turn:1@sess-safety', '--print'],
      touch: false,
      code: 1,
      check: (r) => t.regex(r.stderr, /session sess-saf has no agent on record/),
    },
    {
      args: ['revert', '--session', 'sess-safety'],
      touch: false,
      code: 0,
      check: () => {
        t.is(last(), 'revert');
        t.not(work(), 'snapshot --session sess-safety --turn 1 --kind post\n');
      },
    },
    // Sharing: the push runs from the shadow repository, the user's repository is only asked (remote, ignore rules, history).
    {
      args: ['share', 'init', '--remote', `file://${shareRemote}`],
      code: 0,
      check: (r) => t.regex(r.stdout, /nothing is pushed before that/),
    },
    { args: ['push', '--dry-run'], code: 0, check: () => t.is(remoteRefs(), '') },
    { args: ['push'], code: 0, check: () => t.regex(remoteRefs(), /refs\/ckpt\/v1\/[0-9a-f]{12}\/sess-safety\//) },
    { args: ['fetch', '--list'], code: 0, check: (r) => t.regex(r.stdout, /sess-safety .*\(this store\)/) },
    { args: ['fetch'], code: 0, check: (r) => t.regex(r.stdout, /fetched 0 new checkpoint/) },
    { args: ['bundle', 'create', bundleFile], code: 0, check: () => t.true(existsSync(bundleFile)) },
    { args: ['bundle', 'verify', bundleFile], code: 0, check: (r) => t.regex(r.stdout, /ok/) },
    { args: ['bundle', 'import', bundleFile], code: 0, check: (r) => t.regex(r.stdout, /imported 0 new checkpoint/) },
    { args: ['unpush', '--session', 'sess-safety'], code: 0, check: () => t.is(remoteRefs(), '') },
  ];
  for (const { args, code, touch = true, prepare, check, env } of rows) {
    const label = `git ckpt ${args.join(' ')}`;
    if (touch) write(box, 'work.txt', `${args.join(' ')}\n`);
    prepare?.();
    const k0 = kinds();
    const r = await ckpt(box, args, { env });
    t.is(r.code, code, `${label}: exit code (stderr: ${r.stderr})`);
    check?.(r, kinds(), k0);
    t.is(treeState(gitDir), before, `after ${label}`);
  }
  // The user's index still holds their staged change, and HEAD did not move.
  t.is(sh(box, ['diff', '--cached', '--name-only']).stdout.trim(), 'src/app.js');
  t.is(sh(box, ['rev-list', '--count', 'HEAD']).stdout.trim(), '1');
});

test("inherited GIT_DIR and GIT_INDEX_FILE (running inside a user's git hook) are ignored", async (t) => {
  const box = userRepo();
  const gitDir = path.join(box.ws, '.git');
  const before = treeState(gitDir);
  const objectsBefore = sh(box, ['count-objects', '-v']).stdout;
  const hookEnv = {
    GIT_DIR: gitDir,
    GIT_INDEX_FILE: path.join(gitDir, 'index'),
    GIT_WORK_TREE: box.ws,
    GIT_OBJECT_DIRECTORY: path.join(gitDir, 'objects'),
  };
  const r = await ckpt(box, ['snapshot', '--json'], { env: hookEnv });
  t.is(r.code, 0, r.stderr);
  const made = JSON.parse(r.stdout);
  t.true(made.created);
  t.is(treeState(gitDir), before);
  // Not one object was added to the user's repository: the checkpoint lives in the shadow one only.
  t.is(sh(box, ['count-objects', '-v']).stdout, objectsBefore);
  t.not(sh(box, ['cat-file', '-e', made.id], { allowFail: true }).status, 0, "the checkpoint commit is not in the user's .git");
  t.is(shadowGit(box, ['cat-file', '-t', made.id]).trim(), 'commit');
  // The shadow repository is outside the workspace (so no git command of the user's ever sees it).
  const shadow = path.join(storeDir(box), 'git');
  t.true(path.relative(box.ws, shadow).startsWith(`..${path.sep}`), shadow);
  // And it captured the workspace as it is on disk, not the user's index (src/app.js staged as 2, README.md unstaged).
  t.is(storedBytes(box, made.id, 'README.md').toString(), 'hello, world\n');
  t.is(storedBytes(box, made.id, 'notes.txt').toString(), 'untracked\n');
});

test('the filesystem root and the home directory are refused as workspaces', async (t) => {
  const box = sandbox({ git: false });
  const root = await ckptError(box, ['-C', '/', 'snapshot']);
  t.like(root, { exit: 1, code: 'bad-workspace' });
  t.regex(root.message, /^refusing to use the filesystem root as a workspace/, 'it says which refusal');
  const home = await ckptError(box, ['snapshot'], { cwd: box.home });
  t.like(home, { exit: 1, code: 'bad-workspace' });
  t.regex(home.message, /^refusing to use your home directory as a workspace/, 'it says which refusal');
  // Without --json: the same, as one line.
  const plain = await ckpt(box, ['snapshot'], { cwd: box.home });
  t.is(plain.stderr, `git-ckpt: ${home.message}\n`);
});

test('bad addresses and smuggled options give one-line errors and exit 1; usage errors exit 2', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const one = await ckptJson(box, ['snapshot']);
  write(box, 'a.txt', '2\n');
  const two = await ckptJson(box, ['snapshot']);
  const cases = [
    [['show', '--output=/tmp/x'], /not a checkpoint address: "--output=\/tmp\/x"/],
    [['show', '--', '--output=/tmp/x'], /not a checkpoint address: "--output=\/tmp\/x"/],
    [['diff', '--upload-pack=evil'], /not a checkpoint address/],
    [['show', 'zzzz'], /not a checkpoint address: "zzzz"/],
    [['show', 'abc'], /checkpoint prefix too short/],
    [['show', '0000000000'], /unknown checkpoint: 0000000000/],
    [['show', 'latest~2'], /latest~2: only 2 checkpoints exist/],
    [['diff', 'latest', 'HEAD~9'], /HEAD~9: only 2 checkpoints exist/],
  ];
  for (const [args, pattern] of cases) {
    const r = await ckpt(box, args);
    t.is(r.code, 1, args.join(' '));
    t.regex(r.stderr, new RegExp(`^git-ckpt: ${pattern.source}`), args.join(' '));
    t.is(r.stderr.trim().split('\n').length, 1, args.join(' '));
    t.is(r.stdout, '');
    // diff has no --json; the others say the same as a code.
    if (args[0] !== 'diff') t.like(await ckptError(box, args), { exit: 1, code: 'bad-address' }, args.join(' '));
  }
  const ok = await ckptJson(box, ['show', 'latest~1']);
  t.is(ok.id, one.id);
  const prefix = await ckptJson(box, ['show', two.id.slice(0, 6).toUpperCase()]);
  t.is(prefix.id, two.id);
  for (const args of [
    ['frobnicate'],
    ['log', '--bogus'],
    ['log', '-n', 'x'],
    ['revert', 'latest', '--', 'a.txt'],
    ['undo', '--', 'a.txt'],
  ]) {
    const r = await ckpt(box, args);
    t.is(r.code, 2, args.join(' '));
    t.regex(r.stderr, /^git-ckpt: /);
    t.like(await ckptError(box, args), { exit: 2, code: 'usage' }, args.join(' '));
  }
  // A bare `git ckpt` prints the usage on stderr and exits 1, as git does.
  const bare = await ckpt(box, []);
  t.is(bare.code, 1);
  t.regex(bare.stderr, /^usage: git ckpt .*<command>/);
  t.is(bare.stdout, '');
});

test('an ambiguous prefix fails with the number of matches, never the first one', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const one = await ckptJson(box, ['snapshot']);
  // A second record sharing the first 6 hex digits (ledger lines are plain JSON).
  const twin = { ...ledgerLines(box)[0], id: `${one.id.slice(0, 6)}${'0'.repeat(34)}`, parent: one.id };
  appendFileSync(path.join(storeDir(box), 'ledger.jsonl'), `${JSON.stringify(twin)}\n`);
  const r = await ckptError(box, ['show', one.id.slice(0, 6)]);
  t.like(r, { exit: 1, code: 'bad-address' });
  t.regex(r.message, /^checkpoint [0-9a-f]{6} is ambiguous \(2 matches\)$/, 'it says how many match');
  const longer = await ckptJson(box, ['show', one.id.slice(0, 12)]);
  t.is(longer.id, one.id);
});

test('corrupt, torn and tampered ledger lines are skipped with a warning, never a crash', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const one = await ckptJson(box, ['snapshot']);
  const ledger = path.join(storeDir(box), 'ledger.jsonl');
  const good = readFileSync(ledger, 'utf8');
  const tampered = { ...JSON.parse(good), id: '--output=/tmp/pwned' };
  writeFileSync(ledger, `not json at all\n${JSON.stringify(tampered)}\n${good}{"v":1,"id":"abc`);
  const log = await ckpt(box, ['log', '--json']);
  t.is(log.code, 0);
  t.deepEqual(
    JSON.parse(log.stdout).map((r) => r.id),
    [one.id],
  );
  t.regex(log.stderr, /ledger line 1: not JSON, skipped/);
  t.regex(log.stderr, /ledger line 2: bad id, skipped/);
  t.regex(log.stderr, /ledger line 4: torn last line, skipped/);
  // Snapshots still work, and append after the torn line without merging into it.
  write(box, 'a.txt', '2\n');
  const two = await ckptJson(box, ['snapshot']);
  t.is(two.parent, one.id);
  const after = await ckptJson(box, ['log']);
  t.deepEqual(
    after.map((r) => r.id),
    [two.id, one.id],
  );
});

test('a store written by a newer schema is refused for writing, still readable', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const one = await ckptJson(box, ['snapshot']);
  const ledger = path.join(storeDir(box), 'ledger.jsonl');
  appendFileSync(ledger, `${JSON.stringify({ ...JSON.parse(readFileSync(ledger, 'utf8')), v: 99 })}\n`);
  write(box, 'a.txt', '2\n');
  const r = await ckptError(box, ['snapshot']);
  t.like(r, { exit: 1, code: 'store' });
  t.regex(r.message, /^this store was written by a newer git-ckpt \(ledger schema 99/);
  const log = await ckptJson(box, ['log']);
  t.deepEqual(
    log.map((x) => x.id),
    [one.id],
  );
});

test('the runner refuses verbs off the whitelist, and non-id positionals, before spawning', async (t) => {
  for (const verb of ['reset', 'clean', 'stash', 'checkout', 'gc', 'restore', 'rm', 'branch', 'tag', 'remote-add', 'symbolic-ref']) {
    const err = await t.throwsAsync(runner.git({ verb, args: [] }));
    t.is(err.code, 'refused', verb);
    t.regex(err.message, /git verb not allowed/);
  }
  // The carrying verbs name git-ckpt's own refs only, push only from the shadow repository, and
  // `remote` and `bundle` only their read-only or creating subcommands.
  const oid = 'a'.repeat(40);
  const refusals = [
    [
      { verb: 'push', gitDir: '/shadow', args: [{ url: 'file:///r.git' }, { refspec: { src: oid, dst: 'refs/heads/main' } }] },
      /not a git-ckpt ref/,
    ],
    [
      { verb: 'push', gitDir: '/shadow', args: [{ url: 'file:///r.git' }, { refspec: { src: oid, dst: 'refs/ckpt/v1/../heads/x' } }] },
      /not a git-ckpt ref/,
    ],
    [
      { verb: 'push', gitDir: '/shadow', args: [{ url: 'file:///r.git' }, { refspec: { src: 'HEAD', dst: 'refs/ckpt/v1/w/s/x' } }] },
      /not a git-ckpt ref/,
    ],
    [
      { verb: 'push', args: [{ url: 'file:///r.git' }, { refspec: { src: oid, dst: 'refs/ckpt/v1/w/s/x' } }] },
      /only in the shadow repository/,
    ],
    [{ verb: 'fetch', args: [{ url: 'file:///r.git' }] }, /only in the shadow repository/],
    [{ verb: 'push', gitDir: '/shadow', args: ['--force', { url: 'file:///r.git' }] }, /never takes --force/],
    [{ verb: 'push', gitDir: '/shadow', args: ['--mirror', { url: 'file:///r.git' }] }, /never takes --mirror/],
    [{ verb: 'fetch', gitDir: '/shadow', args: ['--upload-pack=touch /tmp/x', { url: 'file:///r.git' }] }, /never takes --upload-pack/],
    [{ verb: 'push', gitDir: '/shadow', args: [{ url: '--receive-pack=touch /tmp/x' }] }, /not a remote URL/],
    [{ verb: 'push', gitDir: '/shadow', args: [{ url: 'ext::sh -c touch% /tmp/x' }] }, /not a remote URL/],
    [{ verb: 'update-ref', gitDir: '/shadow', args: [{ ref: 'refs/heads/main' }, { oid }] }, /not a git-ckpt ref/],
    [{ verb: 'remote', args: [{ literal: 'add' }, { literal: 'x' }] }, /only as remote get-url/],
    [{ verb: 'bundle', gitDir: '/shadow', args: [{ literal: 'unbundle' }] }, /only as bundle create/],
    [{ verb: 'bundle', gitDir: '/shadow', args: [{ literal: 'create' }, { file: 'relative.bundle' }] }, /not an absolute file path/],
    [{ verb: 'bundle', args: [{ literal: 'create' }, { file: '/tmp/x.bundle' }] }, /only in the shadow repository/],
  ];
  for (const [call, message] of refusals) {
    const err = await t.throwsAsync(runner.git(call));
    t.is(err.code, 'refused', JSON.stringify(call));
    t.regex(err.message, message);
  }
  const network = runner.buildArgv({ verb: 'ls-remote', network: true, args: [{ url: 'file:///r.git' }, { ref: 'refs/ckpt/v1/*' }] });
  t.true(network.includes('core.hooksPath=/dev/null') && network.includes('protocol.ext.allow=never'), 'no hook and no command transport');
  for (const bad of ['--output=/tmp/x', 'HEAD', 'abc', '../x', 'deadbeef'.repeat(4), `${'a'.repeat(40)}x`]) {
    const err = await t.throwsAsync(runner.git({ verb: 'cat-file', args: ['-t', { oid: bad }] }));
    t.is(err.code, 'refused', bad);
  }
  // Free text in an option slot is refused too.
  const err = await t.throwsAsync(runner.git({ verb: 'diff-tree', args: ['a b'] }));
  t.regex(err.message, /not an option/);
  t.true(isObjectId('a'.repeat(40)));
  t.true(isObjectId('b'.repeat(64)));
  // Paths go after "--", literally.
  t.deepEqual(runner.buildArgv({ verb: 'diff-tree', args: [{ oid: 'a'.repeat(40) }], paths: ['-x', '*'] }).slice(-3), ['--', '-x', '*']);
});

test('the runner strips inherited GIT_* variables (git -c settings kept only for the output settings) and never reads system config', (t) => {
  const saved = { ...process.env };
  process.env.GIT_DIR = '/user/repo/.git';
  process.env.GIT_INDEX_FILE = '/user/repo/.git/index';
  process.env.GIT_CONFIG_PARAMETERS = "'core.autocrlf'='true'";
  try {
    const env = runner.buildEnv({ verb: 'ls-files', gitDir: '/shadow' });
    t.is(env.GIT_DIR, '/shadow');
    t.is(env.GIT_INDEX_FILE, undefined);
    t.is(env.GIT_CONFIG_PARAMETERS, undefined);
    t.is(env.GIT_CONFIG_NOSYSTEM, '1');
    t.is(env.GIT_TERMINAL_PROMPT, '0');
    t.is(env.GIT_CONFIG_GLOBAL, '/dev/null');
    t.is(runner.buildEnv({ verb: 'config', userConfig: true }).GIT_CONFIG_GLOBAL, undefined);
    t.throws(() => runner.buildEnv({ verb: 'ls-files', env: { GIT_DIR: '/x' } }), { message: /not allowed/ });
    // The pager and colour settings keep `git -c` (the person's own config for this command), and nothing else of GIT_*.
    const output = runner.buildEnv({ verb: 'config', userConfig: true, commandLineConfig: true });
    t.is(output.GIT_CONFIG_PARAMETERS, "'core.autocrlf'='true'");
    t.is(output.GIT_DIR, undefined);
    t.is(output.GIT_INDEX_FILE, undefined);
    t.is(runner.buildEnv({ verb: 'config', commandLineConfig: true }).GIT_CONFIG_PARAMETERS, undefined, 'only with user config');
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});

// Workspace.open({ env }) hands its env to every git child: git's default global ignore file
// (~/.config/git/ignore, read even with GIT_CONFIG_GLOBAL=/dev/null) comes from the injected HOME.
// The process here gets a home of its own whose ignore file hides `leak-*.txt`; the injected one
// has none, so the file must be captured.
test("a library caller's injected HOME also decides git's global ignore file", async (t) => {
  const box = sandbox();
  const processHome = path.join(box.base, 'process-home');
  mkdirSync(path.join(processHome, '.config', 'git'), { recursive: true });
  writeFileSync(path.join(processHome, '.config', 'git', 'ignore'), 'leak-*.txt\n');
  write(box, 'leak-a.txt', 'captured?\n');
  const script = `
    const { Workspace } = await import(${JSON.stringify(libPath('index'))});
    const r = await Workspace.open(${JSON.stringify(box.ws)}, { env: JSON.parse(process.argv[1]) }).snapshot();
    process.stdout.write(r.id);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(box.env)], {
    env: { ...box.env, HOME: processHome, XDG_CONFIG_HOME: path.join(processHome, '.config') },
    encoding: 'utf8',
  });
  t.is(r.status, 0, r.stderr);
  t.true(shadowGit(box, ['ls-tree', '--name-only', r.stdout]).split('\n').includes('leak-a.txt'));
});

test('an empty path (an unset shell variable) fails closed with one line, before anything is written', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  write(box, 'src/b.txt', '1\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'a.txt', '2\n');
  write(box, 'src/b.txt', '2\n');
  const ledgerBefore = readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8');
  for (const [args, cwd] of [
    [['restore', 'latest', '--', ''], box.ws],
    [['restore', 'latest', '--dry-run', '--', 'a.txt', ''], box.ws],
    [['restore', 'latest', '--', ''], path.join(box.ws, 'src')],
    [['diff', 'latest', '--', ''], box.ws],
  ]) {
    const r = await ckpt(box, args, { cwd });
    t.is(r.code, 1, args.join(' '));
    t.is(r.stderr, 'git-ckpt: path refused: "" (empty path)\n', args.join(' '));
    t.is(r.stdout, '');
    if (args[0] !== 'diff') t.like(await ckptError(box, args, { cwd }), { exit: 1, code: 'path' }, args.join(' '));
  }
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), '2\n');
  t.is(readFileSync(path.join(box.ws, 'src/b.txt'), 'utf8'), '2\n');
  t.is(readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8'), ledgerBefore, 'not even a guard checkpoint');
});

test('a git directory (a bare repository, a separate git dir, or a folder inside one) is refused as a workspace by every command', async (t) => {
  const box = sandbox({ git: false });
  write(box, 'src/a.txt', 'a\n');
  sh(box, ['init', '-q', 'src'], { cwd: box.ws });
  sh(box, ['add', '.'], { cwd: path.join(box.ws, 'src') });
  sh(box, ['commit', '-qm', 'one'], { cwd: path.join(box.ws, 'src') });
  sh(box, ['init', '-q', '--bare', 'repo.git'], { cwd: box.ws });
  sh(box, ['push', '-q', '../repo.git', 'main'], { cwd: path.join(box.ws, 'src') });
  sh(box, ['init', '-q', '--separate-git-dir', path.join(box.ws, 'sep-gitdir'), 'sep'], { cwd: box.ws });
  const bare = path.join(box.ws, 'repo.git');
  const before = treeState(bare);
  const dirs = [bare, path.join(bare, 'refs', 'heads'), path.join(box.ws, 'sep-gitdir')];
  const commands = [
    ['snapshot'],
    ['status'],
    ['log'],
    ['restore', 'latest'],
    ['diff'],
    ['hooks', 'install', '--agent', 'claude'],
    ['mcp', 'install', '--agent', 'claude'],
  ];
  for (const dir of dirs) {
    for (const args of commands) {
      if (args[0] === 'diff') {
        const r = await ckpt(box, args, { cwd: dir });
        t.is(r.code, 1, `${dir}: ${args.join(' ')}: ${r.stderr}`);
        t.regex(r.stderr, /^git-ckpt: refusing to use a git directory as a workspace: .*\n$/, `${dir}: ${args.join(' ')}`);
        continue;
      }
      const r = await ckptError(box, args, { cwd: dir });
      t.like(r, { exit: 1, code: 'bad-workspace' }, `${dir}: ${args.join(' ')}: ${r.message}`);
      t.regex(r.message, /^refusing to use a git directory as a workspace: /, `${dir}: ${args.join(' ')}`);
    }
    const hook = await ckpt(box, ['hook', 'claude', 'post'], {
      cwd: dir,
      input: JSON.stringify({
        session_id: 's1',
        cwd: dir,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'ls' },
        tool_use_id: 't1',
      }),
    });
    t.is(hook.code, 0, hook.stderr);
  }
  t.regex(
    readFileSync(path.join(box.store, 'hook.log'), 'utf8'),
    /claude post s1: no checkpoint: refusing to use a git directory as a workspace/,
  );
  t.deepEqual(
    readdirSync(box.store).filter((d) => d !== 'daemon'),
    ['hook.log'],
    'no store was made',
  );
  t.is(treeState(bare), before);
  // Its work trees stay workspaces.
  t.true((await ckptJson(box, ['snapshot'], { cwd: path.join(box.ws, 'sep') })).created);
});

test('an internal error (a bug) exits 3 with one line, its stack only under GIT_CKPT_TRACE, and leaves the lock free', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  // A test-only fault: a plain Error thrown inside the lock door, as a bug in git-ckpt would.
  const bug = { env: { GIT_CKPT_TEST_CRASH: 'throw:door' } };
  const r = await ckpt(box, ['snapshot'], bug);
  t.is(r.code, 3, r.stderr);
  t.is(r.stderr, 'git-ckpt: internal error: test fault at door (GIT_CKPT_TEST_CRASH)\n', 'one line, no stack');
  t.is(r.stdout, '');
  t.like(await ckptError(box, ['snapshot'], bug), { exit: 3, code: 'internal' });
  const traced = await ckpt(box, ['snapshot'], { env: { ...bug.env, GIT_CKPT_TRACE: '1' } });
  t.is(traced.code, 3);
  t.regex(traced.stderr, /^Error: test fault at door[^\n]*\n\s+at /m, 'the stack under GIT_CKPT_TRACE');
  t.regex(traced.stderr, /git-ckpt: internal error: test fault at door.*\n$/);
  // The lock was released on the way out: the next command runs at once.
  const made = await ckptJson(box, ['snapshot']);
  t.true(made.created);
  t.is(ledgerLines(box).length, 1, 'the failed runs recorded nothing');
});
