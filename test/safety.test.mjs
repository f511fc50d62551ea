import test from 'ava';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ckpt, ckptJson, ledgerLines, sandbox, sh, storeDir, treeState, write, ROOT } from './helpers.mjs';

const runner = await import(path.join(ROOT, 'dist', 'lib', 'runner.js'));

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

test("every command leaves the user's .git byte-for-byte unchanged", async (t) => {
  const box = userRepo();
  const gitDir = path.join(box.ws, '.git');
  const before = treeState(gitDir);
  const commands = [
    ['init'],
    ['snapshot', '-m', 'one'],
    ['snapshot', '--json'],
    ['log'],
    ['log', '--json', '--stat'],
    ['show', 'latest'],
    ['diff'],
    ['diff', 'latest', '--stat'],
    ['status'],
    ['status', '--json'],
    ['show', '--output=/tmp/x'],
    ['nonsense'],
    ['snapshot', '-m', 'two'],
    ['restore', 'latest~1', '--dry-run'],
    ['restore', 'latest~1', '--json'],
    ['undo', '--dry-run'],
    ['undo'],
    ['undo', '--force'],
    ['restore', 'latest~2', '--delete-new'],
    ['revert', 'latest~1'],
    ['revert', 'latest', '--dry-run'],
    ['restore', 'latest~1', '--', 'src/app.js'],
    ['restore', '--continue'],
    ['restore', '--abort'],
    ['restore', '--output=/tmp/x'],
    ['gc', '--dry-run'],
    ['gc'],
    ['fsck'],
    ['fsck', '--rebuild-ledger'],
    ['stores'],
    ['hooks', 'status'],
  ];
  for (const args of commands) {
    write(box, 'work.txt', `${args.join(' ')}\n`);
    await ckpt(box, args);
    t.is(treeState(gitDir), before, `after git ckpt ${args.join(' ')}`);
  }
  // The user's index still holds their staged change, and HEAD did not move.
  t.is(sh(box, ['diff', '--cached', '--name-only']).stdout.trim(), 'src/app.js');
  t.is(sh(box, ['rev-list', '--count', 'HEAD']).stdout.trim(), '1');
});

test("inherited GIT_DIR and GIT_INDEX_FILE (running inside a user's git hook) are ignored", async (t) => {
  const box = userRepo();
  const gitDir = path.join(box.ws, '.git');
  const before = treeState(gitDir);
  const hookEnv = {
    GIT_DIR: gitDir,
    GIT_INDEX_FILE: path.join(gitDir, 'index'),
    GIT_WORK_TREE: box.ws,
    GIT_OBJECT_DIRECTORY: path.join(gitDir, 'objects'),
  };
  const r = await ckpt(box, ['snapshot', '--json'], { env: hookEnv });
  t.is(r.code, 0, r.stderr);
  t.true(JSON.parse(r.stdout).created);
  t.is(treeState(gitDir), before);
  const objects = sh(box, ['count-objects', '-v']).stdout;
  const shadow = path.join(storeDir(box), 'git');
  t.not(shadow, gitDir);
  t.regex(objects, /count: \d+/);
});

test('the filesystem root and the home directory are refused as workspaces', async (t) => {
  const box = sandbox({ git: false });
  const root = await ckpt(box, ['-C', '/', 'snapshot']);
  t.is(root.code, 1);
  t.regex(root.stderr, /^git-ckpt: refusing to use the filesystem root as a workspace/);
  const home = await ckpt(box, ['snapshot'], { cwd: box.home });
  t.is(home.code, 1);
  t.regex(home.stderr, /^git-ckpt: refusing to use your home directory as a workspace/);
  t.is(home.stderr.trim().split('\n').length, 1);
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
  }
  const ok = await ckptJson(box, ['show', 'latest~1']);
  t.is(ok.id, one.id);
  const prefix = await ckptJson(box, ['show', two.id.slice(0, 6).toUpperCase()]);
  t.is(prefix.id, two.id);
  for (const args of [['frobnicate'], ['log', '--bogus'], ['log', '-n', 'x'], []]) {
    const r = await ckpt(box, args);
    t.is(r.code, 2, args.join(' '));
    t.regex(r.stderr, /^git-ckpt: /);
  }
});

test('an ambiguous prefix fails with the number of matches, never the first one', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const one = await ckptJson(box, ['snapshot']);
  // A second record sharing the first 6 hex digits (ledger lines are plain JSON).
  const twin = { ...ledgerLines(box)[0], id: `${one.id.slice(0, 6)}${'0'.repeat(34)}`, parent: one.id };
  appendFileSync(path.join(storeDir(box), 'ledger.jsonl'), `${JSON.stringify(twin)}\n`);
  const r = await ckpt(box, ['show', one.id.slice(0, 6)]);
  t.is(r.code, 1);
  t.regex(r.stderr, /^git-ckpt: checkpoint [0-9a-f]{6} is ambiguous \(2 matches\)\n$/);
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
  const r = await ckpt(box, ['snapshot']);
  t.is(r.code, 1);
  t.regex(r.stderr, /^git-ckpt: this store was written by a newer git-ckpt \(ledger schema 99/);
  const log = await ckptJson(box, ['log']);
  t.deepEqual(
    log.map((x) => x.id),
    [one.id],
  );
});

test('the runner refuses verbs off the whitelist, and non-id positionals, before spawning', async (t) => {
  for (const verb of ['reset', 'clean', 'stash', 'checkout', 'push', 'gc', 'restore', 'rm', 'fetch', 'update-ref']) {
    const err = await t.throwsAsync(runner.git({ verb, args: [] }));
    t.is(err.code, 'refused', verb);
    t.regex(err.message, /git verb not allowed/);
  }
  for (const bad of ['--output=/tmp/x', 'HEAD', 'abc', '../x', 'deadbeef'.repeat(4), `${'a'.repeat(40)}x`]) {
    const err = await t.throwsAsync(runner.git({ verb: 'cat-file', args: ['-t', { oid: bad }] }));
    t.is(err.code, 'refused', bad);
  }
  // Free text in an option slot is refused too.
  const err = await t.throwsAsync(runner.git({ verb: 'diff-tree', args: ['a b'] }));
  t.regex(err.message, /not an option/);
  t.true(runner.isObjectId('a'.repeat(40)));
  t.true(runner.isObjectId('b'.repeat(64)));
  // Paths go after "--", literally.
  t.deepEqual(runner.buildArgv({ verb: 'diff-tree', args: [{ oid: 'a'.repeat(40) }], paths: ['-x', '*'] }).slice(-3), ['--', '-x', '*']);
});

test('the runner strips inherited GIT_* variables and never reads system config', (t) => {
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
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});
