import test from 'ava';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ROOT,
  ckpt,
  ckptJson,
  entryExists,
  firstSnapshotTaken,
  flushDaemon,
  holdLock,
  ledgerLines,
  lsTree,
  run,
  sandbox,
  sh,
  shadowGit,
  storeDir,
  treeState,
  write,
  libPath,
} from './helpers.mjs';

const ENTRY = path.join(ROOT, 'hooks', 'git-ckpt-hook');
const install = {
  ...(await import(libPath('hook-specs'))),
  ...(await import(libPath('registry'))),
};
const _payloads = await import(libPath('hook-payload'));
const address = await import(libPath('address'));
const turns = await import(libPath('turns'));

/** Run the real entry script as an agent would: payload on stdin, the agent's environment. */
function hook(box, agent, phase, payload, { env = {}, cwd = box.ws, script = ENTRY } = {}) {
  return run(box, 'sh', [script, agent, phase], { env, cwd, input: typeof payload === 'string' ? payload : JSON.stringify(payload) });
}

/** The command our handler for `event` runs, as the installed config holds it. */
function installedCommand(config, agent, event) {
  const spec = install.configWiring(agent);
  for (const item of config.hooks?.[event] ?? []) {
    for (const handler of spec.layout === 'nested' ? (item.hooks ?? []) : [item]) {
      const command = handler[spec.commandKey];
      if (typeof command === 'string' && command.includes('git-ckpt-hook')) return command;
    }
  }
  return undefined;
}

function hookLog(box) {
  const file = path.join(storeDir(box), 'hook.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

// Payloads as each agent's hook documentation gives them (the real CLIs send theirs in test/agents/).
const AGENT_CASES = {
  claude: {
    stdout: '',
    env: (box) => ({ CLAUDE_PROJECT_DIR: box.ws }),
    pre: (box) => ({
      session_id: 'abc123',
      prompt_id: 'p-1',
      transcript_path: '/x.jsonl',
      cwd: box.ws,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'file content' },
      tool_use_id: 'toolu_01ABC123',
    }),
    post: (box) => ({
      session_id: 'abc123',
      prompt_id: 'p-1',
      transcript_path: '/x.jsonl',
      cwd: box.ws,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'file content' },
      tool_response: { filePath: path.join(box.ws, 'file.txt'), success: true },
      tool_use_id: 'toolu_01ABC123',
      duration_ms: 12,
    }),
    expect: { session: 'abc123', tool: 'Write', call: 'toolu_01ABC123', input: 'file.txt' },
  },
  codex: {
    stdout: '',
    env: () => ({}),
    pre: (box) => ({
      session_id: 'thr_9',
      turn_id: 'turn_1',
      transcript_path: null,
      cwd: box.ws,
      hook_event_name: 'PreToolUse',
      model: 'gpt-5-codex',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: `echo ${'x'.repeat(300)} > file.txt` },
      tool_use_id: 'call_7',
    }),
    post: (box) => ({
      session_id: 'thr_9',
      turn_id: 'turn_1',
      transcript_path: null,
      cwd: box.ws,
      hook_event_name: 'PostToolUse',
      model: 'gpt-5-codex',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: `echo ${'x'.repeat(300)} > file.txt` },
      tool_response: 'ok',
      tool_use_id: 'call_7',
    }),
    expect: { session: 'thr_9', tool: 'Bash', call: 'call_7', input: `echo ${'x'.repeat(300)} > file.txt`.slice(0, 199) + '…' },
  },
  gemini: {
    stdout: '{}\n',
    env: (box) => ({ GEMINI_PROJECT_DIR: box.ws, GEMINI_SESSION_ID: 'gem-1', CLAUDE_PROJECT_DIR: box.ws }),
    pre: (box) => ({
      session_id: 'gem-1',
      transcript_path: '',
      cwd: box.ws,
      hook_event_name: 'BeforeTool',
      timestamp: '2026-08-21T12:00:00.000Z',
      tool_name: 'write_file',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: '…' },
    }),
    post: (box) => ({
      session_id: 'gem-1',
      transcript_path: '',
      cwd: box.ws,
      hook_event_name: 'AfterTool',
      timestamp: '2026-08-21T12:00:01.000Z',
      tool_name: 'write_file',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: '…' },
      tool_response: { llmContent: '…', returnDisplay: '…' },
    }),
    expect: { session: 'gem-1', tool: 'write_file', call: undefined, input: 'file.txt' },
  },
  cursor: {
    stdout: '{}\n',
    env: (box) => ({ CURSOR_PROJECT_DIR: box.ws, CLAUDE_PROJECT_DIR: box.ws }),
    pre: (box) => ({
      conversation_id: 'conv-5',
      generation_id: 'gen-1',
      model: 'claude-opus-4-7-thinking-max',
      hook_event_name: 'preToolUse',
      cursor_version: '2.0',
      workspace_roots: [box.ws],
      tool_name: 'Shell',
      tool_input: { command: 'npm test' },
      tool_use_id: 'abc123',
      cwd: box.ws,
    }),
    post: (box) => ({
      conversation_id: 'conv-5',
      generation_id: 'gen-1',
      model: 'claude-opus-4-7-thinking-max',
      hook_event_name: 'postToolUse',
      cursor_version: '2.0',
      workspace_roots: [box.ws],
      tool_name: 'Shell',
      tool_input: { command: 'npm test' },
      tool_output: '{"exitCode":0,"stdout":"All tests passed"}',
      tool_use_id: 'abc123',
      cwd: box.ws,
      duration: 5432,
    }),
    expect: { session: 'conv-5', tool: 'Shell', call: 'abc123', input: 'npm test' },
  },
  copilot: {
    stdout: '',
    env: () => ({}),
    pre: (box) => ({
      sessionId: 'cop-3',
      timestamp: 1736654400000,
      cwd: box.ws,
      toolName: 'bash',
      toolArgs: '{"command":"rm -rf build && touch file.txt"}',
    }),
    post: (box) => ({
      sessionId: 'cop-3',
      timestamp: 1736654401000,
      cwd: box.ws,
      toolName: 'bash',
      toolArgs: '{"command":"rm -rf build && touch file.txt"}',
      toolResult: { resultType: 'success', textResultForLlm: '' },
    }),
    expect: { session: 'cop-3', tool: 'bash', call: undefined, input: 'rm -rf build && touch file.txt' },
  },
  // As Qwen Code 0.15.10 and Droid 0.225 sent them (test/fixtures/*/hook-payloads.jsonl).
  qwen: {
    stdout: '',
    env: (box) => ({ QWEN_PROJECT_DIR: box.ws }),
    pre: (box) => ({
      session_id: 'qw-1',
      cwd: box.ws,
      hook_event_name: 'PreToolUse',
      timestamp: '2026-12-01T17:13:40.806Z',
      permission_mode: 'yolo',
      tool_name: 'write_file',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'file content' },
      tool_use_id: 'toolu_q1',
    }),
    post: (box) => ({
      session_id: 'qw-1',
      cwd: box.ws,
      hook_event_name: 'PostToolUse',
      timestamp: '2026-12-01T17:13:40.913Z',
      permission_mode: 'yolo',
      tool_name: 'write_file',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'file content' },
      tool_response: { llmContent: 'Successfully created and wrote to new file.' },
      tool_use_id: 'toolu_q1',
    }),
    expect: { session: 'qw-1', tool: 'write_file', call: 'toolu_q1', input: 'file.txt' },
  },
  droid: {
    stdout: '',
    env: (box) => ({ FACTORY_PROJECT_DIR: box.ws }),
    pre: (box) => ({
      session_id: 'dr-1',
      cwd: box.ws,
      permission_mode: 'auto-low',
      hook_event_name: 'PreToolUse',
      tool_name: 'Execute',
      tool_input: { command: 'touch file.txt', summary: 'Make a file', riskLevel: 'low' },
    }),
    post: (box) => ({
      session_id: 'dr-1',
      cwd: box.ws,
      permission_mode: 'auto-low',
      hook_event_name: 'PostToolUse',
      tool_name: 'Execute',
      tool_input: { command: 'touch file.txt', summary: 'Make a file', riskLevel: 'low' },
      tool_response: 'Command completed successfully\n\n[Process exited with code 0]',
    }),
    expect: { session: 'dr-1', tool: 'Execute', call: undefined, input: 'touch file.txt' },
  },
  // As their source sends them (test/fixtures/*-source/hook-payloads.jsonl): no CLI of theirs runs here.
  qoder: {
    stdout: '',
    env: (box) => ({ QODER_PROJECT_DIR: box.ws, CLAUDE_PROJECT_DIR: box.ws }),
    pre: (box) => ({
      session_id: 'qd-1',
      transcript_path: '/home/u/.qoder/projects/p/qd-1.jsonl',
      cwd: box.ws,
      hook_event_name: 'PreToolUse',
      permission_mode: 'default',
      tool_use_id: 'toolu_qd1',
      tool_name: 'Write',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'hi' },
    }),
    post: (box) => ({
      session_id: 'qd-1',
      transcript_path: '/home/u/.qoder/projects/p/qd-1.jsonl',
      cwd: box.ws,
      hook_event_name: 'PostToolUse',
      permission_mode: 'default',
      tool_use_id: 'toolu_qd1',
      tool_name: 'Write',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'hi' },
      tool_response: { filePath: path.join(box.ws, 'file.txt'), success: true },
    }),
    expect: { session: 'qd-1', tool: 'Write', call: 'toolu_qd1', input: 'file.txt' },
  },
  auggie: {
    stdout: '',
    env: (box) => ({ AUGMENT_PROJECT_DIR: box.ws, AUGMENT_CONVERSATION_ID: 'au-1' }),
    pre: (box) => ({
      hook_event_name: 'PreToolUse',
      conversation_id: 'au-1',
      workspace_roots: [box.ws],
      tool_name: 'save-file',
      tool_input: { path: 'file.txt', file_content: 'hi' },
      is_mcp_tool: false,
    }),
    post: (box) => ({
      hook_event_name: 'PostToolUse',
      conversation_id: 'au-1',
      workspace_roots: [box.ws],
      tool_name: 'save-file',
      tool_input: { path: 'file.txt', file_content: 'hi' },
      is_mcp_tool: false,
      tool_output: 'File saved.',
      tool_error: null,
      file_changes: [{ path: 'file.txt', changeType: 'create' }],
    }),
    expect: { session: 'au-1', tool: 'save-file', call: undefined, input: 'file.txt' },
  },
  letta: {
    stdout: '',
    env: (box) => ({ LETTA_WORKING_DIR: box.ws, LETTA_AGENT_ID: 'agent-lt-1' }),
    pre: (box) => ({
      event_type: 'PreToolUse',
      working_directory: box.ws,
      tool_name: 'Write',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'hi' },
      tool_call_id: 'toolu_lt1',
      agent_id: 'agent-lt-1',
    }),
    post: (box) => ({
      event_type: 'PostToolUse',
      working_directory: box.ws,
      tool_name: 'Write',
      tool_input: { file_path: path.join(box.ws, 'file.txt'), content: 'hi' },
      tool_call_id: 'toolu_lt1',
      tool_result: { status: 'success', output: 'Wrote file.txt' },
      agent_id: 'agent-lt-1',
    }),
    expect: { session: 'agent-lt-1', tool: 'Write', call: 'toolu_lt1', input: 'file.txt' },
  },
};

for (const [agent, c] of Object.entries(AGENT_CASES)) {
  test(`${agent}: a realistic pre/post pair through the entry script: exit 0, exact stdout, attributed checkpoint`, async (t) => {
    const box = sandbox();
    write(box, 'existing.txt', 'before\n');
    const env = c.env(box);
    const turn = await hook(box, agent, 'turn-start', { ...c.pre(box), hook_event_name: 'turn' }, { env });
    t.is(turn.code, 0);
    const pre = await hook(box, agent, 'pre', c.pre(box), { env });
    t.is(pre.code, 0);
    t.is(pre.stdout, c.stdout);
    t.is(pre.stderr, '');
    write(box, 'file.txt', `written by ${agent}\n`);
    const post = await hook(box, agent, 'post', c.post(box), { env });
    t.is(post.code, 0);
    t.is(post.stdout, c.stdout);
    t.is(post.stderr, '');
    const records = ledgerLines(box);
    const last = records.at(-1);
    t.is(last.kind, 'post');
    t.is(last.agent, agent);
    t.is(last.phase, 'post');
    t.is(last.session, c.expect.session);
    t.is(last.turn, 1);
    t.is(last.step, 1, 'pre and post of one call share a step');
    t.is(last.tool, c.expect.tool);
    t.is(last.call, c.expect.call);
    t.is(last.input, c.expect.input);
    t.deepEqual(last.paths, [{ path: 'file.txt', status: 'A' }]);
    t.is(records.filter((r) => r.kind === 'post').length, 1);
    t.is(hookLog(box), '', 'nothing to report');
  });
}

test('malformed, empty and huge payloads, and an unknown agent: exit 0, neutral stdout, an unattributed snapshot, the reason logged', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const cases = [
    ['gemini', '{not json', '{}\n', /not valid JSON/],
    ['claude', '', '', /empty payload/],
    ['cursor', JSON.stringify({ tool_input: { content: 'x'.repeat(6 * 1024 * 1024) } }), '{}\n', /empty payload/],
    ['windsurf', JSON.stringify({ trajectory_id: 't', agent_action_name: 'post_write_code' }), '', /unknown agent "windsurf"/],
    ['claude', '[1,2,3]', '', /not a JSON object/],
  ];
  for (const [i, [agent, payload, stdout, logged]] of cases.entries()) {
    write(box, 'a.txt', `${i + 2}\n`);
    const r = await hook(box, agent, 'post', payload);
    t.is(r.code, 0, agent);
    t.is(r.stdout, stdout, agent);
    t.is(r.stderr, '');
    const last = ledgerLines(box).at(-1);
    t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), `${i + 2}\n`);
    t.deepEqual(last.paths, [{ path: 'a.txt', status: i === 0 ? 'A' : 'M' }], `${agent}: the change was still captured`);
    t.is(last.session, agent === 'windsurf' ? 't' : null);
    t.regex(hookLog(box), logged);
  }
  const phase = await hook(box, 'claude', 'sideways', '{}');
  t.is(phase.code, 0);
  t.regex(hookLog(box), /unknown phase "sideways", taken as post/);
});

test('a missing git-ckpt binary, a store that cannot be created, a broken store: still exit 0 with the neutral output', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  // The script alone, away from its dist/, with a PATH that has no git-ckpt.
  const lonely = mkdtempSync(path.join(tmpdir(), 'ckpt-entry-'));
  const script = path.join(lonely, 'git-ckpt-hook');
  copyFileSync(ENTRY, script);
  const bare = { PATH: '/usr/bin:/bin' };
  for (const [agent, out] of [
    ['gemini', '{}\n'],
    ['cursor', '{}\n'],
    ['claude', ''],
    ['codex', ''],
    ['copilot', ''],
  ]) {
    const r = await hook(box, agent, 'post', JSON.stringify({ session_id: 's', cwd: box.ws }), { script, env: bare });
    t.is(r.code, 0);
    t.is(r.stdout, out, agent);
    t.is(r.stderr, '');
  }
  t.false(existsSync(box.store), 'nothing ran');

  // The store root sits below a regular file: it can never be created.
  const blocker = path.join(box.base, 'not-a-dir');
  writeFileSync(blocker, '');
  const noStore = await hook(
    box,
    'gemini',
    'post',
    { session_id: 's', cwd: box.ws },
    { env: { GIT_CKPT_HOME: path.join(blocker, 'store'), TMPDIR: box.base } },
  );
  t.is(noStore.code, 0);
  t.is(noStore.stdout, '{}\n');
  t.regex(readFileSync(path.join(box.base, 'git-ckpt-hook.log'), 'utf8'), /no checkpoint: cannot create store/);

  // A store whose ledger cannot be written (a directory in its place).
  await ckptJson(box, ['snapshot']);
  rmSync(path.join(storeDir(box), 'ledger.jsonl'));
  mkdirSync(path.join(storeDir(box), 'ledger.jsonl'));
  write(box, 'a.txt', '2\n');
  const broken = await hook(box, 'claude', 'post', { session_id: 's', cwd: box.ws });
  t.is(broken.code, 0);
  t.is(broken.stdout, '');
  t.is(broken.stderr, '');
  t.regex(hookLog(box), /no checkpoint: /);
});

test('16 parallel hook processes for one change set, and Claude hooks double-fired by Cursor: one checkpoint per real change', async (t) => {
  const box = sandbox();
  write(box, 'base.txt', 'base\n');
  await ckptJson(box, ['snapshot']);
  const before = ledgerLines(box).length;
  for (let i = 0; i < 16; i++) write(box, `agent-${i}.txt`, `${i}\n`);
  const runs = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      hook(box, 'claude', 'post', {
        session_id: 'par',
        prompt_id: 'p1',
        cwd: box.ws,
        tool_name: 'Bash',
        tool_input: { command: `step ${i}` },
        tool_use_id: `toolu_${i}`,
      }),
    ),
  );
  for (const r of runs) {
    t.is(r.code, 0);
    t.is(r.stdout, '');
  }
  const records = ledgerLines(box);
  t.is(records.length, before + 1, 'the first hook captured all 16 files; the others found nothing new');
  for (let i = 1; i < records.length; i++) t.is(records[i].parent, records[i - 1].id);
  const tree = lsTree(box, records.at(-1).id);
  for (let i = 0; i < 16; i++) t.true(tree.has(`agent-${i}.txt`));

  // Cursor runs its own hook and the one in .claude/settings.json for the same tool call.
  write(box, 'edit.txt', 'one change\n');
  const payload = {
    conversation_id: 'c1',
    generation_id: 'g1',
    tool_name: 'Write',
    tool_input: { file_path: 'edit.txt' },
    tool_use_id: 'tu_1',
    cwd: box.ws,
    workspace_roots: [box.ws],
  };
  const both = await Promise.all([hook(box, 'cursor', 'post', payload), hook(box, 'claude', 'post', payload)]);
  t.deepEqual(
    both.map((r) => r.code),
    [0, 0],
  );
  t.is(ledgerLines(box).length, before + 2);
  t.is(ledgerLines(box).at(-1).session, 'c1');
});

test('12 parallel first hooks on an empty store: all exit 0, one store, a linear chain, every change captured, no lock left', async (t) => {
  const box = sandbox();
  // The budget has its own test; twelve Node starts at once on a loaded two-core machine can outlast the default 10 s.
  writeFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\thookBudget = 25s\n', { flag: 'a' });
  write(box, 'base.txt', 'base\n');
  t.false(existsSync(box.store), 'no store yet: no snapshot was taken first');
  // Each process writes its own file, then runs the hook at once: the store is made by whichever gets there first.
  const runs = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      run(box, 'sh', ['-c', `printf '%s\\n' ${i} > agent-${i}.txt && exec sh "$0" claude post`, ENTRY], {
        input: JSON.stringify({
          session_id: 'first',
          prompt_id: 'p1',
          cwd: box.ws,
          tool_name: 'Bash',
          tool_input: { command: `step ${i}` },
          tool_use_id: `toolu_${i}`,
        }),
      }),
    ),
  );
  for (const [i, r] of runs.entries()) t.like(r, { code: 0, stdout: '', stderr: '' }, `hook ${i}`);
  t.deepEqual(
    readdirSync(box.store).filter((d) => d !== 'daemon' && !d.startsWith('hook.log')),
    [path.basename(storeDir(box))],
    'one store',
  );
  const log = hookLog(box);
  t.notRegex(log, /no checkpoint/, log);
  const records = ledgerLines(box);
  t.log(`${records.length} checkpoints for 12 hooks`);
  t.true(records.length >= 1 && records.length <= 12, `${records.length} records`);
  t.is(records[0].parent, null, 'the chain starts at the first checkpoint');
  for (let i = 1; i < records.length; i++) {
    t.is(records[i].parent, records[i - 1].id, `record ${i} chains to its predecessor`);
    t.not(records[i].tree, records[i - 1].tree, `record ${i} is a real change`);
  }
  t.true(
    records.every((r) => r.session === 'first' && r.agent === 'claude'),
    'every checkpoint is a hook one',
  );
  const tree = lsTree(box, records.at(-1).id);
  for (const file of ['base.txt', ...Array.from({ length: 12 }, (_, i) => `agent-${i}.txt`)]) t.true(tree.has(file), file);
  const dir = storeDir(box);
  for (const lock of ['lock', 'lock.break', 'index.lock', 'sessions.lock']) t.false(entryExists(path.join(dir, lock)), `no ${lock} left`);
  t.deepEqual(
    readdirSync(dir).filter((n) => n.includes('.tmp-')),
    [],
  );
  t.is((await ckpt(box, ['fsck'])).code, 0);
});

test('the hook gives up cleanly when the lock stays busy past its budget, and logs it', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  await ckptJson(box, ['snapshot']);
  // A live process holds the workspace lock.
  holdLock(t, storeDir(box));
  writeFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\thookBudget = 1500ms\n', { flag: 'a' });
  write(box, 'a.txt', '2\n');
  const started = Date.now();
  const r = await hook(box, 'codex', 'post', { session_id: 's', turn_id: 't', cwd: box.ws });
  t.log(`gave up after ${Date.now() - started} ms`);
  t.is(r.code, 0);
  t.is(r.stdout, '');
  // It waited for what was left of its 1.5 s budget, not the 30 s lock timeout: the log says which wait ran out.
  t.regex(
    hookLog(box),
    /no checkpoint: (workspace is busy: lock .* for more than [01]s|hook budget of 1500 ms ran out (before|while waiting for) the lock)/,
  );
});

test('a Codex transcript that is a FIFO, a device, a directory or a link is never opened: the hook returns within its budget and logs why', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '0\n');
  await ckptJson(box, ['snapshot']);
  // The default budget: a smaller one can run out on a loaded machine before the change is captured.
  const fifo = path.join(box.base, 'rollout.fifo');
  spawnSync('mkfifo', [fifo]);
  const dir = path.join(box.base, 'rollout.dir');
  mkdirSync(dir);
  const link = path.join(box.base, 'rollout.link');
  symlinkSync(fifo, link);
  // Before the fix the hook blocked in open() until a writer came: release it, so a failing run still ends.
  const release = setInterval(() => {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      /* no reader waiting */
    }
  }, 40_000);
  t.teardown(() => clearInterval(release));
  for (const [i, transcript] of [fifo, '/dev/zero', dir, link].entries()) {
    write(box, 'a.txt', `${i + 1}\n`);
    const started = Date.now();
    const r = await hook(box, 'codex', 'post', {
      session_id: 'cx',
      turn_id: 't1',
      transcript_path: transcript,
      cwd: box.ws,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'false' },
      tool_response: 'Exit code: 1',
      tool_use_id: `call_${i}`,
    });
    const took = Date.now() - started;
    t.is(r.code, 0);
    // Its 10 s budget and a loaded machine's process starts; a hook blocked in open() would wait for the release.
    t.true(took < 30_000, `${transcript}: returned after ${took} ms`);
    t.like(ledgerLines(box).at(-1), { call: `call_${i}`, failed: undefined }, 'the change is still captured');
    t.true(hookLog(box).includes(`transcript ${JSON.stringify(transcript)} is not a regular file`), transcript);
  }
  // A huge (sparse) transcript: only its tail is read, and the failure at its end is found.
  const huge = path.join(box.base, 'rollout.jsonl');
  const line = `\n${JSON.stringify({ type: 'event_msg', payload: { type: 'item_completed', item: { id: 'call_huge', status: 'failed', exit_code: 4 } } })}\n`;
  t.teardown(() => rmSync(huge, { force: true }));
  const fd = openSync(huge, 'w');
  writeSync(fd, line, 1024 ** 3);
  closeSync(fd);
  write(box, 'a.txt', 'huge\n');
  await hook(box, 'codex', 'post', {
    session_id: 'cx',
    turn_id: 't1',
    transcript_path: huge,
    cwd: box.ws,
    tool_name: 'Bash',
    tool_use_id: 'call_huge',
  });
  t.like(ledgerLines(box).at(-1), { call: 'call_huge', failed: true, error: 'exit code 4' });
});

test("a new store being made by another process: the hook waits for its lock within its hook budget (the default, or the user's own), not the 30 s lock timeout", async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const { storeDirFor } = await import(libPath('store'));
  // What a first snapshot in another process looks like before it has made the shadow repository.
  const store = storeDirFor(box.ws, box.env);
  mkdirSync(store, { recursive: true });
  writeFileSync(path.join(store, 'workspace'), `${box.ws}\n`);
  holdLock(t, store);
  const r = await hook(box, 'codex', 'post', { session_id: 's', turn_id: 't', cwd: box.ws });
  t.is(r.code, 0);
  // The lock wait it gave up after, as its log names it: its 10 s budget, not the 30 s lock timeout (a wall
  // clock would say it too, but the daemon pass loads 2 cores to a load average of 20: 26 s was seen).
  const gaveUp = /no checkpoint: .*busy: lock .* held by pid \d+ for more than (\d+)s\n$/.exec(hookLog(box));
  t.truthy(gaveUp, hookLog(box));
  t.true(Number(gaveUp?.[1]) <= 10, `the lock wait had ${gaveUp?.[1]} s`);
  // The user's own ckpt.hookBudget bounds that wait too (the store's config is not there to read yet).
  writeFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\thookBudget = 25s\n', { flag: 'a' });
  await hook(box, 'codex', 'post', { session_id: 's', turn_id: 't', cwd: box.ws });
  const waited = /held by pid \d+ for more than (\d+)s\n$/.exec(hookLog(box));
  t.truthy(waited, hookLog(box));
  t.true(Number(waited?.[1]) > 10, `the lock wait had ${waited?.[1]} s: more than the default budget allows`);
});

test('a payload cwd outside the workspace the hook runs in is refused unless it has a store; below it, above it in the same repository, and a known workspace are fine', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  write(box, 'sub/b.txt', '1\n');
  const elsewhere = path.join(box.base, 'elsewhere');
  mkdirSync(elsewhere);
  writeFileSync(path.join(elsewhere, 'private.txt'), "not the agent's\n");
  const post = (cwd, callId) => ({ session_id: 'cx', turn_id: 't1', cwd, tool_name: 'Bash', tool_use_id: callId });
  const storesNow = () => readdirSync(box.store).filter((d) => d !== 'backups' && d !== 'daemon' && !d.startsWith('hook.log'));

  const refused = await hook(box, 'codex', 'post', post(elsewhere, 'call_1'));
  t.is(refused.code, 0);
  t.is(refused.stdout, '');
  t.deepEqual(existsSync(box.store) ? storesNow() : [], [], 'no store for the directory the payload named, none for the hook’s own');
  const log = readFileSync(path.join(box.store, 'hook.log'), 'utf8').trim().split('\n');
  t.is(log.length, 1);
  t.regex(log[0], /no checkpoint: payload directory ".*elsewhere" refused: it is outside the workspace the hook runs in/);

  // Below the hook's directory, and above it within the same repository: the hook's workspace.
  await hook(box, 'codex', 'post', post(path.join(box.ws, 'sub'), 'call_2'));
  t.like(ledgerLines(box).at(-1), { call: 'call_2' });
  write(box, 'a.txt', '2\n');
  await hook(box, 'codex', 'post', post(box.ws, 'call_3'), { cwd: path.join(box.ws, 'sub') });
  t.like(ledgerLines(box).at(-1), { call: 'call_3' });
  t.is(storesNow().length, 1);

  // A workspace that already has a store is recorded wherever the hook runs.
  const other = sandbox();
  await ckptJson(other, ['snapshot'], { env: { GIT_CKPT_HOME: box.store } });
  write(other, 'c.txt', '1\n');
  await hook(box, 'codex', 'post', post(other.ws, 'call_4'));
  t.is(storesNow().length, 2);
});

test('git ckpt hook --help prints the help, every phase named, and records nothing', async (t) => {
  const box = sandbox();
  for (const args of [
    ['hook', '--help'],
    ['help', 'hook'],
  ]) {
    const r = await ckpt(box, args);
    t.is(r.code, 0);
    t.regex(r.stdout, /^usage: git ckpt hook /);
    t.regex(r.stdout, /pre, post, turn-start, turn-end, session-start or subagent-end/);
  }
  t.false(existsSync(box.store), 'no hook ran');
});

test('turns and steps: agent ids where given, counters where not; turn:N addresses the state before turn N', async (t) => {
  let state = turns.emptySessionState();
  const seen = [];
  const base = { agent: 'claude', via: 'claude', injected: false, subagent: null, eventTime: null };
  for (const e of [
    { phase: 'session-start', turnKey: null, callId: null },
    { phase: 'turn-start', turnKey: null, callId: null },
    { phase: 'pre', turnKey: null, callId: null },
    { phase: 'post', turnKey: null, callId: null },
    { phase: 'post', turnKey: null, callId: null },
    { phase: 'turn-end', turnKey: null, callId: null },
    { phase: 'post', turnKey: null, callId: null }, // no turn-start hook: the first call after a turn-end opens turn 3
    { phase: 'pre', turnKey: 'p9', callId: 'a' },
    { phase: 'pre', turnKey: 'p9', callId: 'b' },
    { phase: 'post', turnKey: 'p9', callId: 'a' },
    { phase: 'post', turnKey: 'p9', callId: 'b' },
  ]) {
    const n = turns.numberEvent(state, { ...base, ...e }, 0);
    state = n.state;
    seen.push([n.turn, n.step]);
  }
  t.deepEqual(seen, [
    [null, null],
    [1, null],
    [1, 1],
    [1, 1],
    [1, 2],
    [1, null],
    [2, 1],
    [3, 1],
    [3, 2],
    [3, 1],
    [3, 2],
  ]);

  const rec = (id, session, turn, kind, phase, parent) => ({ id, session, turn, kind, phase, parent });
  const records = [
    rec('a1', 's1', null, 'turn', 'session-start', null),
    rec('a2', 's1', 1, 'post', 'post', 'a1'),
    rec('a3', 's1', 2, 'post', 'post', 'a2'),
    rec('a4', 's2', 1, 'pre', 'pre', 'a3'),
    rec('a5', 's1', 4, 'turn', 'turn-start', 'a4'),
  ];
  t.is(address.resolveBeforeTurn(records, 1, 's1').id, 'a1', 'a turn opened by a post: the state before is its parent');
  t.is(address.resolveBeforeTurn(records, 2, 's1').id, 'a2');
  t.is(address.resolveBeforeTurn(records, 3, 's1').id, 'a5', 'a turn with no checkpoint: reached through the next one');
  t.is(address.resolveBeforeTurn(records, 1).id, 'a1', 'default session: the most recent one (s1)');
  t.is(address.resolveBeforeTurn(records, 1, 's2').id, 'a4', 'a turn opened by a pre: that checkpoint holds the state before');
  t.throws(() => address.resolveBeforeTurn(records, 9, 's1'), { message: /no turn 9 of session s1 \(its last turn is 4\)/ });
  t.throws(() => address.resolveAddress(records, 'turn:1@zz'), { message: /unknown session/ });
  t.is(address.resolveAddress(records, 'turn:2@s1').id, 'a2');
  t.throws(() => address.parseAddress('turn:0'), { message: /count from 1/ });
});

test('log --session (prefix) and --turn filter; show names agent, call and input', async (t) => {
  const box = sandbox();
  const send = (prompt, file, id) => {
    write(box, file, `${prompt}\n`);
    return hook(box, 'claude', 'post', {
      session_id: 'sess-42-abcdef',
      prompt_id: prompt,
      cwd: box.ws,
      tool_name: 'Edit',
      tool_input: { file_path: path.join(box.ws, file) },
      tool_use_id: id,
    });
  };
  await send('p1', 'one.txt', 't1');
  await send('p2', 'two.txt', 't2');
  await send('p2', 'three.txt', 't3');
  const turn2 = await ckptJson(box, ['log', '--session', 'sess-42', '--turn', '2']);
  t.deepEqual(
    turn2.map((r) => r.input),
    ['three.txt', 'two.txt'],
  );
  const human = await ckpt(box, ['log']);
  t.regex(human.stdout, /^── session sess-42-abcde… \(claude\) ──\nturn 2 \(before it: turn:2@sess-42-abcde\)$/m);
  const show = await ckpt(box, ['show', 'latest']);
  t.regex(show.stdout, /Agent: {3}claude \(post\) {2}Call: t3/);
  t.regex(show.stdout, /Input: {3}three\.txt/);
  t.is((await ckpt(box, ['log', '--session', 'nope'])).code, 1);
});

test('hooks install: merges into existing configs with other hooks, is idempotent, keeps a backup; uninstall gives back the rest', async (t) => {
  const box = sandbox();
  const existing = {
    // Claude Code's project hooks go into the user's own settings.local.json (the shared settings.json: below).
    claude: [
      '.claude/settings.local.json',
      {
        model: 'opus',
        hooks: {
          PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier --write' }] }],
          Notification: [{ hooks: [{ type: 'command', command: 'notify-send hi' }] }],
        },
      },
    ],
    codex: ['.codex/hooks.json', { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } }],
    gemini: [
      '.gemini/settings.json',
      {
        general: { vimMode: true },
        hooks: {
          BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ name: 'guard', type: 'command', command: 'guard.sh', timeout: 5000 }] }],
        },
      },
    ],
    cursor: [
      '.cursor/hooks.json',
      { version: 1, hooks: { afterFileEdit: [{ command: './fmt.sh' }], postToolUse: [{ command: './audit.sh', timeout: 5 }] } },
    ],
    copilot: ['.github/hooks/git-ckpt.json', undefined],
    qwen: [
      '.qwen/settings.json',
      { $version: 4, model: { name: 'qwen3-coder' }, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } },
    ],
    droid: [
      '.factory/settings.json',
      { model: 'custom:m', hooks: { PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier --write' }] }] } },
    ],
    qoder: ['.qoder/settings.local.json', { model: 'q', hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } }],
    auggie: ['.augment/settings.local.json', undefined],
    letta: [
      '.letta/settings.local.json',
      { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard.sh', timeout: 5000 }] }] } },
    ],
  };
  for (const [agent, [rel, config]] of Object.entries(existing)) {
    const file = path.join(box.ws, rel);
    if (config) write(box, rel, `${JSON.stringify(config, null, 2)}\n`);
    const r = await ckpt(box, ['hooks', 'install', '--agent', agent, '--json']);
    t.is(r.code, 0, r.stderr);
    const [result] = JSON.parse(r.stdout);
    t.true(result.changed);
    t.is(result.events.length, install.configWiring(agent).events.length);
    const merged = JSON.parse(readFileSync(file, 'utf8'));
    if (config) {
      t.deepEqual(JSON.parse(readFileSync(result.backup, 'utf8')), config, `${agent}: backup of the previous content`);
      t.true(
        result.backup.startsWith(path.join(box.store, 'backups') + path.sep),
        `${agent}: the backup is kept in the store root, outside the workspace`,
      );
      t.false(existsSync(`${file}.git-ckpt.bak`));
      t.deepEqual(install.removeHooks(merged, agent), { ...config }, `${agent}: every other setting and hook kept`);
    }
    const bytes = readFileSync(file);
    const again = JSON.parse((await ckpt(box, ['hooks', 'install', '--agent', agent, '--json'])).stdout)[0];
    t.false(again.changed);
    t.deepEqual(readFileSync(file), bytes, `${agent}: installing twice adds nothing`);
    t.deepEqual(
      install.wiredEvents(merged, agent),
      install.configWiring(agent).events.map((e) => e.event),
      `${agent}: every event is wired`,
    );
    // The installed command runs the real entry script and stays neutral: take the post handler's
    // command from the config as written, run it through a shell as the agent does, and a checkpoint
    // attributed to this agent appears with the change.
    const c = AGENT_CASES[agent];
    const postEvent = install.configWiring(agent).events.find((e) => e.phase === 'post').event;
    const command = installedCommand(merged, agent, postEvent);
    t.true(command?.includes(ENTRY), `${agent}: the command names the shipped entry script: ${command}`);
    write(box, `by-${agent}.txt`, `${agent}\n`);
    const ran = spawnSync('sh', ['-c', command], {
      cwd: box.ws,
      env: { ...box.env, ...c.env(box) },
      input: JSON.stringify(c.post(box)),
      encoding: 'utf8',
    });
    t.is(ran.status, 0, `${agent}: ${ran.stderr}`);
    t.is(ran.stdout, c.stdout, `${agent}: neutral stdout`);
    await flushDaemon(box.store);
    const made = ledgerLines(box).at(-1);
    t.is(made.agent, agent);
    t.is(made.session, c.expect.session);
    t.true(
      made.paths.some((p) => p.path === `by-${agent}.txt` && p.status === 'A'),
      `${agent}: the change is in the new checkpoint`,
    );
    t.true(lsTree(box, made.id).has(`by-${agent}.txt`));
    const off = await ckpt(box, ['hooks', 'uninstall', '--agent', agent]);
    t.is(off.code, 0, off.stderr);
    if (config) t.deepEqual(JSON.parse(readFileSync(file, 'utf8')), config, `${agent}: uninstall leaves the rest as it was`);
    else t.false(existsSync(file), 'our own file goes away when empty');
  }
  const status = JSON.parse((await ckpt(box, ['hooks', 'status', '--json'])).stdout);
  t.is(status.length, install.HOOK_AGENTS.length * 2);
  t.true(status.every((s) => s.state === 'not wired'));
  await ckpt(box, ['hooks', 'install', '--agent', 'claude,gemini']);
  const after = JSON.parse((await ckpt(box, ['hooks', 'status', '--scope', 'project', '--json'])).stdout);
  t.deepEqual(
    after.filter((s) => s.state === 'wired').map((s) => s.agent),
    ['claude', 'gemini'],
  );
});

test('hooks install refuses a config it cannot parse and leaves it untouched; user scope writes under HOME', async (t) => {
  const box = sandbox();
  write(box, '.claude/settings.json', '{ "hooks": { broken');
  const r = await ckpt(box, ['hooks', 'install', '--agent', 'claude']);
  t.is(r.code, 1);
  t.regex(r.stderr, /^git-ckpt: cannot parse .*settings\.json .*left untouched\n$/);
  t.is(readFileSync(path.join(box.ws, '.claude/settings.json'), 'utf8'), '{ "hooks": { broken');
  write(box, '.gemini/settings.json', '{"hooks": []}');
  t.regex((await ckpt(box, ['hooks', 'install', '--agent', 'gemini'])).stderr, /"hooks" is not an object; left untouched/);
  const user = await ckpt(box, ['hooks', 'install', '--agent', 'codex', '--scope', 'user']);
  t.is(user.code, 0, user.stderr);
  t.true(existsSync(path.join(box.home, '.codex/hooks.json')));
  t.is((await ckpt(box, ['hooks', 'install', '--agent', 'nobody'])).code, 2);
});

test('plugin agents (OpenCode, Kilo): hooks install writes our plugin, twice changes nothing, never overwrites a file of the user, status and uninstall', async (t) => {
  const box = sandbox();
  const file = path.join(box.ws, '.opencode/plugins/git-ckpt.js');
  const first = await ckptJson(box, ['hooks', 'install', '--agent', 'opencode']);
  t.true(first[0].changed);
  t.is(first[0].file, file);
  t.deepEqual(first[0].events, ['tool.execute.before', 'tool.execute.after', 'chat.message', 'session.idle', 'session.created']);
  const text = readFileSync(file, 'utf8');
  t.true(text.includes(`const ENTRY = ${JSON.stringify(ENTRY)};`), 'the plugin calls the shipped entry script');
  t.true(text.includes("const AGENT = 'opencode';"));
  t.false((await ckptJson(box, ['hooks', 'install', '--agent', 'opencode']))[0].changed, 'installing twice changes nothing');
  const [status] = await ckptJson(box, ['hooks', 'status', '--agent', 'opencode', '--scope', 'project']);
  t.is(status.state, 'wired');
  t.is(status.transports['tool.execute.before'], 'plugin');
  t.is(status.verdict.runs, 'yes');
  t.is(status.brokenScript, undefined);
  const human = await ckpt(box, ['hooks', 'status', '--agent', 'opencode', '--scope', 'project']);
  t.regex(human.stdout, /^opencode project\s+wired \(in the agent, through its plugin\)/);
  // An older copy of ours (another install path) is replaced, with a backup; the entry it named was gone.
  writeFileSync(file, text.replace(JSON.stringify(ENTRY), JSON.stringify('/old/place/hooks/git-ckpt-hook')));
  t.true((await ckptJson(box, ['hooks', 'status', '--agent', 'opencode', '--scope', 'project']))[0].brokenScript);
  const again = await ckptJson(box, ['hooks', 'install', '--agent', 'opencode']);
  t.true(again[0].changed);
  t.true(again[0].backup.startsWith(path.join(box.store, 'backups')));
  t.is(readFileSync(file, 'utf8'), text);
  // A plugin of the user's own at our file's place is left alone by install and by uninstall.
  write(box, '.kilo/plugin/git-ckpt.js', 'export const Mine = async () => ({});\n');
  const refused = await ckpt(box, ['hooks', 'install', '--agent', 'kilo']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /^git-ckpt: .*\.kilo\/plugin\/git-ckpt\.js is not git-ckpt's plugin; left untouched\n$/);
  t.false((await ckptJson(box, ['hooks', 'uninstall', '--agent', 'kilo']))[0].changed);
  t.is(readFileSync(path.join(box.ws, '.kilo/plugin/git-ckpt.js'), 'utf8'), 'export const Mine = async () => ({});\n');
  // User scope: under the XDG config home.
  const user = await ckptJson(box, ['hooks', 'install', '--agent', 'kilo', '--scope', 'user'], {
    env: { XDG_CONFIG_HOME: path.join(box.home, 'cfg') },
  });
  t.is(user[0].file, path.join(box.home, 'cfg', 'kilo', 'plugin', 'git-ckpt.js'));
  t.true(existsSync(user[0].file));
  // Uninstall: the file and the folders it alone needed go; a folder holding anything else stays.
  write(box, '.opencode/opencode.json', '{}\n');
  const off = await ckptJson(box, ['hooks', 'uninstall', '--agent', 'opencode']);
  t.true(off[0].changed);
  t.false(existsSync(path.join(box.ws, '.opencode/plugins')));
  t.true(existsSync(path.join(box.ws, '.opencode/opencode.json')));
  t.is((await ckptJson(box, ['hooks', 'status', '--agent', 'opencode', '--scope', 'project']))[0].state, 'not wired');
});

test('Cline: hooks install writes one hook file per event into .clinerules/hooks; a file of the user there is refused; partly wired; uninstall', async (t) => {
  const box = sandbox();
  const dir = path.join(box.ws, '.clinerules/hooks');
  const [first] = await ckptJson(box, ['hooks', 'install', '--agent', 'cline']);
  t.true(first.changed);
  t.is(first.file, dir);
  const events = ['PreToolUse', 'PostToolUse', 'TaskStart', 'TaskResume', 'TaskComplete', 'TaskCancel', 'TaskError'];
  t.deepEqual(first.events, events);
  const pre = readFileSync(path.join(dir, 'PreToolUse'), 'utf8');
  t.true(pre.startsWith('#!/bin/sh\n# git-ckpt-plugin: cline\n'));
  t.true(pre.includes(install.hookCommand(ENTRY, 'cline', 'pre')));
  // The file as Cline runs it: bash, the payload on stdin; `{}` on stdout lets the tool proceed.
  write(box, 'c.txt', 'c\n');
  const ran = spawnSync('bash', [path.join(dir, 'PostToolUse')], {
    cwd: box.ws,
    env: box.env,
    input: JSON.stringify({
      hookName: 'tool_result',
      taskId: 'conv_1',
      sessionContext: { rootSessionId: 's-cline' },
      workspaceRoots: [box.ws],
      tool_result: { id: 'c1', name: 'editor', input: { path: 'c.txt' } },
    }),
    encoding: 'utf8',
  });
  t.is(ran.stdout, '{}\n');
  await flushDaemon(box.store);
  t.like(ledgerLines(box).at(-1), { agent: 'cline', session: 's-cline', call: 'c1' });
  t.false((await ckptJson(box, ['hooks', 'install', '--agent', 'cline']))[0].changed, 'installing twice changes nothing');
  rmSync(path.join(dir, 'TaskError'));
  const [partly] = await ckptJson(box, ['hooks', 'status', '--agent', 'cline', '--scope', 'project']);
  t.is(partly.state, 'partly wired');
  t.deepEqual(partly.missing, ['TaskError']);
  write(box, '.clinerules/hooks/TaskError', '#!/bin/sh\necho mine\n');
  const refused = await ckpt(box, ['hooks', 'install', '--agent', 'cline']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /TaskError is not git-ckpt's plugin; left untouched/);
  const [off] = await ckptJson(box, ['hooks', 'uninstall', '--agent', 'cline']);
  t.true(off.changed);
  t.deepEqual(readdirSync(dir), ['TaskError'], 'only the user’s file is left');
});

test('hooks install for several agents: one config that does not parse writes none; a write that fails is reported by agent next to those written', async (t) => {
  const box = sandbox();
  write(box, '.cursor/hooks.json', '{ broken');
  const before = treeState(box.ws);
  const r = await ckpt(box, ['hooks', 'install']);
  t.is(r.code, 1);
  t.is(r.stdout, '');
  t.regex(r.stderr, /^git-ckpt: cursor: cannot parse .*\.cursor\/hooks\.json .*left untouched; no agent's config was written\n$/);
  t.is(treeState(box.ws), before, 'no other agent config was created');
  t.false(existsSync(box.store), 'and no first snapshot started');

  // Claude's config exists, so it needs a backup, under a store root that cannot be created: only Claude's write fails.
  rmSync(path.join(box.ws, '.cursor'), { recursive: true });
  write(box, '.claude/settings.local.json', '{"model": "x"}\n');
  const blocker = path.join(box.base, 'not-a-dir');
  writeFileSync(blocker, '');
  const partial = await ckpt(box, ['hooks', 'install', '--agent', 'claude,codex'], { env: { GIT_CKPT_HOME: path.join(blocker, 'store') } });
  t.is(partial.code, 1);
  t.regex(partial.stdout, /^claude +not written \(.*\): .*settings\.local\.json\ncodex +wired \d+ events: /m);
  t.regex(
    partial.stderr,
    /^git-ckpt: warning: the first snapshot was not started: cannot create store .*\ngit-ckpt: not written: claude \(.*\)\n$/,
  );
  t.is(readFileSync(path.join(box.ws, '.claude/settings.local.json'), 'utf8'), '{"model": "x"}\n');
  t.true(existsSync(path.join(box.ws, '.codex/hooks.json')));
});

test('the shipped snippets are exactly what the installer merges, and an installed command runs the entry script', async (t) => {
  for (const agent of install.CONFIG_AGENTS) {
    const shipped = JSON.parse(readFileSync(path.join(ROOT, 'hooks', `${agent}.json`), 'utf8'));
    t.deepEqual(shipped, install.mergeHooks({}, agent, '/path/to/git-ckpt/hooks/git-ckpt-hook'), agent);
  }
  const box = sandbox();
  write(box, 'x.txt', 'x\n');
  const command = install.hookCommand(ENTRY, 'gemini', 'post');
  const r = spawnSync('sh', ['-c', command], {
    cwd: box.ws,
    env: box.env,
    input: JSON.stringify({ session_id: 'g', cwd: box.ws }),
    encoding: 'utf8',
  });
  t.is(r.status, 0);
  t.is(r.stdout, '{}\n');
  t.is(ledgerLines(box).at(-1).session, 'g');
  const gone = spawnSync('sh', ['-c', install.hookCommand('/nonexistent/git-ckpt-hook', 'gemini', 'post')], {
    input: '{}',
    encoding: 'utf8',
  });
  t.is(gone.status, 0);
  t.is(gone.stdout, '');
  t.is(gone.stderr, '');
});

test('end to end: a scripted agent session with shell edits, rewound to before turn 2 in one command, every byte checked', async (t) => {
  // The session's repository exists before the session (the script's own `git init` then only
  // reinitialises it: same bytes, new mtimes), so its state can be taken before any hook runs.
  const box = sandbox();
  const gitState = (opts) => treeState(path.join(box.ws, '.git'), opts);
  const beforeSession = gitState({ mtime: false });
  const r = spawnSync('sh', [path.join(ROOT, 'bench', 'agent-session.sh'), box.ws], { env: box.env, encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.regex(r.stdout, /rewound to before turn 2 and back again, every byte checked both ways/);

  const records = ledgerLines(box);
  t.true(records.some((rec) => rec.kind === 'restore'));
  t.true(
    records.some((rec) => rec.kind === 'undo'),
    'the rewind was undone',
  );
  t.true(
    records.some((rec) => rec.prompt === 'restructure it'),
    'turns carry their prompts',
  );
  t.deepEqual(
    [...new Set(records.filter((rec) => rec.session).map((rec) => rec.turn))].filter((n) => n !== null),
    [1, 2, 3],
  );
  // The session's own git repository was never touched by any of it: not by the hooks, the
  // restore or the undo (the undo also compared with mtimes, since nothing else runs around it).
  t.is(gitState({ mtime: false }), beforeSession);
  const beforeUndo = gitState();
  const undo = await ckpt(box, ['undo']);
  t.is(undo.code, 0, undo.stderr);
  t.is(ledgerLines(box).at(-1).kind, 'undo');
  t.is(gitState(), beforeUndo);
  t.is(gitState({ mtime: false }), beforeSession);
});

// ---------------------------------------------------------------- no secret of git-ckpt in a shared file

/** A sandbox whose user config lets the daemon run (HTTP hooks need it), stopped at the test's end. */
function daemonSandbox(t) {
  const box = sandbox();
  writeFileSync(
    path.join(box.home, '.gitconfig'),
    '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\tdaemonIdle = 60s\n',
  );
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  return box;
}

const daemonTokenOf = (box) => readFileSync(path.join(box.store, 'daemon', 'token'), 'utf8').trim();
const daemonPortOf = (box) => JSON.parse(readFileSync(path.join(box.store, 'daemon', 'endpoint.json'), 'utf8')).port;
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const modeOf = (file) => (statSync(file).mode & 0o777).toString(8);

/** Every file below `dir` (no .git) whose bytes hold `needle`. */
function filesHolding(dir, needle) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    if (file.split(path.sep).includes('.git') || !entry.isFile()) continue;
    if (readFileSync(file).includes(needle)) found.push(path.relative(dir, file));
  }
  return found;
}

/** Every object of the shadow store whose content holds `needle`. */
function shadowObjectsHolding(box, needle) {
  const batch = shadowGit(box, ['cat-file', '--batch-all-objects', '--batch'], 'latin1');
  return batch.includes(needle);
}

/** An event posted as Claude Code's HTTP hook posts it, the token header filled from `token`. */
function postAsClaude(box, port, token, payload) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/hook/claude/pre',
        headers: { host: `127.0.0.1:${port}`, 'x-ckpt-token': token, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', (err) => resolve(String(err.code ?? err)));
    req.end(JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Write', cwd: box.ws, ...payload }));
  });
}

/** Claude Code's settings as an older git-ckpt wired a project: every hook and the daemon token in the shared file. */
function olderLayout(rest, { port, token }) {
  const wired = install.mergeHooks(rest, 'claude', ENTRY, 'settings.json', { port, token });
  return { ...wired, env: { ...(wired.env ?? {}), GIT_CKPT_TOKEN: token } };
}

test("Claude Code's HTTP hooks at project scope: every handler in .claude/settings.local.json, the token only in the user's settings; the shared file, the workspace and its checkpoints never hold it; the daemon's files are the user's alone", async (t) => {
  const box = daemonSandbox(t);
  write(box, 'README.md', 'hello\n');
  write(box, '.claude/settings.json', '{ "model": "opus" }\n');
  const [result] = await ckptJson(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http']);
  const token = daemonTokenOf(box);
  const port = daemonPortOf(box);
  const local = path.join(box.ws, '.claude', 'settings.local.json');
  const userSettings = path.join(box.home, '.claude', 'settings.json');
  t.is(result.file, local, 'the project wiring is the user’s own file');
  t.is(readFileSync(path.join(box.ws, '.claude', 'settings.json'), 'utf8'), '{ "model": "opus" }\n', 'the shared file untouched');
  const wired = readJson(local);
  t.like(wired.hooks.PreToolUse[0].hooks[0], { type: 'http', url: `http://127.0.0.1:${port}/hook/claude/pre` });
  t.is(wired.hooks.Stop[0].hooks[0].type, 'command');
  t.is(wired.env, undefined, 'no token in a project file');
  t.deepEqual(readJson(userSettings), { env: { GIT_CKPT_TOKEN: token } }, "the token in the user's settings");
  t.true(result.files.includes(userSettings));
  t.true(result.notices.some((n) => n.code === 'token-file' && n.text.includes(userSettings)));
  t.deepEqual(filesHolding(box.ws, token), [], 'no file of the workspace holds the token');
  // A checkpoint of the workspace as install left it: no object of the store holds the token.
  const snapshot = await ckptJson(box, ['snapshot', '-m', 'after install']);
  t.true(lsTree(box, snapshot.id).has('.claude/settings.local.json'));
  t.false(shadowObjectsHolding(box, token), 'no blob, tree or commit of the store holds the token');
  // The daemon's files: its folder the user's alone, the token, port, endpoint and socket files too.
  const daemonDir = path.join(box.store, 'daemon');
  t.is(modeOf(daemonDir), '700');
  for (const name of ['token', 'port', 'endpoint.json', 'socket']) t.is(modeOf(path.join(daemonDir, name)), '600', name);
  // The hooks as Claude Code sends them, the header filled from the user's settings: recorded.
  write(box, 'via-http.txt', 'posted\n');
  const sent = readJson(userSettings).env.GIT_CKPT_TOKEN;
  t.is(await postAsClaude(box, port, sent, { session_id: 'http-s', tool_use_id: 'h1', tool_input: { file_path: 'via-http.txt' } }), 200);
  await flushDaemon(box.store);
  t.true(ledgerLines(box).some((r) => r.session === 'http-s' && r.paths.some((p) => p.path === 'via-http.txt')));
  // Installing again changes nothing; a user-scope install shares the same token.
  t.false((await ckptJson(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http']))[0].changed);
  const [status] = await ckptJson(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project']);
  t.is(status.state, 'wired');
  t.is(status.transports.PreToolUse, 'http');
  t.deepEqual(
    status.notices.map((n) => n.code),
    ['not-ignored'],
    'a local file git would commit is named, and nothing else is wrong',
  );
});

test('an older layout (hooks and the daemon token in the shared .claude/settings.json): status flags it; install moves the hooks into settings.local.json and renews the token, which the daemon then refuses', async (t) => {
  const box = daemonSandbox(t);
  write(box, 'README.md', 'hello\n');
  await ckptJson(box, ['daemon', 'start']);
  const oldToken = daemonTokenOf(box);
  const port = daemonPortOf(box);
  const shared = path.join(box.ws, '.claude', 'settings.json');
  write(box, '.claude/settings.json', `${JSON.stringify(olderLayout({ model: 'opus' }, { port, token: oldToken }), null, 2)}\n`);
  const [before] = await ckptJson(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project']);
  t.is(before.state, 'wired', 'Claude runs the shared file’s hooks');
  t.deepEqual(before.notices.map((n) => n.code).sort(), ['shared-file', 'token-in-project-file']);
  t.true(
    before.notices.every((n) => n.text.includes('git ckpt hooks install --agent claude')),
    'each with its fix',
  );
  const human = await ckpt(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project']);
  t.regex(human.stdout, /git-ckpt's hooks are in the shared .*settings\.json, which teams commit/);

  const install1 = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http', '--json']);
  t.is(install1.code, 0, install1.stderr);
  const [result] = JSON.parse(install1.stdout);
  t.deepEqual(readJson(shared), { model: 'opus' }, 'the shared file keeps only what was the team’s');
  t.deepEqual(
    result.notices.map((n) => n.code),
    ['moved-from-shared', 'token-renewed', 'token-file', 'not-ignored'],
  );
  const newToken = daemonTokenOf(box);
  t.not(newToken, oldToken, 'a token that was in a shared file is renewed');
  t.deepEqual(readJson(path.join(box.home, '.claude', 'settings.json')).env, { GIT_CKPT_TOKEN: newToken });
  t.is(readJson(path.join(box.ws, '.claude', 'settings.local.json')).hooks.PreToolUse[0].hooks[0].type, 'http');
  t.is(daemonPortOf(box), port, 'the daemon restarted on its port');
  t.is(await postAsClaude(box, port, newToken, { session_id: 'new' }), 200);
  t.is(await postAsClaude(box, port, oldToken, { session_id: 'old' }), 401, 'the old token is refused');
  const [after] = await ckptJson(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project']);
  t.false(after.notices.some((n) => ['shared-file', 'token-in-project-file', 'token-stale', 'token-missing'].includes(n.code)));
  const again = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http']);
  t.regex(again.stdout, /already wired; nothing changed/);
  // The user's own file, as git sees it: ignored (nothing to say), or tracked (teammates would get it).
  const codes = async () =>
    (await ckptJson(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project']))[0].notices.map((n) => n.code);
  t.deepEqual(await codes(), ['not-ignored']);
  write(box, '.gitignore', '.claude/settings.local.json\n');
  t.deepEqual(await codes(), []);
  sh(box, ['add', '-f', '.claude/settings.local.json']);
  t.deepEqual(await codes(), ['tracked']);
});

test('hooks uninstall: the older layout leaves the shared file too; a config file it left empty goes, with its folder; "removed" only for what was removed', async (t) => {
  const box = daemonSandbox(t);
  // An install into a project with no .claude folder, then its uninstall: nothing of it is left.
  const first = await ckpt(box, ['hooks', 'install', '--agent', 'claude']);
  t.is(first.code, 0, first.stderr);
  const off = await ckpt(box, ['hooks', 'uninstall', '--agent', 'claude']);
  t.regex(off.stdout, /^claude +removed \(it held only git-ckpt's hooks\): .*\.claude\/settings\.local\.json/);
  t.false(existsSync(path.join(box.ws, '.claude')), 'the file it created, now empty, and its folder are gone');
  const none = await ckpt(box, ['hooks', 'uninstall', '--agent', 'claude']);
  t.regex(none.stdout, /^claude +not wired; nothing changed: /);
  t.notRegex(none.stdout, /removed/);
  // Every agent at once: "removed" on no line where nothing was.
  const all = await ckpt(box, ['hooks', 'uninstall']);
  t.notRegex(all.stdout, /removed/);

  // The older layout, HTTP and all, with settings of the user's own beside ours in the local file.
  await ckptJson(box, ['daemon', 'start']);
  const token = daemonTokenOf(box);
  const port = daemonPortOf(box);
  write(box, '.claude/settings.json', `${JSON.stringify(olderLayout({}, { port, token }), null, 2)}\n`);
  write(box, '.claude/settings.local.json', '{ "permissions": { "allow": ["Bash(ls)"] } }\n');
  const removed = await ckptJson(box, ['hooks', 'uninstall', '--agent', 'claude']);
  t.true(removed[0].changed);
  t.false(existsSync(path.join(box.ws, '.claude', 'settings.json')), 'the shared file held only ours: it goes');
  t.deepEqual(readJson(path.join(box.ws, '.claude', 'settings.local.json')), { permissions: { allow: ['Bash(ls)'] } });
  t.true(
    removed[0].notices.some((n) => n.code === 'token-renewed'),
    'the token it held is renewed all the same',
  );
  t.not(daemonTokenOf(box), token);
  const text = await ckpt(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project', '--json']);
  t.is(JSON.parse(text.stdout)[0].state, 'not wired');
});

test("a teammate's clone: the committed .claude/settings.json carries no hook, port or token of someone else's; their own install works with their own daemon", async (t) => {
  const a = daemonSandbox(t);
  write(a, 'README.md', 'hello\n');
  write(a, '.claude/settings.json', '{ "model": "opus" }\n');
  await ckptJson(a, ['hooks', 'install', '--agent', 'claude', '--transport', 'http']);
  const aToken = daemonTokenOf(a);
  const aPort = daemonPortOf(a);
  // A commits the team's settings, as Claude Code's docs suggest for settings.json.
  sh(a, ['add', 'README.md', '.claude/settings.json']);
  sh(a, ['commit', '-qm', 'team settings']);
  const committed = sh(a, ['show', 'HEAD:.claude/settings.json']).stdout;
  t.false(committed.includes(aToken), 'no token');
  t.false(committed.includes(String(aPort)), 'no port');
  t.false(committed.includes('git-ckpt'), 'no hook of ours');
  // B: another HOME and store root, a clone of A's repository.
  const b = daemonSandbox(t);
  rmSync(b.ws, { recursive: true });
  sh(b, ['clone', '-q', a.ws, b.ws], { cwd: b.base });
  const [bStatus] = await ckptJson(b, ['hooks', 'status', '--agent', 'claude', '--scope', 'project']);
  t.is(bStatus.state, 'not wired', 'nothing of A’s runs for B');
  t.deepEqual(bStatus.notices, []);
  await ckptJson(b, ['hooks', 'install', '--agent', 'claude', '--transport', 'http']);
  const bToken = daemonTokenOf(b);
  const bPort = daemonPortOf(b);
  t.not(bToken, aToken);
  t.is(
    readJson(path.join(b.ws, '.claude', 'settings.local.json')).hooks.PreToolUse[0].hooks[0].url,
    `http://127.0.0.1:${bPort}/hook/claude/pre`,
  );
  t.is(readJson(path.join(b.home, '.claude', 'settings.json')).env.GIT_CKPT_TOKEN, bToken);
  t.is(sh(b, ['status', '--porcelain', '--', '.claude/settings.json']).stdout, '', 'B’s install leaves the team’s file as committed');
  await firstSnapshotTaken(b);
  write(b, 'b.txt', 'b\n');
  t.is(await postAsClaude(b, bPort, bToken, { session_id: 'b-s', tool_input: { file_path: 'b.txt' } }), 200);
  await flushDaemon(b.store);
  t.true(ledgerLines(b).some((r) => r.session === 'b-s'));
});

test("the user's own Claude settings: CLAUDE_CONFIG_DIR is where they are; a user-scope uninstall keeps the token while a project's HTTP hooks read it, a project uninstall takes it when none does", async (t) => {
  const box = daemonSandbox(t);
  write(box, 'README.md', 'hello\n');
  const configDir = path.join(box.base, 'claude-config');
  const env = { CLAUDE_CONFIG_DIR: configDir };
  const userFile = path.join(configDir, 'settings.json');
  const [user] = await ckptJson(box, ['hooks', 'install', '--agent', 'claude', '--scope', 'user', '--transport', 'http'], { env });
  t.is(user.file, userFile);
  t.false(existsSync(path.join(box.home, '.claude', 'settings.json')));
  const token = daemonTokenOf(box);
  t.is(readJson(userFile).env.GIT_CKPT_TOKEN, token);
  await ckptJson(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http'], { env });
  const [offUser] = await ckptJson(box, ['hooks', 'uninstall', '--agent', 'claude', '--scope', 'user'], { env });
  t.true(offUser.changed);
  t.deepEqual(readJson(userFile), { env: { GIT_CKPT_TOKEN: token } }, "the project's HTTP hooks still read it");
  t.true(offUser.notices.some((n) => n.code === 'token-kept'));
  const [status] = await ckptJson(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project'], { env });
  t.false(status.notices.some((n) => n.code === 'token-missing' || n.code === 'token-stale'));
  // A token the daemon no longer has is flagged, and a new install writes the current one.
  writeFileSync(userFile, `${JSON.stringify({ env: { GIT_CKPT_TOKEN: 'f'.repeat(48) } })}\n`);
  const [stale] = await ckptJson(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project'], { env });
  t.true(stale.notices.some((n) => n.code === 'token-stale'));
  await ckptJson(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http'], { env });
  t.is(readJson(userFile).env.GIT_CKPT_TOKEN, token);
  const [offProject] = await ckptJson(box, ['hooks', 'uninstall', '--agent', 'claude'], { env });
  t.true(offProject.notices.some((n) => n.code === 'token-removed'));
  t.false(existsSync(userFile), 'the settings file held only the token: it goes');
});

test("a push withholds a checkpoint that holds git-ckpt's own daemon token, by its exact value, in a text or a binary file", async (t) => {
  const box = sandbox();
  const remote = path.join(box.base, 'remote.git');
  spawnSync('git', ['init', '-q', '--bare', remote], { env: box.env });
  const token = 'a1'.repeat(24);
  mkdirSync(path.join(box.store, 'daemon'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(box.store, 'daemon', 'token'), token, { mode: 0o600 });
  write(box, 'app.txt', 'one\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'app.txt', 'two\n');
  await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 's', '--turn', '1', '--step', '1']);
  // An older git-ckpt's project settings, captured as any file is.
  write(box, '.claude/settings.json', `{\n  "env": {\n    "GIT_CKPT_TOKEN": "${token}"\n  }\n}\n`);
  await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 's', '--turn', '2', '--step', '1']);
  await ckptJson(box, ['share', 'init', '--remote', remote]);
  const [plan] = (await ckptJson(box, ['push', '--dry-run'])).sessions;
  t.like(plan.withheld, { path: '.claude/settings.json', line: 3, count: 1, rule: "git-ckpt's daemon token" });
  t.is(plan.fresh, 1, 'the turn before it goes');
  // In a binary file (a NUL early on) too.
  const bin = sandbox();
  mkdirSync(path.join(bin.store, 'daemon'), { recursive: true });
  writeFileSync(path.join(bin.store, 'daemon', 'token'), token);
  writeFileSync(path.join(bin.ws, 'cache.bin'), Buffer.concat([Buffer.from([0, 1, 2, 0]), Buffer.from(`x${token}y`)]));
  await ckptJson(bin, ['snapshot', '--kind', 'post', '--session', 's', '--turn', '1', '--step', '1']);
  const binRemote = path.join(bin.base, 'remote.git');
  spawnSync('git', ['init', '-q', '--bare', binRemote], { env: bin.env });
  await ckptJson(bin, ['share', 'init', '--remote', binRemote]);
  const pushed = await ckpt(bin, ['push']);
  t.regex(pushed.stdout, /withheld: 1 checkpoint\(s\) from [0-9a-f]{8} on: cache\.bin line 1 looks like a git-ckpt's daemon token/);
  t.is(spawnSync('git', ['--git-dir', binRemote, 'rev-list', '--all', '--objects'], { encoding: 'utf8' }).stdout, '');
});

test("a user's Claude settings that do not parse: a command install of a project leaves them alone; an HTTP install, which must put the token there, is refused and writes nothing", async (t) => {
  const box = daemonSandbox(t);
  write(box, 'README.md', 'hello\n');
  const userFile = path.join(box.home, '.claude', 'settings.json');
  mkdirSync(path.dirname(userFile), { recursive: true });
  writeFileSync(userFile, '{ "env": { broken');
  const command = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'command']);
  t.is(command.code, 0, command.stderr);
  t.is(readFileSync(userFile, 'utf8'), '{ "env": { broken');
  const uninstalled = await ckpt(box, ['hooks', 'uninstall', '--agent', 'claude']);
  t.is(uninstalled.code, 0, uninstalled.stderr);
  const before = treeState(box.ws);
  const refused = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /^git-ckpt: cannot parse .*\.claude\/settings\.json .*left untouched\n$/);
  t.is(treeState(box.ws), before, 'no project file written');
  t.is(readFileSync(userFile, 'utf8'), '{ "env": { broken');
});

test('hooks status shows the agents wired or used here, not every agent twice; --agent all lists them all', async (t) => {
  const box = sandbox();
  const none = await ckpt(box, ['hooks', 'status']);
  t.is(none.code, 0);
  t.regex(none.stdout, /^no agent is wired here: git ckpt hooks install --agent <claude\|codex\|/);
  t.is(none.stdout.trim().split('\n').length, 1);
  t.is((await ckpt(box, ['hooks', 'install', '--agent', 'codex'])).code, 0);
  mkdirSync(path.join(box.ws, '.claude'), { recursive: true }); // Claude Code is used here, not wired
  const some = (await ckpt(box, ['hooks', 'status'])).stdout;
  t.regex(some, /^codex +project +wired/m);
  t.regex(some, /^claude +project +not wired/m);
  t.notRegex(some, /^(gemini|cursor|copilot|qwen|droid|opencode|kilo|pi|cline|qoder|auggie|letta) /m);
  const unshown = install.HOOK_AGENTS.length * 2 - 2;
  t.regex(some, new RegExp(`\\(${unshown} more not wired, and no config folder of theirs here: --agent all lists them\\)`));
  const everything = (await ckpt(box, ['hooks', 'status', '--agent', 'all'])).stdout;
  t.is(everything.split('\n').filter((line) => /^[a-z]+ +(project|user) /.test(line)).length, install.HOOK_AGENTS.length * 2);
});
