// The in-process agents' plugin (hooks/bus-plugin.js, for OpenCode and Kilo) fed the events the real
// OpenCode 1.18.33 gave a probe plugin (test/fixtures/opencode-1.18.33), and what git-ckpt reads from
// what it forwards: one payload layer, the real plugin code, no agent needed.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, libPath, waitFor } from './helpers.mjs';

const { parseHookPayload } = await import(libPath('hook-payload'));
const { pluginText, isOurPlugin, pluginEntry } = await import(libPath('plugin-specs'));

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'opencode-1.18.33', 'plugin-events.jsonl');
const template = (name) => readFileSync(path.join(ROOT, 'hooks', name), 'utf8');
const TRANSPORT = template('plugin-transport.js');
const ADAPTER = { opencode: template('bus-plugin.js'), kilo: template('bus-plugin.js'), pi: template('pi-extension.js') };
const SESSION = 'ses_dcd96a268ffeyfUlCMVpc45KBG';

/**
 * The plugin as `hooks install` writes it, calling a recorder instead of the entry script: each call
 * appends `<agent> <phase> <payload>` to a file. Returns the plugin's hooks and what it recorded.
 */
const made = [];
// A store root of its own with no daemon in it: the plugin talks to the daemon it finds there first, and these
// tests watch what reaches the entry script.
process.env.GIT_CKPT_HOME = mkdtempSync(path.join(tmpdir(), 'ckpt-plugin-home-'));
made.push(process.env.GIT_CKPT_HOME);
test.after.always(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

async function loadPlugin(agent, { entryExists = true } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-plugin-'));
  made.push(dir);
  const record = path.join(dir, 'calls.txt');
  const entry = path.join(dir, 'git-ckpt-hook');
  // One printf per call: posts run concurrently, and one append each keeps their lines whole.
  if (entryExists) writeFileSync(entry, `p=$(cat); printf '%s %s %s\\n' "$1" "$2" "$p" >> ${JSON.stringify(record)}\n`);
  const file = path.join(dir, 'git-ckpt.mjs');
  writeFileSync(file, pluginText(TRANSPORT, ADAPTER[agent], agent, entry));
  const logs = [];
  const mod = await import(pathToFileURL(file).href);
  let hooks;
  if (agent === 'pi') {
    // pi calls the default export with its API; handlers get (event, ctx).
    hooks = {};
    mod.default({ on: (name, handler) => (hooks[name] = handler) });
  }
  // The plugin runs the entry script in the agent's directory, which must exist.
  else
    hooks = await mod.GitCkpt({
      directory: dir,
      worktree: dir,
      client: { app: { log: async (m) => logs.push(m) } },
    });
  const calls = () =>
    existsSync(record)
      ? readFileSync(record, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const [a, phase, ...rest] = line.split(' ');
            return { agent: a, phase, payload: rest.join(' ') };
          })
      : [];
  return { hooks, calls, logs, file, entry, dir };
}

/** Replay a captured line into the plugin, as OpenCode calls it. */
async function replay(hooks, line) {
  const { kind, a, b } = line;
  if (kind === 'chat.message') await hooks['chat.message'](a, b);
  else if (kind === 'before') await hooks['tool.execute.before'](a, b);
  else if (kind === 'after') await hooks['tool.execute.after'](a, b);
  else if (kind === 'event') await hooks.event({ event: a });
}

const captured = readFileSync(FIXTURE, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));

test('OpenCode 1.18.33: every captured event reaches git-ckpt as the hook event it is (plugin + pure mapping)', async (t) => {
  const plugin = await loadPlugin('opencode');
  for (const line of captured) await replay(plugin.hooks, line);
  // Posts are not awaited (the agent does not wait for them): wait until all eleven calls are there.
  t.true(await waitFor(() => plugin.calls().length >= 11, 10_000), JSON.stringify(plugin.calls().map((c) => c.phase)));
  const events = plugin.calls().map((c) => parseHookPayload(c.agent, c.phase, c.payload, {}));
  const rows = events.map((e) => [e.phase, e.session, e.turnKey, e.callId, e.tool, e.input, e.prompt, e.failed]);
  const expected = [
    ['session-start', SESSION, null, null, null, null, null, false],
    ['turn-start', SESSION, 'msg_232695ddf001ndb3fltaBYIgRR', null, null, null, '[[ckpt t1]] make files', false],
    ['pre', SESSION, null, 'call_t1_0_0', 'write', '/WS/new.txt', null, false],
    ['post', SESSION, null, 'call_t1_0_0', 'write', '/WS/new.txt', null, false],
    ['pre', SESSION, null, 'call_t1_1_0', 'bash', 'echo shell > sh.txt && rm a.txt', null, false],
    ['post', SESSION, null, 'call_t1_1_0', 'bash', 'echo shell > sh.txt && rm a.txt', null, false],
    ['turn-end', SESSION, null, null, null, null, null, false],
  ];
  const second = [
    ['turn-start', SESSION, 'msg_232696a3e001b38FELB3GdfnuJ', null, null, null, '[[ckpt t2]] edit it', false],
    ['pre', SESSION, null, 'call_t2_0_0', 'edit', '/WS/new.txt', null, false],
    ['post', SESSION, null, 'call_t2_0_0', 'edit', '/WS/new.txt', null, false],
    // The resumed run has no session start.
    ['turn-end', SESSION, null, null, null, null, null, false],
  ];
  // A post runs in the background, so it may land after the next event: the rows as a set, then the awaited ones in order.
  const key = (r) => JSON.stringify(r);
  t.deepEqual(rows.map(key).sort(), [...expected, ...second].map(key).sort());
  t.deepEqual(
    rows.filter((r) => r[0] !== 'post').map((r) => `${r[0]} ${r[2] ?? r[3] ?? ''}`),
    [
      'session-start ',
      'turn-start msg_232695ddf001ndb3fltaBYIgRR',
      'pre call_t1_0_0',
      'pre call_t1_1_0',
      'turn-end ',
      'turn-start msg_232696a3e001b38FELB3GdfnuJ',
      'pre call_t2_0_0',
      'turn-end ',
    ],
  );
  for (const e of events) {
    t.is(e.agent, 'opencode');
    t.is(e.cwd, plugin.dir, 'the workspace is the plugin context’s directory');
    t.deepEqual(e.problems, []);
    t.false(e.injected);
  }
  // The write's content never travels into a summary.
  t.false(events.some((e) => JSON.stringify(e).includes('hello')));
  t.deepEqual(plugin.logs, []);
});

test('the plugin: a failed shell call, a subagent session, unknown bus events, and Kilo as the agent', async (t) => {
  const plugin = await loadPlugin('kilo');
  const { hooks } = plugin;
  await hooks.event({ event: { type: 'session.created', properties: { sessionID: 'ses_p', info: { id: 'ses_p', directory: '/WS' } } } });
  await hooks.event({ event: { type: 'session.status', properties: { sessionID: 'ses_p', status: { type: 'busy' } } } });
  await hooks['chat.message'](
    { sessionID: 'ses_p' },
    { message: { id: 'msg_1', role: 'user', sessionID: 'ses_p' }, parts: [{ type: 'text', text: 'fix it' }] },
  );
  await hooks['tool.execute.after'](
    { tool: 'bash', sessionID: 'ses_p', callID: 'c1', args: { command: 'make; exit 2' } },
    { title: 'make', output: 'boom\nmore', metadata: { exit: 2 } },
  );
  // The task tool's child session: its prompt is not a turn, its calls are the parent's, its end is a subagent's.
  await hooks.event({ event: { type: 'session.created', properties: { sessionID: 'ses_c', info: { id: 'ses_c', parentID: 'ses_p' } } } });
  await hooks['chat.message'](
    { sessionID: 'ses_c' },
    { message: { id: 'msg_2', role: 'user', sessionID: 'ses_c' }, parts: [{ type: 'text', text: 'sub task' }] },
  );
  await hooks['tool.execute.before']({ tool: 'edit', sessionID: 'ses_c', callID: 'c2' }, { args: { filePath: '/WS/a.txt' } });
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 'ses_c' } } });
  await hooks.event({ event: { type: 'message.part.updated', properties: {} } });
  t.true(await waitFor(() => plugin.calls().length >= 6, 10_000));
  const events = plugin.calls().map((c) => parseHookPayload(c.agent, c.phase, c.payload, {}));
  const summary = events.map((e) => `${e.agent} ${e.phase} ${e.session} ${e.subagent?.id ?? '-'} ${e.injected} ${e.failed} ${e.error}`);
  t.deepEqual(
    summary.sort(),
    [
      'kilo post ses_p - false true exit code 2',
      'kilo pre ses_p ses_c false false null',
      'kilo session-start ses_p - false false null',
      'kilo subagent-end ses_p ses_c false false null',
      'kilo turn-start ses_p - false false null',
      'kilo turn-start ses_p ses_c true false null',
    ].sort(),
  );
});

test('a git-ckpt that is gone: every handler still resolves, and the agent’s log gets one line, once', async (t) => {
  const plugin = await loadPlugin('opencode', { entryExists: false });
  for (const line of captured) await replay(plugin.hooks, line);
  t.is(plugin.logs.length, 1);
  t.is(plugin.logs[0].body.level, 'warn');
  t.regex(plugin.logs[0].body.message, /git-ckpt is not installed any more .*hooks uninstall --agent opencode/);
  t.deepEqual(plugin.calls(), []);
});

test('pi: session, a user prompt and an extension’s, a tool call, a failed one, the end; its session file is the transcript', async (t) => {
  const plugin = await loadPlugin('pi');
  const { hooks } = plugin;
  const ctx = { cwd: plugin.dir, sessionManager: { getSessionId: () => '01a2-pi', getSessionFile: () => '/s/01a2-pi.jsonl' } };
  await hooks.session_start({ type: 'session_start', reason: 'startup' }, ctx);
  await hooks.input({ type: 'input', text: 'make it', source: 'interactive' }, ctx);
  await hooks.before_agent_start({ type: 'before_agent_start', prompt: 'make it', systemPrompt: 'You are pi…' }, ctx);
  const write = { path: 'hello.txt', content: 'secret body' };
  await hooks.tool_call({ type: 'tool_call', toolCallId: 'call_2', toolName: 'write', input: write }, ctx);
  const wrote = [{ type: 'text', text: 'Successfully wrote 11 bytes' }];
  await hooks.tool_result(
    { type: 'tool_result', toolCallId: 'call_2', toolName: 'write', input: write, content: wrote, isError: false },
    ctx,
  );
  const failed = [{ type: 'text', text: 'Command exited with code 4' }];
  await hooks.tool_result(
    { type: 'tool_result', toolCallId: 'call_3', toolName: 'bash', input: { command: 'exit 4' }, content: failed, isError: true },
    ctx,
  );
  await hooks.agent_end({ type: 'agent_end', messages: [] }, ctx);
  await hooks.input({ type: 'input', text: 'from an extension', source: 'extension' }, ctx);
  await hooks.before_agent_start({ type: 'before_agent_start', prompt: 'from an extension' }, ctx);
  t.true(await waitFor(() => plugin.calls().length >= 7, 10_000));
  const events = plugin.calls().map((c) => parseHookPayload(c.agent, c.phase, c.payload, {}));
  const row = (e) => [e.phase, e.session, e.callId, e.tool, e.input, e.failed, e.error, e.injected, e.prompt].join(' | ');
  t.deepEqual(
    events.map(row).sort(),
    [
      'post | 01a2-pi | call_2 | write | hello.txt | false |  | false | ',
      'post | 01a2-pi | call_3 | bash | exit 4 | true | Command exited with code 4 | false | ',
      'pre | 01a2-pi | call_2 | write | hello.txt | false |  | false | ',
      'session-start | 01a2-pi |  |  |  | false |  | false | ',
      'turn-end | 01a2-pi |  |  |  | false |  | false | ',
      'turn-start | 01a2-pi |  |  |  | false |  | false | make it',
      'turn-start | 01a2-pi |  |  |  | false |  | true | from an extension',
    ].sort(),
  );
  for (const e of events) {
    t.is(e.agent, 'pi');
    t.is(e.transcript, '/s/01a2-pi.jsonl');
    t.is(e.cwd, plugin.dir);
  }
  t.false(JSON.stringify(events).includes('secret body'), 'file content never reaches a summary');
});

test('the installed file: marked as ours for its agent, the entry script written in as a JSON string', (t) => {
  const text = pluginText(TRANSPORT, ADAPTER.kilo, 'kilo', '/opt/it\'s "here"/git-ckpt-hook');
  t.true(isOurPlugin(text, 'kilo'));
  t.false(isOurPlugin(text, 'opencode'));
  t.false(isOurPlugin('export const Mine = async () => ({});\n', 'kilo'));
  t.is(pluginEntry(text), '/opt/it\'s "here"/git-ckpt-hook');
  t.false(text.includes('__GIT_CKPT_'));
});

test('Cline 3.0.65: its captured hook payloads read as the events they are (session, task as the turn, call ids, failures)', (t) => {
  const lines = readFileSync(path.join(ROOT, 'test', 'fixtures', 'cline-3.0.65', 'hook-payloads.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const events = lines.map(({ phase, payload }) => parseHookPayload('cline', phase, JSON.stringify(payload), {}));
  const row = (e) => [e.phase, e.turnKey?.slice(0, 5), e.callId, e.tool, e.input, e.failed, e.error].join(' | ');
  t.deepEqual(events.map(row), [
    'turn-start | conv_ |  |  |  | false | ',
    'pre | conv_ | call_t1_0_0 | apply_patch | A /WS/notes.txt | false | ',
    'post | conv_ | call_t1_0_0 | apply_patch | A /WS/notes.txt | false | ',
    "pre | conv_ | call_t1_1_0 | run_commands | sed -i 's/alpha/ALPHA/' notes.txt && echo made > shell_made.txt && rm doomed.txt | false | ",
    "post | conv_ | call_t1_1_0 | run_commands | sed -i 's/alpha/ALPHA/' notes.txt && echo made > shell_made.txt && rm doomed.txt | false | ",
    'pre | conv_ | call_t1_2_0 | apply_patch | A /WS/.env | false | ',
    'post | conv_ | call_t1_2_0 | apply_patch | A /WS/.env | false | ',
    'pre | conv_ | call_t1_3_0 | run_commands | echo side > failed_side.txt; exit 3 | false | ',
    'post | conv_ | call_t1_3_0 | run_commands | echo side > failed_side.txt; exit 3 | true | Command exited with code 3',
    'pre | conv_ | call_t1_4_0 | apply_patch | M /WS/notes.txt | false | ',
    'post | conv_ | call_t1_4_0 | apply_patch | M /WS/notes.txt | true | apply_patch failed: Patch could not be applied because 1 hunk did not match the current file content.',
    'turn-end | conv_ |  |  |  | false | ',
    'turn-start | conv_ |  |  |  | false | ',
    'pre | conv_ | call_t2_0_0 | apply_patch | M /WS/notes.txt | false | ',
    'post | conv_ | call_t2_0_0 | apply_patch | M /WS/notes.txt | false | ',
    "pre | conv_ | call_t2_1_0 | run_commands | API_TOKEN=[REDACTED] sh -c 'sed -i s/ALPHA/omega/ notes.txt' | false | ",
    "post | conv_ | call_t2_1_0 | run_commands | API_TOKEN=[REDACTED] sh -c 'sed -i s/ALPHA/omega/ notes.txt' | false | ",
    'turn-end | conv_ |  |  |  | false | ',
  ]);
  const sessions = new Set(events.map((e) => e.session));
  t.is(sessions.size, 1, 'one session across both runs (rootSessionId)');
  t.not(events[0].turnKey, events.at(-1).turnKey, 'each run is its own task: its own turn');
  for (const e of events) {
    t.is(e.cwd, '/WS');
    t.deepEqual(e.problems, []);
  }
});

/** A fixture's events in short: `phase[:tool][ ✗][ injected][ "prompt…"]`. */
function shortRows(agent, fixture) {
  const lines = readFileSync(path.join(ROOT, 'test', 'fixtures', fixture, 'hook-payloads.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const events = lines.map(({ phase, payload }) => parseHookPayload(agent, phase, JSON.stringify(payload), {}));
  const rows = events.map(
    (e) =>
      `${e.phase}${e.tool ? `:${e.tool}` : ''}${e.failed ? ' ✗' : ''}${e.injected ? ' injected' : ''}${e.prompt ? ` "${e.prompt.slice(0, 8)}"` : ''}`,
  );
  return { events, rows };
}

// The same two turns as the real-agents suite ran them (test/agents/two-turns.mjs), as each agent delivered them.
const TURN_ONE = (w, b, e) => [
  `pre:${w}`,
  `post:${w}`,
  `pre:${b}`,
  `post:${b}`,
  `pre:${w}`,
  `post:${w}`,
  `pre:${b}`,
  `post:${b} ✗`,
  `pre:${e}`,
];
const TURN_TWO = (e, b) => ['turn-start "Turn two"', `pre:${e}`, `post:${e}`, `pre:${b}`, `post:${b}`, 'turn-end'];

test('Qwen Code 0.15.10, Droid 0.225, pi 0.74.2 and Kilo 7.7.7: their captured payloads, read as the events they are', (t) => {
  const qwen = shortRows('qwen', 'qwen-code-0.15.10');
  // Qwen hands tool results back through a prompt-less UserPromptSubmit: a continuation, not a turn.
  const more = 'turn-start injected';
  t.deepEqual(qwen.rows, [
    'turn-start "Turn one"',
    ...['write_file', 'run_shell_command', 'write_file'].flatMap((tool, i) => [`pre:${tool}`, `post:${tool}`, ...(i < 3 ? [more] : [])]),
    'pre:run_shell_command',
    'post:run_shell_command ✗',
    more,
    'pre:edit',
    'post:edit ✗',
    more,
    'turn-end',
    'turn-start "Turn two"',
    'pre:read_file',
    'post:read_file',
    more,
    'pre:edit',
    'post:edit',
    more,
    'pre:run_shell_command',
    'post:run_shell_command',
    more,
    'turn-end',
  ]);
  // Droid: no post for a failed call (the failed shell and the failed edit get a pre only).
  const droid = shortRows('droid', 'droid-0.225.2');
  t.deepEqual(droid.rows, [
    'session-start',
    'turn-start "Turn one"',
    ...TURN_ONE('Create', 'Execute', 'Edit').filter((r) => r !== 'post:Execute ✗'),
    'turn-end',
    'session-start',
    ...TURN_TWO('Edit', 'Execute'),
  ]);
  const pi = shortRows('pi', 'pi-0.74.2');
  t.deepEqual(pi.rows, [
    'session-start',
    'turn-start "Turn one"',
    ...TURN_ONE('write', 'bash', 'edit'),
    'post:edit ✗',
    'turn-end',
    'session-start',
    ...TURN_TWO('edit', 'bash'),
  ]);
  // Kilo: a tool that threw (the edit) gets no tool.execute.after.
  const kilo = shortRows('kilo', 'kilo-code-cli-7.7.7');
  t.deepEqual(kilo.rows, [
    'session-start',
    'turn-start "Turn one"',
    ...TURN_ONE('write', 'bash', 'edit'),
    'turn-end',
    ...TURN_TWO('edit', 'bash'),
  ]);
  for (const [name, { events }, ids] of [
    ['qwen', qwen, true],
    ['droid', droid, false],
    ['pi', pi, true],
    ['kilo', kilo, true],
  ]) {
    t.is(new Set(events.map((e) => e.session)).size, 1, `${name}: one session`);
    const tools = events.filter((e) => e.phase === 'pre' || e.phase === 'post');
    t.true(
      tools.every((e) => (e.callId !== null) === ids),
      `${name}: call ids ${ids ? 'on every tool event' : 'never given'}`,
    );
    t.true(
      tools.some((e) => e.input === "API_TOKEN=[REDACTED] sh -c 'sed -i s/ALPHA/omega/ notes.txt'"),
      `${name}: the command is summarized, redacted`,
    );
    t.false(JSON.stringify(events).includes('example-token-value'), `${name}: no secret in any event`);
  }
});
