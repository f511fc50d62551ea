/**
 * Wiring git-ckpt into each agent's own hook configuration.
 *
 * The merge is pure (`mergeHooks`, `removeHooks`, `wiredEvents`): it adds one
 * handler per event, recognised by the entry script's name, and keeps every
 * other setting and hook as it was. Installing twice changes nothing. The I/O
 * around it refuses a file it cannot parse, writes atomically, and keeps a
 * backup of the previous content.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CkptError } from './errors.js';
import { hookEntryScript } from './layout.js';
import type { Phase } from './hook-payload.js';
import { storeRoot, writeFileAtomic } from './store.js';
import type { RunVerdict } from './agent-trust.js';

export type HookAgent = 'claude' | 'codex' | 'gemini' | 'cursor' | 'copilot';
export const HOOK_AGENTS: readonly HookAgent[] = ['claude', 'codex', 'gemini', 'cursor', 'copilot'];
export type Scope = 'project' | 'user';

/** The entry script's file name: how our handlers are recognised in any config. */
const ENTRY_NAME = 'git-ckpt-hook';

interface EventWiring {
  event: string;
  phase: Phase;
  /** Tool events: the agent's matcher for the tools that can change files (every tool where it has no such syntax). */
  tools?: boolean;
}

interface AgentSpec {
  /** Config file, relative to the project root or to the home directory. */
  file: Record<Scope, string>;
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
} as const;

/** Claude Code's event names and layout, which Codex copied (without PostToolUseFailure). */
function claudeStyle(dir: string, file: string, withFailure: boolean, toolMatcher: string): AgentSpec {
  return {
    file: { project: `${dir}/${file}`, user: `${dir}/${file}` },
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

/** @public (tests use it) */
export const AGENT_SPECS: Record<HookAgent, AgentSpec> = {
  claude: claudeStyle('.claude', 'settings.json', true, allToolsBut(READ_ONLY_TOOLS.claude)),
  // Codex has no PostToolUseFailure (its PostToolUse also fires after a failed shell command), and
  // hooks only its shell, apply_patch and MCP tools; its matcher is a Rust regex, without look-ahead.
  codex: claudeStyle('.codex', 'hooks.json', false, '*'),
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
  cursor: {
    file: { project: '.cursor/hooks.json', user: '.cursor/hooks.json' },
    layout: 'flat',
    skeleton: { version: 1 },
    events: [
      { event: 'preToolUse', phase: 'pre' },
      { event: 'postToolUse', phase: 'post' },
      { event: 'postToolUseFailure', phase: 'post' },
      { event: 'beforeSubmitPrompt', phase: 'turn-start' },
      { event: 'stop', phase: 'turn-end' },
      { event: 'subagentStop', phase: 'subagent-end' },
      { event: 'sessionStart', phase: 'session-start' },
    ],
    handler: (command) => ({ command, timeout: TIMEOUT_S }),
    commandKey: 'command',
  },
  copilot: {
    file: { project: '.github/hooks/git-ckpt.json', user: '.copilot/hooks/git-ckpt.json' },
    layout: 'flat',
    skeleton: { version: 1 },
    events: [
      { event: 'preToolUse', phase: 'pre' },
      { event: 'postToolUse', phase: 'post' },
      { event: 'postToolUseFailure', phase: 'post' },
      { event: 'userPromptSubmitted', phase: 'turn-start' },
      { event: 'agentStop', phase: 'turn-end' },
      { event: 'subagentStop', phase: 'subagent-end' },
      { event: 'sessionStart', phase: 'session-start' },
    ],
    handler: (command) => ({ type: 'command', bash: command, timeoutSec: TIMEOUT_S }),
    commandKey: 'bash',
  },
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
  return `sh ${shellQuote(script)} ${agent} ${phase} 2>/dev/null || true`;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isOurs(handler: unknown, spec: AgentSpec): boolean {
  return isObject(handler) && typeof handler[spec.commandKey] === 'string' && (handler[spec.commandKey] as string).includes(ENTRY_NAME);
}

/** How many of our handlers a list item holds: the item itself (flat layout) or its `hooks` (nested). */
function oursIn(item: unknown, spec: AgentSpec): number {
  if (spec.layout === 'flat') return isOurs(item, spec) ? 1 : 0;
  return isObject(item) && Array.isArray(item.hooks) ? item.hooks.filter((h) => isOurs(h, spec)).length : 0;
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

/** Pure: the config without any of our handlers (other hooks and groups kept as they were). @public (tests use it) */
export function removeHooks(config: Json, agent: HookAgent, file = 'config'): Json {
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

function desiredEntry(spec: AgentSpec, wiring: EventWiring, command: string): unknown {
  const handler = spec.handler(command, wiring.phase, wiring.event);
  if (spec.layout === 'flat') return handler;
  return wiring.tools ? { matcher: spec.toolMatcher ?? '*', hooks: [handler] } : { hooks: [handler] };
}

/** Pure: the config with our handlers wired for every event (idempotent). @public (tests use it) */
export function mergeHooks(config: Json, agent: HookAgent, script: string, file = 'config'): Json {
  const spec = AGENT_SPECS[agent];
  const table = hooksTable(config, file);
  for (const w of spec.events) eventList(table, w.event, file);
  if (isWired(config, agent, script)) return config;
  const base = removeHooks(config, agent, file);
  const hooks: Json = { ...(isObject(base.hooks) ? base.hooks : {}) };
  for (const w of spec.events) {
    hooks[w.event] = [...eventList(hooks, w.event, file), desiredEntry(spec, w, hookCommand(script, agent, w.phase))];
  }
  return { ...spec.skeleton, ...base, hooks };
}

/** Pure: the events where our handler is wired (whatever script path it names). @public (tests use it) */
export function wiredEvents(config: Json, agent: HookAgent): string[] {
  const spec = AGENT_SPECS[agent];
  if (!isObject(config.hooks)) return [];
  const hooks = config.hooks;
  return spec.events
    .map((w) => w.event)
    .filter((event) => {
      const list = hooks[event];
      if (!Array.isArray(list)) return false;
      return list.some((item) => oursIn(item, spec) > 0);
    });
}

/** Pure: whether every event carries exactly the wanted handler, once. */
function isWired(config: Json, agent: HookAgent, script: string): boolean {
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
    const wanted = JSON.stringify(desiredEntry(spec, w, hookCommand(script, agent, w.phase)));
    return Array.isArray(list) && list.some((item) => JSON.stringify(item) === wanted);
  });
}

export interface HookTarget {
  agent: HookAgent;
  scope: Scope;
  file: string;
}

export function hookTarget(agent: HookAgent, scope: Scope, projectRoot: string, env: NodeJS.ProcessEnv = process.env): HookTarget {
  const spec = AGENT_SPECS[agent];
  let base = scope === 'project' ? projectRoot : (env.HOME ?? homedir());
  if (agent === 'copilot' && scope === 'user' && env.COPILOT_HOME)
    return { agent, scope, file: path.join(env.COPILOT_HOME, 'hooks', 'git-ckpt.json') };
  base = path.resolve(base);
  return { agent, scope, file: path.join(base, spec.file[scope]) };
}

/** A JSON config file as an object (undefined when absent); a `config` error when it cannot be used. */
export function readConfig(file: string): Json | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CkptError('config', `cannot read ${file}: ${(err as Error).message}; left untouched`);
  }
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CkptError('config', `cannot parse ${file} (${(err as Error).message.split('\n')[0]}); left untouched`);
  }
  if (!isObject(parsed)) throw new CkptError('config', `${file} does not hold a JSON object; left untouched`);
  return parsed;
}

/**
 * Pure: where the backup of a config file goes: under the store root, never
 * next to the file, where it would show in the user's `git status` and in the
 * first checkpoint. One per change, named by time and the file's path.
 */
function backupPath(file: string, root: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const name = path
    .resolve(file)
    .replace(/^[A-Za-z]:/, '')
    .split(/[\\/]+/)
    .filter(Boolean)
    .join('_')
    .replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(root, 'backups', `${stamp}-${name.slice(-150)}`);
}

/** A copy of `file` under the store root's backups/, before it is changed. */
function backUp(file: string, env: NodeJS.ProcessEnv): string {
  let backup = backupPath(file, storeRoot(env));
  mkdirSync(path.dirname(backup), { recursive: true, mode: 0o700 });
  for (let n = 2; existsSync(backup); n++) backup = `${backupPath(file, storeRoot(env))}.${n}`;
  copyFileSync(file, backup);
  return backup;
}

/** Write a JSON config atomically, backing up the old one first; returns the backup. */
export function writeConfig(file: string, config: Json, hadFile: boolean, env: NodeJS.ProcessEnv): string | undefined {
  return writeConfigText(file, `${JSON.stringify(config, null, 2)}\n`, hadFile, env);
}

/**
 * Write an agent's config file atomically, after a backup. A symlinked config
 * (a dotfiles repository) is written where the link points, and the file keeps
 * its mode: the link and the permissions are the user's.
 */
export function writeConfigText(file: string, text: string, hadFile: boolean, env: NodeJS.ProcessEnv): string | undefined {
  const target = hadFile ? realpathSync(file) : file;
  mkdirSync(path.dirname(target), { recursive: true });
  const backup = hadFile ? backUp(file, env) : undefined;
  const mode = hadFile ? statSync(target).mode & 0o777 : undefined;
  writeFileAtomic(target, text);
  if (mode !== undefined) chmodSync(target, mode);
  return backup;
}

export interface InstallResult extends HookTarget {
  changed: boolean;
  backup?: string;
  events: string[];
  /** Why this config could not be written (the others were). */
  error?: string;
}

/** What install or uninstall will do to one agent's config, worked out before anything is written. */
interface HookChange {
  target: HookTarget;
  /** The content to write, `null` to remove the file (our own Copilot file with nothing else in it), undefined for no change. */
  next?: Json | null;
  hadFile: boolean;
  events: string[];
}

function installChange(target: HookTarget, script: string): HookChange {
  const current = readConfig(target.file);
  const next = mergeHooks(current ?? {}, target.agent, script, target.file);
  const changed = current === undefined || JSON.stringify(next) !== JSON.stringify(current);
  return { target, ...(changed ? { next } : {}), hadFile: current !== undefined, events: wiredEvents(next, target.agent) };
}

function uninstallChange(target: HookTarget): HookChange {
  const current = readConfig(target.file);
  if (current === undefined) return { target, hadFile: false, events: [] };
  const next = removeHooks(current, target.agent, target.file);
  if (JSON.stringify(next) === JSON.stringify(current)) return { target, hadFile: true, events: [] };
  const spec = AGENT_SPECS[target.agent];
  // Our own file (Copilot's git-ckpt.json) with nothing else in it goes away.
  const empty = path.basename(target.file) === 'git-ckpt.json' && Object.keys(next).every((k) => k in spec.skeleton);
  return { target, next: empty ? null : next, hadFile: true, events: [] };
}

function applyChange(change: HookChange, env: NodeJS.ProcessEnv): InstallResult {
  const { target, next, hadFile, events } = change;
  if (next === undefined) return { ...target, changed: false, events };
  try {
    if (next === null) {
      const backup = backUp(target.file, env);
      rmSync(target.file);
      return { ...target, changed: true, backup, events };
    }
    const backup = writeConfig(target.file, next, hadFile, env);
    return { ...target, changed: true, ...(backup ? { backup } : {}), events };
  } catch (err) {
    return { ...target, changed: false, events: [], error: (err as Error).message };
  }
}

/**
 * Install or uninstall for every target, all or nothing where it can be: every
 * config is read and merged first, so one that cannot be parsed fails the whole
 * command before any file is written. A write that fails after that (a full
 * disk, a read-only file) is reported in its own result, next to those written.
 */
export function changeHooks(
  action: 'install' | 'uninstall',
  targets: HookTarget[],
  env: NodeJS.ProcessEnv = process.env,
  script = hookEntryScript(),
): InstallResult[] {
  const changes: HookChange[] = [];
  const refused: { agent: HookAgent; message: string }[] = [];
  for (const target of targets) {
    try {
      changes.push(action === 'install' ? installChange(target, script) : uninstallChange(target));
    } catch (err) {
      refused.push({ agent: target.agent, message: (err as Error).message });
    }
  }
  if (refused.length === 1 && targets.length === 1) throw new CkptError('config', refused[0]!.message);
  if (refused.length)
    throw new CkptError('config', `${refused.map((r) => `${r.agent}: ${r.message}`).join('; ')}; no agent's config was written`);
  return changes.map((change) => applyChange(change, env));
}

export interface HookStatus extends HookTarget {
  state: 'wired' | 'partly wired' | 'not wired' | 'unreadable';
  events: string[];
  missing: string[];
  /** The script named in the config no longer exists. */
  brokenScript?: boolean;
  error?: string;
}

/** Whether a command string is one of our handlers (it names the entry script). */
function isOurCommand(command: string): boolean {
  return command.includes(ENTRY_NAME);
}

/** hookStatus, plus whether the agent will actually run what is wired (see agent-trust.ts). */
export async function hookStatusWithVerdict(
  target: HookTarget,
  projectRoot: string | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<HookStatus & { verdict?: RunVerdict }> {
  const status = hookStatus(target);
  if (status.state === 'not wired' || status.state === 'unreadable') return status;
  const { willRunHooks } = await import('./agent-trust.js');
  return { ...status, verdict: await willRunHooks(target.agent, target.scope, projectRoot, target.file, env, isOurCommand) };
}

/** @public (tests use it) */
export function hookStatus(target: HookTarget): HookStatus {
  const spec = AGENT_SPECS[target.agent];
  let config: Json | undefined;
  try {
    config = readConfig(target.file);
  } catch (err) {
    return { ...target, state: 'unreadable', events: [], missing: spec.events.map((e) => e.event), error: (err as Error).message };
  }
  const events = config ? wiredEvents(config, target.agent) : [];
  const missing = spec.events.map((e) => e.event).filter((e) => !events.includes(e));
  const state = events.length === 0 ? 'not wired' : missing.length ? 'partly wired' : 'wired';
  const scripts = new Set<string>();
  const text = config ? JSON.stringify(config) : '';
  for (const m of text.matchAll(/sh '((?:[^'\\]|\\.)*?git-ckpt-hook)'/g)) scripts.add(m[1]!);
  const brokenScript = [...scripts].some((s) => !existsSync(s));
  return { ...target, state, events, missing, ...(brokenScript ? { brokenScript } : {}) };
}
