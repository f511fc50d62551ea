// Pure: turns as a tree after a rewind inside the agent, the readers of each agent's transcript, and
// what following a rewind would restore. No disk: records and transcript lines are data here.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { libPath, ROOT } from './helpers.mjs';

const FIXTURES = path.join(ROOT, 'test', 'fixtures');

const { turnTree, turnLabel, turnLabels, branchTo } = await import(libPath('turn-tree'));
const { resolveBeforeTurn, revertSelection, parseAddress, resolveAddress } = await import(libPath('address'));
// The neutral half of rewind detection, and each agent's transcript reader (its adapter's).
const detect = {
  ...(await import(libPath('rewind-detect'))),
  ...(await import(libPath('rewind'))),
  ...(await import(libPath('claude'))),
  ...(await import(libPath('codex'))),
  ...(await import(libPath('gemini'))),
};
const { rewindScope: scopeWith, rewindOutcome, pendingRewinds } = await import(libPath('rewind-plan'));
const { fileToolKind } = await import(libPath('registry'));
const rewindScope = (records, session, turn, parent, root = '/') => scopeWith(records, session, turn, parent, root, fileToolKind);
const { commitMessage, recordFromCommit } = await import(libPath('trailers'));
const { recordProblem } = await import(libPath('ledger'));

const oid = (n) => n.toString(16).padStart(40, '0');
let counter = 0;
/** A checkpoint record: `turn` is the serial, `kind` and `phase` say where in the turn it was taken. */
function rec(turn, kind, extra = {}) {
  counter += 1;
  return {
    v: 1,
    id: oid(counter),
    parent: counter > 1 ? oid(counter - 1) : null,
    tree: oid(1000 + counter),
    time: 1_000_000 + counter,
    session: 's1',
    turn,
    step: null,
    tool: null,
    kind,
    message: '',
    stats: { added: 0, modified: 1, deleted: 0 },
    bytes: 0,
    paths: [],
    changed: 1,
    skipped: [],
    skippedCount: 0,
    phase: kind === 'turn' ? 'turn-start' : kind,
    agent: 'claude',
    ...extra,
  };
}

/** Three turns, then a rewind to before turn 2 noticed in turn 4 (its first pre), then turn 5. */
function rewoundSession() {
  counter = 0;
  const records = [
    rec(1, 'turn'),
    rec(1, 'post', { tool: 'Write', paths: [{ path: 'a.txt', status: 'A' }] }),
    rec(2, 'turn'),
    rec(2, 'post', { tool: 'Bash', paths: [{ path: 'b.txt', status: 'A' }] }),
    rec(3, 'pre'),
    rec(3, 'post', { tool: 'Edit', paths: [{ path: 'a.txt', status: 'M' }] }),
    rec(4, 'turn', { phase: 'rewind', rewind: { parent: 1, kind: 'code', pending: 1, shell: 1 } }),
    rec(4, 'post', { tool: 'Write', paths: [{ path: 'c.txt', status: 'A' }] }),
    rec(5, 'turn'),
  ];
  return records;
}

test('a rewind makes turns a tree: turn:N counts the current branch, turn:N~K the one a rewind left, and log labels them so', (t) => {
  const records = rewoundSession();
  const tree = turnTree(records, 's1');
  t.deepEqual(tree.branches, [
    [1, 4, 5],
    [1, 2, 3],
  ]);
  t.deepEqual(
    tree.rewinds.map((r) => [r.turn, r.parent, r.left]),
    [[4, 1, [2, 3]]],
  );
  t.deepEqual(
    [1, 2, 3, 4, 5].map((s) => turnLabel(tree, s)),
    ['1', '2~1', '3~1', '2', '3'],
  );
  t.deepEqual(turnLabels(records), { 's1\u00001': '1', 's1\u00002': '2~1', 's1\u00003': '3~1', 's1\u00004': '2', 's1\u00005': '3' });
  // Before turn 2 of the current branch is the start of serial 4; of the branch left behind, the start of serial 2.
  t.is(resolveBeforeTurn(records, 2, 's1').id, records[6].id);
  t.is(resolveBeforeTurn(records, 2, 's1', 1).id, records[2].id);
  t.is(resolveAddress(records, 'turn:2~1@s1').id, records[2].id);
  t.is(resolveAddress(records, 'turn:3').id, records[8].id);
  t.is(resolveAddress(records, 'turn:1~1').id, records[0].id, 'a turn both branches share');
  t.deepEqual(parseAddress('turn:3~2@abc'), { kind: 'before-turn', turn: 3, back: 2, session: 'abc' });
  t.throws(() => resolveAddress(records, 'turn:2~2'), { message: /no turn 2~2 of session s1: the session was rewound once/ });
  t.throws(() => resolveAddress(records, 'turn:4'), { message: /no turn 4 of session s1 \(its last turn is 3\)/ });
  // The agent's own prompt id names a turn wherever it stands: serial 2 left behind, serial 4 now turn 2.
  const withIds = records.map((r) => ({ ...r, agentTurn: `prompt-${r.turn}` }));
  t.is(resolveAddress(withIds, 'prompt:prompt-2').id, records[2].id);
  t.is(resolveAddress(withIds, 'prompt:prompt-4').id, records[6].id);
  t.deepEqual(parseAddress('prompt:0c41df0c-c41f'), { kind: 'before-prompt', prompt: '0c41df0c-c41f' });
  t.throws(() => resolveAddress(withIds, 'prompt:nope'), { message: /unknown prompt id: "nope"/ });
  t.throws(() => parseAddress('prompt:--output=/tmp/x'), { message: /not a checkpoint address/ });
  t.throws(() => resolveAddress([...withIds, { ...withIds[1], id: oid(99), session: 's2' }], 'prompt:prompt-1'), {
    message: /prompt id "prompt-1" is in 2 sessions/,
  });
  // A turn range counts the current branch: turns 1–2 are serials 1 and 4, not the turns left behind.
  t.deepEqual(
    revertSelection(records, 'turn:1..turn:2').map((r) => r.turn),
    [4, 1],
  );
});

test('without a rewind serials are turns, as before; a second rewind shifts the first branch to ~2; a rewind to the first prompt', (t) => {
  counter = 0;
  const plain = [rec(1, 'turn'), rec(2, 'post'), rec(4, 'turn')];
  const tree = turnTree(plain, 's1');
  t.deepEqual(tree.branches, [[1, 2, 3, 4]]);
  t.deepEqual(turnLabels(plain), {}, 'no labels for a session never rewound');
  t.is(resolveBeforeTurn(plain, 3, 's1').id, plain[2].id, 'a turn without checkpoints is reached through the next one');

  const twice = [...rewoundSession(), rec(6, 'turn', { phase: 'rewind', rewind: { parent: 0, kind: 'unknown', pending: 0, shell: 0 } })];
  const tree2 = turnTree(twice, 's1');
  t.deepEqual(tree2.branches, [[6], [1, 4, 5], [1, 2, 3]]);
  t.deepEqual(
    [1, 2, 4, 5, 6].map((s) => turnLabel(tree2, s)),
    ['1~1', '2~2', '2~1', '3~1', '1'],
  );
  t.is(resolveAddress(twice, 'turn:2~2').id, twice[2].id);
  // The session state keeps the same parents, and gives the same branches without the ledger.
  t.deepEqual(branchTo(6, { 4: 1, 6: 0 }), tree2.branches[0]);
  t.deepEqual(branchTo(5, { 4: 1, 6: 0 }), tree2.branches[1]);
  t.deepEqual(branchTo(3, {}), [1, 2, 3]);
  t.is(resolveAddress(twice, 'turn:1').id, twice[9].id);
});

test('a bad rewind mark is refused by the ledger reader; a good one survives the commit trailers (fsck --rebuild-ledger)', (t) => {
  const good = rewoundSession()[6];
  t.is(recordProblem(good), undefined);
  for (const rewind of [
    { parent: 4, kind: 'code', pending: 0, shell: 0 },
    { parent: -1, kind: 'code', pending: 0, shell: 0 },
    { parent: 1, kind: 'all', pending: 0, shell: 0 },
    { parent: 1, kind: 'code', pending: 'x', shell: 0 },
    null,
  ])
    t.is(recordProblem({ ...good, rewind }), 'bad rewind', JSON.stringify(rewind));
  const raw = `tree ${good.tree}\nparent ${good.parent}\nauthor git-ckpt <git-ckpt@localhost.invalid> 0 +0000\n\n${commitMessage(good)}`;
  t.deepEqual(recordFromCommit(good.id, raw).rewind, good.rewind);
});

// Claude Code transcript lines: every user line of a turn carries its prompt id; the prompt is the first without tool results.
const user = (uuid, parentUuid, promptId, extra = {}) =>
  JSON.stringify({ type: 'user', uuid, parentUuid, promptId, isSidechain: false, message: { role: 'user', content: 'do it' }, ...extra });
const toolResult = (uuid, parentUuid, promptId) =>
  user(uuid, parentUuid, promptId, { message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] } });
const assistant = (uuid, parentUuid) =>
  JSON.stringify({ type: 'assistant', uuid, parentUuid, message: { role: 'assistant', content: [] } });

test('Claude: the new prompt’s parent tells the turn it continues from; read incrementally, failing open without evidence', (t) => {
  const turns = { p1: 1, p2: 2, p3: 3, p4: 4 };
  const turnOf = (id) => turns[id];
  let index = detect.emptyIndex('claude', '/t.jsonl');
  index = detect.indexClaudeLines(
    index,
    [user('u1', null, 'p1'), assistant('a1', 'u1'), toolResult('r1', 'a1', 'p1'), assistant('a1b', 'r1')],
    turnOf,
  );
  t.deepEqual(detect.claudeVerdict(index, 1), { rewound: false });
  t.deepEqual(detect.claudeVerdict(index, 2), { pending: true }, 'its prompt line is not written yet');
  index = detect.indexClaudeLines(
    index,
    [user('u2', 'a1b', 'p2'), assistant('a2', 'u2'), user('u3', 'a2', 'p3'), assistant('a3', 'u3')],
    turnOf,
  );
  t.deepEqual(detect.claudeVerdict(index, 3), { rewound: false });
  // The user went back to before turn 2: the next prompt hangs off turn 1's last line.
  index = detect.indexClaudeLines(index, [user('u4', 'a1b', 'p4')], turnOf);
  t.deepEqual(detect.claudeVerdict(index, 4), { rewound: true, parent: 1 });
  // To before the first prompt: no parent at all.
  turns.p5 = 5;
  index = detect.indexClaudeLines(index, [user('u5', null, 'p5')], turnOf);
  t.deepEqual(detect.claudeVerdict(index, 5), { rewound: true, parent: 0 });
  // A compaction's boundary has no parent but a logical one: no rewind.
  turns.p6 = 6;
  const boundary = JSON.stringify({ type: 'system', subtype: 'compact_boundary', uuid: 'cb', parentUuid: null, logicalParentUuid: 'u5' });
  index = detect.indexClaudeLines(index, [boundary, user('u6', 'cb', 'p6')], turnOf);
  t.deepEqual(detect.claudeVerdict(index, 6), { rewound: false });
  // A parent line never read (a transcript cut, hooks installed late) claims nothing.
  turns.p7 = 7;
  index = detect.indexClaudeLines(index, [user('u7', 'elsewhere', 'p7')], turnOf);
  t.is(detect.claudeVerdict(index, 7).rewound, false);
  // A torn or foreign line is skipped.
  t.notThrows(() => detect.indexClaudeLines(index, ['{"type":"us', '[1,2]', 'null'], turnOf));
});

test('Claude: no evidence, no claim: turns in between whose prompts the transcript never held', (t) => {
  const turnOf = (id) => ({ p1: 1, p5: 5 })[id];
  let index = detect.emptyIndex('claude', '/t.jsonl');
  index = detect.indexClaudeLines(index, [user('u1', null, 'p1'), assistant('a1', 'u1'), user('u5', 'a1', 'p5')], turnOf);
  t.deepEqual(detect.claudeVerdict(index, 5), { rewound: false, why: 'no prompt of the turns in between is in the transcript' });
});

test('a fork: Claude’s copied lines name the session and message they came from, a Codex fork’s session_meta its thread and history end; the turn is read from what git-ckpt knows of that session', (t) => {
  // The session forked from: two turns, indexed as its hooks read them.
  const parentTurns = { p1: 1, p2: 2 };
  const parent = detect.indexClaudeLines(
    detect.emptyIndex('claude', '/parent.jsonl'),
    [user('u1', null, 'p1'), assistant('a1', 'u1'), user('u2', 'a1', 'p2'), assistant('a2', 'u2')],
    (id) => parentTurns[id],
  );
  t.is(parent.fork, null, 'no fork in a session of its own');
  // Claude copies the lines up to the fork point into the new file, each with forkedFrom; then the fork's own prompt.
  const copied = (uuid, parentUuid, messageUuid, line) =>
    JSON.stringify({ ...JSON.parse(line), uuid, parentUuid, sessionId: 'fork', forkedFrom: { sessionId: 'parent', messageUuid } });
  const forked = detect.indexClaudeLines(
    detect.emptyIndex('claude', '/fork.jsonl'),
    [copied('u1', null, 'u1', user('u1', null, 'p1')), copied('a1', 'u1', 'a1', assistant('a1', 'u1')), user('f1', 'a1', 'pf1')],
    (id) => ({ pf1: 1 })[id],
  );
  t.deepEqual(forked.fork, { session: 'parent', message: 'a1' });
  t.is(detect.forkedTurn(forked.fork, parent, {}), 1, 'the fork holds the first turn of the session it came from');
  t.deepEqual(detect.claudeVerdict(forked, 1), { rewound: false }, 'a fork is no rewind');
  t.is(detect.forkedTurn({ session: 'parent', message: 'a2' }, parent, {}), 2);
  t.is(detect.forkedTurn({ session: 'parent', message: 'unknown' }, parent, {}), undefined);
  t.is(detect.forkedTurn(forked.fork, undefined, {}), undefined, 'a session git-ckpt never read: no turn');
  // Claude's --fork-session copies the lines as they are (their promptId rewritten to the fork's), then the fork's prompt.
  const asIs = detect.indexClaudeLines(
    detect.emptyIndex('claude', '/fork2.jsonl'),
    [user('u1', null, 'pg1'), assistant('a1', 'u1'), user('g1', 'a1', 'pg1')],
    (id) => ({ pg1: 1 })[id],
  );
  t.is(asIs.fork, null);
  t.deepEqual(detect.copiedFrom(asIs, parent), { lines: 2, last: 'a1' });
  t.is(detect.forkedTurn({ session: 'parent', message: 'a1' }, parent, {}), 1);
  t.is(detect.copiedFrom(detect.emptyIndex('claude', '/x'), parent), undefined);
  // A fork of that fork past its own prompt: it holds more of the fork's lines than of the first session's.
  const again = detect.indexClaudeLines(
    detect.emptyIndex('claude', '/fork3.jsonl'),
    [user('u1', null, 'ph1'), assistant('a1', 'u1'), user('f1', 'a1', 'ph1'), user('h1', 'f1', 'ph1')],
    (id) => ({ ph1: 1 })[id],
  );
  t.deepEqual(detect.copiedFrom(again, forked), { lines: 3, last: 'f1' });
  t.deepEqual(detect.copiedFrom(again, parent), { lines: 2, last: 'a1' });

  // Codex: the fork's first line; turns of the other session that started before its history end are in it.
  const meta = JSON.stringify({
    type: 'session_meta',
    ordinal: 0,
    payload: { id: 'fork', forked_from_id: 'thread', forked_from_ordinal_exclusive: 12 },
  });
  const codexFork = detect.indexCodexLines(detect.emptyIndex('codex', '/f.jsonl'), [meta]);
  t.deepEqual(codexFork.fork, { session: 'thread', ordinal: 12 });
  const thread = { ...detect.emptyIndex('codex', '/r.jsonl'), turnStarts: { 'turn-a': 3, 'turn-b': 9, 'turn-c': 15 } };
  t.is(detect.forkedTurn(codexFork.fork, thread, { 'turn-a': 1, 'turn-b': 2, 'turn-c': 3 }), 2);
  t.is(detect.forkedTurn(codexFork.fork, thread, {}), undefined, 'turn ids the hooks never numbered');
});

test('a fork mark is checked by the ledger reader and survives the commit trailers (fsck --rebuild-ledger)', (t) => {
  counter = 0;
  const good = rec(1, 'turn', { phase: 'fork', session: 'fork session', fork: { session: 'the other one', turn: 2 } });
  t.is(recordProblem(good), undefined);
  for (const fork of [{ session: '', turn: 1 }, { session: 'x', turn: -1 }, { session: 'fork session', turn: 1 }, { turn: 1 }, null])
    t.is(recordProblem({ ...good, fork }), 'bad fork', JSON.stringify(fork));
  const raw = (r) => `tree ${r.tree}\nauthor git-ckpt <git-ckpt@localhost.invalid> 0 +0000\n\n${commitMessage(r)}`;
  t.deepEqual(recordFromCommit(good.id, raw(good)).fork, good.fork);
  const unknown = { ...good, fork: { session: 'the other one', turn: null } };
  t.deepEqual(recordFromCommit(good.id, raw(unknown)).fork, unknown.fork);
});

test('Codex: thread_rolled_back drops the last N user turns of the branch; Gemini: $rewindTo drops that message and what follows', (t) => {
  const rolled = (n) => JSON.stringify({ timestamp: 't', type: 'event_msg', payload: { type: 'thread_rolled_back', num_turns: n } });
  let index = detect.indexCodexLines(detect.emptyIndex('codex', '/r.jsonl'), [
    JSON.stringify({ type: 'event_msg', payload: { type: 'user_message', message: 'x' } }),
    rolled(2),
  ]);
  t.is(index.rolledBack, 2);
  t.deepEqual(detect.continuesFrom([1, 2, 3], 3 - index.rolledBack), { rewound: true, parent: 1 });
  index = detect.indexCodexLines(index, [rolled(1)]);
  t.deepEqual(detect.continuesFrom([1, 2, 3], 0), { rewound: true, parent: 0 });
  t.deepEqual(detect.continuesFrom([1, 2, 3], 3), { rewound: false });

  const msg = (id, type = 'user') => JSON.stringify({ id, type, content: [{ text: 'x' }] });
  // Gemini 0.61 records a tool's result as a user message too: not a prompt; nor is its session context.
  const toolResult = JSON.stringify({
    id: 'f1',
    type: 'user',
    content: [{ functionResponse: { id: 'x', name: 'write_file', response: {} } }],
  });
  const context = { id: 'c0', type: 'user', content: [{ text: '<session_context>\nThis is the Gemini CLI.' }] };
  let g = detect.indexGeminiLines(detect.emptyIndex('gemini', '/s.jsonl'), [
    JSON.stringify({ $set: { messages: [context] } }),
    msg('m1'),
    toolResult,
    msg('g1', 'gemini'),
    msg('m2'),
    msg('m3'),
  ]);
  t.is(detect.geminiPrompts(g), 3);
  g = detect.indexGeminiLines(g, [JSON.stringify({ $rewindTo: 'm2' })]);
  t.is(detect.geminiPrompts(g), 1);
  // A $set replaces the conversation whole: what the CLI holds after a load or a rewind.
  g = detect.indexGeminiLines(g, [JSON.stringify({ $set: { messages: [context, JSON.parse(msg('m1')), JSON.parse(msg('m2'))] } })]);
  t.is(detect.geminiPrompts(g), 2);
  g = detect.indexGeminiLines(g, [JSON.stringify({ $rewindTo: 'unknown' })]);
  t.is(detect.geminiPrompts(g), 0, 'an id it does not hold empties the conversation, as Gemini’s loader reads it');
});

test('which event reads the transcript: Claude at its first tool call or its end, Codex and Gemini at the prompt; once a turn', (t) => {
  const e = (agent, phase, extra = {}) => ({ agent, phase, subagent: null, transcript: '/t', ...extra });
  t.is(detect.rewindCheckDue(e('claude', 'turn-start'), 2, 1), null);
  t.is(detect.rewindCheckDue(e('claude', 'pre'), 2, 1), 'claude');
  t.is(detect.rewindCheckDue(e('claude', 'turn-end'), 2, 1), 'claude');
  t.is(detect.rewindCheckDue(e('claude', 'pre'), 2, 2), null, 'already read for this turn');
  t.is(detect.rewindCheckDue(e('claude', 'pre', { subagent: { id: 'x' } }), 2, 1), null);
  t.is(detect.rewindCheckDue(e('claude', 'pre', { transcript: null }), 2, 1), null);
  t.is(detect.rewindCheckDue(e('codex', 'turn-start'), 2, 1), 'codex');
  t.is(detect.rewindCheckDue(e('codex', 'pre'), 2, 1), null);
  t.is(detect.rewindCheckDue(e('gemini', 'turn-start'), 3, 1), 'gemini');
  t.is(detect.rewindCheckDue(e('copilot', 'turn-start'), 3, 1), null);
});

test('what a rewind left: code and conversation, conversation only, and paths something else changed since', (t) => {
  const records = rewoundSession().slice(0, 6);
  const scope = rewindScope(records, 's1', 4, 1);
  t.deepEqual(scope.left, [2, 3]);
  t.is(scope.firstPosition, 2);
  t.is(scope.before.id, records[2].id);
  t.is(scope.end.id, records[5].id);
  t.deepEqual([...scope.fileToolPaths], ['a.txt']);
  const entry = (oid) => ({ mode: '100644', oid });
  const ended = [
    { path: 'a.txt', before: entry('1'), after: entry('2') },
    { path: 'b.txt', before: null, after: entry('3') },
  ];
  const writer = new Map([
    ['a.txt', records[5]],
    ['b.txt', records[3]],
  ]);
  // Claude put a.txt back; b.txt, made by Bash, is still there.
  const code = rewindOutcome(scope, 's1', 1, { now: [ended[1]], ended, uncaptured: new Set(), writer });
  t.deepEqual(code.mark, { parent: 1, kind: 'code', pending: 1, shell: 1 });
  t.deepEqual(code.restorable, ['b.txt']);
  // Conversation only: both still as the turns left them.
  const conv = rewindOutcome(scope, 's1', 1, { now: ended, ended, uncaptured: new Set(), writer });
  t.deepEqual(conv.mark, { parent: 1, kind: 'conversation', pending: 2, shell: 1 });
  // The user edited b.txt since (a pre checkpoint of the new turn changed it), and c.txt is not captured yet.
  const userEdit = rec(4, 'pre');
  const mixed = rewindOutcome(scope, 's1', 1, {
    now: [ended[1], { path: 'c.txt', before: null, after: entry('9') }],
    ended,
    uncaptured: new Set(['c.txt']),
    writer: new Map([['b.txt', userEdit]]),
  });
  t.deepEqual(mixed.restorable, []);
  t.deepEqual(
    mixed.kept.map((k) => k.path + ': ' + k.why),
    ['b.txt: changed since by you or another program', 'c.txt: changed since the last checkpoint'],
  );
  // R1: what followRewind=auto may restore. A Write named a.txt (its post also holds d.txt, edited by hand
  // while it ran); a Bash post made b.txt, deleted e.txt, and changed f.txt (maybe a hand edit as well).
  const r1 = rewoundSession().slice(0, 6);
  r1[1] = {
    ...r1[1],
    input: '/ws/a.txt',
    paths: [
      { path: 'a.txt', status: 'A' },
      { path: 'd.txt', status: 'M' },
    ],
  };
  const r1Scope = rewindScope(r1, 's1', 4, 1, '/ws');
  t.deepEqual([...r1Scope.fileToolPaths], ['a.txt'], "the file tools' inputs, not what their posts captured");
  const bash = r1[3];
  const r1Now = [
    { path: 'b.txt', before: null, after: entry('3') },
    { path: 'e.txt', before: entry('4'), after: null },
    { path: 'f.txt', before: entry('5'), after: entry('6') },
  ];
  const r1Writers = new Map(r1Now.map((c) => [c.path, bash]));
  const r1Out = rewindOutcome(r1Scope, 's1', 1, {
    now: r1Now,
    ended: r1Now,
    uncaptured: new Set(),
    writer: r1Writers,
    firstWriter: r1Writers,
  });
  t.deepEqual(r1Out.restorable, ['b.txt', 'e.txt', 'f.txt']);
  t.deepEqual(r1Out.attributed, ['b.txt', 'e.txt'], 'made by the turn, or gone: never a file the shell call found changed');
  // Only the shell wrote in the turns left behind: the workspace cannot tell which rewind it was.
  const shellOnly = rewindOutcome({ ...scope, fileToolPaths: new Set() }, 's1', 1, { now: ended, ended, uncaptured: new Set(), writer });
  t.is(shellOnly.mark.kind, 'unknown');
});

test('status tells the latest rewind that left changes, until a restore or a day passes', (t) => {
  const records = rewoundSession();
  const marker = records[6];
  t.deepEqual(pendingRewinds(records, marker.time + 1000), [
    {
      session: 's1',
      agent: 'claude',
      time: marker.time,
      turns: 'turns 2–3',
      beforeTurn: 2,
      kind: 'code',
      pending: 1,
      shell: 1,
      address: 'turn:2~1@s1',
    },
  ]);
  t.deepEqual(pendingRewinds(records, marker.time + 25 * 3600 * 1000), []);
  const restored = {
    ...rec(5, 'restore'),
    session: null,
    op: { target: oid(3), guard: oid(9), journal: 'a', counts: {}, failures: [], leftovers: 0 },
  };
  t.deepEqual(pendingRewinds([...records, restored], marker.time + 1000), []);
});

test('Claude Code 2.1.332’s own transcript (test/fixtures): three turns, then the next prompt continued from before turn 2', (t) => {
  const lines = readFileSync(path.join(FIXTURES, 'claude-2.1.332', 'rewind-transcript.jsonl'), 'utf8').split('\n');
  // The hooks number prompt ids in the order the prompts came: as UserPromptSubmit gave them.
  const serials = {};
  for (const line of lines.filter(Boolean).map((l) => JSON.parse(l)))
    if (line.type === 'user' && typeof line.message?.content === 'string') serials[line.promptId] ??= Object.keys(serials).length + 1;
  t.is(Object.keys(serials).length, 4);
  const turnOf = (id) => serials[id];
  // Read as hooks read it: at each turn's first tool call, on from where the last read stopped.
  let index = detect.emptyIndex('claude', 'fixture');
  let from = 0;
  const verdicts = [];
  for (const [serial, marker] of [
    [2, '[[ckpt t2]]'],
    [3, '[[ckpt t3]]'],
    [4, '[[ckpt t4]]'],
  ]) {
    const prompt = lines.findIndex((l) => l.includes(marker) && l.includes('"type":"user"'));
    index = detect.indexClaudeLines(index, lines.slice(from, prompt + 1), turnOf);
    from = prompt + 1;
    verdicts.push(detect.claudeVerdict(index, serial));
  }
  t.deepEqual(verdicts, [{ rewound: false }, { rewound: false }, { rewound: true, parent: 1 }]);
});

test('Codex 0.171.0’s own rollouts (test/fixtures): a revert before turn 2 starts a segment whose history ends where turn 2 started', (t) => {
  const read = (n) => readFileSync(path.join(FIXTURES, 'codex-0.171.0', `rewind-rollout-${n}.jsonl`), 'utf8').split('\n');
  // The hooks number turn ids in the order the prompts came.
  const starts = (lines) =>
    lines
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.payload?.type === 'task_started')
      .map((l) => l.payload.turn_id);
  const ids = [...starts(read(1)), ...starts(read(2))];
  t.is(ids.length, 4);
  const idOf = (serial) => ids[serial - 1];
  let index = detect.indexCodexLines(detect.emptyIndex('codex', 'first'), read(1));
  t.is(detect.codexKept([1, 2, 3], idOf, index), 3, 'the first segment alone drops nothing');
  // The fourth prompt's rollout is the new segment, read from its start; where turns started is kept.
  index = detect.indexCodexLines({ ...detect.emptyIndex('codex', 'second'), turnStarts: index.turnStarts }, read(2));
  t.is(detect.codexKept([1, 2, 3], idOf, index), 1);
  t.deepEqual(detect.continuesFrom([1, 2, 3], 1), { rewound: true, parent: 1 });
  // A turn whose start was never read, among those dropped: no claim; one before them (a long session's
  // state keeps only its recent turn ids) does not matter.
  t.is(
    detect.codexKept([1, 2, 3], (s) => (s === 2 ? 'unknown' : idOf(s)), index),
    undefined,
  );
  t.is(
    detect.codexKept([0, 1, 2, 3], (s) => (s === 0 ? undefined : idOf(s)), index),
    2,
  );
});

test('forks as Claude Code 2.1.332 and Codex 0.171.0 write them (test/fixtures): each linked to the session it came from and its turn 1', (t) => {
  // Claude: `resume turn:2`'s print-mode fork of the session above: its first lines are that session's, as they were.
  const claudeLines = (name) => readFileSync(path.join(FIXTURES, 'claude-2.1.332', name), 'utf8').split('\n');
  const serials = {};
  for (const line of claudeLines('rewind-transcript.jsonl')
    .filter(Boolean)
    .map((l) => JSON.parse(l)))
    if (line.type === 'user' && typeof line.message?.content === 'string') serials[line.promptId] ??= Object.keys(serials).length + 1;
  const parent = detect.indexClaudeLines(
    detect.emptyIndex('claude', 'parent'),
    claudeLines('rewind-transcript.jsonl'),
    (id) => serials[id],
  );
  const forkLines = claudeLines('fork-transcript.jsonl');
  const forkPrompt = JSON.parse(forkLines.find((l) => l.includes('[[ckpt t5]]') && l.includes('"type":"user"')));
  const fork = detect.indexClaudeLines(detect.emptyIndex('claude', 'fork'), forkLines, (id) =>
    id === forkPrompt.promptId ? 1 : undefined,
  );
  t.is(fork.fork, null, '--fork-session marks no line');
  const copied = detect.copiedFrom(fork, parent);
  t.is(copied.last, forkPrompt.parentUuid, 'the fork begins with the parent’s lines up to where its prompt hangs off');
  t.is(detect.forkedTurn({ session: 'parent', message: copied.last }, parent, {}), 1);
  t.is(detect.claudeVerdict(fork, 1).rewound, false);

  // Codex: the app-server's thread/fork after turn 1 of the thread whose segments are above.
  const codexLines = (name) => readFileSync(path.join(FIXTURES, 'codex-0.171.0', name), 'utf8').split('\n');
  let thread = detect.indexCodexLines(detect.emptyIndex('codex', 'first'), codexLines('rewind-rollout-1.jsonl'));
  thread = detect.indexCodexLines(
    { ...detect.emptyIndex('codex', 'second'), turnStarts: thread.turnStarts },
    codexLines('rewind-rollout-2.jsonl'),
  );
  const turnIds = [...codexLines('rewind-rollout-1.jsonl'), ...codexLines('rewind-rollout-2.jsonl')]
    .filter((l) => l.includes('task_started'))
    .map((l) => JSON.parse(l).payload.turn_id);
  const codexFork = detect.indexCodexLines(detect.emptyIndex('codex', 'fork'), codexLines('fork-rollout.jsonl'));
  const threadId = JSON.parse(codexLines('rewind-rollout-1.jsonl')[0]).payload.id;
  t.is(codexFork.fork.session, threadId);
  t.is(detect.forkedTurn(codexFork.fork, thread, Object.fromEntries(turnIds.map((id, i) => [id, i + 1]))), 1);
  t.deepEqual(
    detect.continuesFrom(
      [],
      detect.codexKept([], () => undefined, codexFork),
    ),
    { rewound: false },
    'a fork is no rewind',
  );
});

test('resume plans per agent: the resume command and the step inside it; Claude’s print-mode fork; Codex’s own fork; a turn left behind; the first prompt', async (t) => {
  const { resumePlan, forkedPlan, unforkedPlan, shellLine } = await import(libPath('resume-plan'));
  const base = { session: 'S1', turn: 3, title: 'fix it' };
  const claude = resumePlan({ ...base, agent: 'claude', resumeAt: 'u-9' });
  t.deepEqual(claude.command, ['claude', '--resume=S1']);
  t.regex(claude.steps[0], /press Esc twice, pick prompt 3 “fix it”/);
  t.is(shellLine(claude.headless), 'claude -p --resume=S1 --fork-session --resume-session-at=u-9 <your next prompt>');
  const codex = resumePlan({ ...base, agent: 'codex', previousTurnId: 'turn-2' });
  t.deepEqual(codex.fork, { threadId: 'S1', lastTurnId: 'turn-2' });
  t.deepEqual(forkedPlan(codex, 'S2').command, ['codex', 'resume', '--', 'S2']);
  t.false('fork' in forkedPlan(codex, 'S2'));
  t.regex(unforkedPlan(codex).steps[0], /press Esc twice and step back to prompt 3/);
  t.regex(resumePlan({ ...base, agent: 'gemini' }).steps[0], /type \/rewind and pick prompt 3/);
  t.deepEqual(resumePlan({ ...base, agent: 'copilot' }).command, ['copilot', '--resume=S1']);
  t.is(resumePlan({ ...base, agent: 'cursor' }), undefined);
  const left = resumePlan({ ...base, agent: 'claude', resumeAt: 'u-9', leftBehind: true });
  t.false('headless' in left);
  t.regex(left.steps[0], /on a branch a rewind left behind/);
  t.deepEqual(resumePlan({ ...base, turn: 1, agent: 'codex' }).command, ['codex']);
  t.is(shellLine(['a b', "it's", '<your next prompt>']), `'a b' 'it'\\''s' <your next prompt>`);
});

test('S4: a session id from a record never becomes an agent option, run or printed, and every printed word is quoted for the shell', async (t) => {
  const { resumePlan, forkedPlan, shellLine, resumeCommandLine } = await import(libPath('resume-plan'));
  for (const session of ['--dangerously-skip-permissions', '-p', '--yolo=true', '<x>', "a b'; rm -rf ~ #", '$(id)']) {
    const base = { session, turn: 3, title: null };
    const plans = {
      claude: resumePlan({ ...base, agent: 'claude', resumeAt: '--output-format=json' }),
      codex: resumePlan({ ...base, agent: 'codex' }),
      codexFork: forkedPlan(resumePlan({ ...base, agent: 'codex', previousTurnId: 't2' }), session),
      gemini: resumePlan({ ...base, agent: 'gemini' }),
      copilot: resumePlan({ ...base, agent: 'copilot' }),
      leftBehind: resumePlan({ ...base, agent: 'gemini', leftBehind: true }),
    };
    for (const [name, plan] of Object.entries(plans)) {
      for (const argv of [plan.command, ...(plan.headless ? [plan.headless] : [])]) {
        // Every word the agent reads as an option is one of ours, whole: the id only after `=` or after `--`.
        const dashes = argv.indexOf('--');
        const options = (dashes < 0 ? argv : argv.slice(0, dashes)).slice(1).filter((a) => a.startsWith('-'));
        for (const o of options) t.regex(o, /^(?:-p|--fork-session|--resume=.*|--resume-session-at=.*)$/s, `${name}: ${o}`);
        if (dashes >= 0) t.deepEqual(argv.slice(dashes + 1), [session], name);
        else t.true(argv.includes(`--resume=${session}`), `${name}: ${argv.join(' ')}`);
        // Printed, the shell reads back exactly these words.
        const words = spawnSync(
          'bash',
          ['-c', `for w in ${shellLine(argv.filter((a) => a !== '<your next prompt>'))}; do printf '%s\\0' "$w"; done`],
          {
            encoding: 'utf8',
          },
        ).stdout;
        t.deepEqual(
          words.split('\0').slice(0, -1),
          argv.filter((a) => a !== '<your next prompt>'),
          `${name}: ${shellLine(argv)}`,
        );
      }
    }
    const again = resumeCommandLine('turn:3', session);
    const words = spawnSync('bash', ['-c', `for w in ${again}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' }).stdout;
    t.is(words.split('\0').length, 5, again);
  }
});

test('Gemini CLI 0.61.0’s own session file (test/fixtures): after /rewind to before prompt 2, the next prompt continues from turn 1', (t) => {
  const lines = readFileSync(path.join(FIXTURES, 'gemini-cli-0.61.0', 'rewind-session.jsonl'), 'utf8').split('\n');
  const prompt4 = lines.findIndex((l) => l.includes('[[ckpt g4]]') && l.includes('"type":"user"') && !l.includes('$set'));
  // Read at each BeforeAgent, on from where the last read stopped: before prompts 2, 3 and 4.
  const at = (marker) => lines.findIndex((l) => l.includes(marker) && l.includes('"type":"user"') && !l.includes('$set'));
  let index = detect.emptyIndex('gemini', 'fixture');
  let from = 0;
  const kept = [];
  for (const cut of [at('[[ckpt g2]]'), at('[[ckpt g3]]'), prompt4]) {
    index = detect.indexGeminiLines(index, lines.slice(from, cut));
    from = cut;
    kept.push(detect.geminiPrompts(index));
  }
  t.deepEqual(kept, [1, 2, 1]);
  t.deepEqual(detect.continuesFrom([1, 2, 3], kept[2]), { rewound: true, parent: 1 });
});

test('gc keeps a rewind’s mark while a checkpoint of its turn or a later one is kept, so turn:N still counts the same branch', async (t) => {
  const { planRetention } = await import(libPath('retention'));
  const records = rewoundSession();
  const plan = (keep) =>
    planRetention({ records, now: records.at(-1).time, policy: { keep, maxAgeMs: 1e12, maxBytes: 1e15 }, storeBytes: 0 });
  // The newest two stay by the keep rule; the mark before them is held.
  const kept = plan(2).keep.map((r) => r.id);
  t.true(kept.includes(records[6].id), 'the mark');
  t.true(plan(2).protected.some((p) => p.id === records[6].id && /rewind inside the agent/.test(p.why)));
  const after = plan(2).keep;
  t.is(resolveAddress(after, 'turn:3@s1').id, records[8].id, 'turn 3 of the current branch is still serial 5');
  // A mark nothing of its branch needs goes like any other checkpoint.
  const alone = [...records.slice(0, 7)];
  const gone = planRetention({
    records: alone,
    now: alone.at(-1).time + 1e9,
    policy: { keep: 500, maxAgeMs: 1, maxBytes: 1e15 },
    storeBytes: 0,
  });
  t.false(gone.protected.some((p) => /rewind inside the agent/.test(p.why)));
});
