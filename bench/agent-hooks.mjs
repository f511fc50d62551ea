// node bench/agent-hooks.mjs [claude codex gemini copilot] [--runs=N] [--keep]
//
// Hook cost per tool call in one scripted session of each real agent CLI, before
// and after the read-only matchers. It reuses the real-agents suite
// (test/agents/): the CLI installed on demand into the agents cache, a sandbox
// (temp HOME, a git workspace), and the agent's scripted model server on
// 127.0.0.1, so nothing leaves the machine. Needs a built dist/ (npm run build).
//
// Each agent runs the same one-turn session twice:
//   before: the hooks as `git ckpt hooks install --agent X --scope user` writes
//           them, every tool-event matcher rewritten to match all tools ("*" in
//           the nested configs of Claude, Codex and Gemini; no matcher in the
//           flat config of Copilot), as the installer used to wire them;
//   after:  exactly as `git ckpt hooks install` writes them now.
// Codex (a Rust regex, no look-ahead) and Copilot (no matcher on its tool
// events) are wired for every tool either way: when the rewrite leaves the
// config unchanged, the "after" row reuses the "before" session instead of
// running an identical one.
//
// The session: three read-only calls, then a write, an edit and a shell command.
// Some reads are shell commands (`grep`, `cat`): Claude Code 2.1.332 offers no
// Glob or Grep tool (it searches with grep in Bash), Codex no read tool at all. The model
// server's record of emitted calls gives the tool calls; GIT_CKPT_HOOK_TRACE
// gives one line per hook process with its wall time (`ms`, Node's start-up
// included). Prints a markdown table, then a JSON summary. Setup (install,
// trust, config) is not timed; "session wall" is the agent CLI's run.
// --runs=N: N sessions per row, before and after alternating; the times are
// medians (the counts do not vary). --keep: keep the sandboxes.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AGENT_PACKAGES, CLI, ckpt, git, installAgent, removeSandbox, sandbox } from '../test/agents/harness.mjs';
import { runClaude, startClaudeServer } from '../test/agents/claude.mjs';
import {
  codexTurn,
  hookTrustEntries,
  startCodexServer,
  traceFile as codexTraceFile,
  trustHooksInConfig,
  writeCodexConfig,
} from '../test/agents/codex.mjs';
import { configureGemini, runGeminiTurn, startGeminiServer } from '../test/agents/gemini.mjs';
import { copilotEnv, copilotTurn, linkRuntimeCache, startCopilotModel, startProxyCatcher } from '../test/agents/copilot.mjs';

const ALL = ['claude', 'codex', 'gemini', 'copilot'];
const argv = process.argv.slice(2);
const KEEP = argv.includes('--keep');
const RUNS = Math.max(1, Number.parseInt(argv.find((a) => a.startsWith('--runs='))?.slice('--runs='.length) ?? '1', 10) || 1);
const named = argv.filter((a) => !a.startsWith('--'));
for (const a of named) {
  if (!ALL.includes(a)) {
    process.stderr.write(`unknown agent ${JSON.stringify(a)}: one of ${ALL.join(', ')}\n`);
    process.exit(2);
  }
}
const AGENTS = named.length ? ALL.filter((a) => named.includes(a)) : ALL;
if (!existsSync(CLI)) {
  process.stderr.write(`${CLI} is missing: run npm run build first\n`);
  process.exit(2);
}
const TURN_TIMEOUT_MS = 150_000;

// ---------------------------------------------------------------------------
// The workspace every session starts from, and each agent's script: one
// prompt, one tool call per model message, then the final answer. `ro` marks
// the read-only calls, for the counts (the agent never sees it): true for a
// read-only tool, 'shell' for a read-only command through the shell tool (which
// no matcher can tell from a mutating one).
// ---------------------------------------------------------------------------

const APP = "export function greet(name) {\n  return 'hello ' + name;\n}\n";
const UTIL = 'export const twice = (s) => s + s;\n';

function prepare(box) {
  mkdirSync(path.join(box.ws, 'src'));
  writeFileSync(path.join(box.ws, 'src', 'app.js'), APP);
  writeFileSync(path.join(box.ws, 'src', 'util.js'), UTIL);
  git(box, ['add', '-A']);
  git(box, ['commit', '-qm', 'src']);
  box.env.TMPDIR = path.join(box.base, 'tmp');
  mkdirSync(box.env.TMPDIR);
}

const SHELL = "sed -i 's/hello/hi/' src/app.js && echo built > build.log";
const MARK = 'bench';
const PROMPT = `[[ckpt ${MARK}]] Look at src/, then add notes, change the greeting and run the build step.`;
const patch = (...lines) => `*** Begin Patch\n${lines.join('\n')}\n*** End Patch\n`;

/** Per agent: calls as [{ name, args, ro }] in session order (one model message each); `name` as the model API names the tool. */
function sessionCalls(agent, ws) {
  const abs = (p) => path.join(ws, p);
  switch (agent) {
    case 'claude':
      return [
        { name: 'Read', args: { file_path: abs('src/app.js') }, ro: true },
        // Claude Code 2.1.332 (the native build) offers no Glob or Grep: it searches with find/grep in Bash.
        { name: 'Read', args: { file_path: abs('src/util.js') }, ro: true },
        { name: 'Bash', args: { command: 'grep -rn greet src', description: 'Find greet' }, ro: 'shell' },
        { name: 'Write', args: { file_path: abs('NOTES.md'), content: '# notes\n\n- greet() says hello\n' }, ro: false },
        { name: 'Edit', args: { file_path: abs('src/app.js'), old_string: "'hello '", new_string: "'hello, '" }, ro: false },
        { name: 'Bash', args: { command: SHELL, description: 'Edit the greeting, run the build step' }, ro: false },
      ];
    case 'codex':
      // Codex's own tools here are its shell (exec_command) and apply_patch; reads go through the shell.
      return [
        { name: 'exec_command', args: { shell: 'cat src/app.js' }, ro: 'shell' },
        { name: 'exec_command', args: { shell: 'ls -R src' }, ro: 'shell' },
        { name: 'exec_command', args: { shell: 'grep -rn greet src' }, ro: 'shell' },
        { name: 'apply_patch', args: { patch: patch('*** Add File: NOTES.md', '+# notes', '+', '+- greet() says hello') }, ro: false },
        {
          name: 'apply_patch',
          args: {
            patch: patch(
              '*** Update File: src/app.js',
              '@@',
              ' export function greet(name) {',
              "-  return 'hello ' + name;",
              "+  return 'hello, ' + name;",
              ' }',
            ),
          },
          ro: false,
        },
        { name: 'exec_command', args: { shell: SHELL }, ro: false },
      ];
    case 'gemini':
      return [
        { name: 'read_file', args: { file_path: 'src/app.js' }, ro: true },
        { name: 'glob', args: { pattern: 'src/**/*.js' }, ro: true },
        { name: 'list_directory', args: { dir_path: 'src' }, ro: true },
        { name: 'write_file', args: { file_path: 'NOTES.md', content: '# notes\n\n- greet() says hello\n' }, ro: false },
        {
          name: 'replace',
          args: { file_path: 'src/app.js', instruction: 'Add a comma after hello.', old_string: "'hello '", new_string: "'hello, '" },
          ro: false,
        },
        { name: 'run_shell_command', args: { command: SHELL, description: 'Edit the greeting, run the build step' }, ro: false },
      ];
    case 'copilot':
      return [
        { name: 'view', args: { path: abs('src/app.js') }, ro: true },
        { name: 'glob', args: { pattern: 'src/**/*.js' }, ro: true },
        { name: 'view', args: { path: abs('src') }, ro: true },
        { name: 'create', args: { path: abs('NOTES.md'), file_text: '# notes\n\n- greet() says hello\n' }, ro: false },
        { name: 'edit', args: { path: abs('src/app.js'), old_str: "'hello '", new_str: "'hello, '" }, ro: false },
        {
          name: 'bash',
          args: { command: SHELL, description: 'Edit the greeting, run the build step', mode: 'sync', initial_wait: 30 },
          ro: false,
        },
      ];
    default:
      throw new Error(agent);
  }
}
const FINAL = 'Session done.';

// ---------------------------------------------------------------------------
// Each agent: its server, its config and trust, one turn of its CLI, and which
// of the script's steps the server really answered with tool calls.
// ---------------------------------------------------------------------------

/** Install the hooks (user scope: nothing in the workspace); the config file it wrote. */
async function installHooks(box, agent) {
  const r = await ckpt(box, ['hooks', 'install', '--agent', agent, '--scope', 'user', '--json']);
  if (r.code !== 0)
    return { error: `git ckpt hooks install --agent ${agent} exited ${r.code}: ${(r.stderr || r.stdout).trim().split('\n').slice(-1)[0]}` };
  try {
    const [row] = JSON.parse(r.stdout);
    return { file: row.file, events: row.events, verdict: row.verdict };
  } catch (err) {
    return { error: `git ckpt hooks install --json: unreadable output (${err.message})` };
  }
}

/** "before": every tool-event matcher matches all tools. Returns how many entries changed. */
function matchAllTools(file) {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  let changed = 0;
  for (const list of Object.values(doc.hooks ?? {})) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (!item || typeof item !== 'object') continue;
      if (Array.isArray(item.hooks)) {
        // Nested (Claude, Codex, Gemini): only tool events carry a matcher.
        if ('matcher' in item && item.matcher !== '*') {
          item.matcher = '*';
          changed += 1;
        }
      } else if ('matcher' in item) {
        // Flat (Copilot, Cursor): no matcher = every tool.
        delete item.matcher;
        changed += 1;
      }
    }
  }
  if (changed) writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  return changed;
}

/** The tool-event matchers of a config: { event: matcher | null } (null: none, every tool). */
/** The events whose git-ckpt handler runs in the background (`async`): the agent does not wait for them. */
function asyncEvents(file) {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const out = new Set();
  for (const [event, list] of Object.entries(doc.hooks ?? {})) {
    if (!Array.isArray(list)) continue;
    for (const item of list)
      for (const h of item.hooks ?? [item]) if (JSON.stringify(h).includes('git-ckpt-hook') && h.async === true) out.add(event);
  }
  return out;
}

function toolMatchers(file, events) {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const out = {};
  for (const e of events) {
    const list = doc.hooks?.[e];
    if (!Array.isArray(list)) continue;
    const ours = list.find((item) => JSON.stringify(item).includes('git-ckpt-hook'));
    out[e] = ours?.matcher ?? null;
  }
  return out;
}

const TOOL_EVENTS = {
  claude: ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'],
  codex: ['PreToolUse', 'PostToolUse'],
  gemini: ['BeforeTool', 'AfterTool'],
  copilot: ['preToolUse', 'postToolUse', 'postToolUseFailure'],
};

const DRIVERS = {
  claude: {
    async start(_box, calls) {
      const script = [...calls.map((c) => ({ tools: [{ name: c.name, input: c.args }] })), { text: FINAL }];
      const server = await startClaudeServer({ [MARK]: script });
      return { server };
    },
    async run(ctx, agent, box, trace) {
      const r = await runClaude(agent.bin, box, ctx.server, PROMPT, { env: { GIT_CKPT_HOOK_TRACE: trace }, timeoutMs: TURN_TIMEOUT_MS });
      return { code: r.code, ms: r.ms, stdout: r.stdout, stderr: r.stderr, answered: r.stdout.includes(FINAL) };
    },
    emittedSteps: (ctx) => ctx.server.calls.filter((c) => c.script === MARK).map((c) => c.step),
    offered: (body) => (body?.tools ?? []).map((t) => t.name),
    unexpected: (ctx) => [...ctx.server.unexpected, ...ctx.server.outbound],
  },
  codex: {
    async start(box, calls) {
      const steps = calls.map((c) => [c.args]);
      const server = await startCodexServer({ [MARK]: { steps, final: FINAL } });
      writeCodexConfig(box, server.url);
      return { server };
    },
    /** Codex runs a hook only when its hash is trusted in config.toml (what /hooks writes). */
    afterInstall(_ctx, box, file) {
      trustHooksInConfig(box, hookTrustEntries(file));
    },
    trace: (box) => codexTraceFile(box),
    async run(_ctx, agent, box, trace) {
      const t0 = Date.now();
      const r = await codexTurn(box, agent.bin, PROMPT, { env: { GIT_CKPT_HOOK_TRACE: trace }, timeoutMs: TURN_TIMEOUT_MS });
      return { code: r.code, ms: Date.now() - t0, stdout: r.stdout, stderr: r.stderr, answered: r.stdout.includes(FINAL) };
    },
    emittedSteps: (ctx) =>
      ctx.server.answers.filter((a) => a.name === MARK && a.kind === 'calls').flatMap((a) => a.calls.map(() => a.step)),
    offered: (body) => (body?.tools ?? []).map((t) => t.name),
    unexpected: (ctx) => ctx.server.unexpected,
  },
  gemini: {
    async start(box, calls) {
      const script = [...calls.map((c) => ({ calls: [{ name: c.name, args: c.args }] })), { text: FINAL }];
      const server = await startGeminiServer({ [MARK]: script });
      // Settings first (API key on the scripted server, the folder trusted); the installer merges into them.
      const env = configureGemini(box, server);
      return { server, env };
    },
    async run(ctx, agent, box, trace) {
      const r = await runGeminiTurn(agent, box, { ...ctx.env, GIT_CKPT_HOOK_TRACE: trace }, PROMPT, { timeoutMs: TURN_TIMEOUT_MS });
      return { code: r.code, ms: r.ms, stdout: r.stdout, stderr: r.stderr, answered: r.stdout.includes(FINAL) };
    },
    emittedSteps: (ctx) => ctx.server.turns.filter((t) => t.name === MARK && t.calls).flatMap((t) => t.calls.map(() => t.step)),
    offered: (body) => (body?.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name)),
    // Side requests (next-speaker checks and the like) are expected of Gemini; only real failures count.
    unexpected: (ctx) => ctx.server.unexpected.filter((u) => u.why === 'unknown endpoint').map((u) => `${u.method} ${u.url}`),
  },
  copilot: {
    async start(box, calls, agent) {
      linkRuntimeCache(box, agent.version);
      const script = [...calls.map((c) => [{ name: c.name, args: c.args }]), FINAL];
      const server = await startCopilotModel({ [MARK]: script });
      const proxy = await startProxyCatcher();
      return { server, proxy };
    },
    async run(ctx, agent, box, trace) {
      const env = copilotEnv(box, { model: ctx.server, proxy: ctx.proxy, trace });
      const r = await copilotTurn(agent, box, PROMPT, { env, session: { id: randomUUID() }, timeoutMs: TURN_TIMEOUT_MS });
      return { code: r.code, ms: r.ms, stdout: r.stdout, stderr: r.stderr, answered: r.stdout.includes(FINAL) };
    },
    emittedSteps: (ctx) =>
      ctx.server.answered.filter((a) => a.name === MARK && Array.isArray(a.answer)).flatMap((a) => a.answer.map(() => a.index)),
    offered: (body) => (body?.tools ?? []).map((t) => t.function?.name ?? t.name),
    unexpected: (ctx) => [...ctx.server.unexpected, ...ctx.proxy.caught],
    async stop(ctx) {
      await ctx.proxy.close();
    },
  },
};

function readTrace(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}

/** One session of `agent` with its hooks as `variant` wires them. */
async function session(agent, installed, variant) {
  const driver = DRIVERS[agent];
  const box = sandbox('project');
  prepare(box);
  const calls = sessionCalls(agent, box.ws);
  let ctx;
  try {
    ctx = await driver.start(box, calls, installed);
    const install = await installHooks(box, agent);
    if (install.error) return { skip: install.error };
    const rewritten = variant === 'before' ? matchAllTools(install.file) : 0;
    driver.afterInstall?.(ctx, box, install.file);
    const matchers = toolMatchers(install.file, TOOL_EVENTS[agent]);
    const trace = driver.trace?.(box) ?? path.join(box.base, 'hook-trace.jsonl');

    const run = await driver.run(ctx, installed, box, trace);

    // The calls the model made: each scripted step the server answered, once (a retried request is not a new call).
    const steps = [...new Set(driver.emittedSteps(ctx))].filter((s) => s < calls.length);
    const made = steps.map((s) => calls[s]);
    const lines = readTrace(trace);
    const toolLines = lines.filter((l) => l.phase === 'pre' || l.phase === 'post');
    const sum = (xs) => xs.reduce((a, l) => a + (Number(l.ms) || 0), 0);
    const notes = [];
    if (run.code !== 0) notes.push(`the CLI exited ${run.code}: ${run.stderr.trim().split('\n').slice(-1)[0] ?? ''}`);
    if (!run.answered) notes.push('the final answer is missing from the output');
    if (made.length !== calls.length) notes.push(`the model made ${made.length} of the ${calls.length} scripted calls`);
    const unexpected = driver.unexpected(ctx);
    if (unexpected.length) notes.push(`unscripted requests: ${unexpected.slice(0, 3).join('; ')}`);
    if (lines.length === 0) notes.push('no hook ran (GIT_CKPT_HOOK_TRACE stayed empty)');
    // A scripted tool the CLI does not offer fails without running (and without a pre hook on some agents).
    const offered = new Set(ctx.server.requests.flatMap((q) => driver.offered(q.body)).filter(Boolean));
    const missing = [...new Set(calls.map((c) => c.name))].filter((name) => !offered.has(name));
    if (offered.size && missing.length) notes.push(`not among the tools the CLI offers: ${missing.join(', ')}`);
    const byPhase = {};
    for (const l of lines) byPhase[l.phase] = (byPhase[l.phase] ?? 0) + 1;
    const byTool = {};
    for (const l of toolLines) byTool[l.tool ?? '?'] = (byTool[l.tool ?? '?'] ?? 0) + 1;
    const n = made.length || 1;
    const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
    // What the agent waits for: every hook but those it runs in the background, per mutating call.
    const background = asyncEvents(install.file);
    const waited = lines.filter((l) => !background.has(l.payload?.hook_event_name ?? ''));
    const mutatingCalls = made.filter((c) => !c.ro).length || 1;
    return {
      agent,
      version: installed.version,
      matchers: variant,
      configFile: install.file,
      rewrittenMatchers: rewritten,
      toolEventMatchers: matchers,
      toolCalls: {
        total: made.length,
        readOnly: made.filter((c) => c.ro).length,
        readOnlyViaShell: made.filter((c) => c.ro === 'shell').length,
        mutating: made.filter((c) => !c.ro).length,
        names: made.map((c) => c.name),
      },
      hookProcesses: { all: lines.length, toolEvents: toolLines.length, byPhase, byTool },
      hookMs: { all: Math.round(sum(lines)), toolEvents: Math.round(sum(toolLines)) },
      perToolCall: {
        processes: round(lines.length / n, 2),
        hookMs: round(sum(lines) / n, 0),
        toolEventProcesses: round(toolLines.length / n, 2),
        toolEventHookMs: round(sum(toolLines) / n, 0),
      },
      waitedPerMutatingCallMs: round(sum(waited) / mutatingCalls, 0),
      // The tool call's own hooks only (pre, and post where the agent waits for it); prompt, stop and session start excluded.
      toolWaitPerMutatingCallMs: round(sum(waited.filter((l) => l.phase === 'pre' || l.phase === 'post')) / mutatingCalls, 0),
      backgroundProcesses: lines.length - waited.length,
      sessionWallS: round(run.ms / 1000, 1),
      exitCode: run.code,
      notes,
      ...(KEEP ? { sandbox: box.base } : {}),
    };
  } finally {
    await ctx?.server.close();
    if (ctx) await driver.stop?.(ctx);
    if (!KEEP) removeSandbox(box);
  }
}

// ---------------------------------------------------------------------------
// Run, then print the table and the JSON.
// ---------------------------------------------------------------------------

/** Load the CLI once in a throwaway sandbox (never the real HOME), so the first session does not pay its cold start alone. */
async function warmUp(agent, installed) {
  const box = sandbox('warmup');
  try {
    if (agent === 'copilot') linkRuntimeCache(box, installed.version);
    spawnSync(installed.bin, ['--version'], {
      cwd: box.ws,
      stdio: 'ignore',
      timeout: 300_000,
      env: { ...box.env, COPILOT_AUTO_UPDATE: 'false', COPILOT_OFFLINE: 'true' },
    });
  } finally {
    removeSandbox(box);
  }
}

const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : Math.round(((v[m - 1] + v[m]) / 2) * 100) / 100;
};

/** Several sessions of one variant: the counts of the first (any run that differs is named), the median times. */
function aggregate(list) {
  const [first] = list;
  if (list.length === 1) return first;
  const counts = (r) => JSON.stringify([r.toolCalls.total, r.toolCalls.readOnly, r.hookProcesses.all, r.hookProcesses.toolEvents]);
  const differ = list.filter((r) => counts(r) !== counts(first)).length;
  return {
    ...first,
    runs: list.length,
    hookMs: { all: median(list.map((r) => r.hookMs.all)), toolEvents: median(list.map((r) => r.hookMs.toolEvents)) },
    perToolCall: {
      ...first.perToolCall,
      hookMs: median(list.map((r) => r.perToolCall.hookMs)),
      toolEventHookMs: median(list.map((r) => r.perToolCall.toolEventHookMs)),
    },
    sessionWallS: median(list.map((r) => r.sessionWallS)),
    samples: { hookMsAll: list.map((r) => r.hookMs.all), sessionWallS: list.map((r) => r.sessionWallS) },
    notes: [
      ...new Set(list.flatMap((r) => r.notes)),
      ...(differ ? [`${differ} of ${list.length} runs counted other calls or hook processes than the first`] : []),
    ],
  };
}

const started = Date.now();
const rows = [];
for (const agent of AGENTS) {
  const installed = installAgent(agent);
  if (installed.skip) {
    rows.push({ agent, skip: installed.skip });
    process.stderr.write(`${agent}: skipped (${installed.skip})\n`);
    continue;
  }
  await warmUp(agent, installed);
  const samples = { before: [], after: [] };
  const skipped = {};
  let sameConfig = false;
  // Before and after alternate, so that a busy moment of the machine does not land on one side only.
  for (let run = 1; run <= RUNS; run++) {
    for (const variant of ['before', 'after']) {
      if (skipped[variant] || (variant === 'after' && sameConfig)) continue;
      process.stderr.write(
        `${agent} ${AGENT_PACKAGES[agent].pkg}@${installed.version}: ${variant}${RUNS > 1 ? ` (run ${run}/${RUNS})` : ''} ... `,
      );
      let row;
      try {
        row = await session(agent, installed, variant);
      } catch (err) {
        row = { skip: `session failed: ${err?.message ?? err}` };
      }
      if (row.skip) {
        skipped[variant] = row.skip;
        process.stderr.write(`skipped (${row.skip})\n`);
        continue;
      }
      samples[variant].push(row);
      process.stderr.write(`${row.sessionWallS} s, ${row.hookProcesses.all} hook processes\n`);
      // Nothing to rewrite (Codex: "*" already; Copilot: no matcher): "after" is the same config, not run again.
      if (variant === 'before' && row.rewrittenMatchers === 0) {
        sameConfig = true;
        process.stderr.write(`${agent}: after = before (the installed config has no tool matcher to rewrite): not run again\n`);
      }
    }
  }
  for (const variant of ['before', 'after']) {
    if (samples[variant].length) rows.push(aggregate(samples[variant]));
    else if (variant === 'after' && sameConfig && samples.before.length)
      rows.push({ ...aggregate(samples.before), matchers: 'after', sameAsBefore: true });
    else rows.push({ agent, version: installed.version, matchers: variant, skip: skipped[variant] ?? 'not run' });
  }
}
const totalS = Math.round((Date.now() - started) / 100) / 10;

const matcherLabel = (r) => {
  if (r.matchers === 'before') return r.agent === 'copilot' ? 'before (no matcher)' : 'before (`*`)';
  if (r.sameAsBefore)
    return r.agent === 'codex'
      ? 'after = before (`*`: a Rust regex, no look-ahead)'
      : r.agent === 'copilot'
        ? 'after = before (no matcher: its tool events take none)'
        : 'after = before';
  const m = Object.values(r.toolEventMatchers ?? {})[0];
  if (m === null || m === undefined) return 'after (no matcher)';
  return m.startsWith('^(?!') ? 'after (read-only tools left out)' : `after (\`${m}\`)`;
};

// The reference the agent's wait is measured against, in this same run.
const nodeRuns = Array.from({ length: 15 }, () => {
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  return performance.now() - t0;
}).sort((a, b) => a - b);
const nodeMs = Math.round(nodeRuns[7]);
const out = [];
out.push(
  '| agent | matchers | tool calls (read-only / mutating) | hook processes (tool events / all) | per tool call: processes, hook ms | agent waits per mutating call: its own hooks, all hooks | session wall s |',
);
out.push('|---|---|---|---|---|---|---|');
out.push(`| node -e 0 | | | | | ${nodeMs} ms (reference, median of 15 in this run) | |`);
for (const r of rows) {
  if (r.skip) {
    out.push(`| ${r.agent} | ${r.matchers ?? '—'} | skipped: ${String(r.skip).replace(/\|/g, '\\|')} | | | | |`);
    continue;
  }
  out.push(
    `| ${r.agent} ${r.version} | ${matcherLabel(r)} | ${r.toolCalls.total} (${r.toolCalls.readOnly}${r.toolCalls.readOnlyViaShell ? `, ${r.toolCalls.readOnlyViaShell} via shell` : ''} / ${r.toolCalls.mutating}) | ${r.hookProcesses.toolEvents} / ${r.hookProcesses.all} | ${r.perToolCall.processes}, ${r.perToolCall.hookMs} | ${r.toolWaitPerMutatingCallMs} ms (${(r.toolWaitPerMutatingCallMs / nodeMs).toFixed(2)}× node -e 0), ${r.waitedPerMutatingCallMs} ms (${(r.waitedPerMutatingCallMs / nodeMs).toFixed(2)}×) | ${r.sessionWallS}${r.sameAsBefore ? ' (same session)' : ''} |`,
  );
}
out.push('');
out.push(
  'Per tool call: all hook processes of the session (tool events, prompt, stop and session start) and their summed wall time (`ms` of GIT_CKPT_HOOK_TRACE, Node start-up included), divided by the tool calls the model made. ' +
    (RUNS > 1 ? `${RUNS} sessions per row, times are medians` : 'One session per row') +
    ': a one-turn prompt with the read-only calls first, then a write, an edit and a shell command. Read-only "via shell": a command such as `grep` or `cat` through the shell tool, hooked whatever the matcher (Claude Code 2.1.332 offers no Glob or Grep tool, and Codex no read tool at all).',
);
const notes = rows.filter((r) => r.notes?.length && !r.sameAsBefore).map((r) => `- ${r.agent} ${r.matchers}: ${r.notes.join('; ')}`);
if (notes.length) out.push('', 'Notes:', ...notes);
out.push('', `Whole run: ${totalS} s.`);

const summary = {
  generated: new Date().toISOString(),
  node: process.version,
  runsPerRow: RUNS,
  totalS,
  agents: Object.fromEntries(
    AGENTS.map((agent) => {
      const mine = rows.filter((r) => r.agent === agent);
      const b = mine.find((r) => r.matchers === 'before' && !r.skip);
      const a = mine.find((r) => r.matchers === 'after' && !r.skip);
      const delta =
        b && a
          ? {
              hookProcessesSaved: b.hookProcesses.all - a.hookProcesses.all,
              hookMsSaved: b.hookMs.all - a.hookMs.all,
              hookMsPerToolCall: { before: b.perToolCall.hookMs, after: a.perToolCall.hookMs },
              processesPerToolCall: { before: b.perToolCall.processes, after: a.perToolCall.processes },
            }
          : null;
      return [agent, { rows: mine, delta }];
    }),
  ),
};
process.stdout.write(`${out.join('\n')}\n\n${JSON.stringify(summary, null, 2)}\n`);
