// GitHub Copilot CLI (@github/copilot 1.0.102) in the real-agents suite: a scripted
// OpenAI-compatible model server (streaming chat completions with tool_calls deltas)
// and the functions that run one prompt-mode turn of the real CLI, offline, in a sandbox.
//
// Offline: COPILOT_OFFLINE=true and a BYOK provider on 127.0.0.1 (no GitHub login,
// no telemetry, no auto-update, no GitHub MCP server). Any other outbound request
// would go through HTTP(S)_PROXY, which points at a catcher that records it.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { cacheRoot, run, startServer } from './harness.mjs';

export const MODEL = 'gpt-4.1';

/**
 * The CLI unpacks a ~235 MB runtime into ~/.cache/copilot on its first launch.
 * With a temp HOME per sandbox that would happen on every run, so the sandbox's
 * ~/.cache/copilot is a symlink to one directory kept in the agents cache.
 * (XDG_CACHE_HOME works too, but it would also leak into every hook's environment.)
 */
export function runtimeCacheDir(version) {
  const dir = path.join(cacheRoot(), `copilot-${version}-runtime`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function linkRuntimeCache(box, version) {
  const cacheDir = path.join(box.home, '.cache');
  mkdirSync(cacheDir, { recursive: true });
  const link = path.join(cacheDir, 'copilot');
  if (!existsSync(link)) symlinkSync(runtimeCacheDir(version), link);
}

/** Mark a folder trusted the way Copilot records it: `trustedFolders` in ~/.copilot/config.json. */
export function trustFolder(box, folder = box.ws) {
  const dir = path.join(box.home, '.copilot');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'config.json');
  let config = {};
  if (existsSync(file)) {
    // Copilot writes `//` comment lines at the top of this file.
    const text = readFileSync(file, 'utf8').replace(/^\s*\/\/.*$/gm, '');
    try {
      config = JSON.parse(text);
    } catch {
      config = {};
    }
  }
  config.trustedFolders = [...new Set([...(config.trustedFolders ?? []), folder])];
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
}

/**
 * A catcher for anything the CLI would try to reach besides the model server: it is
 * set as HTTP_PROXY/HTTPS_PROXY, and records CONNECT tunnels and plain proxied requests.
 */
export async function startProxyCatcher() {
  const caught = [];
  const srv = http.createServer((req, res) => {
    caught.push(`${req.method} ${req.url}`);
    res.writeHead(403);
    res.end();
  });
  srv.on('connect', (req, socket) => {
    caught.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    caught,
    url: `http://127.0.0.1:${srv.address().port}`,
    close: () =>
      new Promise((resolve) => {
        srv.closeAllConnections?.();
        srv.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------
// The scripted model.
//
// A script maps a marker in the user's prompt (`[[ckpt NAME]]`) to the list of
// assistant messages of that turn: each is an array of tool calls
// `{ name, args }` (several = parallel tool calls in one message) or a string
// (the final text answer). The message to send is chosen by how many assistant
// tool-call messages the conversation already has after the last user prompt
// carrying that marker, so a retried request gets the same answer.
// ---------------------------------------------------------------------------

const MARKER = /\[\[ckpt ([\w-]+)\]\]/;

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : (p?.text ?? ''))).join('');
  return '';
}

/** Pure: which scripted message answers this request, or null for a side request. */
export function pickAnswer(script, body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  let last = -1;
  let name = null;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role !== 'user') continue;
    const m = MARKER.exec(textOf(messages[i].content));
    if (m) {
      last = i;
      name = m[1];
      break;
    }
  }
  if (name === null || !script[name]) return { name, index: -1, answer: null };
  const done = messages
    .slice(last + 1)
    .filter((m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0).length;
  const turn = script[name];
  const answer = done < turn.length ? turn[done] : 'Done.';
  return { name, index: done, answer };
}

function chunk(id, model, delta, finish = null, extra = {}) {
  return {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: 'fp_ckpt',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...extra,
  };
}

/** Write one assistant message as OpenAI chat-completions SSE, the way the real API streams it. */
export function streamAnswer(res, model, answer, callPrefix) {
  const id = `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
  if (typeof answer === 'string') {
    send(chunk(id, model, { role: 'assistant', content: '' }));
    send(chunk(id, model, { content: answer }));
    send(chunk(id, model, {}, 'stop'));
  } else {
    send(chunk(id, model, { role: 'assistant', content: null }));
    answer.forEach((call, index) => {
      const args = JSON.stringify(call.args);
      const half = Math.ceil(args.length / 2);
      // The id and name first, then the arguments in pieces, as the real API does.
      send(
        chunk(id, model, {
          tool_calls: [{ index, id: `${callPrefix}_${index}`, type: 'function', function: { name: call.name, arguments: '' } }],
        }),
      );
      send(chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
      send(chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
    });
    send(chunk(id, model, {}, 'tool_calls'));
  }
  res.write(
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [], usage })}\n\n`,
  );
  res.write('data: [DONE]\n\n');
  res.end();
}

/**
 * Start the scripted model server. `server.unexpected` lists requests it did not
 * expect (logged for debugging); `server.answered` what it answered, in order.
 */
export async function startCopilotModel(script) {
  const server = await startServer((req, body, res, srv) => {
    const url = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && url.endsWith('/chat/completions')) {
      const { name, index, answer } = pickAnswer(script, body);
      if (answer === null) srv.unexpected.push(`${req.method} ${req.url} (no scripted turn for ${name ?? 'a prompt without marker'})`);
      srv.answered.push({ name, index, answer: answer === null ? 'OK.' : answer });
      const model = typeof body?.model === 'string' ? body.model : MODEL;
      if (body?.stream === false) {
        // A non-streaming side request (title, summary): a harmless text answer.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-side',
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'OK.' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
        return;
      }
      streamAnswer(res, model, answer === null || typeof answer === 'string' ? (answer ?? 'OK.') : answer, `call_${name}_${index}`);
      return;
    }
    if (req.method === 'GET' && url.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model', created: 0, owned_by: 'ckpt' }] }));
      return;
    }
    srv.unexpected.push(`${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'not scripted' } }));
  });
  server.unexpected = [];
  server.answered = [];
  return server;
}

// ---------------------------------------------------------------------------
// Running the CLI.
// ---------------------------------------------------------------------------

/** The environment that keeps Copilot offline, on the scripted provider, with a temp HOME. */
export function copilotEnv(box, { model, proxy, trace, extra = {} }) {
  return {
    ...box.env,
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`,
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_WIRE_API: 'completions',
    COPILOT_PROVIDER_API_KEY: 'sk-ckpt-test-not-a-key',
    COPILOT_MODEL: MODEL,
    COPILOT_AUTO_UPDATE: 'false',
    USE_TGREP: 'false',
    NO_COLOR: '1',
    ...(proxy
      ? {
          HTTP_PROXY: proxy.url,
          HTTPS_PROXY: proxy.url,
          http_proxy: proxy.url,
          https_proxy: proxy.url,
          NO_PROXY: '127.0.0.1,localhost',
          no_proxy: '127.0.0.1,localhost',
        }
      : {}),
    ...(trace ? { GIT_CKPT_HOOK_TRACE: trace } : {}),
    ...extra,
  };
}

const BASE_FLAGS = [
  '--allow-all-tools',
  '--no-auto-update',
  '--no-ask-user',
  '--disable-builtin-mcps',
  '--no-custom-instructions',
  '--log-level',
  'none',
];

/**
 * One prompt-mode turn. `session`: a UUID for a new session (`--session-id`), or
 * `{ resume: id }` / `{ continue: true }` for the next turn of an existing one.
 * Returns { code, stdout, stderr, sessionId (as printed by the CLI), ms }.
 */
export async function copilotTurn(agent, box, prompt, { env, session, trustFolder = false, timeoutMs = 120_000 } = {}) {
  const args = [...BASE_FLAGS];
  if (session?.resume) args.push(`--resume=${session.resume}`);
  else if (session?.continue) args.push('--continue');
  else if (session?.id) args.push(`--session-id=${session.id}`);
  if (trustFolder) args.push('--trust-folder');
  args.push('-p', prompt);
  const started = Date.now();
  const r = await run(agent.bin, args, { cwd: box.ws, env, timeoutMs });
  const printed = /--resume=([0-9a-f-]{36})/.exec(`${r.stdout}\n${r.stderr}`);
  return { ...r, args, sessionId: printed ? printed[1] : null, ms: Date.now() - started };
}

export { readTrace } from './harness.mjs';

/** Pure: the trace as compact `agent phase[:tool]` strings. */
export function traceEvents(trace) {
  return trace.map((e) => `${e.agent} ${e.phase}${e.tool ? `:${e.tool}` : ''}`);
}
