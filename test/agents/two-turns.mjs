// The agents issue 23 added, in the real-agents suite: OpenCode (opencode-ai), Kilo Code CLI (@kilocode/cli,
// its fork) and pi (@earendil-works/pi-coding-agent), wired through an in-process plugin, and Qwen Code
// (@qwen-code/qwen-code), wired through Claude-style command hooks. A driver per agent: its config on the
// scripted chat-completions server (copilot.mjs's), its environment, one non-interactive run of the real
// CLI, and its tools' names and arguments; then one two-turn scenario they all go through (`twoTurnScenario`).
// What they deliver: docs/research/opencode.md, docs/research/pi.md, docs/research/qwen-code.md.
//
// Offline, OpenCode and Kilo: the provider is an @ai-sdk/openai-compatible one at 127.0.0.1 (bundled in the
// binary); the models list, auto-update, LSP downloads and sharing are off; ~/.npmrc points npm at a dead
// registry (the install of @opencode-ai/plugin a local plugin triggers may still reach the registry through
// Bun's own installer: it lands in the plugin folder's node_modules, ignored by the .gitignore OpenCode writes).
// Offline, pi: a provider in <agent dir>/models.json, PI_OFFLINE=1 (no version check, no telemetry).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  addresses,
  ckpt,
  flushDaemon,
  ckptJson,
  git,
  gitDirFingerprint,
  ledgerRecords,
  readTrace,
  run,
  storeText,
  testSandbox,
  workspaceFiles,
} from './harness.mjs';
import { startCopilotModel } from './copilot.mjs';

/** The agents of this family: where each keeps its user config, and the variables it reads. */
const FAMILY = {
  opencode: { configDir: 'opencode', configFile: 'opencode.json', envPrefix: 'OPENCODE', extraEnv: {} },
  // Kilo renamed every variable (no OPENCODE_* is read); these also keep its background daemon, telemetry,
  // session upload and presence off. Its own test setup's KILO_PURE would disable plugins: not set.
  kilo: {
    configDir: 'kilo',
    configFile: 'kilo.json',
    envPrefix: 'KILO',
    extraEnv: { KILO_NO_DAEMON: '1', KILO_TELEMETRY_LEVEL: 'off', KILO_DISABLE_SESSION_INGEST: '1', KILO_DISABLE_PRESENCE: '1' },
  },
};

/** The user config: the scripted provider as the only model. */
function writeFamilyConfig(box, name, model) {
  const dir = path.join(box.home, '.config', FAMILY[name].configDir);
  mkdirSync(dir, { recursive: true });
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    provider: {
      local: {
        npm: '@ai-sdk/openai-compatible',
        name: 'local',
        options: { baseURL: `${model.url}/v1`, apiKey: 'sk-ckpt-test-not-a-key' },
        models: { m: { name: 'm', tool_call: true } },
      },
    },
    model: 'local/m',
    small_model: 'local/m',
    // Kilo: without it its own gateway is offered too.
    enabled_providers: ['local'],
  };
  writeFileSync(path.join(dir, FAMILY[name].configFile), `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(path.join(box.home, '.npmrc'), 'registry=http://127.0.0.1:9/\nfetch-retries=0\n');
}

function familyEnv(box, name, trace) {
  const { envPrefix, extraEnv } = FAMILY[name];
  const off = {};
  for (const what of ['DISABLE_MODELS_FETCH', 'DISABLE_AUTOUPDATE', 'DISABLE_LSP_DOWNLOAD', 'DISABLE_SHARE'])
    off[`${envPrefix}_${what}`] = '1';
  return {
    ...box.env,
    ...off,
    ...extraEnv,
    // It takes the project from $PWD, not from the process's working directory.
    PWD: box.ws,
    NO_COLOR: '1',
    GIT_CKPT_HOOK_TRACE: trace,
  };
}

/**
 * One `run` of the CLI: a new session, or the next turn of `session`. stdin is closed: with an open one
 * `run` waits for a prompt there. Returns { code, stdout, stderr, sessionId, ms }.
 */
// Five minutes: OpenCode's first run in a fresh HOME waits on Bun's install of its plugin package against the
// dead registry (40-120 s idle here), and under the suite's load one such start ran past three (CI, 2026-12-02).
async function familyTurn(agent, box, prompt, { env, session, timeoutMs = 300_000 }) {
  const args = ['run', '--format', 'json', ...(session ? ['--session', session] : []), prompt];
  const started = Date.now();
  const r = await run(agent.bin, args, { cwd: box.ws, env, stdin: 'ignore', timeoutMs });
  const sessionId = /"sessionID":"(ses_[A-Za-z0-9]+)"/.exec(r.stdout)?.[1] ?? null;
  return { ...r, args, sessionId, ms: Date.now() - started };
}

const SECRET = 'ckpt-SECRET-5c0e9d21';

/** OpenCode's and Kilo's tools: absolute paths, as they take them. */
const FAMILY_TOOLS = {
  names: { write: 'write', edit: 'edit', bash: 'bash' },
  write: (file, content) => ({ name: 'write', args: { filePath: file, content } }),
  edit: (file, oldText, newText) => ({ name: 'edit', args: { filePath: file, oldString: oldText, newString: newText } }),
  bash: (command, description) => ({ name: 'bash', args: { command, description } }),
};

/** pi: its agent folder under HOME, the scripted provider in its models.json. */
function writePiConfig(box, model) {
  const dir = path.join(box.home, '.pi', 'agent');
  mkdirSync(dir, { recursive: true });
  const models = {
    providers: {
      local: {
        baseUrl: `${model.url}/v1`,
        api: 'openai-completions',
        apiKey: 'sk-ckpt-test-not-a-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: 'm', reasoning: false, contextWindow: 32000, maxTokens: 4096 }],
      },
    },
  };
  writeFileSync(path.join(dir, 'models.json'), `${JSON.stringify(models, null, 2)}\n`);
}

/**
 * One `pi -p` run (print mode; stdin closed). Both turns name the same session file, which pi creates on the
 * first: the session id is in its first line.
 */
async function piTurn(agent, box, prompt, { env, session, timeoutMs = 180_000 }) {
  const file = session ?? path.join(box.base, 'pi-session.jsonl');
  const args = ['--provider', 'local', '--model', 'm', '--session', file, '-p', prompt];
  const started = Date.now();
  const r = await run(agent.bin, args, { cwd: box.ws, env, stdin: 'ignore', timeoutMs });
  let sessionId = null;
  try {
    sessionId = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]).id ?? null;
  } catch {
    /* no session file: the run failed, and the test says so */
  }
  return { ...r, args, sessionId, session: file, ms: Date.now() - started };
}

/** What the scenario needs of each agent. */
export const DRIVERS = {
  opencode: {
    setup: (box, model) => writeFamilyConfig(box, 'opencode', model),
    env: (box, trace) => familyEnv(box, 'opencode', trace),
    turn: familyTurn,
    tools: FAMILY_TOOLS,
    // OpenCode caches its project id in .git/opencode: its own file, not git-ckpt's.
    ownGitFiles: /^[fd] \.git\/opencode( |\/)/,
  },
  kilo: {
    setup: (box, model) => writeFamilyConfig(box, 'kilo', model),
    env: (box, trace) => familyEnv(box, 'kilo', trace),
    turn: familyTurn,
    tools: FAMILY_TOOLS,
    // Kilo keeps its project id in .git/kilo and refs of its own under .git/refs/kilo.
    ownGitFiles: /^[fd] \.git\/(kilo|refs\/kilo)( |\/)/,
  },
  pi: {
    setup: writePiConfig,
    env: (box, trace) => ({ ...box.env, PI_OFFLINE: '1', PI_TELEMETRY: '0', NO_COLOR: '1', GIT_CKPT_HOOK_TRACE: trace }),
    turn: piTurn,
    tools: {
      names: { write: 'write', edit: 'edit', bash: 'bash' },
      write: (file, content) => ({ name: 'write', args: { path: file, content } }),
      edit: (file, oldText, newText) => ({ name: 'edit', args: { path: file, edits: [{ oldText, newText }] } }),
      bash: (command) => ({ name: 'bash', args: { command } }),
    },
    ownGitFiles: null,
  },
  qwen: {
    setup: () => {},
    env: (box, trace, model) => ({
      ...box.env,
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: 'sk-ckpt-test-not-a-key',
      OPENAI_MODEL: 'm',
      NO_COLOR: '1',
      GIT_CKPT_HOOK_TRACE: trace,
    }),
    turn: qwenTurn,
    tools: {
      names: { write: 'write_file', edit: 'edit', bash: 'run_shell_command' },
      write: (file, content) => ({ name: 'write_file', args: { file_path: file, content } }),
      edit: (file, oldText, newText) => ({ name: 'edit', args: { file_path: file, old_string: oldText, new_string: newText } }),
      bash: (command, description) => ({ name: 'run_shell_command', args: { command, description, is_background: false } }),
      read: (file) => ({ name: 'read_file', args: { file_path: file } }),
    },
    ownGitFiles: null,
    // Its hooks are in its settings.json, which stays when they are removed if it holds settings of the user's (it goes when it held only ours).
    config: true,
  },
  cline: {
    setup: writeClineConfig,
    env: (box, trace) => ({
      ...box.env,
      CLINE_NO_AUTO_UPDATE: '1',
      CLINE_SESSION_BACKEND_MODE: 'local',
      // ACP reads its provider from these, not from `cline auth`'s file.
      CLINE_PROVIDER: 'openai-compatible',
      CLINE_API_KEY: 'sk-ckpt-test-not-a-key',
      NO_COLOR: '1',
      GIT_CKPT_HOOK_TRACE: trace,
    }),
    turn: clineTurn,
    tools: {
      names: { write: 'apply_patch', edit: 'apply_patch', bash: 'run_commands' },
      write: (file, content) =>
        clinePatch(
          `*** Add File: ${file}\n${content
            .replace(/\n$/, '')
            .split('\n')
            .map((l) => `+${l}`)
            .join('\n')}`,
        ),
      edit: (file, oldText, newText) => clinePatch(`*** Update File: ${file}\n@@\n-${oldText}\n+${newText}`),
      bash: (command) => ({ name: 'run_commands', args: { commands: [command] } }),
    },
    ownGitFiles: null,
    // No hook gets the user's prompt (its UserPromptSubmit fires only for the messages it adds itself).
    untitled: true,
  },
  droid: {
    setup: writeDroidConfig,
    // Airgapped: no Factory account, no cloud sync, no telemetry (5 s less per run), no update check.
    env: (box, trace) => ({
      ...box.env,
      FACTORY_AIRGAP_ENABLED: '1',
      FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
      NO_COLOR: '1',
      GIT_CKPT_HOOK_TRACE: trace,
    }),
    turn: droidTurn,
    // `droid exec` runs project hooks in any folder; the interactive one only in a trusted folder.
    verdict: { project: 'unknown' },
    // It sends no post for a failed call: the next call's pre records its changes, as failed, without the exit code.
    failedShell: /^failed \(Droid sends no post for a failed call\)$/,
    tools: {
      names: { write: 'Create', edit: 'Edit', bash: 'Execute' },
      write: (file, content) => ({ name: 'Create', args: { file_path: file, content } }),
      edit: (file, oldText, newText) => ({ name: 'Edit', args: { file_path: file, old_str: oldText, new_str: newText } }),
      bash: (command, description) => ({
        name: 'Execute',
        args: { command, summary: description ?? command, riskLevel: 'low', riskLevelReason: 'a test' },
      }),
    },
    // Droid touches .git/.factory-scm-trigger (its own file there) to notice git changes.
    ownGitFiles: /^f \.git\/\.factory-scm-trigger /,
    config: true,
  },
};

/** Droid: its BYOK model on the scripted server, in ~/.factory/settings.json (no Factory login needed). */
function writeDroidConfig(box, model) {
  const dir = path.join(box.home, '.factory');
  mkdirSync(dir, { recursive: true });
  const settings = {
    customModels: [
      {
        model: 'm',
        displayName: 'Local',
        baseUrl: `${model.url}/v1`,
        apiKey: 'sk-ckpt-test-not-a-key',
        provider: 'generic-chat-completion-api',
        maxOutputTokens: 4096,
      },
    ],
  };
  writeFileSync(path.join(dir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
}

/** Call `onMessage` with each JSON line a child writes on stdout (others skipped); returns what it wrote in all. */
function readJsonLines(child, onMessage) {
  const out = { stdout: '', stderr: '' };
  let buffered = '';
  child.stdout.on('data', (chunk) => {
    out.stdout += chunk;
    buffered += chunk;
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i).trim();
      buffered = buffered.slice(i + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      onMessage(message);
    }
  });
  child.stderr.on('data', (d) => (out.stderr += d));
  child.stdin.on('error', () => {});
  return out;
}

/**
 * One Droid turn through `droid exec`'s JSON-RPC mode, the only headless one that fires
 * UserPromptSubmit: a session started (or loaded, for the next turn), one user message, then stdin
 * closed once Droid reports itself idle.
 */
function droidTurn(agent, box, prompt, { env, session, timeoutMs = 180_000 }) {
  const args = ['exec', '--input-format', 'stream-jsonrpc', '--output-format', 'stream-jsonrpc'];
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(agent.bin, args, { cwd: box.ws, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let sessionId = session ?? null;
    let sent = 0;
    let promptId = null;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const request = (method, params) => {
      const id = String(++sent);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', factoryApiVersion: '1.0.0', type: 'request', id, method, params })}\n`);
      return id;
    };
    // Droid starts its MCP servers as the session opens; the prompt waits until their tools
    // are listed (15 s at most), so that the model is told their names.
    const mcpWaitUntil = Date.now() + 15_000;
    let pollId = null;
    const prompting = () => {
      promptId = request('droid.add_user_message', { text: prompt });
    };
    const out = readJsonLines(child, (message) => {
      // A tool it asks leave for (an MCP tool, at autonomy low): allowed once, as a person would.
      if (message.type === 'request' && message.method === 'droid.request_permission')
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', factoryApiVersion: '1.0.0', type: 'response', id: message.id, result: { selectedOption: 'proceed_once' } })}\n`,
        );
      if (message.type === 'response' && message.id === '1') {
        sessionId ??= message.result?.sessionId ?? message.result?.session?.id ?? null;
        if (existsSync(path.join(box.ws, '.factory', 'mcp.json'))) pollId = request('droid.list_mcp_tools', {});
        else prompting();
      }
      if (message.type === 'response' && pollId !== null && message.id === pollId) {
        pollId = null;
        if (JSON.stringify(message.result ?? '').includes('checkpoint_list') || Date.now() > mcpWaitUntil) prompting();
        else setTimeout(() => (pollId = request('droid.list_mcp_tools', {})), 200);
      }
      const note = message.params?.notification;
      if (message.type === 'response' && message.id === promptId && message.error) child.stdin.end();
      if (note?.type === 'droid_working_state_changed' && note.newState === 'idle' && promptId !== null) child.stdin.end();
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ...out, args, sessionId, ms: Date.now() - started });
    });
    if (session) request('droid.load_session', { sessionId: session });
    else
      request('droid.initialize_session', {
        machineId: 'ckpt-test',
        cwd: box.ws,
        modelId: 'custom:Local-0',
        autonomyLevel: 'low',
        interactionMode: 'auto',
      });
  });
}

/** Cline 3: its provider set by `cline auth`, telemetry and updates off, sessions kept locally (no hub daemon). */
function writeClineConfig(box, model, agent) {
  const settings = path.join(box.home, '.cline', 'data', 'settings');
  mkdirSync(settings, { recursive: true });
  writeFileSync(path.join(settings, 'global-settings.json'), `${JSON.stringify({ telemetryOptOut: true, autoUpdateEnabled: false })}\n`);
  return run(agent.bin, ['auth', '-p', 'openai-compatible', '-k', 'sk-ckpt-test-not-a-key', '-m', 'm', '-b', `${model.url}/v1`], {
    cwd: box.ws,
    env: { ...box.env, CLINE_NO_AUTO_UPDATE: '1' },
    stdin: 'ignore',
    timeoutMs: 60_000,
  });
}

/**
 * One Cline turn through its ACP mode (JSON-RPC on stdio), the only headless way to give the same session
 * a second prompt: `session/new` (or `session/load` for the next turn), one `session/prompt`, every tool
 * permission allowed once, then stdin closed.
 *
 * In CI (daemon off, both two-turn tests at once) Cline once answered `session/load` and then nothing for
 * `session/prompt` for three minutes, before any hook ran; and its Bun process, orphaned when only the Node
 * wrapper was killed, held the pipes 80 s more. So: the wrapper and Bun are killed as one process group; a
 * prompt with no message for STALL_MS is a stall whose state is logged (the model server's requests, Cline's
 * own hook log, the process's wait channel); and a stall that no hook saw (nothing of the turn reached
 * git-ckpt) is tried once more with a fresh load, which still proves a resumed turn. A stall after a hook ran
 * is a failure.
 */
async function clineTurn(agent, box, prompt, options) {
  const traced = () => readTrace(options.env.GIT_CKPT_HOOK_TRACE ?? '').length;
  const before = traced();
  const first = await clineAttempt(agent, box, prompt, options);
  if (!first.stalled || traced() !== before) return first;
  const again = await clineAttempt(agent, box, prompt, options);
  return { ...again, stderr: `${first.stderr}\n--- stalled before any hook ran; tried again ---\n${again.stderr}`, retried: true };
}

/** No ACP message for this long while a request waits: Cline is stuck (a turn here takes 10–30 s in all). */
const STALL_MS = 90_000;

function clineAttempt(agent, box, prompt, { env, session, model, timeoutMs = 180_000 }) {
  const started = Date.now();
  const args = ['--acp'];
  // Its own TMPDIR: every Cline start scans it for the cline-command-* folders run_commands leaves for a day.
  const tmp = path.join(box.base, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return new Promise((resolve) => {
    // IS_TEST: no PostHog feature-flag fetch at start (read by Cline 3.0.65 at run time).
    const child = spawn(agent.bin, args, {
      cwd: box.ws,
      env: { ...env, TMPDIR: tmp, IS_TEST: 'true' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const killGroup = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    };
    let sessionId = session ?? null;
    let next = 0;
    let lastMessage = Date.now();
    let stalled = false;
    const pending = new Map();
    const timer = setTimeout(killGroup, timeoutMs);
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const call = (method, params) =>
      new Promise((done) => {
        const id = ++next;
        pending.set(id, done);
        send({ id, method, params });
      });
    const out = readJsonLines(child, (message) => {
      lastMessage = Date.now();
      if (message.id !== undefined && !message.method && pending.has(message.id)) {
        pending.get(message.id)(message);
        pending.delete(message.id);
      } else if (message.method === 'session/request_permission') {
        const option = (message.params?.options ?? []).find((o) => /allow/.test(o.kind)) ?? message.params?.options?.[0];
        send({ id: message.id, result: { outcome: { outcome: 'selected', optionId: option?.optionId } } });
      } else if (message.id !== undefined && message.method) send({ id: message.id, error: { code: -32601, message: 'not supported' } });
    });
    const watchdog = setInterval(() => {
      if (stalled || pending.size === 0 || Date.now() - lastMessage < STALL_MS) return;
      stalled = true;
      out.stderr += `\n--- stalled: no message for ${Math.round((Date.now() - lastMessage) / 1000)} s ---\n${clineStallState(child.pid, box, model)}\n`;
      killGroup();
    }, 1000);
    // It may linger after stdin closes: killed then, that is no failure of the turn.
    let lingered = false;
    const finish = () => {
      child.stdin.end();
      setTimeout(() => {
        lingered = true;
        killGroup();
      }, 5000).unref();
    };
    child.on('close', async (code, signal) => {
      clearTimeout(timer);
      clearInterval(watchdog);
      for (const done of pending.values()) done({ error: { message: 'no answer' } });
      // Cline answers the prompt without awaiting its tool_result hooks (in CI the ledger was read 50 ms before
      // turn 1's post was written): the turn is over when the hooks it started are, the last of its group.
      const drained = await groupDrained(child.pid, 30_000);
      if (!drained) out.stderr += '\n--- hooks still running 30 s after Cline exited ---\n';
      // With the daemon on, a post it answered may not be recorded yet (harness.mjs run() does the same).
      flushDaemon(env);
      resolve({ code: lingered ? 0 : code, signal: lingered ? null : signal, ...out, args, sessionId, stalled, ms: Date.now() - started });
    });
    (async () => {
      await call('initialize', {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      });
      const opened = session
        ? await call('session/load', { sessionId: session, cwd: box.ws, mcpServers: [] })
        : await call('session/new', { cwd: box.ws, mcpServers: [] });
      if (opened.error) {
        out.stderr += `${JSON.stringify(opened.error)}\n`;
        return finish();
      }
      sessionId ??= opened.result?.sessionId ?? null;
      const answered = await call('session/prompt', { sessionId, prompt: [{ type: 'text', text: prompt }] });
      if (answered.error) out.stderr += `${JSON.stringify(answered.error)}\n`;
      finish();
    })();
  });
}

/**
 * Whether every process of a group has exited, within `ms`. A zombie counts as gone: where PID 1 reaps no
 * orphans (some containers), a hook that finished after Cline exited stays one.
 */
async function groupDrained(pgid, ms) {
  const until = Date.now() + ms;
  const alive = () => {
    try {
      process.kill(-pgid, 0);
    } catch (err) {
      if (err.code === 'ESRCH') return false;
    }
    const ps = spawnSync('ps', ['-A', '-o', 'pgid=,stat='], { encoding: 'utf8' });
    if (ps.status !== 0) return true;
    return ps.stdout.split('\n').some((line) => {
      const [group, stat = ''] = line.trim().split(/\s+/);
      return Number(group) === pgid && !stat.startsWith('Z');
    });
  };
  while (alive()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** What a stuck Cline was doing: the model server's last requests, its hook log, each process's state (Linux). */
function clineStallState(pid, box, model) {
  const lines = [];
  if (model)
    lines.push(
      `model requests: ${model.requests.length}; last: ${model.requests
        .slice(-3)
        .map((r) => `${r.method} ${r.url}`)
        .join(', ')}`,
    );
  const hooks = path.join(box.home, '.cline', 'data', 'logs', 'hooks.jsonl');
  if (existsSync(hooks)) lines.push(`cline hooks.jsonl (tail):\n${readFileSync(hooks, 'utf8').split('\n').slice(-8).join('\n')}`);
  const ps = spawnSync('ps', ['-o', 'pid,ppid,stat,wchan:20,etime,time,args', '-s', String(pid)], { encoding: 'utf8' });
  lines.push(`processes:\n${ps.stdout || ps.stderr}`);
  return lines.join('\n');
}

/** Cline's patch tool, in the grammar its description asks for. */
const clinePatch = (body) => ({ name: 'apply_patch', args: { input: `*** Begin Patch\n${body}\n*** End Patch` } });

/** One `qwen -p` run, offline on the OpenAI-compatible provider, every tool allowed; the session named by us. */
async function qwenTurn(agent, box, prompt, { env, session, timeoutMs = 180_000 }) {
  const id = session ?? randomUUID();
  const args = ['--auth-type', 'openai', '--approval-mode', 'yolo', ...(session ? ['--resume', id] : ['--session-id', id]), '-p', prompt];
  const started = Date.now();
  const r = await run(agent.bin, args, { cwd: box.ws, env, stdin: 'ignore', timeoutMs });
  return { ...r, args, sessionId: id, ms: Date.now() - started };
}

/** CLI output per test, printed by `printOutputsOnFailure` when the test failed. */
const outputs = new Map();
function keep(t, label, r) {
  const list = outputs.get(t.title) ?? [];
  list.push(
    `--- ${label}: exit ${r.code} in ${r.ms} ms\n$ ${r.args?.join(' ')}\nstdout:\n${r.stdout.slice(-3000)}\nstderr:\n${r.stderr.slice(-3000)}`,
  );
  outputs.set(t.title, list);
  if (r.retried) t.log(`${label}: the agent stalled before any hook ran and was tried once more:\n${r.stderr.slice(-2500)}`);
}
/** Register the hook that logs the CLI's output of a failed test. */
export function printOutputsOnFailure(test) {
  test.afterEach.always((t) => {
    if (t.passed) return;
    for (const [title, lines] of outputs) if (t.title.endsWith(title)) for (const line of lines) t.log(line);
  });
}

/** The scripted session, in the agent's own tools. */
function mainScript(ws, { write, edit, bash, read }) {
  const f = (name) => path.join(ws, name);
  return {
    t1: [
      [write(f('notes.txt'), 'alpha\nbeta\n')],
      [bash("sed -i 's/alpha/ALPHA/' notes.txt && echo made > shell_made.txt && rm doomed.txt", 'Edit, add, remove')],
      [write(f('.env'), `API_TOKEN=${SECRET}\n`)],
      [bash('echo side > failed_side.txt; exit 3', 'Write a file, then fail')],
      [edit(f('notes.txt'), 'not-in-the-file', 'x')],
      'Turn 1 done.',
    ],
    t2: [
      // Qwen Code's edit refuses a file not read in this session (a resumed one counts afresh).
      ...(read ? [[read(f('notes.txt'))]] : []),
      [edit(f('notes.txt'), 'beta', 'gamma')],
      [bash(`API_TOKEN=${SECRET} sh -c 'sed -i s/ALPHA/omega/ notes.txt'`, 'Edit notes.txt from the shell')],
      'Turn 2 done.',
    ],
  };
}

const PROMPT1 = 'Turn one: files, shell and failures [[ckpt t1]]';
const PROMPT2 = 'Turn two: edit notes.txt again [[ckpt t2]]';
const pathsOf = (r) => (r.paths ?? []).map((p) => `${p.status} ${p.path}`).sort();

/** The two-turn scenario for one agent, with its hooks installed at `scope`. */
export async function twoTurnScenario(t, agent, name, scope) {
  const driver = DRIVERS[name];
  const box = testSandbox(t);
  writeFileSync(path.join(box.ws, 'doomed.txt'), 'to be removed by the shell\n');
  git(box, ['add', '-A']);
  git(box, ['commit', '-qm', 'doomed.txt']);
  const model = await startCopilotModel(mainScript(box.ws, driver.tools));
  t.teardown(() => model.close());
  await driver.setup(box, model, agent);
  const traceFile = path.join(box.base, 'trace.jsonl');
  const env = driver.env(box, traceFile, model);
  const fingerprint = gitDirFingerprint(box);

  const inst = await ckpt(box, ['hooks', 'install', '--agent', name, '--scope', scope]);
  t.is(inst.code, 0, inst.stderr);
  const status = (await ckptJson(box, ['hooks', 'status', '--agent', name, '--scope', scope, '--json']))[0];
  t.is(status.state, 'wired');
  t.is(status.verdict?.runs, driver.verdict?.[scope] ?? 'yes', status.verdict?.reason);

  const turn1 = await driver.turn(agent, box, PROMPT1, { env, model });
  keep(t, 'turn 1', turn1);
  t.is(turn1.code, 0, 'turn 1 exits 0');
  t.truthy(turn1.sessionId, 'the run prints its session id');
  const before2 = workspaceFiles(box);
  const turn2 = await driver.turn(agent, box, PROMPT2, { env, model, session: turn1.session ?? turn1.sessionId });
  keep(t, 'turn 2', turn2);
  t.is(turn2.code, 0, 'turn 2 exits 0');
  const after2 = workspaceFiles(box);

  const trace = readTrace(traceFile);
  const records = ledgerRecords(box);
  t.log(`${name} runs: ${turn1.ms} ms, ${turn2.ms} ms; ${trace.length} hook events, ${records.length} records`);
  t.log(addresses(records).join(' '));
  t.deepEqual(model.unexpected, [], 'every model request was scripted');

  // Attribution.
  const hookRecords = records.filter((r) => r.agent);
  t.deepEqual([...new Set(hookRecords.map((r) => r.agent))], [name]);
  t.true(
    hookRecords.every((r) => r.session === turn1.sessionId),
    "session = the agent's session id",
  );
  const posts = records.filter((r) => r.kind === 'post');
  const one = (turn, step) => {
    const found = posts.filter((r) => r.turn === turn && r.step === step);
    t.is(found.length, 1, `one post checkpoint at turn ${turn} step ${step}: ${addresses(records).join(' ')}`);
    return found[0] ?? {};
  };
  const first = (turn) => records.find((r) => r.turn === turn) ?? {};
  if (driver.untitled) t.log(`${name} hands no prompt to any hook: its turns are numbered, not titled`);
  else {
    t.is(first(1).prompt, PROMPT1, 'turn 1 is titled by its prompt');
    t.is(first(2).prompt, PROMPT2, 'turn 2 is titled by its prompt');
  }
  const write = one(1, 1);
  const names = driver.tools.names;
  t.is(write.tool, names.write);
  t.deepEqual(pathsOf(write), ['A notes.txt']);
  const shell = one(1, 2);
  t.is(shell.tool, names.bash);
  t.deepEqual(pathsOf(shell), ['A shell_made.txt', 'D doomed.txt', 'M notes.txt'], "the shell's own changes, in its own checkpoint");
  t.is(shell.input, "sed -i 's/alpha/ALPHA/' notes.txt && echo made > shell_made.txt && rm doomed.txt");
  t.is(posts.filter((r) => r.turn === 1 && r.step === 3).length, 0, 'writing .env (never stored) makes no checkpoint');
  const failing = one(1, 4);
  t.deepEqual(pathsOf(failing), ['A failed_side.txt']);
  t.true(failing.failed, 'a shell call that exited 3 is a failed call');
  t.regex(String(failing.error), driver.failedShell ?? /exit(ed with)? code 3/);
  t.is(posts.filter((r) => r.turn === 1 && r.step === 5).length, 0, 'the failed edit changed nothing');
  // Turn 2, by tool: a read before the edit (Qwen) takes a step and makes no checkpoint.
  const turn2Posts = posts.filter((r) => r.turn === 2).sort((a, b) => a.step - b.step);
  t.deepEqual(
    turn2Posts.map((r) => r.tool),
    [names.edit, names.bash],
    `turn 2: the edit's and the shell's checkpoints: ${addresses(records).join(' ')}`,
  );
  const [edit2 = {}, shell2 = {}] = turn2Posts;
  t.deepEqual(pathsOf(edit2), ['M notes.txt']);
  t.is(shell2.input, "API_TOKEN=[REDACTED] sh -c 'sed -i s/ALPHA/omega/ notes.txt'", 'the command is redacted');
  t.false(
    records.some((r) => (r.turn ?? 0) > 2),
    'two prompts, two turns',
  );
  t.false(storeText(box).includes(SECRET), 'the secret is nowhere in the store');

  // Inspect, rewind, undo.
  const log = await ckpt(box, ['log']);
  t.regex(log.stdout, new RegExp(`session ${turn1.sessionId.slice(0, 12)}.*\\(${name}\\)`));
  if (!driver.untitled) t.regex(log.stdout, /Turn two: edit notes\.txt again/);
  const restore = await ckpt(box, ['restore', 'turn:2', '--delete-new']);
  t.is(restore.code, 0, restore.stderr);
  t.deepEqual(workspaceFiles(box), before2, 'restore turn:2: the workspace as it was before turn 2');
  const undo = await ckpt(box, ['undo']);
  t.is(undo.code, 0, undo.stderr);
  t.deepEqual(workspaceFiles(box), after2, 'undo: the workspace after turn 2');
  const own = (line) => !driver.ownGitFiles?.test(line);
  t.deepEqual(gitDirFingerprint(box).split('\n').filter(own), fingerprint.split('\n').filter(own), "the user's .git is byte-identical");

  // Uninstall: our hooks gone (a plugin: its file, and the folders it alone needed).
  const installedConfig = driver.config ? readFileSync(status.file, 'utf8') : undefined;
  const off = await ckpt(box, ['hooks', 'uninstall', '--agent', name, '--scope', scope]);
  t.is(off.code, 0, off.stderr);
  t.is((await ckptJson(box, ['hooks', 'status', '--agent', name, '--scope', scope, '--json']))[0].state, 'not wired');
  if (driver.config)
    t.false(
      existsSync(status.file) && readFileSync(status.file, 'utf8').includes('git-ckpt-hook'),
      'no hook of ours is left in the settings',
    );
  else {
    t.false(existsSync(status.file), 'the plugin file is gone');
    const pluginDir = path.dirname(status.file);
    t.false(existsSync(pluginDir) && readdirSync(pluginDir).length === 0, 'no empty plugin folder left behind');
  }
  return { box, trace, records, installedConfig };
}

/**
 * `git ckpt mcp install --agent <name>`, proven with the real agent: a turn whose shell call is
 * checkpointed, then a turn whose model calls the server's checkpoint_list (by the name the agent gives
 * it, read off the tools it offered the model) and gets that checkpoint back.
 */
export async function mcpScenario(t, agent, name, scope = 'project') {
  const box = testSandbox(t);
  writeFileSync(path.join(box.ws, 'app.txt'), 'version 1\n');
  git(box, ['add', '-A']);
  git(box, ['commit', '-qm', 'app']);
  const driver = DRIVERS[name];
  const script = { t1: [[driver.tools.bash("sed -i 's/1/2/' app.txt", 'Bump the version')], 'Bumped.'] };
  const model = await startCopilotModel(script);
  t.teardown(() => model.close());
  await driver.setup(box, model, agent);
  const env = driver.env(box, path.join(box.base, 'trace.jsonl'), model);
  t.is((await ckpt(box, ['hooks', 'install', '--agent', name, '--scope', scope])).code, 0);
  const mcp = await ckpt(box, ['mcp', 'install', '--agent', name, '--scope', scope]);
  t.is(mcp.code, 0, mcp.stderr);
  const one = await driver.turn(agent, box, 'Bump it [[ckpt t1]]', { env, model });
  keep(t, 'turn 1', one);
  t.is(one.code, 0, 'turn 1 exits 0');
  const bump = ledgerRecords(box).find((r) => r.kind === 'post' && r.tool === driver.tools.names.bash);
  t.truthy(bump, 'the shell call was checkpointed');
  // The tool's name as the agent gives it: in the tools this request offers, or (Qwen Code, Droid: MCP tools
  // deferred behind a tool search, as Claude Code does) in the request's text; a call by that name runs it.
  // Each turn is a new process that connects to its MCP servers as it begins, so a request may come before
  // the server is up (Cline's did in CI: both calls refused as "unavailable"): the model then waits with a
  // shell call, as a real one would, and calls again; never two list calls in a row.
  const nameIn = (body) => {
    const offered = (body?.tools ?? []).map((tool) => tool.function?.name ?? '').find((n) => /checkpoint_list$/.test(n));
    // The escaped line breaks of the JSON text are no part of a name.
    const deferred = JSON.stringify(body ?? '')
      .replace(/\\n/g, ' ')
      .match(/[A-Za-z0-9_.:-]*checkpoint_list\b/g);
    return offered ?? deferred?.at(-1) ?? null;
  };
  const isListCall = (m) => (m?.tool_calls ?? []).some((c) => /checkpoint_list$/.test(c.function?.name ?? ''));
  const waitCall = driver.tools.bash('sleep 2', 'Wait for the checkpoint server to start');
  let list = null;
  Object.defineProperty(script, 't2', {
    get: () => {
      const body = model.requests.at(-1)?.body;
      const messages = Array.isArray(body?.messages) ? body.messages : [];
      const thisTurn = messages.slice(
        messages.findLastIndex((m) => m.role === 'user' && /\[\[ckpt t2\]\]/.test(JSON.stringify(m.content))),
      );
      const listed = thisTurn.some((m) => m.role === 'tool' && JSON.stringify(m.content).includes(bump?.id.slice(0, 8)));
      const named = nameIn(body);
      list = named ?? list;
      const lastCall = thisTurn.findLast((m) => m.role === 'assistant' && m.tool_calls?.length);
      const call = [{ name: named, args: { limit: 5 } }];
      const step = listed ? 'Listed.' : named && !isListCall(lastCall) ? call : [waitCall];
      // The answer is picked by how many calls this turn made: the same step at every index, at most 16.
      return [...Array(16).fill(step), 'Gave up.'];
    },
  });
  const two = await driver.turn(agent, box, 'List the checkpoints [[ckpt t2]]', { env, model, session: one.session ?? one.sessionId });
  keep(t, 'turn 2', two);
  t.is(two.code, 0, 'turn 2 exits 0');
  t.truthy(list, `${name} makes the server's tools known to its model`);
  // The tool's answer, as the agent handed it back to the model.
  const answers = model.requests
    .flatMap((r) => (r.body?.messages ?? []).filter((m) => m.role === 'tool'))
    .map((m) => JSON.stringify(m.content));
  t.true(
    answers.some((a) => a.includes(bump?.id.slice(0, 8))),
    `the list names the shell call's checkpoint: ${answers.join(' | ').slice(0, 600)}`,
  );
  return { box, list };
}
