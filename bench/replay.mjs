// Session replay for `npm run bench`: the hook events real agents sent in a
// scripted session of the real-agents suite (bench/sessions/, captured from
// Claude Code, Codex, Gemini CLI, Copilot CLI, Qwen Code, Droid, OpenCode, Kilo Code CLI, pi and Cline with
// GIT_CKPT_HOOK_TRACE), replayed in order through what `git ckpt hooks install` wires: the hook
// commands in the agent's own config, or, for the agents with a plugin, the entry script the plugin
// runs, as it runs it. A file is changed by every mutating tool call. It measures what the agent
// waits for: the hooks it runs synchronously (Claude Code and Codex run PostToolUse in the
// background, and the plugins a post that did not fail; those are run too, but not counted).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The recorded sessions, by the agent name our installer uses. */
const RECORDINGS = {
  claude: 'claude-code-2.1.332.json',
  codex: 'codex-0.171.0.json',
  gemini: 'gemini-cli-0.61.0.json',
  copilot: 'copilot-cli-1.0.102.json',
  qwen: 'qwen-code-0.15.10.json',
  droid: 'droid-0.225.2.json',
  opencode: 'opencode-1.18.33.json',
  kilo: 'kilo-code-cli-7.7.7.json',
  pi: 'pi-0.74.2.json',
  cline: 'cline-3.0.65.json',
};

/** Tools that change nothing (their events still run, when wired; the replay writes no file for them). */
const READ_ONLY = /^(Read|Glob|Grep|LS|read_file|read_many_files|glob|grep_search|list_directory|view|read)$/;

/** The recorded workspace path, replaced by the bench's. */
const RECORDED_WORKSPACE = '/home/user/project';

/** The events of one agent's recording: { phase, payload } in the order the agent sent them. */
function recording(agent) {
  const raw = JSON.parse(readFileSync(new URL(`./sessions/${RECORDINGS[agent]}`, import.meta.url), 'utf8'));
  // Claude Code's file is its payloads alone; the others pair each with the hook line that received it.
  const events = agent === 'claude' ? raw.map((payload) => ({ phase: undefined, payload })) : raw;
  // Copilot's last session also carried Claude's hooks: only its own events are replayed.
  return events.filter((e) => e.phase === undefined || e.phase.startsWith(`${agent} `));
}

/**
 * What a plugin runs for one event (hooks/plugin-transport.js): the entry script, awaited but for a post
 * that did not fail. The phase is the one the plugin gave, as recorded.
 */
function pluginHandlers(agent, { phase, payload }, entry, plugin, ws) {
  const ours = phase.split(' ')[1];
  // Cline runs the hook file named after the event through bash; only its tool hooks are waited for.
  if (plugin.hookFiles) {
    const event = plugin.events.find((e) => e.phase === ours)?.event;
    return [{ command: `bash '${path.join(ws, plugin.project, event)}'`, background: ours !== 'pre' && ours !== 'post' }];
  }
  const failed = payload.isError === true || (typeof payload.output?.metadata?.exit === 'number' && payload.output.metadata.exit !== 0);
  return [{ command: `sh '${entry}' ${agent} ${ours}`, background: ours === 'post' && !failed }];
}

/** The handlers an installed config runs for one event: [{ command, background }]. */
function handlersFor(spec, config, event, tool) {
  const entries = config.hooks?.[event] ?? [];
  if (spec.layout === 'flat') return entries.map((h) => ({ command: h[spec.commandKey], background: false }));
  return entries
    .filter((e) => e.matcher === undefined || e.matcher === '*' || tool === undefined || new RegExp(e.matcher).test(tool))
    .flatMap((e) => e.hooks.map((h) => ({ command: h[spec.commandKey], background: h.async === true })));
}

/** The agent's event name for a recorded event: its own field where it sends one, else from our phase. */
function eventName(spec, { phase, payload }) {
  const named = payload.hook_event_name ?? payload.hookEventName ?? payload.event;
  if (named && spec.events.some((e) => e.event === named)) return named;
  const ours = phase?.split(' ')[1];
  return spec.events.find((e) => e.phase === ours)?.event;
}

/**
 * Replays each agent's session `repeats` times (a fresh store each time) and
 * returns, per agent, the median over the repeats of what the agent waited for
 * per mutating tool call, and the rest (prompt, turn end, session start) per session.
 */
export function replaySessions({ ws, cli, agentSpecs, pluginSpecs, entry, repeats, freshStore }) {
  const out = {};
  for (const agent of Object.keys(RECORDINGS)) {
    const plugin = pluginSpecs[agent];
    // A plugin's events keep the agent's own names; the phase each maps to is the spec's.
    const spec = plugin
      ? { events: plugin.events.map((e) => ({ ...e, tools: e.phase === 'pre' || e.phase === 'post' })) }
      : agentSpecs[agent];
    const events = recording(agent);
    const perCall = [];
    const perSession = [];
    let shape;
    for (let rep = 0; rep < repeats; rep++) {
      freshStore();
      run(process.execPath, [cli, 'init'], ws); // the baseline exists before the session, as `hooks install` makes sure
      run(process.execPath, [cli, 'hooks', 'install', '--agent', agent], ws);
      const config = plugin ? null : JSON.parse(readFileSync(path.join(ws, spec.file.project), 'utf8'));
      let toolWait = 0;
      let otherWait = 0;
      let calls = 0;
      let mutating = 0;
      let processes = 0;
      for (const [i, event] of events.entries()) {
        const name = eventName(spec, event);
        const tool =
          event.payload.tool_name ??
          event.payload.toolName ??
          event.payload.input?.tool ??
          event.payload.tool_call?.name ??
          event.payload.tool_result?.name;
        const wiring = spec.events.find((e) => e.event === name);
        const isTool = Boolean(wiring?.tools) || wiring?.phase === 'pre' || wiring?.phase === 'post';
        if (wiring?.phase === 'pre') calls++;
        if (wiring?.phase === 'pre' && !READ_ONLY.test(tool ?? '')) mutating++;
        // The tool's own effect, between its pre and its post: one file written.
        if (wiring?.phase === 'post' && !READ_ONLY.test(tool ?? '')) {
          mkdirSync(path.join(ws, 'replay'), { recursive: true });
          writeFileSync(path.join(ws, 'replay', `${agent}-${i}.txt`), `${agent} ${tool} ${i}\n`);
        }
        const input = JSON.stringify(event.payload).split(RECORDED_WORKSPACE).join(ws);
        const handlers = plugin ? pluginHandlers(agent, event, entry, plugin, ws) : name ? handlersFor(spec, config, name, tool) : [];
        for (const handler of handlers) {
          const start = process.hrtime.bigint();
          const r = spawnSync('sh', ['-c', handler.command], { cwd: ws, env: process.env, input });
          const ms = Number(process.hrtime.bigint() - start) / 1e6;
          if (r.status !== 0) throw new Error(`${agent} ${name}: exit ${r.status}`);
          processes++;
          if (handler.background) continue;
          if (isTool && !READ_ONLY.test(tool ?? '')) toolWait += ms;
          else otherWait += ms;
        }
      }
      perCall.push(toolWait / Math.max(1, mutating));
      perSession.push(otherWait);
      const checkpoints = JSON.parse(run(process.execPath, [cli, 'log', '--json'], ws).stdout).length;
      shape = { calls, mutating, processes, checkpoints };
      run(process.execPath, [cli, 'hooks', 'uninstall', '--agent', agent], ws);
      for (const dir of [
        'replay',
        '.claude',
        '.codex',
        '.gemini',
        '.github',
        '.qwen',
        '.factory',
        '.opencode',
        '.kilo',
        '.pi',
        '.clinerules',
      ])
        if (existsSync(path.join(ws, dir))) rmSync(path.join(ws, dir), { recursive: true, force: true });
    }
    out[agent] = { ...shape, perMutatingCallMs: median(perCall), otherHooksPerSessionMs: median(perSession) };
  }
  return out;
}

function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, env: process.env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
