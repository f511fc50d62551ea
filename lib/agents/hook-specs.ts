/**
 * Pure: each agent's hook wiring as data (its config file, layout, events and
 * handler shape), and the merge that adds one handler per event, recognised by
 * the entry script's name, keeping every other setting and hook as it was.
 * Installing twice changes nothing. The daemon token Claude Code's HTTP hooks
 * send is set and cleared apart from the handlers: it lives in the user's own
 * settings only, never in a project file (hooks-install.ts decides where).
 */
import { CkptError } from '../model/errors.js';
import type { Phase } from '../model/phases.js';
import { isObject, type ConfigAgent, type HookAgent, type Json, type Scope } from './agent-config.js';

/** The entry script's file name: how our handlers are recognised in any config. */
export const ENTRY_NAME = 'git-ckpt-hook';

interface EventWiring {
  event: string;
  phase: Phase;
  /** Tool events: the agent's matcher for the tools that can change files (every tool where it has no such syntax). */
  tools?: boolean;
}

interface AgentSpec {
  /** Config file, relative to the project root or to the home directory. */
  file: Record<Scope, string>;
  /**
   * The project file the team shares (commits) when `file.project` is the user's own one beside it
   * (Claude Code's `.claude/settings.json` beside `settings.local.json`). Nothing of ours goes there:
   * our handlers name this user's script, port and token variable. An older git-ckpt wired the
   * project there, with the daemon token; install and uninstall take ours and the token out of it.
   */
  sharedProjectFile?: string;
  /** `nested`: event → [{matcher, hooks: [handler]}] (Claude, Codex, Gemini); `flat`: event → [handler]. */
  layout: 'nested' | 'flat';
  /** Keys a new file starts with. */
  skeleton: Record<string, unknown>;
  /**
   * The matcher of tool events (nested layout): every tool but the read-only ones,
   * where the agent's matcher is a JavaScript regular expression. A tool not in
   * the list stays wired, the safe side; edits made while a read-only tool ran
   * are caught by the next mutating call's pre hook or by the turn's end.
   */
  toolMatcher?: string;
  events: EventWiring[];
  handler(command: string, phase: Phase, event: string): Record<string, unknown>;
  /** Where the command string lives in a handler. */
  commandKey: string;
}

const TIMEOUT_S = 30;

/** Pure: a JavaScript regular expression that matches every tool name but these. */
function allToolsBut(readOnly: readonly string[]): string {
  return `^(?!(?:${readOnly.join('|')})$)`;
}

/** Tools that cannot change files, by agent (hooks/README.md lists them). */
const READ_ONLY_TOOLS = {
  claude: [
    'Read',
    'Glob',
    'Grep',
    'LS',
    'WebFetch',
    'WebSearch',
    'TodoWrite',
    'TodoRead',
    'NotebookRead',
    'ExitPlanMode',
    'EnterPlanMode',
    'AskUserQuestion',
    'BashOutput',
    'TaskOutput',
    'TaskList',
    'TaskGet',
    'ListMcpResourcesTool',
    'ReadMcpResourceTool',
    'ToolSearch',
  ],
  gemini: [
    'read_file',
    'read_many_files',
    'glob',
    'grep_search',
    'search_file_content',
    'list_directory',
    'web_fetch',
    'google_web_search',
    'write_todos',
    'ask_user',
    'get_internal_docs',
    'enter_plan_mode',
    'exit_plan_mode',
  ],
  droid: ['Read', 'LS', 'Grep', 'Glob', 'TodoWrite', 'WebSearch', 'FetchUrl'],
} as const;

/** Claude Code's event names and layout, which Codex copied (without PostToolUseFailure). */
function claudeStyle(file: Record<Scope, string>, withFailure: boolean, toolMatcher: string): AgentSpec {
  return {
    file,
    layout: 'nested',
    skeleton: {},
    toolMatcher,
    events: [
      { event: 'PreToolUse', phase: 'pre', tools: true },
      { event: 'PostToolUse', phase: 'post', tools: true },
      ...(withFailure ? [{ event: 'PostToolUseFailure', phase: 'post' as const, tools: true }] : []),
      { event: 'UserPromptSubmit', phase: 'turn-start' },
      { event: 'Stop', phase: 'turn-end' },
      { event: 'SubagentStop', phase: 'subagent-end' },
      { event: 'SessionStart', phase: 'session-start' },
    ],
    // Post hooks run in the background (`async`): the agent waits only for the pre hook. The next
    // pre, the prompt and the turn's end are synchronous and take a post that has not come yet as
    // that call's (turns.ts), so a post killed at the session's end loses nothing.
    // A failed call's post stays synchronous: its error is recorded on its own checkpoint, before the turn ends.
    handler: (command, _phase, event) => ({
      type: 'command',
      command,
      timeout: TIMEOUT_S,
      ...(event === 'PostToolUse' ? { async: true } : {}),
    }),
    commandKey: 'command',
  };
}

/**
 * Cursor's event names and layout, which Copilot CLI copied: a versioned file whose `hooks` map each
 * event straight to a list of handlers (no matchers: every tool is hooked), camelCase events of which
 * only the prompt's and the turn's end differ; `commandKey` names where `handler` puts the command.
 */
function flatStyle(
  file: Record<Scope, string>,
  names: { prompt: string; stop: string },
  commandKey: string,
  handler: (command: string) => Record<string, unknown>,
): AgentSpec {
  return {
    file,
    layout: 'flat',
    skeleton: { version: 1 },
    events: [
      { event: 'preToolUse', phase: 'pre' },
      { event: 'postToolUse', phase: 'post' },
      { event: 'postToolUseFailure', phase: 'post' },
      { event: names.prompt, phase: 'turn-start' },
      { event: names.stop, phase: 'turn-end' },
      { event: 'subagentStop', phase: 'subagent-end' },
      { event: 'sessionStart', phase: 'session-start' },
    ],
    handler,
    commandKey,
  };
}

/** @public (tests use it) */
export const AGENT_SPECS: Record<ConfigAgent, AgentSpec> = {
  // Claude Code's project settings are two files: `settings.json`, which teams commit, and
  // `settings.local.json`, the user's own (Claude Code has git ignore it). Ours go in the user's.
  claude: {
    ...claudeStyle({ project: '.claude/settings.local.json', user: '.claude/settings.json' }, true, allToolsBut(READ_ONLY_TOOLS.claude)),
    sharedProjectFile: '.claude/settings.json',
  },
  // Codex has no PostToolUseFailure (its PostToolUse also fires after a failed shell command), and
  // hooks only its shell, apply_patch and MCP tools; its matcher is a Rust regex, without look-ahead.
  codex: claudeStyle({ project: '.codex/hooks.json', user: '.codex/hooks.json' }, false, '*'),
  gemini: {
    file: { project: '.gemini/settings.json', user: '.gemini/settings.json' },
    layout: 'nested',
    skeleton: {},
    toolMatcher: allToolsBut(READ_ONLY_TOOLS.gemini),
    events: [
      { event: 'BeforeTool', phase: 'pre', tools: true },
      { event: 'AfterTool', phase: 'post', tools: true },
      { event: 'BeforeAgent', phase: 'turn-start' },
      { event: 'AfterAgent', phase: 'turn-end' },
      { event: 'SessionStart', phase: 'session-start' },
    ],
    // Gemini's timeout is in milliseconds.
    handler: (command, phase) => ({ name: `git-ckpt-${phase}`, type: 'command', command, timeout: TIMEOUT_S * 1000 }),
    commandKey: 'command',
  },
  cursor: flatStyle(
    { project: '.cursor/hooks.json', user: '.cursor/hooks.json' },
    { prompt: 'beforeSubmitPrompt', stop: 'stop' },
    'command',
    (command) => ({ command, timeout: TIMEOUT_S }),
  ),
  // Qwen Code copied Claude Code's events and payloads; its timeouts are in milliseconds (0.15; later
  // versions read a value of 1000 or more as milliseconds still), its settings carry a `$version` it
  // would otherwise write back itself. Tool names are matched with aliases and unanchored regexps: all.
  // Its PostToolUse stays synchronous: a shell that exited non-zero is reported only there (`Exit Code:
  // 3` in its text), and a background post would land after the next call took its changes.
  qwen: {
    ...claudeStyle({ project: '.qwen/settings.json', user: '.qwen/settings.json' }, true, '*'),
    skeleton: { $version: 4 },
    handler: (command) => ({ type: 'command', command, timeout: TIMEOUT_S * 1000 }),
  },
  // Factory's Droid copied Claude Code's hooks (no PostToolUseFailure: a failed tool fires no post at all,
  // and the next call's pre takes what it changed). `.factory/settings.json` `hooks`; a `hooks.json`
  // next to it replaces the same events, so ours live in settings.json. Its PostToolUse stays
  // synchronous: a shell's exit status is told only there.
  droid: {
    ...claudeStyle({ project: '.factory/settings.json', user: '.factory/settings.json' }, false, allToolsBut(READ_ONLY_TOOLS.droid)),
    handler: (command) => ({ type: 'command', command, timeout: TIMEOUT_S }),
  },
  copilot: flatStyle(
    { project: '.github/hooks/git-ckpt.json', user: '.copilot/hooks/git-ckpt.json' },
    { prompt: 'userPromptSubmitted', stop: 'agentStop' },
    'bash',
    (command) => ({ type: 'command', bash: command, timeoutSec: TIMEOUT_S }),
  ),
};

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Pure: the command an agent runs. Through `sh`, so the script needs no exec
 * bit; stderr silenced and `|| true`, so even a deleted script cannot turn into
 * an error the agent acts on (Gemini denies a tool on exit 127 with stderr).
 * @public (tests use it)
 */
export function hookCommand(script: string, agent: HookAgent, phase: Phase): string {
  // A bare name is the installed command, looked up on PATH (an npm bin link carries the exec bit).
  const run = script.includes('/') ? `sh ${shellQuote(script)}` : script;
  return `${run} ${agent} ${phase} 2>/dev/null || true`;
}

/**
 * Claude Code's HTTP hooks (2.1.63 on): tool events POSTed straight to the
 * daemon on 127.0.0.1, no process per call. The token travels in a header
 * Claude fills from the variable `GIT_CKPT_TOKEN` of its environment, which
 * only the hooks that list it in `allowedEnvVars` may read; the variable is set
 * in the `env` of the user's own Claude settings (`withToken`), never in a
 * project file. A prompt and a session start stay command hooks: they start the
 * daemon when it is down (an HTTP hook then fails open, and the next command
 * hook's capture takes what it missed).
 */
export interface HttpTransport {
  port: number;
  token: string;
}

/** @public (tests use it) */
export const TOKEN_VARIABLE = 'GIT_CKPT_TOKEN';
const TOKEN_HEADER = 'X-Ckpt-Token';
/** The agents with HTTP hooks, and the events that use them. */
const HTTP_EVENTS: Partial<Record<HookAgent, ReadonlySet<string>>> = {
  claude: new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'SubagentStop']),
};

/** Whether this agent's hooks can be HTTP hooks. */
export function hasHttpHooks(agent: HookAgent): boolean {
  return HTTP_EVENTS[agent] !== undefined;
}

function httpHandler(http: HttpTransport, agent: ConfigAgent, phase: Phase): Record<string, unknown> {
  return {
    type: 'http',
    url: `http://127.0.0.1:${http.port}/hook/${agent}/${phase}`,
    headers: { [TOKEN_HEADER]: `$${TOKEN_VARIABLE}` },
    allowedEnvVars: [TOKEN_VARIABLE],
    timeout: TIMEOUT_S,
  };
}

/** Pure: whether a config's `env` sets the daemon token's variable (to anything). */
export function setsToken(config: Json): boolean {
  return isObject(config.env) && TOKEN_VARIABLE in config.env;
}

/** Pure: the daemon token a config's `env` sets, if it sets one. */
export function tokenIn(config: Json): string | undefined {
  const value = isObject(config.env) ? config.env[TOKEN_VARIABLE] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Pure: the config with the daemon token in its `env` (every other variable kept). */
export function withToken(config: Json, token: string): Json {
  if (tokenIn(config) === token) return config;
  return { ...config, env: { ...(isObject(config.env) ? config.env : {}), [TOKEN_VARIABLE]: token } };
}

/** Pure: the config without the daemon token (and without `env` when it held nothing else). */
export function withoutToken(config: Json): Json {
  if (!setsToken(config)) return config;
  const { [TOKEN_VARIABLE]: _token, ...rest } = config.env as Json;
  const { env: _env, ...others } = config;
  return Object.keys(rest).length ? { ...others, env: rest } : others;
}

/** Pure: whether a config holds nothing but the keys a new file of this agent starts with (ours all gone). */
export function isEmptyConfig(config: Json, agent: ConfigAgent): boolean {
  return Object.keys(config).every((k) => k in AGENT_SPECS[agent].skeleton);
}

function isOurs(handler: unknown, spec: AgentSpec): boolean {
  if (!isObject(handler)) return false;
  if (handler.type === 'http') return isObject(handler.headers) && TOKEN_HEADER in handler.headers;
  return typeof handler[spec.commandKey] === 'string' && (handler[spec.commandKey] as string).includes(ENTRY_NAME);
}

/** The handlers a list item holds: the item itself (flat layout) or its `hooks` (nested). */
function handlersOf(item: unknown, spec: AgentSpec): unknown[] {
  if (spec.layout === 'flat') return [item];
  return isObject(item) && Array.isArray(item.hooks) ? item.hooks : [];
}

/** How many of our handlers a list item holds. */
function oursIn(item: unknown, spec: AgentSpec): number {
  return handlersOf(item, spec).filter((h) => isOurs(h, spec)).length;
}

function hooksTable(config: Json, file: string): Json {
  if (config.hooks === undefined) return {};
  if (!isObject(config.hooks)) throw new CkptError('config', `${file}: "hooks" is not an object; left untouched`);
  return config.hooks;
}

function eventList(hooks: Json, event: string, file: string): unknown[] {
  const list = hooks[event];
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new CkptError('config', `${file}: hooks.${event} is not a list; left untouched`);
  return list;
}

/**
 * Pure: the config without any of our handlers (other hooks and groups kept as they were); the
 * daemon token, which other configs' HTTP hooks may read, is `withoutToken`'s. @public (tests use it)
 */
export function removeHooks(config: Json, agent: ConfigAgent, file = 'config'): Json {
  const spec = AGENT_SPECS[agent];
  const hooks = hooksTable(config, file);
  const next: Json = {};
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value)) {
      next[event] = value;
      continue;
    }
    let touched = false;
    const kept: unknown[] = [];
    for (const item of value) {
      if (oursIn(item, spec) === 0) {
        kept.push(item);
        continue;
      }
      touched = true;
      if (spec.layout === 'nested') {
        const rest = ((item as Json).hooks as unknown[]).filter((h) => !isOurs(h, spec));
        if (rest.length) kept.push({ ...(item as Json), hooks: rest });
      }
    }
    if (!touched || kept.length) next[event] = touched ? kept : value;
  }
  const out: Json = { ...config, hooks: next };
  if (Object.keys(next).length === 0 && config.hooks !== undefined && Object.keys(hooks).length > 0) delete out.hooks;
  if (config.hooks === undefined) delete out.hooks;
  return out;
}

function desiredEntry(spec: AgentSpec, agent: ConfigAgent, wiring: EventWiring, script: string, http?: HttpTransport): unknown {
  const handler =
    http && HTTP_EVENTS[agent]?.has(wiring.event)
      ? httpHandler(http, agent, wiring.phase)
      : spec.handler(hookCommand(script, agent, wiring.phase), wiring.phase, wiring.event);
  if (spec.layout === 'flat') return handler;
  return wiring.tools ? { matcher: spec.toolMatcher ?? '*', hooks: [handler] } : { hooks: [handler] };
}

/**
 * Pure: the config with our handlers wired for every event (idempotent); with
 * `http`, the agent's tool events as HTTP hooks to the daemon (their token is
 * `withToken`'s, in the user's settings). @public (tests use it)
 */
export function mergeHooks(config: Json, agent: ConfigAgent, script: string, file = 'config', http?: HttpTransport): Json {
  const spec = AGENT_SPECS[agent];
  const table = hooksTable(config, file);
  for (const w of spec.events) eventList(table, w.event, file);
  const viaHttp = http && hasHttpHooks(agent) ? http : undefined;
  if (isWired(config, agent, script, viaHttp)) return config;
  const base = removeHooks(config, agent, file);
  const hooks: Json = { ...(isObject(base.hooks) ? base.hooks : {}) };
  for (const w of spec.events) hooks[w.event] = [...eventList(hooks, w.event, file), desiredEntry(spec, agent, w, script, viaHttp)];
  return { ...spec.skeleton, ...base, hooks };
}

/** Pure: how each wired event reaches git-ckpt: `http` (to the daemon) or `command`. @public (tests use it) */
export function transports(config: Json, agent: ConfigAgent): Record<string, 'http' | 'command'> {
  const spec = AGENT_SPECS[agent];
  const out: Record<string, 'http' | 'command'> = {};
  if (!isObject(config.hooks)) return out;
  for (const w of spec.events) {
    const list = config.hooks[w.event];
    if (!Array.isArray(list)) continue;
    for (const item of list)
      for (const h of handlersOf(item, spec)) if (isOurs(h, spec)) out[w.event] = isObject(h) && h.type === 'http' ? 'http' : 'command';
  }
  return out;
}

/** Pure: the events where our handler is wired (whatever script path it names). @public (tests use it) */
export function wiredEvents(config: Json, agent: ConfigAgent): string[] {
  return Object.keys(transports(config, agent));
}

/** Pure: whether every event carries exactly the wanted handler, once. */
function isWired(config: Json, agent: ConfigAgent, script: string, http?: HttpTransport): boolean {
  const spec = AGENT_SPECS[agent];
  if (!isObject(config.hooks)) return false;
  const hooks = config.hooks;
  let ours = 0;
  for (const list of Object.values(hooks)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) ours += oursIn(item, spec);
  }
  if (ours !== spec.events.length) return false;
  return spec.events.every((w) => {
    const list = hooks[w.event];
    const wanted = JSON.stringify(desiredEntry(spec, agent, w, script, http));
    return Array.isArray(list) && list.some((item) => JSON.stringify(item) === wanted);
  });
}
