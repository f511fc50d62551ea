// Codex CLI (@openai/codex, a native binary) driven offline: a scripted model
// server speaking the OpenAI Responses API (SSE) on 127.0.0.1, a temp HOME whose
// ~/.codex/config.toml points a custom model provider at it, `codex exec` for a
// first turn and `codex exec resume` for the next, and the two trust gates Codex
// puts in front of hooks (project trust for .codex/, then per-hook trust).
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { run, startServer } from './harness.mjs';
import { libPath } from '../helpers.mjs';

/** The dummy key variable the custom provider reads (never a real key). */
export const KEY_ENV = 'CKPT_CODEX_DUMMY_KEY';

// ---------------------------------------------------------------------------
// Config: a custom provider on 127.0.0.1 and everything that could reach the
// network turned off (update check, analytics, feedback, plugins and apps sync,
// web search, remote features, the shared background daemon).
// ---------------------------------------------------------------------------

export function codexHome(box) {
  return path.join(box.home, '.codex');
}

export function configPath(box) {
  return path.join(codexHome(box), 'config.toml');
}

const tomlString = (s) => JSON.stringify(s);

export function writeCodexConfig(box, serverUrl) {
  mkdirSync(codexHome(box), { recursive: true });
  const text = `# written by test/agents/codex.mjs: offline, against a scripted model server
model = "gpt-5.5"
model_provider = "ckptmock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.ckptmock]
name = "git-ckpt scripted model"
base_url = ${tomlString(`${serverUrl}/v1`)}
wire_api = "responses"
env_key = ${tomlString(KEY_ENV)}
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
apps = false
remote_plugin = false
plugin_sharing = false
tool_suggest = false
browser_use = false
browser_use_external = false
computer_use = false
in_app_browser = false
image_generation = false
skill_search = false
goals = false
daemon_auto_start = false
enable_request_compression = false
shell_snapshot = false

[agents]
enabled = false
`;
  writeFileSync(configPath(box), text);
}

/** The environment of every codex process: the sandbox's, the dummy key, the hook trace. */
export function codexEnv(box, extra = {}) {
  return {
    ...box.env,
    [KEY_ENV]: 'ckpt-dummy-key-not-secret',
    GIT_CKPT_HOOK_TRACE: traceFile(box),
    NO_COLOR: '1',
    RUST_LOG: 'error',
    ...extra,
  };
}

export function traceFile(box) {
  return path.join(box.base, 'hook-trace.jsonl');
}

/** The hook trace: one object per hook invocation, in order. */
export function readTrace(box) {
  const f = traceFile(box);
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------------------
// Hook trust, as Codex 0.171 keeps it.
//
// Each discovered command handler has a key `<source file>:<event label>:<group
// index>:<handler index>` (source file = the absolute path of the hooks.json or
// config.toml that declares it; labels pre_tool_use, post_tool_use,
// user_prompt_submit, stop, session_start, ...) and a hash of its normalized
// definition. The user's ~/.codex/config.toml records what was trusted:
//
//   [hooks.state."/abs/.codex/hooks.json:pre_tool_use:0:0"]
//   trusted_hash = "sha256:…"
//
// A handler runs only when that hash equals the current one (or it is managed,
// or `--dangerously-bypass-hook-trust` is given). Otherwise it is skipped
// silently. The TUI's /hooks writes exactly that key through the app server's
// config/batchWrite; `hooks/list` reports key, currentHash and trustStatus.
// ---------------------------------------------------------------------------

/**
 * Every command handler of a hooks.json with its trust key and hash, as
 * git-ckpt's `hooks status` computes them (lib/agents/adapters/codex.ts). The tests
 * compare them with what Codex itself lists (`hooks/list`), so they prove the
 * library's hash.
 */
const { codexHookTrustEntries, CODEX_EVENT_LABELS } = await import(libPath('codex'));
/** Codex's label of each hook event (the library's table). */
export const EVENT_LABELS = CODEX_EVENT_LABELS;
export function hookTrustEntries(hooksFile) {
  return codexHookTrustEntries(hooksFile, JSON.parse(readFileSync(hooksFile, 'utf8')));
}

/** Trust hooks by writing what /hooks writes, computed here (no Codex process). */
export function trustHooksInConfig(box, entries) {
  const lines = entries.map((e) => `\n[hooks.state.${tomlString(e.key)}]\ntrusted_hash = ${tomlString(e.hash)}\n`);
  appendFileSync(configPath(box), lines.join(''));
}

/**
 * A short JSON-RPC session with `codex app-server` over stdio, the API the TUI
 * itself uses. `script(call)` runs the requests; returns its result.
 */
export async function withAppServer(box, bin, script, { timeoutMs = 30_000 } = {}) {
  const child = spawn(bin, ['app-server'], { cwd: box.ws, env: codexEnv(box), stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  let stderr = '';
  const pending = new Map();
  const notes = [];
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        notes.push(line);
        continue;
      }
      if (msg.id !== undefined && pending.has(msg.id)) {
        pending.get(msg.id)(msg);
        pending.delete(msg.id);
      } else notes.push(msg);
    }
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  let id = 0;
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      id += 1;
      const timer = setTimeout(() => reject(new Error(`app-server ${method} timed out; stderr: ${stderr.slice(-2000)}`)), timeoutMs);
      pending.set(id, (msg) => {
        clearTimeout(timer);
        if (msg.error) reject(new Error(`app-server ${method}: ${JSON.stringify(msg.error)}`));
        else resolve(msg.result);
      });
      child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  try {
    await call('initialize', { clientInfo: { name: 'git-ckpt-tests', title: null, version: '0' } });
    child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`);
    return await script(call, notes);
  } finally {
    child.stdin.end();
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
}

/** What `/hooks` → "trust" does: list the hooks for the workspace, write each current hash. */
export async function trustHooksLikeTui(box, bin) {
  return withAppServer(box, bin, async (call) => {
    const before = await call('hooks/list', { cwds: [box.ws] });
    const hooks = before.data.flatMap((d) => d.hooks);
    const edits = hooks
      .filter((h) => h.trustStatus !== 'trusted' && h.trustStatus !== 'managed')
      .map((h) => ({ keyPath: `hooks.state.${tomlString(h.key)}.trusted_hash`, value: h.currentHash, mergeStrategy: 'upsert' }));
    const write = edits.length ? await call('config/batchWrite', { edits, filePath: null, expectedVersion: null }) : null;
    const after = await call('hooks/list', { cwds: [box.ws] });
    return { before: hooks, write, after: after.data.flatMap((d) => d.hooks), warnings: after.data.flatMap((d) => d.warnings ?? []) };
  });
}

/** hooks/list only (trust status as Codex sees it now). */
export async function listHooks(box, bin) {
  return withAppServer(box, bin, async (call) => (await call('hooks/list', { cwds: [box.ws] })).data.flatMap((d) => d.hooks));
}

// ---------------------------------------------------------------------------
// The scripted model server (OpenAI Responses API, streamed as SSE).
//
// A script is keyed by a marker in the user's prompt, `[[ckpt NAME]]`; it is a
// list of steps, each a list of tool calls answered in one model message (two
// calls = parallel tool calls), then the final text. The server finds the last
// user message carrying a marker, counts the distinct steps whose calls already
// came back after it, and answers the next step: robust to retries, resumes and
// extra context messages. Tool calls: {shell: 'cmd'} becomes an `exec_command`
// function_call; {patch: '*** Begin Patch…'} an `apply_patch` custom_tool_call
// (Codex declares apply_patch as a freeform custom tool).
// ---------------------------------------------------------------------------

const MARKER = /\[\[ckpt ([\w-]+)\]\]/;

function messageText(item) {
  if (typeof item?.content === 'string') return item.content;
  if (!Array.isArray(item?.content)) return '';
  return item.content.map((c) => c?.text ?? '').join('');
}

/** Pure: what the scripted model answers to one /responses request body. */
export function nextAnswer(scripts, body) {
  const input = Array.isArray(body?.input) ? body.input : [];
  let at = -1;
  let name = null;
  for (let i = input.length - 1; i >= 0; i -= 1) {
    const it = input[i];
    if (it?.type === 'message' && it.role === 'user') {
      const m = MARKER.exec(messageText(it));
      if (m) {
        at = i;
        name = m[1];
        break;
      }
    }
  }
  if (name === null || !scripts[name]) return { kind: 'text', text: 'Nothing to do.', name, step: null };
  const script = scripts[name];
  const done = new Set();
  const prefix = `call_${name}_s`;
  for (const it of input.slice(at + 1)) {
    const id = it?.call_id;
    if (
      (it?.type === 'function_call_output' || it?.type === 'custom_tool_call_output') &&
      typeof id === 'string' &&
      id.startsWith(prefix)
    ) {
      done.add(id.slice(prefix.length).split('_')[0]);
    }
  }
  const step = done.size;
  if (step >= script.steps.length) return { kind: 'text', text: script.final ?? `${name} done.`, name, step };
  const calls = script.steps[step].map((c, k) => ({ ...c, callId: `${prefix}${step}_${k}` }));
  return { kind: 'calls', calls, name, step };
}

function sseFrame(event) {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

let seq = 0;
function responseEvents(answer) {
  seq += 1;
  const id = `resp_ckpt_${seq}`;
  const items = [];
  if (answer.kind === 'text') {
    items.push({
      type: 'message',
      role: 'assistant',
      id: `msg_ckpt_${seq}`,
      status: 'completed',
      content: [{ type: 'output_text', text: answer.text, annotations: [] }],
    });
  } else {
    answer.calls.forEach((c, k) => {
      if (c.patch !== undefined)
        items.push({
          type: 'custom_tool_call',
          id: `ctc_ckpt_${seq}_${k}`,
          status: 'completed',
          call_id: c.callId,
          name: 'apply_patch',
          input: c.patch,
        });
      else
        items.push({
          type: 'function_call',
          id: `fc_ckpt_${seq}_${k}`,
          status: 'completed',
          call_id: c.callId,
          name: 'exec_command',
          arguments: JSON.stringify({ cmd: c.shell, yield_time_ms: 10000 }),
        });
    });
  }
  const events = [{ type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } }];
  items.forEach((item, output_index) => {
    events.push({ type: 'response.output_item.added', output_index, item: item.type === 'message' ? { ...item, content: [] } : item });
    if (item.type === 'message')
      events.push({ type: 'response.output_text.delta', output_index, content_index: 0, item_id: item.id, delta: item.content[0].text });
    events.push({ type: 'response.output_item.done', output_index, item });
  });
  events.push({
    type: 'response.completed',
    response: {
      id,
      object: 'response',
      status: 'completed',
      output: items,
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 120,
      },
    },
  });
  return events;
}

/**
 * Start the scripted server. `server.answers` logs every /responses answer
 * ({name, step, calls}); `server.unexpected` every request it did not expect.
 */
export async function startCodexServer(scripts) {
  const server = await startServer(async (req, body, res, srv) => {
    const url = req.url.split('?')[0];
    if (req.method === 'POST' && /\/responses$/.test(url)) {
      const answer = nextAnswer(scripts, body);
      srv.answers.push({ name: answer.name, step: answer.step, kind: answer.kind, calls: answer.calls?.map((c) => c.callId) ?? [] });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const e of responseEvents(answer)) res.write(sseFrame(e));
      res.end();
      return;
    }
    if (req.method === 'POST' && /\/responses\/compact$/.test(url)) {
      srv.unexpected.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ output: [] }));
      return;
    }
    if (req.method === 'GET' && /\/models$/.test(url)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
      return;
    }
    srv.unexpected.push(`${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'not scripted', type: 'invalid_request_error' } }));
  });
  server.answers = [];
  server.unexpected = [];
  return server;
}

// ---------------------------------------------------------------------------
// One turn of the CLI.
// ---------------------------------------------------------------------------

/**
 * Run `codex exec` (or `codex exec resume <id|--last>`) for one prompt in the
 * sandbox's workspace. Returns the process result plus the JSONL events and the
 * thread (= hook session) id.
 */
export async function codexTurn(box, bin, prompt, { resume = null, flags = [], env = {}, timeoutMs = 120_000 } = {}) {
  const common = ['--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...flags];
  const args =
    resume === null
      ? ['exec', ...common, '-C', box.ws, prompt]
      : ['exec', 'resume', ...common, ...(resume === 'last' ? ['--last'] : [resume]), prompt];
  const r = await run(bin, args, { cwd: box.ws, env: codexEnv(box, env), timeoutMs });
  const events = [];
  for (const line of r.stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      events.push(JSON.parse(line));
    } catch {
      /* not an event */
    }
  }
  const thread = events.find((e) => e.type === 'thread.started')?.thread_id ?? null;
  return { ...r, args, events, thread };
}

/** The CLI's own output, for the test log when something fails. */
export function describeRun(r) {
  return `codex ${r.args.slice(0, -1).join(' ')} … → exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout\n${r.stdout.slice(-6000)}\n--- stderr\n${r.stderr.slice(-4000)}`;
}
