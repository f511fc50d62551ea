// Pure planning, no disk: addresses, capture plans, settings, batches, ledger parsing.
import test from 'ava';
import ignore from 'ignore';
import { libPath } from './helpers.mjs';

// The library's face plus the internal modules these pure tests reach into.
const lib = Object.assign({}, ...(await Promise.all(['index', 'capture-plan', 'settings', 'ledger'].map((m) => import(libPath(m))))));
const { commitMessage } = await import(libPath('trailers'));
const { boundDiff } = await import(libPath('agent-tools'));
const { rootFolder } = await import(libPath('mcp'));
const { serverEntry } = await import(libPath('mcp-install'));
const { statusFor } = await import(libPath('ui-server'));
const merge = await import(libPath('merge'));

const rec = (id, extra = {}) => ({
  v: 1,
  id,
  parent: null,
  tree: 'f'.repeat(40),
  time: 0,
  session: null,
  turn: null,
  step: null,
  tool: null,
  kind: 'manual',
  message: '',
  stats: { added: 0, modified: 0, deleted: 0 },
  bytes: 0,
  paths: [],
  changed: 0,
  skipped: [],
  skippedCount: 0,
  ...extra,
});

test('addresses: latest, latest~N (and git’s HEAD, HEAD~N, @, @~N), unique prefixes, ambiguity and refusals', (t) => {
  const records = [rec('aaaa1111'.padEnd(40, '0')), rec('aaaa2222'.padEnd(40, '0')), rec('bbbb3333'.padEnd(40, '0'))];
  t.is(lib.resolveAddress(records, 'latest').id, records[2].id);
  t.is(lib.resolveAddress(records, 'latest~2').id, records[0].id);
  t.is(lib.resolveAddress(records, 'bbbb').id, records[2].id);
  t.is(lib.resolveAddress(records, 'AAAA1').id, records[0].id);
  t.throws(() => lib.resolveAddress(records, 'aaaa'), { message: 'checkpoint aaaa is ambiguous (2 matches)' });
  t.throws(() => lib.resolveAddress(records, 'latest~3'), { message: /only 3 checkpoints exist/ });
  t.throws(() => lib.resolveAddress(records, '--output=/x'), { message: /looks like an option/ });
  t.throws(() => lib.resolveAddress(records, 'cccc'), { message: 'unknown checkpoint: cccc' });
  t.throws(() => lib.resolveAddress([], 'latest'), { message: /no checkpoints yet/ });
  t.deepEqual(lib.parseAddress('latest~12'), { kind: 'latest', back: 12 });
  // git's spellings of latest, as README and the man page say.
  t.is(lib.resolveAddress(records, 'HEAD').id, records[2].id);
  t.is(lib.resolveAddress(records, 'HEAD~1').id, records[1].id);
  t.is(lib.resolveAddress(records, '@').id, records[2].id);
  t.is(lib.resolveAddress(records, '@~2').id, records[0].id);
  t.throws(() => lib.resolveAddress(records, 'HEAD~3'), { message: /HEAD~3: only 3 checkpoints exist/ });
  t.throws(() => lib.parseAddress('HEAD^'), { message: /expected a hex id prefix, latest, latest~N, HEAD~N/ });
  t.throws(() => lib.parseAddress('latest~-1'));
  t.throws(() => lib.parseAddress('main'));
});

const settings = { ...lib.DEFAULT_SETTINGS, maxFileBytes: 100 };

test('capture plan: stages changes, drops what may not be stored, and says why', (t) => {
  const scan = lib.parseScan([
    'C mod.txt',
    'C gone.txt',
    'R gone.txt',
    '? new.txt',
    '? big.bin',
    '? .env',
    'C grew.bin',
    'C became-dir',
    '? odd',
  ]);
  t.deepEqual(scan.deleted, ['gone.txt']);
  t.deepEqual(scan.modified, ['mod.txt', 'grew.bin', 'became-dir']);
  const facts = new Map([
    ['mod.txt', { kind: 'file', size: 5 }],
    ['new.txt', { kind: 'file', size: 7 }],
    ['big.bin', { kind: 'file', size: 101 }],
    ['.env', { kind: 'file', size: 3 }],
    ['grew.bin', { kind: 'file', size: 500 }],
    ['became-dir', { kind: 'dir', size: 0 }],
    ['odd', { kind: 'missing', size: 0 }],
  ]);
  const plan = lib.planCapture(scan, { files: new Map(), overLimit: new Map() }, facts, settings, ignore().add(settings.secretPatterns));
  t.deepEqual(plan.stage.sort(), ['gone.txt', 'mod.txt', 'new.txt']);
  t.deepEqual(plan.forceRemove.sort(), ['became-dir', 'grew.bin']);
  t.deepEqual(plan.skipped.map((s) => `${s.path}:${s.reason}`).sort(), ['.env:secret', 'big.bin:too-large', 'grew.bin:too-large']);
  t.is(plan.sizes.get('new.txt'), 7);
});

test('capture plan: new directories over the limit are skipped whole, others are expanded', (t) => {
  const scan = lib.parseScan(['? node_modules/', '? src/new/']);
  t.deepEqual(scan.newDirs, ['node_modules/', 'src/new/']);
  // An embedded repository inside a new directory comes back from expansion as `dir/`: a gitlink.
  const expansion = {
    files: new Map([['src/new/', ['src/new/a.ts', 'src/new/b.ts', 'src/new/repo/']]]),
    overLimit: new Map([['node_modules/', 5001]]),
  };
  const facts = new Map([
    ['src/new/a.ts', { kind: 'file', size: 1 }],
    ['src/new/b.ts', { kind: 'file', size: 1 }],
  ]);
  const plan = lib.planCapture(scan, expansion, facts, settings, ignore().add([]));
  t.deepEqual(plan.stage, ['src/new/a.ts', 'src/new/b.ts', 'src/new/repo/']);
  t.deepEqual(plan.skipped, [{ path: 'node_modules/', reason: 'new-directory-too-many-files', size: 5001 }]);
});

test('settings: git sizes and durations, defaults, bad values', (t) => {
  const s = lib.settingsFromConfigList(
    'user.name\nX\0ckpt.maxfilebytes\n32m\0ckpt.maxnewfiles\n2k\0ckpt.timebudget\n1500ms\0ckpt.secretpatterns\n*.token, !*.key\0ckpt.secretpatterns\n!.env.example *.pem\0ckpt.futurekey\nwhatever\0',
  );
  t.is(s.maxFileBytes, 32 * 1024 * 1024);
  t.is(s.maxNewFiles, 2048);
  t.is(s.timeBudgetMs, 1500);
  // Each value adds to the defaults (the global config's, then the store's): `!` drops a pattern the list has, else negates.
  t.deepEqual(s.secretPatterns, ['.env', '.env.*', '*.pem', 'id_rsa*', 'id_ed25519*', '*.token', '!.env.example']);
  t.is(lib.settingsFromConfigList('ckpt.timebudget\n20\0').timeBudgetMs, 20_000);
  t.deepEqual(lib.settingsFromConfigList(''), lib.DEFAULT_SETTINGS);
  t.throws(() => lib.settingsFromConfigList('ckpt.maxfilebytes\nlots\0'), { message: /bad value for ckpt.maxFileBytes/ });
});

test('batches: bounded in files and bytes, sized to the remaining budget', (t) => {
  const unit = (pathspec, count, bytes) => ({ pathspec, count, bytes, isDir: count > 1 });
  const units = [unit('a', 1, 10), unit('b', 1, 10), unit('c/', 40, 100), unit('d', 1, 1), unit('e', 1, 1)];
  t.is(lib.takeBatch(units, 0, 2, 1000), 2);
  t.is(lib.takeBatch(units, 0, 100, 50), 2);
  t.is(lib.takeBatch(units, 2, 10, 50), 3, 'one oversized unit still makes a batch');
  t.is(lib.takeBatch(units, 3, 10, 50), 5);
  t.deepEqual(lib.batchLimits(undefined, undefined), { maxCount: 20_000, maxBytes: 1024 * 1024 * 1024 });
  const slow = lib.batchLimits(900, { files: 100, bytes: 1e6, ms: 1000 });
  t.is(slow.maxCount, 30);
  const fast = lib.batchLimits(60_000, { files: 10_000, bytes: 1e6, ms: 100 });
  t.is(fast.maxCount, 20_000);
});

test('stage units: whole directories become one pathspec unless something below must stay out', (t) => {
  const stage = ['a/1', 'a/2', 'a/b/3', 'c/1', 'c/2', 'c/.env-ok', 'd/1', 'd/2', 'd/3', 'top.txt', 'e/repo/'];
  const sizes = new Map(stage.map((p) => [p, 10]));
  const units = lib.stageUnits(stage, sizes, ['c/.env', 'e/repo/'], 2);
  t.deepEqual(
    units.map((u) => u.pathspec),
    ['a/1', 'a/2', 'a/b/', 'c/.env-ok', 'c/1', 'c/2', 'd/1', 'd/2', 'd/3', 'e/repo/', 'top.txt'],
  );
  const roomy = lib.stageUnits(stage, sizes, ['c/.env'], 10);
  t.deepEqual(
    roomy.map((u) => u.pathspec),
    ['a/', 'c/.env-ok', 'c/1', 'c/2', 'd/', 'e/', 'top.txt'],
  );
  t.is(roomy.find((u) => u.pathspec === 'a/').count, 3);
  t.is(
    roomy.reduce((n, u) => n + u.count, 0),
    stage.length,
  );
});

test('ledger parsing validates every id and skips what it cannot trust', (t) => {
  const good = rec('c'.repeat(40));
  const text = [
    JSON.stringify(good),
    JSON.stringify({ ...good, parent: '$(rm -rf /)' }),
    JSON.stringify({ ...good, kind: 'evil' }),
    '{"torn',
  ].join('\n');
  const read = lib.parseLedger(text);
  t.is(read.records.length, 1);
  t.deepEqual(read.warnings, [
    'ledger line 2: bad parent, skipped',
    'ledger line 3: bad kind, skipped',
    'ledger line 4: torn last line, skipped',
  ]);
});

test('commit messages carry one-line trailers whatever the metadata holds', (t) => {
  const msg = commitMessage({
    ...rec('a'.repeat(40)),
    kind: 'post',
    session: 'evil\nCkpt-Kind: guard',
    tool: 'Bash',
    turn: 2,
    step: 3,
    message: 'line1\nline2',
  });
  t.regex(msg, /^line1 line2\n\n/);
  t.regex(msg, /^Ckpt-Session: evil Ckpt-Kind: guard$/m);
  t.is(msg.match(/^Ckpt-Kind:/gm).length, 1);
});

test('one line rule for messages, trailers and summaries: breaks and tabs become one space, typed spaces stay, cuts end in …', async (t) => {
  const { oneLine } = await import(libPath('text'));
  t.is(oneLine('npm  test', 50), 'npm  test', 'runs of plain spaces are kept: a message comes back from its commit as typed');
  t.is(oneLine('  a \n   b\r\n\tc  ', 50), 'a b c');
  t.is(oneLine('a\u2028b\vc\fd', 50), 'a b c d', 'no blank that some reader takes for a line break survives');
  t.is(oneLine('abcdef', 4), 'abc…');
  const { shortId, shortSession, SHORT_ID_LENGTH, SHORT_SESSION_LENGTH } = await import(libPath('short-ids'));
  t.is(shortId('a'.repeat(40)).length, SHORT_ID_LENGTH);
  t.is(shortSession('3f2a9c1b-7d4e-4c1a-9b2e-0123456789ab'), '3f2a9c1b-7d4e');
  t.is(SHORT_SESSION_LENGTH, 13);
});

test('index refresh: once a little after files were staged, then at most every 30 s', async (t) => {
  const { refreshDue } = await import(libPath('index-stamp'));
  const now = 1_000_000;
  t.true(refreshDue(undefined, now), 'no stamp: the index changed outside a snapshot');
  t.false(refreshDue({ staged: now - 500, refreshed: 0 }, now), 'just staged: racy entries would stay racy');
  t.true(refreshDue({ staged: now - 2000, refreshed: 0 }, now));
  t.false(refreshDue({ staged: now - 60_000, refreshed: now - 20_000 }, now), 'refreshed since the staging');
  t.false(refreshDue({ staged: 0, refreshed: now - 10_000 }, now));
  t.true(refreshDue({ staged: 0, refreshed: now - 31_000 }, now));
});

test('agent tools: a diff is cut at a line end under the bound, with a line saying how much and how to ask for less', (t) => {
  const small = 'a\nb\n';
  t.deepEqual(boundDiff(small, 10), { text: small, truncated: false, bytes: 4 });
  const long = `${'x'.repeat(5)}\n${'y'.repeat(5)}\n${'z'.repeat(5)}\n`;
  const cut = boundDiff(long, 14);
  t.true(cut.truncated);
  t.is(cut.bytes, 18);
  t.true(cut.text.startsWith('xxxxx\nyyyyy\n['), 'cut after the last whole line that fits');
  t.regex(cut.text, /\[diff cut at 12 B of 18 B: ask for fewer paths/);
  // Multi-byte text is never split inside a character.
  t.false(boundDiff(`${'é'.repeat(10)}\n`, 7).text.includes('\uFFFD'));
});

test('MCP: the workspace from a client’s roots is the first local file: URI', (t) => {
  t.is(rootFolder([{ uri: 'https://example.com/x' }, { uri: 'file:///home/u/project' }, { uri: 'file:///other' }]), '/home/u/project');
  t.is(rootFolder([{ uri: 'https://example.com/x' }]), undefined);
  t.is(rootFolder([]), undefined);
});

test('MCP install: each agent’s entry, through sh and the shipped script', (t) => {
  t.deepEqual(serverEntry('claude', '/p/hooks/git-ckpt-mcp'), { type: 'stdio', command: 'sh', args: ['/p/hooks/git-ckpt-mcp'] });
  t.deepEqual(serverEntry('copilot', '/s'), { type: 'local', command: 'sh', args: ['/s'], tools: ['*'] });
  t.deepEqual(serverEntry('gemini', '/s'), { command: 'sh', args: ['/s'] });
  t.deepEqual(serverEntry('cursor', '/s'), { command: 'sh', args: ['/s'] });
});

test('ui: HTTP statuses come from error codes and data, never from messages', (t) => {
  const rows = [
    ['bad-address', { notFound: true }, 404],
    ['nothing', {}, 404],
    ['bad-address', {}, 400],
    ['usage', {}, 400],
    ['path', {}, 400],
    ['config', {}, 400],
    ['lock-timeout', {}, 409],
    ['pending', {}, 409],
    ['stale', {}, 409],
    ['degraded', {}, 409],
    ['io', {}, 500],
    ['git', {}, 500],
    ['internal', {}, 500],
  ];
  for (const [code, data, status] of rows) t.is(statusFor(code, data), status, code);
});

test('three-way revert: conflict ranges are the present file’s lines, stages parse from merge-tree -z, whole conflicts by kind', (t) => {
  const merged = [
    'a',
    '<<<<<<< ours',
    'b now',
    'c now',
    '=======',
    'b then',
    '>>>>>>> theirs',
    'd',
    '<<<<<<< ours',
    '=======',
    'gone',
    '>>>>>>> theirs',
    'e',
  ].join('\n');
  t.deepEqual(merge.conflictRanges(merged, 'a\nb now\nc now\nd\ne'), [
    [2, 3],
    [5, 5],
  ]);
  t.deepEqual(merge.conflictRanges('no conflict\n', 'no conflict\n'), []);
  // The clean part of the revert took 3 lines off the top: the conflict is still at the present file's line 5.
  const present = ['new 1', 'new 2', 'new 3', 'x', 'line 5 now', 'y'].join('\n');
  t.deepEqual(merge.conflictRanges(['x', '<<<<<<< a', 'line 5 now', '=======', 'line 5 then', '>>>>>>> b', 'y'].join('\n'), present), [
    [5, 5],
  ]);
  // CRLF files get CRLF markers.
  t.deepEqual(merge.conflictRanges('a\r\n<<<<<<< a\r\nb\r\n=======\r\nc\r\n>>>>>>> b\r\n', 'a\r\nb\r\n'), [[2, 2]]);
  const oid = (c) => c.repeat(40);
  const stage = (mode, c, n) => `${mode} ${oid(c)} ${n}\tdir/f.txt`;
  const parsed = merge.parseMergeTree(
    [oid('a'), stage('100644', '1', 1), stage('100644', '2', 2), stage('100755', '3', 3), '', 'messages'].join('\0'),
  );
  t.is(parsed.tree, oid('a'));
  t.deepEqual(
    [...parsed.stages.get('dir/f.txt')].map(([stage, e]) => [stage, e.mode]),
    [
      [1, '100644'],
      [2, '100644'],
      [3, '100755'],
    ],
  );
  t.is(merge.wholeConflict(parsed.stages.get('dir/f.txt')), 'its mode changed since');
  const entry = (mode) => ({ mode, oid: oid('1') });
  t.is(
    merge.wholeConflict(
      new Map([
        [1, entry('100644')],
        [2, entry('100644')],
      ]),
    ),
    'changed since on one side and deleted on the other',
  );
  t.is(
    merge.wholeConflict(
      new Map([
        [1, entry('120000')],
        [2, entry('120000')],
        [3, entry('120000')],
      ]),
    ),
    'a symlink changed since',
  );
  t.is(
    merge.wholeConflict(
      new Map([
        [1, entry('100644')],
        [2, entry('100644')],
        [3, entry('100644')],
      ]),
    ),
    undefined,
  );
});

test('a rule is named with the article it is said with: an AWS access key, an npm token, a GitHub token, a Slack token', async (t) => {
  const { withArticle } = await import(libPath('text'));
  for (const [phrase, said] of [
    ['AWS access key', 'an AWS access key'],
    ['npm token', 'an npm token'],
    ['SSH private key', 'an SSH private key'],
    ['OpenAI API key', 'an OpenAI API key'],
    ['GitHub token', 'a GitHub token'],
    ['Slack token', 'a Slack token'],
    ['PEM private key', 'a PEM private key'],
    ["git-ckpt's daemon token", "a git-ckpt's daemon token"],
  ])
    t.is(withArticle(phrase), said);
});
