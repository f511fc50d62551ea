// Pure: how checkpoints travel (lib/model/share-plan.ts) and the credential shapes a push reads
// files for (lib/model/redact.ts's findSecret). No disk, no git: records and texts are data here.
import test from 'ava';
import { libPath } from './helpers.mjs';

const plan = await import(libPath('share-plan'));
const { findSecret } = await import(libPath('redact'));
const { recordProblem } = await import(libPath('ledger'));

const oid = (n) => n.toString(16).padStart(40, '0');
const ws = 'a1b2c3d4e5f6';
const writer = '0f0f0f0f0f0f';

function record(n, extra = {}) {
  return {
    v: 1,
    id: oid(n),
    parent: n > 1 ? oid(n - 1) : null,
    tree: oid(1000 + n),
    time: 1_700_000_000_000 + n * 1000,
    session: 's1',
    turn: n,
    step: 1,
    tool: 'Bash',
    kind: 'post',
    message: '',
    stats: { added: 1, modified: 0, deleted: 0 },
    bytes: 3,
    paths: [],
    changed: 1,
    skipped: [],
    skippedCount: 0,
    ...extra,
  };
}

test('refs: a session id git takes as a ref component is kept, any other is hashed; no session is _none; parsed back', (t) => {
  t.is(plan.sessionRefPart('8514854f-2c9e-4e0a'), '8514854f-2c9e-4e0a');
  t.is(plan.sessionRefPart(null), '_none');
  for (const odd of ['../../heads/main', 'a b', 'x.lock', '.hidden', '-dash', 'ü', 'a'.repeat(101), 'a..b'])
    t.regex(plan.sessionRefPart(odd), /^h-[0-9a-f]{24}$/, odd);
  t.not(plan.sessionRefPart('a b'), plan.sessionRefPart('a c'));
  const ref = plan.exportRef(ws, 'sess-1', writer);
  t.is(ref, `refs/ckpt/v1/${ws}/sess-1/${writer}`);
  t.like(plan.parseShareRef(ref), { ws, session: 'sess-1', writer });
  t.like(plan.parseShareRef(`refs/ckpt-remote/ckpt/${ws}/sess-1/${writer}`), { ws, session: 'sess-1', writer });
  for (const bad of ['refs/heads/main', `refs/ckpt/v1/${ws}/sess-1`, `refs/ckpt/v1/XYZ/s/${writer}`, `refs/ckpt/v2/${ws}/s/${writer}`])
    t.is(plan.parseShareRef(bad), undefined, bad);
});

test('an export message redacts its texts again, keeps the transcript file name only, drops local ids, and reads back', (t) => {
  const r = record(3, {
    input: 'curl -H "Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789"',
    prompt: 'use API_KEY=sk-abcdefghijklmnopqrstuvwx1234',
    transcript: '/home/me/.claude/projects/p/8514854f.jsonl',
    formerIds: [oid(77)],
  });
  const text = plan.exportMessage(r, { ws, writer, root: oid(500) });
  t.notRegex(text, /ghp_|sk-abc/);
  t.regex(text, /Ckpt-Transcript: 8514854f\.jsonl\n/);
  t.notRegex(text, /home\/me|Former-Ids/);
  const raw = `tree ${oid(1003)}\nparent ${oid(2)}\nauthor git-ckpt <git-ckpt@localhost.invalid> 1700000003 +0000\ncommitter git-ckpt <git-ckpt@localhost.invalid> 1700000003 +0000\n\n${text}`;
  const back = plan.readExportCommit(oid(9), raw);
  t.like(back, { base: false, id: oid(9), source: r.id, ws, writer, root: oid(500) });
  t.is(back.record.turn, 3);
  t.is(back.record.session, 's1');
  t.is(recordProblem(back.record), undefined);
  // The base: no session's checkpoint, what the session started from.
  const base = plan.baseMessage('s1', r.time - 1, { ws, writer });
  const baseBack = plan.readExportCommit(oid(8), `tree ${oid(1002)}\nauthor git-ckpt <git-ckpt@localhost.invalid> 1 +0000\n\n${base}`);
  t.like(baseBack, { base: true, tree: oid(1002), session: 's1', time: r.time - 1, root: null });
  // Another author's commit, or one without the identity trailers, is none of ours.
  t.is(plan.readExportCommit(oid(7), raw.replaceAll('git-ckpt@localhost.invalid', 'me@example.com')), undefined);
  t.is(plan.readExportCommit(oid(7), raw.replace(/Ckpt-Ws: .*\n/, '')), undefined);
});

test("a session's export: its checkpoints in ledger order, the state before the first (a gone parent's tree too), other stores' left out", (t) => {
  const records = [record(1, { session: null }), record(2), record(3, { session: 's2' }), record(4, { parent: oid(3) })];
  const s1 = plan.sessionExport(records, 's1');
  t.deepEqual(
    s1.steps.map((r) => r.id),
    [oid(2), oid(4)],
  );
  t.is(s1.baseTree, records[0].tree);
  t.is(s1.baseTime, records[0].time);
  const trimmed = [record(5, { parent: null, parentTree: oid(999) })];
  t.is(plan.sessionExport(trimmed, 's1').baseTree, oid(999));
  const fetched = [record(6, { origin: { remote: 'ckpt', ws, writer, source: oid(60) } })];
  t.deepEqual(plan.sessionExport(fetched, 's1').steps, []);
});

test('the host caps: a file over 50 MB or a push over 1.5 GB, with the numbers; under them, nothing', (t) => {
  t.is(plan.capProblem([{ path: 'a', size: 49e6 }], 1.4e9), undefined);
  t.regex(
    plan.capProblem(
      [
        { path: 'big.bin', size: 60e6 },
        { path: 'b', size: 70e6 },
      ],
      1e8,
    ),
    /^b is 70 MB, over the 50 MB .* \(and 1 more\)/,
  );
  t.regex(plan.capProblem([], 1.6e9), /^this push would send 1600 MB, over the 1500 MB a push may be: nothing was sent/);
});

test("a remote's refusals in one line: hidden ref, push protection, ref cap, size, non-fast-forward, credentials, unreachable", (t) => {
  const cases = [
    ['remote: error: deny updating a hidden ref', 'hidden-ref'],
    ['remote: error: GH013: Repository rule violations found for refs/ckpt/v1/x.\nremote: - GITHUB PUSH PROTECTION', 'push-protection'],
    ['remote: error: can not update more than 5 branches or tags in one push', 'ref-cap'],
    ['fatal: pack exceeds maximum allowed size', 'size'],
    ["fatal: Authentication failed for 'https://example.com/r.git/'", 'auth'],
    ['fatal: unable to access: Could not resolve host: example.invalid', 'unreachable'],
    ['error: something else entirely', 'other'],
  ];
  for (const [stderr, kind] of cases) {
    const why = plan.pushRefusal(stderr);
    t.is(why.kind, kind, stderr);
    t.false(why.line.includes('\n'), 'one line');
  }
  t.is(plan.pushRefusal('remote: error: can not update more than 5 branches or tags').refCap, 5);
  const ff = plan.pushRefusal('', [{ flag: '!', ref: 'refs/ckpt/v1/x', summary: '[rejected] (non-fast-forward)' }]);
  t.is(ff.kind, 'non-fast-forward');
  t.regex(ff.line, /a copy of this store pushed it.*nothing is forced/);
  t.deepEqual(
    plan.parsePorcelain('To file:///r.git\n=\tabc:refs/ckpt/v1/a\t[up to date]\n!\tdef:refs/ckpt/v1/b\t[rejected] (fetch first)\nDone\n'),
    [
      { flag: '=', ref: 'refs/ckpt/v1/a', summary: '[up to date]' },
      { flag: '!', ref: 'refs/ckpt/v1/b', summary: '[rejected] (fetch first)' },
    ],
  );
  t.deepEqual(plan.missingPrerequisites(`error: Repository lacks these prerequisite commits:\nerror: ${oid(5)} \n`), [oid(5)]);
});

test('credential shapes in a file: tokens with their own prefix and key blocks are found with their line; code that names a key is not', (t) => {
  t.like(findSecret(`a\nb\nconst t = 'ghp_${'x1Y2z3'.repeat(6)}';\n`), { line: 3 });
  t.regex(findSecret('-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n').rule, /private key/);
  t.regex(findSecret('AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n').rule, /AWS/);
  for (const harmless of [
    'const key = process.env.API_KEY;\n',
    'password = input("password: ")\n',
    'postgres://user:pass@localhost/db in the docs\n',
    'export TOKEN=$TOKEN\n',
  ])
    t.is(findSecret(harmless), undefined, harmless);
});

test("S1, pure: a fetched record never answers for latest, a session or a prompt id of this workspace's; its session is named by its writer", async (t) => {
  const { resolveAddress, resolveSession, promptTurn } = await import(libPath('address'));
  const { shortSession } = await import(libPath('short-ids'));
  const origin = { remote: 'ckpt', ws, writer, source: oid(900) };
  const foreign = (n, extra = {}) => ({ ...record(n), session: plan.foreignSession('s1', writer), origin, ...extra });
  const records = [foreign(50, { agentTurn: 'p1' }), foreign(51, { parent: oid(50) }), record(1, { agentTurn: 'p1' }), record(2)];
  t.is(resolveAddress(records, 'latest').id, oid(2));
  t.is(resolveAddress(records, 'latest~1').id, oid(1));
  t.throws(() => resolveAddress(records, 'latest~2'), { message: /only 2 checkpoints exist/ });
  t.throws(() => resolveAddress([foreign(50)], 'latest'), { message: /no checkpoints yet/ });
  t.is(resolveSession(records), 's1', 'the most recent session is an own one');
  t.throws(() => resolveSession([foreign(50)]), { message: /no checkpoint belongs to a session yet/ });
  t.is(resolveSession(records, 's1'), 's1');
  t.is(resolveSession(records, 's'), 's1', 'a prefix both have names the own one');
  t.is(resolveSession(records, `s1@${writer}`), `s1@${writer}`);
  t.is(resolveSession(records, `s1@${writer.slice(0, 6)}`), `s1@${writer}`);
  t.is(resolveSession(records, shortSession(`s1@${writer}`)), `s1@${writer}`, 'what is shown resolves back to it');
  t.is(promptTurn(records, 'p1').session, 's1', "a prompt id of this workspace's is its own, whatever another store recorded");
  t.is(plan.splitForeignSession(`s1@${writer}`).session, 's1');
  t.is(plan.splitForeignSession('s1'), undefined);
});

test('S4, pure: ids of imported history must have an id shape; what agents send passes', (t) => {
  for (const good of [
    '3f1c9e2a-7b44-4c1d-9e2a-7b444c1d9e2a',
    '0199a213-81c0-7800-8aa1-bbab2a035a53',
    'ses_7a1b2c3d4e',
    'sess-1',
    '1735689600000',
    'toolu_01ABC',
    'thr_9',
    'a.b:c',
  ])
    t.is(plan.importedIdProblem(good), undefined, good);
  for (const [bad, why] of [
    ['--dangerously-skip-permissions', /option/],
    ['-x', /option/],
    ['a b', /space/],
    ['a\tb', /space/],
    ['a\nb', /space/],
    ['$(id)', /not an id/],
    ['a;b', /not an id/],
    ['x'.repeat(201), /longer than 200/],
    ['', /not an id/],
    ['a@b', /not an id/],
  ])
    t.regex(plan.importedIdProblem(bad), why, JSON.stringify(bad));
  t.regex(plan.importedRecordProblem({ ...record(1), session: '--resume' }), /session id "--resume" starts with "-"/);
  t.regex(plan.importedRecordProblem({ ...record(1), agentTurn: 'p 1' }), /agent's turn id/);
  t.regex(plan.importedRecordProblem({ ...record(1), fork: { session: '-x', turn: 1 } }), /forked-from session id/);
  t.regex(plan.importedRecordProblem({ ...record(1), agent: 'claude --yolo' }), /agent name/);
  t.is(plan.importedRecordProblem(record(1)), undefined);
});

test('S2, pure: credential shapes in any bytes: UTF-8, UTF-16 (LE or BE, with or without a mark), binary read as latin1', async (t) => {
  const { findSecretInBytes } = await import(libPath('redact'));
  const token = `ghp_${'a1B2c3D4e5'.repeat(4)}`;
  const line2 = `first line\n${token}\n`;
  t.like(findSecretInBytes(Buffer.from(line2)), { line: 2 });
  t.like(findSecretInBytes(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(line2, 'utf16le')])), { line: 2 });
  t.like(findSecretInBytes(Buffer.from(line2, 'utf16le')), { line: 2 }, 'UTF-16 LE without a mark');
  t.like(findSecretInBytes(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(line2, 'utf16le').swap16()])), { line: 2 });
  t.like(findSecretInBytes(Buffer.from(line2, 'utf16le').swap16()), { line: 2 }, 'UTF-16 BE without a mark');
  const binary = Buffer.concat([
    Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0xff, 0x10]),
    Buffer.alloc(20_000, 0xa5),
    Buffer.from(`\x01${token}\x02`),
  ]);
  t.regex(findSecretInBytes(binary).rule, /GitHub token/, 'past the first 8,000 bytes of a binary file');
  t.is(findSecretInBytes(Buffer.concat([Buffer.alloc(50), Buffer.from('process.env.GITHUB_TOKEN'), Buffer.alloc(50)])), undefined);
  t.is(findSecretInBytes(Buffer.alloc(0)), undefined);
  t.is(findSecretInBytes(Buffer.from([0xff])), undefined);
});

test('printed commands quote what a shell would otherwise read: a forgotten path is anchored and escaped, a session that looks like an option is given with =', async (t) => {
  const { shellWord, optionWords } = await import(libPath('text'));
  t.is(shellWord('sess-1'), 'sess-1');
  t.is(shellWord('a b'), "'a b'");
  t.is(shellWord("it's"), "'it'\\''s'");
  t.is(shellWord('$(id)'), "'$(id)'");
  t.is(optionWords('--session', '-x'), '--session=-x');
  t.is(optionWords('--session', 's 1'), "--session 's 1'");
  t.is(plan.sessionWords(null), '--session _none');
  t.is(plan.forgetPathCommand('config.js'), 'git ckpt forget --path /config.js');
  t.is(plan.forgetPathCommand('x; rm -rf ~/a[1]*.txt'), "git ckpt forget --path '/x; rm -rf ~/a\\[1\\]\\*.txt'");
  t.is(plan.forgetPathCommand('-n'), 'git ckpt forget --path /-n');
});
