// Gemini CLI (@google/gemini-cli 0.61.0) driven offline: a scripted model server that
// speaks the Gemini API the CLI calls (POST /v1beta/models/<model>:streamGenerateContent?alt=sse,
// :generateContent, :countTokens, model listing), the sandbox config that keeps the CLI
// away from every real Google endpoint, and one function that runs one session turn.
//
// How the server decides: each turn's user prompt carries a marker `[[ckpt NAME]]`; the
// script for NAME is a list of steps (an array of function calls, answered as ONE model
// message: parallel calls, or a final text). The step index is the number of model
// messages with function calls already in the conversation after the marked prompt.
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { run, startServer } from './harness.mjs';

export const MODEL = 'gemini-2.5-flash';

/** The text of every user part of one Content. */
function textOf(content) {
  return (content?.parts ?? []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

/**
 * Where the conversation is: the name of the last marked user prompt and how many
 * model messages with function calls followed it.
 */
export function conversationState(body) {
  const contents = Array.isArray(body?.contents) ? body.contents : [];
  let markerAt = -1;
  let name = null;
  for (let i = 0; i < contents.length; i++) {
    if (contents[i].role !== 'user') continue;
    const m = /\[\[ckpt ([\w-]+)\]\]/.exec(textOf(contents[i]));
    if (m) {
      markerAt = i;
      name = m[1];
    }
  }
  let step = 0;
  for (let i = markerAt + 1; i < contents.length; i++) {
    if (contents[i].role === 'model' && (contents[i].parts ?? []).some((p) => p.functionCall)) step++;
  }
  return { name, step, markerAt };
}

function candidate(parts, finishReason = 'STOP') {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: MODEL,
  };
}

function sendSse(res, chunks) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end();
}

function sendJson(res, obj, status = 200) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}

/**
 * An answer for a side request (next-speaker check, routing classifier, loop check,
 * summaries): a JSON object when the request asks for one, otherwise a short text.
 */
function sideAnswer(body) {
  const gc = body?.generationConfig ?? {};
  const schema = gc.responseJsonSchema ?? gc.responseSchema;
  if (schema || gc.responseMimeType === 'application/json') {
    const props = schema?.properties ?? {};
    const obj = {};
    for (const [k, v] of Object.entries(props)) {
      if (k === 'next_speaker') obj[k] = 'user';
      else if (k === 'model_choice') obj[k] = 'flash';
      else if (/confidence/i.test(k)) obj[k] = 0;
      else if (v?.type === 'boolean' || v?.type === 'BOOLEAN') obj[k] = false;
      else if (v?.type === 'number' || v?.type === 'integer' || v?.type === 'NUMBER' || v?.type === 'INTEGER') obj[k] = 0;
      else if (v?.type === 'array' || v?.type === 'ARRAY') obj[k] = [];
      else if (v?.enum) obj[k] = v.enum[0];
      else obj[k] = 'n/a';
    }
    return candidate([{ text: JSON.stringify(obj) }]);
  }
  return candidate([{ text: 'ok' }]);
}

/**
 * Start the scripted Gemini API server. `scripts` maps a marker name to its steps:
 * each step is `{ calls: [{ name, args }] }` (one model message; several calls = parallel)
 * or `{ text }` (the final answer). Past the last step the server answers the last text.
 * Every request that is not a scripted turn is logged in `server.unexpected`.
 */
export async function startGeminiServer(scripts) {
  const server = await startServer((req, body, res, srv) => {
    const url = new URL(req.url, 'http://x');
    const p = url.pathname;
    const turnLog = (srv.turns ??= []);
    const unexpected = (srv.unexpected ??= []);
    if (req.method === 'POST' && /:streamGenerateContent$/.test(p)) {
      const { name, step } = conversationState(body);
      // The agent's own turn declares its tools; a side request (summary, classifier) does not,
      // even when it quotes the marked prompt.
      const hasTools = (body?.tools ?? []).some((t) => (t.functionDeclarations ?? []).length > 0);
      const script = hasTools && name && scripts[name];
      if (!script) {
        unexpected.push({ url: req.url, why: 'stream without marker', body });
        return sendSse(res, [sideAnswer(body)]);
      }
      const s = script[Math.min(step, script.length - 1)];
      turnLog.push({ name, step, calls: s.calls?.map((c) => c.name) ?? null });
      if (s.calls) {
        // One chunk: every call of the step (parallel calls) in one model message, finishReason STOP.
        return sendSse(res, [candidate(s.calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })))]);
      }
      // Text split over two chunks, like the real API.
      const half = Math.ceil(s.text.length / 2);
      return sendSse(res, [
        { candidates: [{ content: { role: 'model', parts: [{ text: s.text.slice(0, half) }] }, index: 0 }], modelVersion: MODEL },
        candidate([{ text: s.text.slice(half) }]),
      ]);
    }
    if (req.method === 'POST' && /:generateContent$/.test(p)) {
      unexpected.push({ url: req.url, why: 'generateContent (side request)', body });
      return sendJson(res, sideAnswer(body));
    }
    if (req.method === 'POST' && /:countTokens$/.test(p)) return sendJson(res, { totalTokens: 100 });
    if (req.method === 'POST' && /:embedContent$|:batchEmbedContents$/.test(p)) {
      unexpected.push({ url: req.url, why: 'embedding' });
      return sendJson(res, { embedding: { values: [0] }, embeddings: [] });
    }
    if (req.method === 'GET' && /\/models\/?$/.test(p)) return sendJson(res, { models: [{ name: `models/${MODEL}`, displayName: MODEL }] });
    if (req.method === 'GET' && /\/models\/[^/]+$/.test(p))
      return sendJson(res, { name: `models/${MODEL}`, inputTokenLimit: 1048576, outputTokenLimit: 65536 });
    unexpected.push({ url: req.url, method: req.method, why: 'unknown endpoint', body });
    return sendJson(res, { error: { code: 404, message: `not scripted: ${req.method} ${req.url}`, status: 'NOT_FOUND' } }, 404);
  });
  server.turns = [];
  server.unexpected = [];
  return server;
}

/**
 * Configure Gemini in the sandbox's HOME: API-key auth (the key is a dummy; the base URL is
 * the scripted server), no telemetry, no usage statistics, no update check, the workspace a
 * trusted folder (0.61 treats an unlisted folder as untrusted: project hooks and --yolo are
 * refused there). Returns the env for the CLI.
 */
export function configureGemini(box, server, { trust = true, extraSettings = {} } = {}) {
  const dir = path.join(box.home, '.gemini');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'settings.json');
  const current = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const settings = {
    ...current,
    security: { ...(current.security ?? {}), auth: { selectedType: 'gemini-api-key' } },
    telemetry: { enabled: false, logPrompts: false },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    ui: { hideTips: true, hideBanner: true },
    ide: { enabled: false },
    model: { name: MODEL },
    ...extraSettings,
  };
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
  if (trust) writeFileSync(path.join(dir, 'trustedFolders.json'), `${JSON.stringify({ [box.ws]: 'TRUST_FOLDER' }, null, 2)}\n`);
  return {
    ...box.env,
    GEMINI_API_KEY: 'dummy-offline-key',
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_TELEMETRY_ENABLED: 'false',
    NO_BROWSER: 'true',
    CI: '1',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    HTTPS_PROXY: '',
    HTTP_PROXY: '',
    https_proxy: '',
    http_proxy: '',
  };
}

/**
 * Run one turn of the CLI: `gemini -p PROMPT --approval-mode yolo -m MODEL --output-format json
 * [--resume latest]`. Resolves with { code, stdout, stderr, ms, args, json, sessionId } where
 * `json` is the CLI's JSON result ({ session_id, response, stats }) when stdout holds one.
 */
export async function runGeminiTurn(agent, box, env, prompt, { resume = false, timeoutMs = 120_000 } = {}) {
  const args = ['-p', prompt, '--approval-mode', 'yolo', '-m', MODEL, '--output-format', 'json'];
  if (resume) args.push('--resume', 'latest');
  const t0 = Date.now();
  const r = await run(agent.bin, args, { cwd: box.ws, env, timeoutMs });
  let json = null;
  try {
    const start = r.stdout.indexOf('{');
    json = start >= 0 ? JSON.parse(r.stdout.slice(start)) : null;
  } catch {
    json = null;
  }
  return { ...r, ms: Date.now() - t0, args, json, sessionId: json?.session_id ?? null };
}

/** One line about a CLI run for the test log: exit, time, and the tails of stdout and stderr. */
export function describeRun(label, r) {
  const head = (s, n = 600) => (s.length > n ? `${s.slice(0, n)}…` : s);
  const tail = (s, n = 1500) => (s.length > n ? `…${s.slice(-n)}` : s);
  // The JSON result's session id and response come first; its stats are noise.
  const out = r.json ? JSON.stringify({ session_id: r.json.session_id, response: r.json.response, error: r.json.error }) : head(r.stdout);
  return `${label}: exit ${r.code}${r.signal ? ` (${r.signal})` : ''} in ${r.ms} ms\n  args: ${JSON.stringify(r.args)}\n  stdout: ${out}\n  stderr: ${tail(r.stderr)}`;
}

export { readTrace } from './harness.mjs';
