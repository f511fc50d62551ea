// Claude Code, driven offline: a scripted Anthropic Messages API server on
// 127.0.0.1 (SSE streaming exactly as the CLI requests it) and one session turn
// of the real CLI (`claude -p`, then `--continue`) in a sandbox.
//
// The server decides every answer from the request alone: the latest user
// message carrying a marker `[[ckpt NAME]]` names the script, and the number of
// assistant messages after it is the step. A `<task-notification>` prompt (a
// background subagent finished) is answered with a final text. Requests without
// tools (title or summary generation and the like) get a harmless text, and
// `count_tokens` a small count. Anything else is logged in `server.unexpected`.
// The server is also the CLI's HTTP(S) proxy: a request for any other host
// (telemetry, updates, login) is refused and logged in `server.outbound`.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { run } from './harness.mjs';

export const marker = (name) => `[[ckpt ${name}]]`;
const MARK = /\[\[ckpt ([A-Za-z0-9_-]+)\]\]/;

/** Text of a message's own text blocks (not of tool results). */
function textOf(message) {
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? [])
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
}
const hasToolResult = (message) => Array.isArray(message.content) && message.content.some((b) => b.type === 'tool_result');

/**
 * Which script and step a /v1/messages request is at: { script, step } or
 * { notification: true } or null. The step is the number of assistant messages
 * since the user's marked prompt.
 */
export function locate(body) {
  const messages = (body?.messages ?? []).filter((m) => m.role === 'user' || m.role === 'assistant');
  let assistants = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'assistant') {
      assistants += 1;
      continue;
    }
    const text = textOf(m);
    const found = MARK.exec(text);
    if (found) return { script: found[1], step: assistants };
    // A notification that arrives alone (not riding on tool results) is its own exchange.
    if (assistants === 0 && text.includes('<task-notification>') && !hasToolResult(m)) return { notification: true };
  }
  return null;
}

/**
 * Start the scripted server. `scripts[name]` is an array of steps; a step is
 * { tools: [{ name, input }], text? } (one assistant message with those tool_use
 * blocks, several = parallel calls) or { text } (the final answer, end_turn).
 * Steps past the end answer "Done." Every emitted tool call is kept in
 * `server.calls` as { id, name, input, script, step }.
 */
export async function startClaudeServer(scripts) {
  const server = { requests: [], calls: [], unexpected: [], outbound: [], url: '', port: 0 };
  let counter = 0;
  const nextId = (prefix) => `${prefix}_ckpt${String(++counter).padStart(4, '0')}`;

  const sendStream = (res, body, blocks, stopReason) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': nextId('req'),
    });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('message_start', {
      message: {
        id: nextId('msg'),
        type: 'message',
        role: 'assistant',
        model: body.model ?? 'claude-scripted',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    blocks.forEach((block, index) => {
      if (block.type === 'text') {
        ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
      } else {
        ev('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        const json = JSON.stringify(block.input);
        const cut = Math.floor(json.length / 2);
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(0, cut) } });
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(cut) } });
      }
      ev('content_block_stop', { index });
    });
    ev('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
    ev('message_stop', {});
    res.end();
  };
  const sendJson = (res, status, value) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': nextId('req') });
    res.end(JSON.stringify(value));
  };
  const answer = (res, body, blocks, stopReason) => {
    if (body?.stream) return sendStream(res, body, blocks, stopReason);
    return sendJson(res, 200, {
      id: nextId('msg'),
      type: 'message',
      role: 'assistant',
      model: body?.model ?? 'claude-scripted',
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 20 },
    });
  };
  const text = (t) => [{ type: 'text', text: t }];

  const handle = (req, body, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: 42 });
    if (req.method === 'GET' && url.pathname.startsWith('/v1/models'))
      return sendJson(res, 200, { data: [], has_more: false, first_id: null, last_id: null });
    if (req.method !== 'POST' || url.pathname !== '/v1/messages') {
      server.unexpected.push(`${req.method} ${req.url}`);
      return sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'not scripted' } });
    }
    // Side requests (titles, summaries, classifiers) come without tools.
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return answer(res, body, text('Scripted session'), 'end_turn');
    const at = locate(body);
    if (!at) {
      server.unexpected.push(
        `POST /v1/messages without a marker: ${JSON.stringify(body.messages?.map((m) => [m.role, textOf(m).slice(0, 80)]))}`,
      );
      return answer(res, body, text('Nothing scripted.'), 'end_turn');
    }
    if (at.notification) return answer(res, body, text('Noted: the background task finished.'), 'end_turn');
    const script = scripts[at.script];
    if (!script) server.unexpected.push(`unknown script ${at.script}`);
    const step = script?.[at.step] ?? { text: 'Done.' };
    if (!step.tools?.length) return answer(res, body, text(step.text ?? 'Done.'), 'end_turn');
    const blocks = [];
    if (step.text) blocks.push({ type: 'text', text: step.text });
    for (const tool of step.tools) {
      const id = nextId('toolu');
      server.calls.push({ id, name: tool.name, input: tool.input, script: at.script, step: at.step });
      blocks.push({ type: 'tool_use', id, name: tool.name, input: tool.input });
    }
    return answer(res, body, blocks, 'tool_use');
  };

  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
      // A proxied plain-HTTP request names another host: never answered.
      if (/^https?:\/\//.test(req.url) && !req.url.startsWith(server.url)) {
        server.outbound.push(`${req.method} ${req.url}`);
        res.writeHead(403);
        return res.end();
      }
      server.requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      try {
        handle(req, body, res);
      } catch (err) {
        server.unexpected.push(`handler error: ${err?.stack ?? err}`);
        if (!res.headersSent) sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
      }
    });
  });
  // HTTPS through the proxy: refused and logged.
  srv.on('connect', (req, socket) => {
    server.outbound.push(`CONNECT ${req.url}`);
    socket.on('error', () => {});
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  server.port = srv.address().port;
  server.url = `http://127.0.0.1:${server.port}`;
  server.close = () =>
    new Promise((resolve) => {
      srv.closeAllConnections?.();
      srv.close(() => resolve());
    });
  return server;
}

/** Everything that keeps the CLI offline and non-interactive. */
export function claudeEnv(box, server, extra = {}) {
  return {
    ...box.env,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-dummy-offline-key',
    // Any other host goes through our server, which refuses and logs it.
    HTTPS_PROXY: server.url,
    HTTP_PROXY: server.url,
    https_proxy: server.url,
    http_proxy: server.url,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_UPDATES: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    DISABLE_FEEDBACK_COMMAND: '1',
    DISABLE_GROWTHBOOK: '1',
    DISABLE_INSTALLATION_CHECKS: '1',
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
    CLAUDE_CODE_DISABLE_FEATURE_FLAGS: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
    CLAUDE_CODE_ENABLE_TELEMETRY: '0',
    // --dangerously-skip-permissions is refused as root unless the CLI is told it runs in a sandbox.
    IS_SANDBOX: '1',
    ...extra,
  };
}

/**
 * Run one turn: `claude -p PROMPT` (with `--continue` when `resume` is true, or
 * `--resume ID` when it is a session id) in the workspace. Resolves with
 * { code, signal, stdout, stderr, ms, args }.
 */
export function runClaude(bin, box, server, prompt, { resume = false, env = {}, timeoutMs = 120_000, debugFile } = {}) {
  const args = ['-p', prompt, '--dangerously-skip-permissions', '--output-format', 'text'];
  if (resume === true) args.push('--continue');
  else if (typeof resume === 'string') args.push('--resume', resume);
  if (debugFile) args.push('--debug-file', debugFile);
  const started = Date.now();
  return run(bin, args, { cwd: box.ws, env: claudeEnv(box, server, env), stdin: 'ignore', timeoutMs }).then((r) => ({
    ...r,
    ms: Date.now() - started,
    args,
  }));
}

export { readTrace } from './harness.mjs';

/** "Event:Tool" (with "@sub" for a subagent's events) per trace line, for compact assertions. */
export function traceEvents(trace) {
  return trace.map((t) => {
    const p = typeof t.payload === 'object' && t.payload ? t.payload : {};
    return `${p.hook_event_name ?? t.phase}${p.tool_name ? `:${p.tool_name}` : ''}${p.agent_id ? '@sub' : ''}`;
  });
}

export const tracePath = (box) => path.join(box.base, 'hook-trace.jsonl');

/**
 * Claude's matcher rule (hooks docs, "Matcher patterns"): `*`, "" or none match
 * everything; only letters, digits, `_`, `-`, spaces, `,` and `|` is a list of
 * exact names; anything else is an unanchored JavaScript regex.
 */
export function claudeMatcherMatches(matcher, tool) {
  if (matcher === undefined || matcher === null || matcher === '' || matcher === '*') return true;
  if (/^[A-Za-z0-9_\- ,|]+$/.test(matcher))
    return matcher
      .split(/[|,]/)
      .map((s) => s.trim())
      .includes(tool);
  return new RegExp(matcher).test(tool);
}

/** The hook wiring of a Claude settings file: which events fire, for which tools. */
export function claudeWiring(settingsFile) {
  const hooks = JSON.parse(readFileSync(settingsFile, 'utf8')).hooks ?? {};
  return {
    events: Object.keys(hooks),
    fires(event, tool) {
      const groups = hooks[event];
      if (!groups) return false;
      return tool === undefined || groups.some((g) => claudeMatcherMatches(g.matcher, tool));
    },
  };
}

/**
 * Of a full list of "Event:Tool" / "Event:Tool@sub" / "Event" strings (what the
 * CLI emits), the ones the wiring makes fire.
 */
export function wiredEvents(wiring, full) {
  return full.filter((e) => {
    const [event, rest] = e.replace(/@sub$/, '').split(':');
    return wiring.fires(event, rest);
  });
}
