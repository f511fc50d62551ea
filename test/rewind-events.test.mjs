// A rewind inside the agent, through the real hook entry script and CLI: the agent's transcript is
// written here line by line as Claude Code 2.1.332, Codex 0.171 and Gemini CLI 0.61 write theirs (the
// real agents rewind in `npm run test:agents`, test/agents/rewind.test.mjs). What the hook tells the
// agent, what it marks, status, log, followRewind, resume, and bad transcripts.
import test from 'ava';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { sandbox, ckpt, ckptJson, write, storeDir, ledgerLines, treeState, hookEvent as hook, claudeSession } from './helpers.mjs';

test('Claude: the first tool call after a rewind says what the turns left behind still hold; it is marked, status and log say so; off says nothing', async (t) => {
  const box = sandbox();
  const gitBefore = treeState(path.join(box.ws, '.git'));
  const { pre } = await claudeSession(box);
  t.is(pre.code, 0);
  const out = JSON.parse(pre.stdout);
  t.deepEqual(Object.keys(out), ['systemMessage']);
  t.is(
    out.systemMessage,
    "git-ckpt: conversation rewound to before turn 2; the workspace still has turns 2–3's changes (3 files, 2 of them only by the shell): shell2.txt, shell3.txt, two.txt: git ckpt restore turn:2~1@cs1",
  );
  t.is(pre.stderr, '');
  const marks = ledgerLines(box).filter((r) => r.rewind);
  t.is(marks.length, 1);
  t.like(marks[0], {
    session: 'cs1',
    turn: 4,
    kind: 'turn',
    phase: 'rewind',
    rewind: { parent: 1, kind: 'conversation', pending: 3, shell: 2 },
  });
  const status = await ckpt(box, ['status']);
  t.regex(
    status.stdout,
    /rewound: session cs1's conversation went back to before turn 2 \(.*\); the workspace still has turns 2–3's changes \(3 files, 2 of them only by the shell\)\n\s+bring the files back too with: git ckpt restore turn:2~1@cs1/,
  );
  t.deepEqual(
    (await ckptJson(box, ['status'])).rewinds.map((r) => r.address),
    ['turn:2~1@cs1'],
  );
  const log = await ckpt(box, ['log']);
  t.regex(log.stdout, /turn 2~1 \(left by a rewind\) “turn 2” \(before it: turn:2~1@cs1\)/);
  // The turn's header says the session and the turn; its row says what happened, without the agent's name again.
  t.regex(
    log.stdout,
    /^turn 2 “turn 4” \(before it: turn:2@cs1\)\n(?: {2}.*\n)* {2}[0-9a-f]{8} .* {2}conversation rewound to before turn 2$/m,
  );
  t.notRegex(log.stdout, /claude: conversation/);
  // Turn 4 is turn 2 now: `log --turn 2` shows it, not the turn left behind.
  const turn2 = await ckptJson(box, ['log', '--turn', '2']);
  t.true(turn2.length > 0 && turn2.every((r) => r.turn === 4 && r.turnLabel === '2'));
  // The message's address is before turn 2 as it was: restoring it brings back turn 1's end.
  const dry = await ckptJson(box, ['restore', 'turn:2~1@cs1', '--delete-new', '--dry-run']);
  t.deepEqual(dry.files.map((f) => `${f.action} ${f.path}`).sort(), [
    'delete four.txt',
    'delete shell2.txt',
    'delete shell3.txt',
    'delete two.txt',
  ]);
  // Claude's prompt id of turn 2 (left behind) names the same state.
  const byPrompt = await ckptJson(box, ['restore', 'prompt:p2', '--delete-new', '--dry-run']);
  t.deepEqual(byPrompt.files, dry.files);
  t.is(byPrompt.target, dry.target);
  // A later event of the same turn reads nothing again, and says nothing.
  const again = await hook(box, 'claude', 'pre', {
    session_id: 'cs1',
    cwd: box.ws,
    transcript_path: path.join(box.base, 'claude-session.jsonl'),
    prompt_id: 'p4',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_use_id: 'c4x',
    tool_input: { command: 'true' },
  });
  t.is(again.stdout, '');
  t.is(treeState(path.join(box.ws, '.git')), gitBefore, "the user's .git is untouched");

  // followRewind=off: the rewind is still marked (turns count right), and nothing is said.
  const quiet = sandbox();
  writeFileSync(
    path.join(quiet.home, '.gitconfig'),
    `${readFileSync(path.join(quiet.home, '.gitconfig'), 'utf8')}[ckpt]\n\tfollowRewind = off\n`,
  );
  const off = await claudeSession(quiet);
  t.is(off.pre.stdout, '');
  t.is(ledgerLines(quiet).filter((r) => r.rewind).length, 1);
});

test('Claude, followRewind=auto: after a rewind that kept the code nothing is restored; after one that put back its own edits, the shell’s change is, and undo brings it back', async (t) => {
  const box = sandbox();
  writeFileSync(
    path.join(box.home, '.gitconfig'),
    `${readFileSync(path.join(box.home, '.gitconfig'), 'utf8')}[ckpt]\n\tfollowRewind = auto\n`,
  );
  // "Code and conversation": the agent puts back what its file tool wrote (two.txt) before the next prompt.
  const { pre } = await claudeSession(box, {
    beforeTurn4: async () => {
      spawnSync('rm', ['-f', path.join(box.ws, 'two.txt')]);
    },
  });
  t.is(
    JSON.parse(pre.stdout).systemMessage,
    "git-ckpt: conversation rewound to before turn 2: restored 2 files of turns 2–3, which Claude Code's rewind did not put back: shell2.txt, shell3.txt; git ckpt undo brings turns 2–3's files back",
  );
  t.false(existsSync(path.join(box.ws, 'shell2.txt')));
  t.true(existsSync(path.join(box.ws, 'four.txt')), "the new turn's own change stays");
  t.like(
    ledgerLines(box).find((r) => r.rewind),
    { rewind: { parent: 1, kind: 'code', pending: 2, shell: 2 } },
  );
  const undo = await ckpt(box, ['undo']);
  t.is(undo.code, 0, undo.stderr);
  t.is(readFileSync(path.join(box.ws, 'shell2.txt'), 'utf8'), 'shell2\n');
  // Turns 2–3 back whole: what Claude's own rewind put back (two.txt) too; the new turn's file stays.
  t.is(readFileSync(path.join(box.ws, 'two.txt'), 'utf8'), 'two\n');
  t.is(readFileSync(path.join(box.ws, 'shell3.txt'), 'utf8'), 'shell3\n');
  t.true(existsSync(path.join(box.ws, 'four.txt')));
  // The user acted: status no longer tells the rewind.
  t.deepEqual((await ckptJson(box, ['status'])).rewinds, []);
});

test('Codex: thread_rolled_back in the rollout is read at the next prompt; Gemini: $rewindTo in its session file at BeforeAgent', async (t) => {
  const box = sandbox();
  const rollout = path.join(box.base, 'rollout.jsonl');
  writeFileSync(rollout, `${JSON.stringify({ type: 'session_meta', payload: { id: 'cx1' } })}\n`);
  const base = { session_id: 'cx1', cwd: box.ws, transcript_path: rollout, model: 'gpt-5.5' };
  for (const n of [1, 2, 3]) {
    await hook(box, 'codex', 'turn-start', { ...base, turn_id: `tu${n}`, hook_event_name: 'UserPromptSubmit', prompt: `turn ${n}` });
    const call = { ...base, turn_id: `tu${n}`, tool_name: 'Bash', tool_use_id: `c${n}`, tool_input: { command: `echo > f${n}.txt` } };
    await hook(box, 'codex', 'pre', { ...call, hook_event_name: 'PreToolUse' });
    write(box, `f${n}.txt`, `${n}\n`);
    await hook(box, 'codex', 'post', { ...call, hook_event_name: 'PostToolUse', tool_response: '' });
    await hook(box, 'codex', 'turn-end', { ...base, turn_id: `tu${n}`, hook_event_name: 'Stop' });
  }
  // Esc Esc twice in the TUI: Codex drops the last two user turns and says so in the rollout at once.
  appendFileSync(
    rollout,
    `${JSON.stringify({ timestamp: 'now', type: 'event_msg', payload: { type: 'thread_rolled_back', num_turns: 2 } })}\n`,
  );
  const next = await hook(box, 'codex', 'turn-start', { ...base, turn_id: 'tu4', hook_event_name: 'UserPromptSubmit', prompt: 'turn 4' });
  t.regex(
    JSON.parse(next.stdout).systemMessage,
    /^git-ckpt: conversation rewound to before turn 2; the workspace still has turns 2–3's changes \(2 files, 2 of them only by the shell\): f2\.txt, f3\.txt/,
  );
  t.like(
    ledgerLines(box).find((r) => r.rewind),
    { session: 'cx1', turn: 4, rewind: { parent: 1 } },
  );

  const gbox = sandbox();
  const session = path.join(gbox.base, 'session.jsonl');
  const record = (value) => appendFileSync(session, `${JSON.stringify(value)}\n`);
  record({ sessionId: 'gm1', projectHash: 'x', startTime: 'now' });
  const gbase = { session_id: 'gm1', cwd: gbox.ws, transcript_path: session };
  for (const n of [1, 2]) {
    await hook(gbox, 'gemini', 'turn-start', { ...gbase, hook_event_name: 'BeforeAgent', prompt: `turn ${n}` });
    // Gemini records the prompt after BeforeAgent, as its chat sends it.
    record({ id: `m${n}`, timestamp: 'now', type: 'user', content: [{ text: `turn ${n}` }] });
    const call = { ...gbase, tool_name: 'write_file', tool_input: { file_path: path.join(gbox.ws, `g${n}.txt`) } };
    await hook(gbox, 'gemini', 'pre', { ...call, hook_event_name: 'BeforeTool' });
    write(gbox, `g${n}.txt`, `${n}\n`);
    await hook(gbox, 'gemini', 'post', { ...call, hook_event_name: 'AfterTool', tool_response: {} });
    record({ id: `r${n}`, timestamp: 'now', type: 'gemini', content: 'done' });
    await hook(gbox, 'gemini', 'turn-end', { ...gbase, hook_event_name: 'AfterAgent' });
  }
  record({ $rewindTo: 'm2' });
  const gnext = await hook(gbox, 'gemini', 'turn-start', { ...gbase, hook_event_name: 'BeforeAgent', prompt: 'turn 3' });
  t.regex(
    JSON.parse(gnext.stdout).systemMessage,
    /^git-ckpt: conversation rewound to before turn 2; the workspace still has turn 2's changes \(1 file\): g2\.txt/,
  );
});

test('resume: before turn N of a session, the files back and the agent’s command to go on from there; --print and --dry-run', async (t) => {
  const box = sandbox();
  await claudeSession(box);
  const gitBefore = treeState(path.join(box.ws, '.git'));
  const files = () => spawnSync('ls', [box.ws], { encoding: 'utf8' }).stdout.trim().split('\n');
  const was = files();
  // Turn 2 of the current branch (the prompt after the rewind).
  const dry = await ckpt(box, ['resume', 'turn:2', '--dry-run', '--print']);
  t.is(dry.code, 0, dry.stderr);
  t.regex(dry.stdout, /dry run, nothing was changed/);
  t.regex(
    dry.stdout,
    /then open the conversation with: claude --resume=cs1\n {2}and inside it: press Esc twice, pick prompt 2 “turn 4” and choose “Restore conversation”/,
  );
  // Claude's print mode goes on from the exact line before that prompt: the message turn 1 ended with.
  t.regex(dry.stdout, /claude -p --resume=cs1 --fork-session --resume-session-at=a\d+ <your next prompt>/);
  t.deepEqual(files(), was);
  // Turn 2 of the branch the rewind left: the agents reopen only the current branch, and say so.
  const left = await ckpt(box, ['resume', 'turn:2~1', '--dry-run']);
  t.regex(left.stdout, /prompt 2 is on a branch a rewind left behind, which the agent does not reopen/);
  t.notRegex(left.stdout, /--resume-session-at/);
  const json = await ckptJson(box, ['resume', 'turn:2~1', '--dry-run']);
  t.like(json, { agent: 'claude', session: 'cs1', turn: 2, title: 'turn 2', commandLine: 'claude --resume=cs1' });
  t.true(json.restore.dryRun);
  // Claude's own prompt id of that turn goes to the same place.
  const byPrompt = await ckptJson(box, ['resume', 'prompt:p2', '--session', 'cs', '--dry-run']);
  t.deepEqual({ ...byPrompt, restore: null, resumeCommand: null }, { ...json, restore: null, resumeCommand: null });
  t.deepEqual(byPrompt.restore.files, json.restore.files);
  // Not on a terminal: the files are restored and the command printed, never started. As restore does,
  // resume deletes the files that turn did not have only when asked.
  const kept = await ckpt(box, ['resume', 'turn:2~1']);
  t.is(kept.code, 0, kept.stderr);
  t.regex(kept.stdout, /leftovers: 4 \(not in the checkpoint, left alone; --delete-new removes captured ones\)/);
  t.deepEqual(files(), was, 'nothing deleted without --delete-new');
  const done = await ckpt(box, ['resume', 'turn:2~1', '--delete-new']);
  t.is(done.code, 0, done.stderr);
  t.regex(done.stdout, /now open the conversation with: claude --resume=cs1/);
  const now = files();
  t.true(now.includes('one.txt'));
  for (const gone of ['two.txt', 'shell2.txt', 'shell3.txt', 'four.txt']) t.false(now.includes(gone), gone);
  t.is(treeState(path.join(box.ws, '.git')), gitBefore);
  // Bad input: one line each, nothing changed.
  for (const [args, re, code = 1] of [
    [['resume', 'latest'], /resume goes back to a turn of an agent session: turn:N\[~K\]\[@SESSION\] or prompt:ID, not "latest"/],
    [['resume', 'turn:9'], /no turn 9 of session cs1/],
    [['resume', '--', '-rf'], /resume takes no paths after --/, 2],
    [['resume', '-x'], /not a checkpoint address: "-x" \(looks like an option\)/],
    [['resume', 'turn:1@nope'], /unknown session: "nope"/],
  ]) {
    const r = await ckpt(box, args);
    t.is(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, re);
    t.is(r.stderr.trim().split('\n').length, 1);
  }
});

test('a transcript that is missing, a FIFO or garbage costs one line in hook.log and nothing else', async (t) => {
  const box = sandbox();
  const fifo = path.join(box.base, 'fifo.jsonl');
  spawnSync('mkfifo', [fifo]);
  const garbage = path.join(box.base, 'garbage.jsonl');
  writeFileSync(garbage, '\u0000\u0001 not json\n{"type":"user","uuid":7}\n');
  for (const [n, transcript] of [
    [1, path.join(box.base, 'missing.jsonl')],
    [2, fifo],
    [3, garbage],
  ]) {
    const base = { session_id: `s${n}`, cwd: box.ws, transcript_path: transcript, prompt_id: `p${n}` };
    await hook(box, 'claude', 'turn-start', { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'go' });
    write(box, `x${n}.txt`, 'x\n');
    const pre = await hook(box, 'claude', 'pre', {
      ...base,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_use_id: `c${n}`,
      tool_input: { command: 'true' },
    });
    t.is(pre.code, 0);
    t.is(pre.stdout, '');
  }
  const log = readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8');
  t.regex(log, /fifo\.jsonl" is not a regular file; a rewind inside the agent was not looked for/);
  t.notRegex(log, /missing\.jsonl/);
  t.false(ledgerLines(box).some((r) => r.rewind));
  t.is(ledgerLines(box).filter((r) => r.kind === 'pre').length, 3, 'every event still took its checkpoint');
});

test('a fork of a Claude session is linked to the session and turn it came from, and no file is touched: /branch’s lines carry forkedFrom, --fork-session’s keep their uuids', async (t) => {
  const box = sandbox();
  const gitBefore = treeState(path.join(box.ws, '.git'));
  const { transcript } = await claudeSession(box);
  const lines = readFileSync(transcript, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  /** A fork session: `copied` lines, then its own first turn with one Bash call; resolves with its pre's run. */
  const forkSession = async (session, copied, mark) => {
    const file = path.join(box.base, `${session}.jsonl`);
    for (const l of copied) appendFileSync(file, `${JSON.stringify({ ...l, sessionId: session, ...mark(l) })}\n`);
    const prompt = { type: 'user', uuid: `${session}-1`, parentUuid: copied.at(-1).uuid, promptId: 'q1', sessionId: session };
    appendFileSync(file, `${JSON.stringify({ ...prompt, message: { role: 'user', content: 'in the fork' } })}\n`);
    const base = { session_id: session, cwd: box.ws, transcript_path: file };
    await hook(box, 'claude', 'session-start', { ...base, hook_event_name: 'SessionStart', source: 'fork' });
    await hook(box, 'claude', 'turn-start', { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'in the fork', prompt_id: 'q1' });
    const files = treeState(box.ws);
    const call = { ...base, prompt_id: 'q1', tool_name: 'Bash', tool_use_id: `${session}-k`, tool_input: { command: 'echo > f.txt' } };
    const pre = await hook(box, 'claude', 'pre', { ...call, hook_event_name: 'PreToolUse' });
    t.is(treeState(box.ws), files, 'no file touched');
    write(box, `${session}.txt`, 'fork\n');
    await hook(box, 'claude', 'post', { ...call, hook_event_name: 'PostToolUse', tool_response: {} });
    await hook(box, 'claude', 'turn-end', { ...base, hook_event_name: 'Stop', prompt_id: 'q1' });
    return pre;
  };
  // /branch after turn 1: the lines up to the fork point, each naming its source.
  const turn1 = lines.slice(
    0,
    lines.findIndex((l) => l.promptId === 'p2'),
  );
  const branched = await forkSession('cs2', turn1, (l) => ({ forkedFrom: { sessionId: 'cs1', messageUuid: l.uuid } }));
  t.is(branched.code, 0);
  t.is(branched.stdout, '', 'nothing to tell: a fork is no rewind');
  // --fork-session at cs1's last line (after turn 4, which is turn 2 of its current branch; a line cs1's own hooks
  // never read): the lines copied as they are, as Claude Code 2.1.332 writes them. cs2 holds turn 1's lines too.
  const current = lines.filter((l) => !['p2', 'p3'].includes(l.promptId) || l.type !== 'user');
  const asTheFork = (l) => (l.promptId ? { promptId: 'q1' } : {});
  const resumed = await forkSession('cs3', current, asTheFork);
  t.is(resumed.stdout, '');
  // --fork-session after turn 1 again: cs2 and cs3 hold those lines too, but they are forks themselves.
  await forkSession('cs5', turn1, asTheFork);

  const marks = ledgerLines(box).filter((r) => r.fork);
  t.is(marks.length, 3, 'each fork marked once');
  t.like(marks[0], { session: 'cs2', turn: 1, kind: 'turn', phase: 'fork', fork: { session: 'cs1', turn: 1 } });
  t.like(marks[1], { session: 'cs3', turn: 1, phase: 'fork', fork: { session: 'cs1', turn: 4 } });
  t.like(marks[2], { session: 'cs5', fork: { session: 'cs1', turn: 1 } });
  t.false(ledgerLines(box).some((r) => ['cs2', 'cs3'].includes(r.session) && r.rewind));
  const log = await ckpt(box, ['log']);
  t.regex(log.stdout, /── session cs2 \(claude\) forked from cs1 after its turn 1 ──\nturn 1 “in the fork”/);
  t.regex(log.stdout, /^ {2}[0-9a-f]{8} .* fork .* {2}forked from session cs1 after its turn 1$/m);
  t.regex(log.stdout, /── session cs3 \(claude\) forked from cs1 after its turn 2 ──\nturn 1/);
  const views = (await ckptJson(box, ['log', '--json'])).filter((r) => r.fork);
  t.deepEqual(
    views.map((v) => v.fork),
    [
      { session: 'cs1', turn: 1, turnLabel: '1' },
      { session: 'cs1', turn: 4, turnLabel: '2' },
      { session: 'cs1', turn: 1, turnLabel: '1' },
    ],
  );
  const show = await ckpt(box, ['show', marks[0].id, '--stat']);
  t.regex(show.stdout, /Fork: {4}of session cs1, after its turn 1/);
  t.false((await ckptJson(box, ['status'])).rewinds.some((r) => r.session !== 'cs1'));

  // A fork of a session git-ckpt never saw: one line in hook.log, no link.
  const stranger = [{ type: 'user', uuid: 'x1', parentUuid: null, promptId: 'z', message: { role: 'user', content: 'elsewhere' } }];
  await forkSession('cs4', stranger, () => ({}));
  t.false(ledgerLines(box).some((r) => r.session === 'cs4' && r.fork));
  t.regex(readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8'), /claude pre cs4: this session is a fork of one git-ckpt never read/);
  t.is(treeState(path.join(box.ws, '.git')), gitBefore, "the user's .git is untouched");
});

test('R1: followRewind=auto restores only what the abandoned turn made for certain; a hand edit made while its shell call ran is left, named with its command; undo brings the turn back, what the agent put back too', async (t) => {
  const box = sandbox();
  writeFileSync(
    path.join(box.home, '.gitconfig'),
    `${readFileSync(path.join(box.home, '.gitconfig'), 'utf8')}[ckpt]\n\tfollowRewind = auto\n`,
  );
  write(box, 'notes.md', 'v1\n');
  await ckptJson(box, ['snapshot', '-m', 'base']);
  const rollout = path.join(box.base, 'rollout.jsonl');
  writeFileSync(rollout, `${JSON.stringify({ type: 'session_meta', payload: { id: 'cx-r1' } })}\n`);
  const base = { session_id: 'cx-r1', cwd: box.ws, transcript_path: rollout, model: 'gpt-5.5' };
  const call = async (turn, id, tool, input, act) => {
    const payload = { ...base, turn_id: `tu${turn}`, tool_name: tool, tool_use_id: id, tool_input: input };
    await hook(box, 'codex', 'pre', { ...payload, hook_event_name: 'PreToolUse' });
    act();
    await hook(box, 'codex', 'post', { ...payload, hook_event_name: 'PostToolUse', tool_response: '' });
  };
  const turn = async (n, calls) => {
    await hook(box, 'codex', 'turn-start', { ...base, turn_id: `tu${n}`, hook_event_name: 'UserPromptSubmit', prompt: `turn ${n}` });
    await calls();
    await hook(box, 'codex', 'turn-end', { ...base, turn_id: `tu${n}`, hook_event_name: 'Stop' });
  };
  await turn(1, () => call(1, 'c1', 'Bash', { command: 'echo one > one.txt' }, () => write(box, 'one.txt', 'one\n')));
  const patch = '*** Begin Patch\n*** Add File: code.txt\n+code\n*** End Patch\n';
  await turn(2, async () => {
    await call(2, 'c2', 'apply_patch', { command: patch }, () => write(box, 'code.txt', 'code\n'));
    // `npm test` runs; meanwhile the user edits notes.md by hand.
    await call(2, 'c3', 'Bash', { command: 'npm test' }, () => {
      write(box, 'test-output.txt', 'ok\n');
      write(box, 'notes.md', 'v2, my own edit\n');
    });
  });
  // Codex backtracks to before turn 2 and takes back its patch.
  appendFileSync(rollout, `${JSON.stringify({ type: 'event_msg', payload: { type: 'thread_rolled_back', num_turns: 1 } })}\n`);
  spawnSync('rm', ['-f', path.join(box.ws, 'code.txt')]);
  const next = await hook(box, 'codex', 'turn-start', { ...base, turn_id: 'tu3', hook_event_name: 'UserPromptSubmit', prompt: 'turn 3' });
  t.is(
    JSON.parse(next.stdout).systemMessage,
    "git-ckpt: conversation rewound to before turn 2: restored 1 file of turn 2, which Codex CLI's rewind did not put back: test-output.txt; left for you, changed while a tool call of turn 2 ran but not made by it for certain (it may be your own edit): notes.md: git ckpt restore turn:2~1@cx-r1 -- notes.md; git ckpt undo brings turn 2's files back",
  );
  t.is(readFileSync(path.join(box.ws, 'notes.md'), 'utf8'), 'v2, my own edit\n', 'the hand edit stays');
  t.false(existsSync(path.join(box.ws, 'test-output.txt')), 'what the shell call made goes');
  // The command the message names restores the rest, and only it.
  const rest = await ckptJson(box, ['restore', 'turn:2~1@cx-r1', '--dry-run', '--', 'notes.md']);
  t.deepEqual(
    rest.files.map((f) => `${f.action} ${f.path}`),
    ['restore notes.md'],
  );
  // Undo brings turn 2's files back: what git-ckpt restored, and what Codex's own rewind took back.
  const undo = await ckpt(box, ['undo']);
  t.is(undo.code, 0, undo.stderr);
  t.is(readFileSync(path.join(box.ws, 'test-output.txt'), 'utf8'), 'ok\n');
  t.is(readFileSync(path.join(box.ws, 'code.txt'), 'utf8'), 'code\n', 'the patch Codex took back is back');
  t.is(readFileSync(path.join(box.ws, 'notes.md'), 'utf8'), 'v2, my own edit\n');
  // And again: redo goes back to the rewind's state.
  const redo = await ckpt(box, ['undo']);
  t.is(redo.code, 0, redo.stderr);
  t.false(existsSync(path.join(box.ws, 'test-output.txt')));
  t.false(existsSync(path.join(box.ws, 'code.txt')));
  t.is(readFileSync(path.join(box.ws, 'notes.md'), 'utf8'), 'v2, my own edit\n');
});
