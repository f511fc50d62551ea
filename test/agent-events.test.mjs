// What real agent sessions exposed: secrets in payloads, injected prompts, background subagents,
// failed calls, the agents' own ids, one event delivered by two configs, repeated skip lines.
// The event sequences follow what Claude Code 2.1.332, Codex 0.171, Copilot CLI 1.0.102 and
// Gemini CLI 0.61 sent (the real agents themselves run in `npm run test:agents`).
import test from 'ava';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ROOT,
  sandbox,
  run,
  ckpt,
  ckptJson,
  write,
  storeDir,
  ledgerLines,
  shadowGit,
  treeState,
  waitFor,
  libPath,
  killProcess,
  firstSnapshotTaken,
} from './helpers.mjs';

const ENTRY = path.join(ROOT, 'hooks', 'git-ckpt-hook');
const { redact, REDACTION_RULES } = await import(libPath('redact'));
const payloads = await import(libPath('hook-payload'));
const turns = await import(libPath('turns'));
const { commitMessage, recordFromCommit } = await import(libPath('trailers'));

function hook(box, agent, phase, payload, env = {}) {
  return run(box, 'sh', [ENTRY, agent, phase], { env, input: JSON.stringify(payload) });
}

/** Every text in the store: ledger, logs, session state, and every object (commit messages included). */
function storeText(box) {
  const dir = storeDir(box);
  const files = ['ledger.jsonl', 'hook.log', 'sessions.json'].filter((f) => existsSync(path.join(dir, f)));
  return (
    files.map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n') +
    shadowGit(box, ['cat-file', '--batch-all-objects', '--batch'], 'latin1')
  );
}

// One example per rule of the table: the secret goes, the shape stays.
const SECRETS = [
  [
    'private key block',
    'cat <<EOF > k\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nEOF',
    'b3BlbnNzaC1rZXktdjEAAAAA',
  ],
  ['authorization header', `curl -H 'Authorization: Bearer abc123.def456-ghi' https://api.example.com`, 'abc123.def456-ghi'],
  ['bearer or basic credentials', 'http GET example.com "Basic dXNlcjpwYXNzd29yZA=="', 'dXNlcjpwYXNzd29yZA=='],
  ['credentials in a URL', 'git clone https://alice:hunter2pass@example.com/repo.git', 'hunter2pass'],
  ['OpenAI or Anthropic key (sk-…)', 'export X=1; llm --key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv', 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv'],
  ['Stripe key', 'stripe charge --api sk_live_51HfakeFAKEfake0000', 'sk_live_51HfakeFAKEfake0000'],
  [
    'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)',
    'gh auth login --with ghp_0123456789abcdefghijABCDEFGHIJ',
    'ghp_0123456789abcdefghijABCDEFGHIJ',
  ],
  [
    'GitHub fine-grained token (github_pat_)',
    'echo github_pat_11ABCDEFG0123456789_abcdefghijklmnop | gh auth login',
    'github_pat_11ABCDEFG0123456789_abcdefghijklmnop',
  ],
  ['AWS access key id (AKIA…, ASIA…)', 'aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE'],
  ['Slack token (xox…-)', 'slack-notify xoxb-123456789012-abcdefghijkl', 'xoxb-123456789012-abcdefghijkl'],
  ['Google API key (AIza…)', 'gcloud --key AIzaSyA1234567890abcdefghijklmnopqrstuv', 'AIzaSyA1234567890abcdefghijklmnopqrstuv'],
  [
    'npm token (npm_…)',
    'npm config set //registry/:_authToken npm_abcdefghijklmnopqrstuvwxyz0123456789',
    'npm_abcdefghijklmnopqrstuvwxyz0123456789',
  ],
  [
    'JSON web token',
    'curl -d token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N',
  ],
  ['password or token flag (--password=…, --token …)', 'psql --password=s3cr3t-pw && vault login --token hvs.CAESIJ', 's3cr3t-pw'],
  ['attached password flag (-pVALUE)', 'docker exec db mysql -uroot -pTopSecret9 app', 'TopSecret9'],
  [
    'NAME=value with KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL in NAME',
    'SERVICE_API_TOKEN=plainvalue123 DB_PASSWORD="two words" npm start',
    'plainvalue123',
  ],
  ['"name": "value" with a secret name (JSON, YAML)', `echo '{"client_secret": "cs-99887766"}' > creds.json`, 'cs-99887766'],
];

test('redaction: every rule of the table has an example, each secret goes and the command stays readable', (t) => {
  t.deepEqual(
    SECRETS.map(([name]) => name),
    REDACTION_RULES.map((r) => r.name),
    'one example per rule, in table order',
  );
  for (const [name, text, secret] of SECRETS) {
    const out = redact(text);
    t.false(out.includes(secret), `${name}: ${out}`);
    t.true(out.includes('[REDACTED]'), name);
  }
  t.false(redact('DB_PASSWORD="two words" x').includes('two words'));
  t.false(redact('vault login --token hvs.CAESIJ').includes('hvs.CAESIJ'));
  // Ordinary commands are left as they are.
  for (const plain of [
    'mkdir -p src/lib && tar -pczf out.tgz src',
    'npm test -- --grep "basic information"',
    'git commit -m "key points" && make KEYWORDS',
    'ls -la ~/.ssh',
  ]) {
    t.is(redact(plain), plain);
  }
});

test('input summaries never hold file content: a patch lists its paths, a command is redacted, an unknown tool shows argument names', (t) => {
  const patch =
    '*** Begin Patch\n*** Add File: .env\n+SERVICE_API_TOKEN=example-not-a-real-secret\n*** Update File: src/app.ts\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch\n';
  t.is(payloads.summarizeInput({ command: patch }), 'A .env, M src/app.ts, D old.txt');
  t.is(payloads.summarizeInput({ file_path: '/w/notes.txt', content: 'TOKEN=abc' }), '/w/notes.txt');
  t.is(payloads.summarizeInput({ path: '/w/x.txt', file_text: 'password=1' }), '/w/x.txt');
  t.is(
    payloads.summarizeInput({ command: 'curl -H "Authorization: Bearer tok_1234567890"' }),
    'curl -H "Authorization: Bearer [REDACTED]"',
  );
  t.is(payloads.summarizeInput({ content: 'API_KEY=xyz', mode: 'w' }), '(content, mode)');
  t.is(
    payloads.promptTitle('\n  Fix the login bug, my key is sk-proj-abcdefghijklmnopqrstu\nmore lines'),
    'Fix the login bug, my key is [REDACTED]',
  );
  t.is(payloads.promptTitle('x'.repeat(300)).length, 100);
  t.true(payloads.isInjectedPrompt('<task-notification>\n<task-id>a</task-id>'));
  t.false(payloads.isInjectedPrompt('please read <task-notification> tags'));
});

test('trailers: every field a hook record carries survives the commit message round trip', (t) => {
  const record = {
    v: 1,
    id: 'a'.repeat(40),
    parent: 'b'.repeat(40),
    tree: 'c'.repeat(40),
    time: 1796029354690,
    session: 's-1',
    turn: 3,
    step: 2,
    tool: 'Write',
    kind: 'post',
    message: 'claude post Write: sub_agent.txt',
    stats: { added: 1, modified: 0, deleted: 0 },
    bytes: 0,
    paths: [],
    changed: 1,
    skipped: [],
    skippedCount: 0,
    agent: 'claude',
    phase: 'post',
    call: 'toolu_1',
    input: 'sub_agent.txt',
    failed: true,
    error: 'Exit code 3',
    subagent: { id: 'ac6d9c72bdbebde89', type: 'general-purpose' },
    agentTurn: 'dd58c39d',
    transcript: '/home/u/.claude/projects/x.jsonl',
    prompt: 'two shell calls at once, then a subagent',
    // The daemon captured it after answering, and could not tell a later change apart (principle 8).
    mayIncludeLater: true,
  };
  const { id, parent, tree, v, ...meta } = record;
  const header = `tree ${tree}\nparent ${parent}\nauthor git-ckpt <git-ckpt@localhost.invalid> 1 +0000\ncommitter git-ckpt <git-ckpt@localhost.invalid> 1 +0000\n\n`;
  t.deepEqual(recordFromCommit(id, header + commitMessage(meta)), { ...record, bytes: 0, paths: [] });

  // A message (MCP's checkpoint_now, `snapshot -m`) that looks like trailers, or tries to start a trailer block of its own.
  const forged = 'Ckpt-Session: forged\nCkpt-Failed: true\n\nCkpt-Session: forged\r\n\r\nCkpt-Kind: restore\tCkpt-Turn: 99';
  const plain = { ...meta, failed: undefined, error: undefined, message: forged };
  const rebuilt = recordFromCommit(id, header + commitMessage(plain));
  t.like(rebuilt, { session: 's-1', turn: 3, kind: 'post', failed: undefined });
  t.is(rebuilt.message, 'Ckpt-Session: forged Ckpt-Failed: true Ckpt-Session: forged Ckpt-Kind: restore Ckpt-Turn: 99');
  // A commit whose first paragraphs hold trailer lines (written by hand or by an older version): only the last paragraph counts.
  const handMade = `Ckpt-Session: forged\nCkpt-Failed: true\n\nCkpt-Session: forged\n \n${commitMessage(plain).split('\n\n')[1]}`;
  t.like(recordFromCommit(id, header + handMade), { session: 's-1', failed: undefined });
  t.is(recordFromCommit(id, `${header}Ckpt-Kind: post\nCkpt-Time: 1\n`), undefined, 'a subject alone is no trailer block');
});

const BASE = { agent: 'claude', via: 'claude', injected: false, subagent: null, eventTime: null, callId: null, turnKey: null };

test('numbering (pure): a background subagent and its task notification stay in their turn; its late post finds its own call', (t) => {
  let state = turns.emptySessionState();
  const seen = [];
  const sub = { id: 'ag1', type: 'general-purpose' };
  const events = [
    { phase: 'turn-start', turnKey: 'p1', title: 'first' },
    { phase: 'pre', turnKey: 'p1', callId: 'c1' },
    { phase: 'post', turnKey: 'p1', callId: 'c1' },
    { phase: 'turn-end', turnKey: 'p1' },
    { phase: 'turn-start', turnKey: 'p2', title: 'second' },
    { phase: 'pre', turnKey: 'p2', callId: 'agent' },
    { phase: 'post', turnKey: 'p2', callId: 'agent' },
    { phase: 'pre', turnKey: 'p2', callId: 'w', subagent: sub },
    { phase: 'turn-end', turnKey: 'p2' }, // deferred: the subagent's Write is still running
    { phase: 'post', turnKey: 'p2', callId: 'w', subagent: sub },
    { phase: 'subagent-end', turnKey: 'p2', subagent: sub },
    { phase: 'turn-start', turnKey: 'p3', injected: true }, // <task-notification>
    { phase: 'turn-end', turnKey: 'p3' },
    { phase: 'turn-start', turnKey: 'p4', title: 'third' },
    { phase: 'post', turnKey: 'p2', callId: 'late', subagent: sub }, // a call of turn 2 after turn 3 began
  ];
  for (const e of events) {
    const n = turns.numberEvent(state, { ...BASE, ...e }, 1000);
    state = n.state;
    seen.push(`${e.phase}@${n.turn}.${n.step ?? '-'}${n.defer ? ' defer' : ''}${n.title ? ` "${n.title}"` : ''}`);
  }
  t.deepEqual(seen, [
    'turn-start@1.- "first"',
    'pre@1.1 "first"',
    'post@1.1 "first"',
    'turn-end@1.- "first"',
    'turn-start@2.- "second"',
    'pre@2.1 "second"',
    'post@2.1 "second"',
    'pre@2.2 "second"',
    'turn-end@2.- defer "second"',
    'post@2.2 "second"',
    'subagent-end@2.- "second"',
    'turn-start@2.- "second"',
    'turn-end@2.- "second"',
    'turn-start@3.- "third"',
    'post@2.-',
  ]);
  t.is(turns.titleRecorded(state, 3).title, null);
});

test('numbering (pure): without turn ids, a background post that lands after its turn ended stays in its turn and opens none', (t) => {
  // pi and OpenCode give call ids but no turn id; their posts run in the background, so the last one may come after the turn's end.
  let state = turns.emptySessionState();
  const seen = [];
  const events = [
    { phase: 'session-start' },
    { phase: 'turn-start', title: 'first' },
    { phase: 'pre', callId: 'c1' },
    { phase: 'turn-end' },
    { phase: 'post', callId: 'c1' },
    { phase: 'session-start' },
    { phase: 'turn-start', title: 'second' },
    { phase: 'pre', callId: 'c2' },
    { phase: 'post', callId: 'c2' },
  ];
  for (const e of events) {
    const n = turns.numberEvent(state, { ...BASE, agent: 'pi', via: 'pi', ...e }, 1000);
    state = n.state;
    seen.push(`${e.phase}@${n.turn ?? '-'}.${n.step ?? '-'}`);
  }
  t.deepEqual(seen, [
    'session-start@-.-',
    'turn-start@1.-',
    'pre@1.1',
    'turn-end@1.-',
    'post@1.1',
    'session-start@1.-',
    'turn-start@2.-',
    'pre@2.1',
    'post@2.1',
  ]);
});

test('numbering (pure): without call ids, a pre that finds the call before it still open adopts it (its post never came)', (t) => {
  // Droid gives no call ids and sends no post for a failed call: the next pre takes that call's changes as its post.
  let state = turns.emptySessionState();
  const seen = [];
  const events = [
    { phase: 'turn-start', title: 'one' },
    { phase: 'pre', tool: 'Create' },
    { phase: 'post', tool: 'Create' },
    { phase: 'pre', tool: 'Execute' },
    { phase: 'pre', tool: 'Edit' },
    { phase: 'post', tool: 'Edit' },
    { phase: 'turn-end' },
  ];
  for (const e of events) {
    const n = turns.numberEvent(state, { ...BASE, agent: 'droid', via: 'droid', ...e }, 1000);
    state = n.state;
    seen.push(`${e.phase}@${n.turn}.${n.step ?? '-'}${n.adopt ? ` adopts ${n.adopt.tool}@${n.adopt.step}` : ''}`);
  }
  t.deepEqual(seen, ['turn-start@1.-', 'pre@1.1', 'post@1.1', 'pre@1.2', 'pre@1.3 adopts Execute@2', 'post@1.3', 'turn-end@1.-']);
});

test('numbering (pure): a turn’s start or end that comes after its moment (Cline runs them detached) records and adopts nothing', (t) => {
  // Seen with the real Cline 3.0.65 under load: TaskResume's hook ran after the resumed turn's first pre, took
  // that call as its own, and the call's post then recorded nothing.
  let state = turns.emptySessionState();
  const seen = [];
  const events = [
    { phase: 'turn-start', turnKey: 'task1' },
    { phase: 'pre', turnKey: 'task1', callId: 'c1', tool: 'apply_patch' },
    { phase: 'post', turnKey: 'task1', callId: 'c1', tool: 'apply_patch' },
    { phase: 'turn-end', turnKey: 'task1' },
    { phase: 'pre', turnKey: 'task2', callId: 'c2', tool: 'apply_patch' },
    { phase: 'turn-start', turnKey: 'task2' },
    { phase: 'post', turnKey: 'task2', callId: 'c2', tool: 'apply_patch' },
    { phase: 'pre', turnKey: 'task3', callId: 'c3', tool: 'run_commands' },
    { phase: 'turn-end', turnKey: 'task2' },
    { phase: 'post', turnKey: 'task3', callId: 'c3', tool: 'run_commands' },
    { phase: 'turn-end', turnKey: 'task3' },
  ];
  for (const e of events) {
    const n = turns.numberEvent(state, { ...BASE, agent: 'cline', via: 'cline', ...e }, 1000);
    state = n.state;
    seen.push(
      `${e.phase}@${n.turn}.${n.step ?? '-'}${n.late ? ' late' : ''}${n.adopt ? ` adopts ${n.adopt.callId}` : ''}${n.taken ? ' taken' : ''}`,
    );
  }
  t.deepEqual(seen, [
    'turn-start@1.-',
    'pre@1.1',
    'post@1.1',
    'turn-end@1.-',
    'pre@2.1',
    'turn-start@2.- late',
    'post@2.1',
    'pre@3.1',
    'turn-end@2.- late',
    'post@3.1',
    'turn-end@3.-',
  ]);
  t.true(state.ended, 'the current turn’s own end still ends it');
});

test('numbering (pure): Copilot delivering each event twice (its own config and Claude’s) counts it once', (t) => {
  let state = turns.emptySessionState();
  const out = [];
  const copilot = { ...BASE, agent: 'copilot', via: 'copilot', crossLoaded: true };
  const asClaude = { ...BASE, agent: 'copilot', via: 'claude', crossLoaded: true };
  const events = [
    ['turn-start', 100],
    ['pre', 200],
    ['post', 300],
    ['pre', 400],
    ['post', 500],
    ['turn-end', 600],
    ['turn-start', 700],
    ['pre', 800],
    ['post', 900],
  ];
  for (const [phase, time] of events) {
    for (const who of time === 200 ? [asClaude, copilot] : [copilot, asClaude]) {
      const n = turns.numberEvent(state, { ...who, phase, eventTime: time }, 0);
      state = n.state;
      if (!n.duplicate) out.push(`${phase}@t${n.turn}.s${n.step ?? '-'}`);
    }
  }
  t.deepEqual(out, [
    'turn-start@t1.s-',
    'pre@t1.s1',
    'post@t1.s1',
    'pre@t1.s2',
    'post@t1.s2',
    'turn-end@t1.s-',
    'turn-start@t2.s-',
    'pre@t2.s1',
    'post@t2.s1',
  ]);
});

test('a Claude session with a background subagent, a failed call and a task notification, through the real entry script', async (t) => {
  const box = sandbox();
  write(box, 'notes.txt', 'alpha\n');
  // The first snapshot exists (hooks install takes it), so the session starts from a checkpoint.
  await ckptJson(box, ['snapshot']);
  const env = { CLAUDE_PROJECT_DIR: box.ws };
  const s = 'sess-bg';
  const base = (prompt_id, extra) => ({
    session_id: s,
    transcript_path: '/home/u/.claude/projects/p/sess-bg.jsonl',
    cwd: box.ws,
    prompt_id,
    ...extra,
  });
  const tool = (prompt_id, event, name, input, id, extra = {}) =>
    base(prompt_id, { hook_event_name: event, tool_name: name, tool_input: input, tool_use_id: id, ...extra });
  await hook(box, 'claude', 'session-start', { session_id: s, cwd: box.ws, hook_event_name: 'SessionStart', source: 'startup' }, env);
  await hook(
    box,
    'claude',
    'turn-start',
    base('p1', { hook_event_name: 'UserPromptSubmit', prompt: 'Edit notes, then fail\nsecond line' }),
    env,
  );
  await hook(box, 'claude', 'pre', tool('p1', 'PreToolUse', 'Edit', { file_path: path.join(box.ws, 'notes.txt') }, 't1'), env);
  write(box, 'notes.txt', 'ALPHA\n');
  await hook(box, 'claude', 'post', tool('p1', 'PostToolUse', 'Edit', { file_path: path.join(box.ws, 'notes.txt') }, 't1'), env);
  await hook(
    box,
    'claude',
    'pre',
    tool('p1', 'PreToolUse', 'Bash', { command: 'rm notes.txt && echo gone > removed.log && exit 3' }, 't2'),
    env,
  );
  rmSync(path.join(box.ws, 'notes.txt'));
  write(box, 'removed.log', 'gone\n');
  await hook(
    box,
    'claude',
    'post',
    tool('p1', 'PostToolUseFailure', 'Bash', { command: 'rm notes.txt && echo gone > removed.log && exit 3' }, 't2', {
      error: 'Exit code 3\nmore',
      is_interrupt: false,
    }),
    env,
  );
  await hook(box, 'claude', 'turn-end', base('p1', { hook_event_name: 'Stop' }), env);

  await hook(box, 'claude', 'turn-start', base('p2', { hook_event_name: 'UserPromptSubmit', prompt: 'Run a subagent' }), env);
  await hook(box, 'claude', 'pre', tool('p2', 'PreToolUse', 'Agent', { description: 'Write files', prompt: 'write' }, 'ag'), env);
  const sub = { agent_id: 'ac6d9c72bdbebde89', agent_type: 'general-purpose' };
  await hook(
    box,
    'claude',
    'pre',
    tool('p2', 'PreToolUse', 'Write', { file_path: path.join(box.ws, 'sub_agent.txt'), content: 'x' }, 'sw', sub),
    env,
  );
  // The background subagent writes before the main thread's Agent post and Stop: both must leave
  // that file to the subagent's own post.
  write(box, 'sub_agent.txt', 'from the subagent\n');
  await hook(box, 'claude', 'post', tool('p2', 'PostToolUse', 'Agent', { description: 'Write files', prompt: 'write' }, 'ag'), env);
  await hook(
    box,
    'claude',
    'turn-end',
    base('p2', { hook_event_name: 'Stop', background_tasks: [{ id: sub.agent_id, status: 'running' }] }),
    env,
  );
  await hook(box, 'claude', 'post', tool('p2', 'PostToolUse', 'Write', { file_path: path.join(box.ws, 'sub_agent.txt') }, 'sw', sub), env);
  await hook(box, 'claude', 'subagent-end', base('p2', { hook_event_name: 'SubagentStop', ...sub }), env);
  await hook(
    box,
    'claude',
    'turn-start',
    base('p3', {
      hook_event_name: 'UserPromptSubmit',
      prompt: `<task-notification>\n<task-id>${sub.agent_id}</task-id>\n<status>completed</status>\n</task-notification>`,
    }),
    env,
  );
  await hook(box, 'claude', 'turn-end', base('p3', { hook_event_name: 'Stop' }), env);
  await hook(box, 'claude', 'turn-start', base('p4', { hook_event_name: 'UserPromptSubmit', prompt: 'Third prompt' }), env);
  write(box, 'third.txt', '3\n');
  await hook(box, 'claude', 'post', tool('p4', 'PostToolUse', 'Write', { file_path: path.join(box.ws, 'third.txt') }, 't4'), env);

  const records = ledgerLines(box).filter((r) => r.agent);
  const summary = records.map(
    (r) => `${r.phase}:${r.tool ?? '-'}@t${r.turn ?? '-'}.s${r.step ?? '-'}${r.subagent ? ' sub' : ''}${r.failed ? ' failed' : ''}`,
  );
  t.deepEqual(summary, ['post:Edit@t1.s1', 'post:Bash@t1.s2 failed', 'post:Write@t2.s2 sub', 'post:Write@t3.s1'], summary.join('\n'));
  const [edit, failed, subWrite, third] = records;
  t.is(edit.prompt, 'Edit notes, then fail');
  t.is(edit.agentTurn, 'p1');
  t.is(edit.transcript, '/home/u/.claude/projects/p/sess-bg.jsonl');
  t.is(failed.error, 'Exit code 3');
  t.deepEqual(failed.paths.map((p) => `${p.status} ${p.path}`).sort(), ['A removed.log', 'D notes.txt']);
  t.deepEqual(subWrite.subagent, { id: 'ac6d9c72bdbebde89', type: 'general-purpose' });
  t.deepEqual(subWrite.paths, [{ path: 'sub_agent.txt', status: 'A' }], "the subagent's file is in its own call's checkpoint");
  t.is(subWrite.prompt, 'Run a subagent');
  t.is(third.prompt, 'Third prompt', 'the task notification did not open a turn');

  const log = (await ckpt(box, ['log'])).stdout;
  t.regex(log, /turn 1 “Edit notes, then fail”/);
  t.regex(log, /turn 3 “Third prompt”/);
  t.regex(log, /\[subagent general-purpose\]/);
  t.regex(log, /#2 Bash ✗ failed .* · Exit code 3$/m);
  const json = await ckptJson(box, ['log', '--turn', '2']);
  t.true(json.every((r) => r.prompt === 'Run a subagent'));
  // turn:3 is the state before the user's third prompt: the subagent's file is there.
  const before3 = await ckptJson(box, ['restore', 'turn:3', '--dry-run']);
  t.false(before3.files.some((f) => f.path === 'sub_agent.txt' && f.action !== 'unchanged'));
  t.true(before3.leftovers.includes('third.txt'));
});

test('no secret from a payload reaches the store: a Codex patch adding .env, a token in a command, in a prompt and in an error', async (t) => {
  const box = sandbox();
  const token = 'SERVICE_API_TOKEN=example-not-a-real-secret-42';
  const patch = `*** Begin Patch\n*** Add File: .env\n+${token}\n*** Add File: app.cfg\n+debug=false\n*** End Patch\n`;
  const base = { session_id: 'cx', turn_id: 'tu1', transcript_path: null, cwd: box.ws, model: 'gpt-5.5' };
  await hook(box, 'codex', 'turn-start', {
    ...base,
    hook_event_name: 'UserPromptSubmit',
    prompt: 'use ghp_0123456789abcdefghijABCDEFGHIJ to push',
  });
  await hook(box, 'codex', 'pre', {
    ...base,
    hook_event_name: 'PreToolUse',
    tool_name: 'apply_patch',
    tool_input: { command: patch },
    tool_use_id: 'c1',
  });
  write(box, '.env', `${token}\n`);
  write(box, 'app.cfg', 'debug=false\n');
  await hook(box, 'codex', 'post', {
    ...base,
    hook_event_name: 'PostToolUse',
    tool_name: 'apply_patch',
    tool_input: { command: patch },
    tool_response: 'Success. Updated the following files:\nA .env\nA app.cfg\n',
    tool_use_id: 'c1',
  });
  await hook(box, 'codex', 'pre', {
    ...base,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'curl -H "Authorization: Bearer abcdef123456" -d @app.cfg x' },
    tool_use_id: 'c2',
  });
  write(box, 'out.txt', 'x\n');
  await hook(box, 'cursor', 'post', {
    conversation_id: 'cx2',
    generation_id: 'g',
    workspace_roots: [box.ws],
    cwd: box.ws,
    hook_event_name: 'postToolUseFailure',
    tool_name: 'Shell',
    tool_input: { command: 'deploy' },
    tool_use_id: 'c3',
    error_message: 'denied for token ghp_0123456789abcdefghijABCDEFGHIJ',
  });
  const text = storeText(box);
  for (const secret of ['example-not-a-real-secret-42', 'ghp_0123456789abcdefghijABCDEFGHIJ', 'abcdef123456'])
    t.false(text.includes(secret), secret);
  const records = ledgerLines(box).filter((r) => r.agent);
  const post = records.find((r) => r.tool === 'apply_patch');
  t.is(post.input, 'A .env, A app.cfg');
  t.deepEqual(post.paths, [{ path: 'app.cfg', status: 'A' }], '.env is not captured');
  t.is(records.find((r) => r.prompt)?.prompt, 'use [REDACTED] to push', "the turn's first checkpoint carries its title");
  t.is(records.at(-1).error, 'denied for token [REDACTED]');
  t.true(records.at(-1).failed);
});

test('Copilot running its own hooks and Claude’s: one turn, steps 1 and 2, agent copilot, one checkpoint per change', async (t) => {
  const box = sandbox();
  const env = { COPILOT_CLI_BINARY_VERSION: '1.0.102', COPILOT_PROJECT_DIR: box.ws, COPILOT_HOOK_DIR: path.join(box.ws, '.github/hooks') };
  const sid = 'cop-dbl';
  const iso = (ms) => new Date(ms).toISOString();
  const pair = async (phase, ms, copilot, claude) => {
    await hook(box, 'copilot', phase, { sessionId: sid, timestamp: ms, cwd: box.ws, ...copilot }, env);
    await hook(box, 'claude', phase, { session_id: sid, timestamp: iso(ms), cwd: box.ws, ...claude }, env);
  };
  await pair('session-start', 1796029374334, { source: 'new' }, { hook_event_name: 'SessionStart', source: 'new' });
  await firstSnapshotTaken(box);
  await pair(
    'turn-start',
    1796029374431,
    { prompt: 'create dbl.txt and append' },
    { hook_event_name: 'UserPromptSubmit', prompt: 'create dbl.txt and append' },
  );
  const create = { toolName: 'create', toolArgs: { path: path.join(box.ws, 'dbl.txt'), file_text: 'one\n' } };
  const write1 = {
    hook_event_name: 'PreToolUse',
    tool_name: 'Write',
    tool_input: { path: path.join(box.ws, 'dbl.txt'), file_text: 'one\n' },
  };
  await pair('pre', 1796029375775, create, write1);
  write(box, 'dbl.txt', 'one\n');
  await pair('post', 1796029376592, create, { ...write1, hook_event_name: 'PostToolUse' });
  const bash = { toolName: 'bash', toolArgs: { command: 'echo two >> dbl.txt' } };
  const bash1 = { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'echo two >> dbl.txt' } };
  await pair('pre', 1796029377618, bash, bash1);
  write(box, 'dbl.txt', 'one\ntwo\n');
  await pair('post', 1796029378506, bash, { ...bash1, hook_event_name: 'PostToolUse' });
  await pair('turn-end', 1796029379498, { stopReason: 'end_turn' }, { hook_event_name: 'Stop' });
  const records = ledgerLines(box).filter((r) => r.agent && r.phase !== 'session-start');
  t.deepEqual(
    records.map((r) => `${r.agent} ${r.phase}:${r.tool}@t${r.turn}.s${r.step}`),
    ['copilot post:create@t1.s1', 'copilot post:bash@t1.s2'],
  );
  t.is(records[0].prompt, 'create dbl.txt and append');
});

test('an uncaptured file is listed by status and logged once, not on every hook; ckpt.recordPrompts=false keeps no prompt', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  write(box, '.env', 'TOKEN=1\n');
  for (let i = 0; i < 3; i++) {
    write(box, 'a.txt', `a${i}\n`);
    await hook(box, 'claude', 'post', {
      session_id: 's',
      prompt_id: 'p',
      cwd: box.ws,
      tool_name: 'Bash',
      tool_input: { command: `step ${i}` },
      tool_use_id: `t${i}`,
    });
  }
  const log = readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8');
  t.is(log.match(/not captured: \.env \(secret\)/g)?.length, 1, log);
  const status = await ckpt(box, ['status']);
  t.regex(status.stdout, /not captured: \.env: secret/);
  t.deepEqual((await ckptJson(box, ['status'])).uncaptured, [{ path: '.env', reason: 'secret' }]);

  write(box, '.git-ckpt-settings', '');
  const config = path.join(storeDir(box), 'config');
  const { appendFileSync } = await import('node:fs');
  appendFileSync(config, '[ckpt]\n\trecordPrompts = false\n');
  await hook(box, 'claude', 'turn-start', { session_id: 's2', prompt_id: 'q', cwd: box.ws, prompt: 'do not keep me' });
  write(box, 'b.txt', 'b\n');
  await hook(box, 'claude', 'post', {
    session_id: 's2',
    prompt_id: 'q',
    cwd: box.ws,
    tool_name: 'Write',
    tool_input: { file_path: 'b.txt' },
    tool_use_id: 'b',
  });
  t.false(JSON.stringify(ledgerLines(box)).includes('do not keep me'));
});

test('restore --dry-run with leftovers does not claim the workspace matches', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'new.txt', 'n\n');
  const before = treeState(box.ws, { skip: ['.git'] });
  const r = await ckpt(box, ['restore', 'latest', '--dry-run']);
  t.is(r.code, 0, r.stderr);
  t.notRegex(r.stdout, /the workspace already matches/);
  t.regex(r.stdout, /every file of the checkpoint already matches/);
  t.regex(r.stdout, /leftovers: 1/);
  t.is(treeState(box.ws, { skip: ['.git'] }), before);
});

test('a shell call that exited non-zero is a failed call: Copilot says so in its result text, Codex in its transcript', async (t) => {
  const { adapterOf } = await import(libPath('registry'));
  const callFailureIn = adapterOf('codex').payload.failureInTranscript;
  const post = (text) =>
    payloads.parseHookPayload(
      'copilot',
      'post',
      JSON.stringify({ sessionId: 's', toolName: 'bash', toolArgs: {}, toolResult: { resultType: 'success', textResultForLlm: text } }),
    );
  t.like(post('\n<shellId: 1 completed with exit code 3>'), { failed: true, error: 'exit code 3' });
  t.like(post('\n<shellId: 0 completed with exit code 0>'), { failed: false, error: null });
  const gemini = (response) =>
    payloads.parseHookPayload(
      'gemini',
      'post',
      JSON.stringify({
        session_id: 'g',
        hook_event_name: 'AfterTool',
        tool_name: 'run_shell_command',
        tool_input: { command: 'x' },
        tool_response: response,
      }),
    );
  t.like(
    gemini({
      llmContent: '<untrusted_context>\nOutput: boom\nExit Code: 3\nProcess Group PGID: 1\n</untrusted_context>',
      returnDisplay: 'boom',
    }),
    { failed: true, error: 'exit code 3' },
  );
  t.like(gemini({ llmContent: '', returnDisplay: 'Command exited with code: 2' }), { failed: true, error: 'exit code 2' });
  t.like(gemini({ llmContent: 'Output: (empty)', returnDisplay: '' }), { failed: false });
  t.like(gemini({ llmContent: 'x', error: { type: 'FILE_NOT_FOUND', message: 'File not found: a.txt' } }), {
    failed: true,
    error: 'File not found: a.txt',
  });
  const lines = [
    '{"cut":"a line cut by the tail read',
    JSON.stringify({ type: 'event_msg', payload: { type: 'item_completed', item: { id: 'call_ok', status: 'completed', exit_code: 0 } } }),
    JSON.stringify({ type: 'event_msg', payload: { type: 'item_completed', item: { id: 'call_bad', status: 'failed', exit_code: 3 } } }),
  ].join('\n');
  t.is(callFailureIn(lines, 'call_bad'), 'exit code 3');
  t.is(callFailureIn(lines, 'call_ok'), null);
  t.is(callFailureIn(lines, 'call_unknown'), null);

  const box = sandbox();
  const transcript = write(box, '../rollout.jsonl', `${lines}\n`);
  write(box, 'side.txt', 'made before failing\n');
  await hook(box, 'codex', 'post', {
    session_id: 'cx',
    turn_id: 't',
    transcript_path: transcript,
    cwd: box.ws,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'echo x > side.txt; exit 3' },
    tool_response: 'boom',
    tool_use_id: 'call_bad',
  });
  t.like(ledgerLines(box).at(-1), { failed: true, error: 'exit code 3: boom', call: 'call_bad' });
});

test('hooks status: whether each agent will run the wired hooks, from its own trust and settings files', async (t) => {
  const { adapterOf } = await import(libPath('registry'));
  const { codexHookTrustEntries } = await import(libPath('codex'));
  const root = '/home/u/project';
  const ours = (c) => c.includes('git-ckpt-hook');
  /** The adapter's verdict from these parsed files (by the names its trust spec gives them); the rest absent. */
  const judge = (agent, scope, config, { env = {}, hooksFile = '', unreadable = {} } = {}) => {
    const question = { scope, projectRoot: root, hooksFile, env, home: '/home/u' };
    const where = adapterOf(agent).trust.files(question);
    t.true(
      Object.keys(config).every((name) => name in where),
      `${agent} reads ${Object.keys(config)}`,
    );
    const path = Object.fromEntries(Object.entries(where).map(([name, f]) => [name, f.file]));
    return adapterOf(agent).trust.verdict({ ...question, config, path, unreadable, isOurs: ours });
  };
  const verdict = (v, runs, words) => {
    t.is(v.runs, runs, v.reason);
    if (words) t.regex(`${v.reason} ${v.step ?? ''}`, words);
  };
  verdict(judge('claude', 'project', { user: { disableAllHooks: true } }), 'no', /\/home\/u\/\.claude\/settings\.json/);
  verdict(judge('claude', 'project', { global: { projects: { [root]: { hasTrustDialogAccepted: true } } } }), 'yes');
  verdict(judge('claude', 'project', { global: { projects: {} } }), 'unknown', /trust dialog/);
  // Qwen Code: every folder is trusted until folder trust is turned on; user hooks run anywhere.
  const qwenTrustOn = { security: { folderTrust: { enabled: true } } };
  verdict(judge('qwen', 'project', {}), 'yes', /folder trust is off/);
  verdict(judge('qwen', 'project', { user: qwenTrustOn, trustedFolders: {} }), 'no', /does not trust/);
  verdict(judge('qwen', 'project', { user: qwenTrustOn, trustedFolders: { [root]: 'TRUST_FOLDER' } }), 'yes', /trustedFolders/);
  verdict(judge('qwen', 'user', { user: qwenTrustOn, trustedFolders: {} }), 'yes');
  verdict(judge('qwen', 'user', { user: { disableAllHooks: true } }), 'no', /disableAllHooks/);
  // Droid: `droid exec` runs project hooks anywhere, its TUI only in a trusted folder.
  verdict(judge('droid', 'project', {}), 'unknown', /droid exec/);
  verdict(judge('droid', 'project', { user: { trustedFolders: { [root]: { trustedAt: 1 } } } }), 'yes');
  verdict(judge('droid', 'user', { project: { hooks: { hooksDisabled: true } } }), 'no', /hooksDisabled/);

  const hooksFile = `${root}/.codex/hooks.json`;
  const config = {
    hooks: {
      PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: "sh '/x/git-ckpt-hook' codex pre", timeout: 30 }] }],
      Stop: [{ hooks: [{ type: 'command', command: "sh '/x/git-ckpt-hook' codex turn-end", timeout: 30 }] }],
    },
  };
  const entries = codexHookTrustEntries(hooksFile, config);
  t.deepEqual(
    entries.map((e) => e.key),
    [`${hooksFile}:pre_tool_use:0:0`, `${hooksFile}:stop:0:0`],
  );
  const codex = (hooks, user, unreadable) => judge('codex', 'project', { hooks, user }, { hooksFile, unreadable });
  verdict(codex(config, {}), 'no', /project is trusted/);
  const projectTrusted = { projects: { [root]: { trust_level: 'trusted' } } };
  verdict(codex(config, projectTrusted), 'no', /2 hooks are not trusted/);
  const state = Object.fromEntries(entries.map((e) => [e.key, { trusted_hash: e.hash }]));
  verdict(codex(config, { ...projectTrusted, hooks: { state } }), 'yes');
  const changed = {
    ...config,
    hooks: { ...config.hooks, Stop: [{ hooks: [{ type: 'command', command: "sh '/y/git-ckpt-hook' codex turn-end", timeout: 30 }] }] },
  };
  verdict(codex(changed, { ...projectTrusted, hooks: { state } }), 'no', /1 of git-ckpt’s 2/);
  verdict(
    codex(config, undefined, { user: 'Invalid TOML document' }),
    'unknown',
    /cannot read \/home\/u\/\.codex\/config\.toml: Invalid TOML/,
  );

  verdict(judge('gemini', 'project', { trustedFolders: { [root]: 'TRUST_FOLDER' } }), 'yes');
  verdict(judge('gemini', 'project', { trustedFolders: {} }), 'no', /trust the folder/);
  verdict(judge('gemini', 'project', { user: { hooksConfig: { enabled: false } }, trustedFolders: { [root]: 'TRUST_FOLDER' } }), 'no');
  verdict(judge('gemini', 'project', { trustedFolders: { '/home': 'TRUST_FOLDER', '/home/u': 'DO_NOT_TRUST' } }), 'no', /DO_NOT_TRUST/);
  verdict(judge('gemini', 'project', { trustedFolders: { '/home/u/project/x': 'TRUST_PARENT' } }), 'yes', /TRUST_PARENT/);
  verdict(judge('gemini', 'project', {}, { env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' } }), 'yes');

  verdict(judge('copilot', 'project', { config: { trustedFolders: ['/home/u'] } }), 'yes');
  verdict(judge('copilot', 'project', { config: { trustedFolders: ['/home/u/proj'] } }), 'no', /--trust-folder/);
  verdict(judge('copilot', 'user', {}), 'yes');
  for (const agent of ['cursor', 'opencode', 'kilo', 'pi', 'cline']) t.truthy(judge(agent, 'project', {}).reason, agent);
});

test('snapshot --kind takes only the user kinds; a record the ledger reader would drop is never written', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  for (const kind of ['restore', 'guard', 'undo']) {
    const r = await ckpt(box, ['snapshot', '--kind', kind]);
    t.is(r.code, 2, `${kind}: ${r.stderr}`);
  }
  const { Workspace } = await import(libPath('index'));
  const ws = Workspace.open(box.ws, { env: box.env });
  await t.throwsAsync(ws.snapshot({ kind: 'restore' }), { code: 'usage' });
  const made = await ckptJson(box, ['snapshot', '--kind', 'turn']);
  t.true(made.created);
  write(box, 'a.txt', 'b\n');
  const next = await ckptJson(box, ['snapshot']);
  t.is(next.parent, made.id, 'the chain goes on from the record just written');
  t.deepEqual(
    (await ckptJson(box, ['log'])).map((r) => r.kind),
    ['manual', 'turn'],
  );
});

test('16 hook processes fired at once on a workspace with no store yet: the store is made once, under the lock, and no event is lost', async (t) => {
  const box = sandbox();
  // The budget has its own test; sixteen Node starts at once on a loaded two-core machine can outlast the default 10 s.
  writeFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\thookBudget = 25s\n', { flag: 'a' });
  for (let i = 0; i < 16; i++) write(box, `f${i}.txt`, `${i}\n`);
  const runs = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      hook(box, 'claude', 'post', {
        session_id: 'first',
        prompt_id: 'p',
        cwd: box.ws,
        tool_name: 'Bash',
        tool_input: { command: `step ${i}` },
        tool_use_id: `t${i}`,
      }),
    ),
  );
  t.deepEqual(
    runs.map((r) => r.code),
    Array(16).fill(0),
  );
  const logFile = path.join(storeDir(box), 'hook.log');
  t.false(
    existsSync(logFile) && /no checkpoint/.test(readFileSync(logFile, 'utf8')),
    existsSync(logFile) ? readFileSync(logFile, 'utf8') : '',
  );
  const records = ledgerLines(box);
  t.is(records.length, 1, 'the first hook captured all 16 files; the others found nothing new');
  t.deepEqual(records[0].paths.map((p) => p.path).sort(), Array.from({ length: 16 }, (_, i) => `f${i}.txt`).sort());
  const steps = JSON.parse(readFileSync(path.join(storeDir(box), 'sessions.json'), 'utf8')).first.step;
  t.is(steps, 16, 'every event was numbered');
});

test('exit codes and messages do not depend on the locale', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  for (const LANG of ['C', 'de_DE.UTF-8', 'fr_FR.UTF-8']) {
    const env = { LANG, LC_ALL: LANG, LANGUAGE: LANG.slice(0, 2) };
    const smuggled = await ckpt(box, ['show', '--output=/tmp/x'], { env });
    t.is(smuggled.code, 1, `${LANG}: ${smuggled.stderr}`);
    t.regex(smuggled.stderr, /^git-ckpt: not a checkpoint address: "--output=\/tmp\/x" \(looks like an option\)\n$/);
    const usage = await ckpt(box, ['log', '--no-such-option'], { env });
    t.is(usage.code, 2, LANG);
    t.regex(usage.stderr, /^git-ckpt: unknown option '--no-such-option'$/m);
  }
});

test('numbering (pure): while a subagent call writes a file, other events hold that file out of their checkpoints', (t) => {
  const sub = { id: 'ag1', type: 'general-purpose' };
  let state = turns.emptySessionState();
  const step = (e) => {
    const n = turns.numberEvent(state, { ...BASE, turnKey: 'p1', ...e }, 1000);
    state = n.state;
    return n;
  };
  step({ phase: 'turn-start' });
  t.deepEqual(step({ phase: 'pre', callId: 'w', subagent: sub, targetPath: 'sub.txt' }).hold, []);
  t.deepEqual(step({ phase: 'post', callId: 'agent' }).hold, ['sub.txt'], "the main thread's post leaves the subagent's file alone");
  t.deepEqual(step({ phase: 'post', callId: 'w', subagent: sub, targetPath: 'sub.txt' }).hold, [], 'its own post takes it');
  t.deepEqual(step({ phase: 'turn-end' }).hold, []);
  // A call whose post never comes stops holding after a while.
  step({ phase: 'pre', callId: 'lost', subagent: sub, targetPath: 'lost.txt' });
  t.deepEqual(turns.numberEvent(state, { ...BASE, turnKey: 'p1', phase: 'turn-end' }, 1000 + turns.RUNNING_STALE_MS + 1).hold, []);
});

test('Cursor running its own hooks and Claude’s: recognised from CURSOR_VERSION, each event counted once by its ids', (t) => {
  t.is(payloads.parseHookPayload('claude', 'pre', '{}', { CURSOR_VERSION: '2.0', CURSOR_PROJECT_DIR: '/w' }).agent, 'cursor');
  t.is(payloads.parseHookPayload('claude', 'pre', '{}', { COPILOT_CLI_BINARY_VERSION: '1.0.102' }).agent, 'copilot');
  t.is(payloads.parseHookPayload('claude', 'pre', '{}', { CLAUDE_PROJECT_DIR: '/w' }).agent, 'claude');
  // Cursor's own hooks say it runs others' too: its events may come twice, Claude's own never do.
  t.true(payloads.parseHookPayload('cursor', 'pre', '{}', {}).crossLoaded);
  t.true(payloads.parseHookPayload('claude', 'pre', '{}', { CURSOR_VERSION: '2.0' }).crossLoaded);
  t.false(payloads.parseHookPayload('claude', 'pre', '{}', {}).crossLoaded);
  let state = turns.emptySessionState();
  const out = [];
  const events = [
    ['turn-start', 'g1', null],
    ['pre', 'g1', 'tu1'],
    ['post', 'g1', 'tu1'],
    ['pre', 'g1', 'tu2'],
    ['post', 'g1', 'tu2'],
    ['turn-end', 'g1', null],
    ['turn-start', 'g2', null],
    ['pre', 'g2', 'tu3'],
  ];
  for (const [phase, turnKey, callId] of events) {
    for (const via of ['cursor', 'claude']) {
      const n = turns.numberEvent(state, { ...BASE, agent: 'cursor', via, crossLoaded: true, phase, turnKey, callId }, 0);
      state = n.state;
      if (!n.duplicate) out.push(`${phase}@t${n.turn}.s${n.step ?? '-'}`);
    }
  }
  t.deepEqual(out, [
    'turn-start@t1.s-',
    'pre@t1.s1',
    'post@t1.s1',
    'pre@t1.s2',
    'post@t1.s2',
    'turn-end@t1.s-',
    'turn-start@t2.s-',
    'pre@t2.s1',
  ]);
});

test('a library caller’s environment is honoured: settings come from the HOME it passes, not the process’s', async (t) => {
  const box = sandbox();
  writeFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\tmaxFileBytes = 3\n', { flag: 'a' });
  write(box, 'big.txt', 'more than three bytes\n');
  const { Workspace } = await import(libPath('index'));
  t.not(process.env.HOME, box.home);
  const ws = Workspace.open(box.ws, { env: box.env });
  const result = await ws.snapshot();
  t.deepEqual(
    result.skipped.map((s) => `${s.path} ${s.reason}`),
    ['big.txt too-large'],
    'ckpt.maxFileBytes from the injected HOME applies',
  );
});

test('async post hooks: the next pre or the turn’s end records a post that has not come as that call’s; the late post then adds nothing', async (t) => {
  const box = sandbox();
  write(box, 'base.txt', 'base\n');
  await ckptJson(box, ['snapshot']);
  const env = { CLAUDE_PROJECT_DIR: box.ws };
  const call = (event, id, name, input) => ({
    session_id: 'as',
    prompt_id: 'p1',
    cwd: box.ws,
    hook_event_name: event,
    tool_name: name,
    tool_input: input,
    tool_use_id: id,
  });
  await hook(box, 'claude', 'turn-start', { session_id: 'as', prompt_id: 'p1', cwd: box.ws, prompt: 'async posts' }, env);
  await hook(box, 'claude', 'pre', call('PreToolUse', 'A', 'Write', { file_path: path.join(box.ws, 'a.txt') }), env);
  write(box, 'a.txt', 'a\n');
  // A's post runs in the background and has not come when B's pre does.
  await hook(box, 'claude', 'pre', call('PreToolUse', 'B', 'Bash', { command: 'echo b > b.txt' }), env);
  write(box, 'b.txt', 'b\n');
  await hook(box, 'claude', 'post', call('PostToolUse', 'A', 'Write', { file_path: path.join(box.ws, 'a.txt') }), env);
  await hook(box, 'claude', 'post', call('PostToolUse', 'B', 'Bash', { command: 'echo b > b.txt' }), env);
  await hook(box, 'claude', 'pre', call('PreToolUse', 'C', 'Edit', { file_path: path.join(box.ws, 'a.txt') }), env);
  write(box, 'a.txt', 'c\n');
  // C's post was killed when the session ended: the turn's end takes its change, as C's.
  await hook(box, 'claude', 'turn-end', { session_id: 'as', prompt_id: 'p1', cwd: box.ws, hook_event_name: 'Stop' }, env);
  const records = ledgerLines(box).filter((r) => r.agent);
  t.deepEqual(
    records.map((r) => `${r.phase}:${r.tool}:${r.call}@t${r.turn}.s${r.step} ${r.paths.map((p) => `${p.status} ${p.path}`).join(',')}`),
    ['post:Write:A@t1.s1 A a.txt', 'post:Bash:B@t1.s2 A b.txt', 'post:Edit:C@t1.s3 M a.txt'],
  );
  const pure = turns.numberEvent(
    turns.emptySessionState(),
    { ...BASE, phase: 'pre', callId: 'X', turnKey: 'p', tool: 'Bash', input: 'ls' },
    0,
  );
  t.deepEqual(pure.state.open, { callId: 'X', tool: 'Bash', input: 'ls', turn: 1, step: 1, agentTurn: 'p', transcript: null });
  const next = turns.numberEvent(pure.state, { ...BASE, phase: 'turn-end', turnKey: 'p' }, 0);
  t.is(next.adopt?.callId, 'X');
  t.is(next.state.open, null);
});

test('the first snapshot runs in the background: a session start begins it, hooks meanwhile return at once and still count turns, status shows it, and a killed one resumes', async (t) => {
  const box = sandbox();
  for (let i = 0; i < 3000; i++) write(box, `src/d${i % 30}/f${i}.txt`, `${i} ${'x'.repeat(2000)}\n`);
  // The baseline waits once its files are hashed, before its tree is written, until `release` exists (a test-only pause point), so it is
  // still running at every step below however fast the machine.
  const release = path.join(box.base, 'release');
  const paused = `${release}.waiting`;
  const env = { CLAUDE_PROJECT_DIR: box.ws, GIT_CKPT_TEST_PAUSE: 'staged', GIT_CKPT_TEST_PAUSE_UNTIL: release };
  const baselineFile = () =>
    path.join(box.store, readdirSync(box.store).find((d) => d !== 'backups' && d !== 'daemon') ?? '', 'baseline.json');
  const pausedPid = async () => {
    t.true(await waitFor(() => existsSync(paused), 60_000), 'the baseline reached its pause point');
    return Number(readFileSync(paused, 'utf8').trim());
  };
  const hookLog = () => readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8');
  const timed = async (label, promise) => {
    const t0 = Date.now();
    await promise;
    t.log(`${label}: ${Date.now() - t0} ms`);
  };
  // The session start cannot have waited for the snapshot: that one cannot finish before `release` exists.
  await timed(
    'session start',
    hook(box, 'claude', 'session-start', { session_id: 'big', cwd: box.ws, hook_event_name: 'SessionStart', source: 'startup' }, env),
  );
  t.true(existsSync(baselineFile()), 'a background first snapshot is running');
  const killed = await pausedPid();
  t.false(existsSync(path.join(storeDir(box), 'ledger.jsonl')) && ledgerLines(box).length > 0, 'no checkpoint yet');
  // Killed halfway: the next session start finds a dead owner and starts over, keeping what was hashed.
  killProcess(killed);
  rmSync(paused);
  // Its heartbeat stops; it counts as gone once dead, or past 5 s of silence (a killed process may linger unreaped).
  const alive = (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const gone = () => !alive(killed) || Date.now() - JSON.parse(readFileSync(baselineFile(), 'utf8')).updated > 5500;
  t.true(await waitFor(gone, 30_000), 'the killed baseline counts as gone');
  await hook(box, 'claude', 'session-start', { session_id: 'big', cwd: box.ws, hook_event_name: 'SessionStart', source: 'resume' }, env);
  const second = await pausedPid();
  t.not(second, killed, 'a new baseline process');
  const during = await ckptJson(box, ['status']);
  t.truthy(during.baseline, 'status shows the running baseline');
  t.is(typeof during.baseline?.total, 'number', 'status shows its progress');
  // While it runs (it holds the workspace lock), hooks take the baseline path: they count, record nothing and return.
  await timed(
    'turn start',
    hook(box, 'claude', 'turn-start', { session_id: 'big', prompt_id: 'p1', cwd: box.ws, prompt: 'first prompt' }, env),
  );
  await timed(
    'pre',
    hook(
      box,
      'claude',
      'pre',
      { session_id: 'big', prompt_id: 'p1', cwd: box.ws, tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: 'c1' },
      env,
    ),
  );
  const log = hookLog();
  t.is(log.match(/claude (turn-start|pre) big: the first snapshot is still being taken in the background/g)?.length, 2, log);
  t.notRegex(log, /no checkpoint:/, 'no hook waited for the lock or failed');
  t.true(alive(second), 'the baseline was still running while the hooks returned');
  writeFileSync(release, '');
  for (let i = 0; i < 600 && existsSync(baselineFile()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  t.false(existsSync(baselineFile()), 'the first snapshot finished');
  const first = ledgerLines(box)[0];
  t.is(first.message, 'initial snapshot');
  t.is(first.changed, 3000, 'every file is in it');
  write(box, 'after.txt', 'made by the first call\n');
  await hook(
    box,
    'claude',
    'post',
    { session_id: 'big', prompt_id: 'p1', cwd: box.ws, tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: 'c1' },
    env,
  );
  const post = ledgerLines(box).at(-1);
  t.like(post, { phase: 'post', turn: 1, step: 1, call: 'c1' }, 'turns and steps were counted while the first snapshot ran');
  t.deepEqual(post.paths, [{ path: 'after.txt', status: 'A' }]);
});

test('a failed call the agent gave no error text for: log prints ✗ failed once, not ✗ failed: failed', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'before\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'a.txt', 'after\n');
  const post = {
    session_id: 'sess-fail',
    hook_event_name: 'PostToolUseFailure',
    cwd: box.ws,
    tool_name: 'Bash',
    tool_input: { command: 'false' },
    tool_use_id: 'tf',
  };
  t.is((await hook(box, 'claude', 'post', post)).code, 0);
  const [record] = ledgerLines(box).filter((r) => r.agent);
  t.like(record, { failed: true, error: 'failed' });
  const log = (await ckpt(box, ['log'])).stdout;
  t.is(log.match(/✗ failed/g)?.length, 1, log);
  t.notRegex(log, /failed: failed/);
});
