/**
 * Wiring git-ckpt into each agent's own hook configuration: where each
 * agent's file is, install and removal (every target merged first, then
 * written), and status. The wiring is data with a pure merge (hook-specs.ts);
 * the config files' I/O is shared with the MCP installer (agent-config.ts).
 */
import { existsSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CkptError } from '../model/errors.js';
import { hookEntryScript } from '../store/layout.js';
import { versionBelow } from '../git/runner.js';
import type { RunVerdict } from './agent-trust.js';
import { backUp, readConfig, readConfigText, writeConfigText, type HookAgent, type Json, type Scope } from './agent-config.js';
import { isOurPlugin, isPluginAgent, pluginEntry, pluginFiles, PLUGIN_SPECS, PLUGIN_TRANSPORT, type PluginAgent } from './plugin-specs.js';
import {
  AGENT_SPECS,
  ENTRY_NAME,
  hookCommand,
  mergeHooks,
  removeHooks,
  transports,
  wiredEvents,
  type HttpTransport,
} from './hook-specs.js';
import { daemonToken, startDaemon } from '../store/daemon-client.js';
import { spawnSync } from 'node:child_process';

export interface HookTarget {
  agent: HookAgent;
  scope: Scope;
  file: string;
}

export function hookTarget(agent: HookAgent, scope: Scope, projectRoot: string, env: NodeJS.ProcessEnv = process.env): HookTarget {
  if (isPluginAgent(agent)) {
    const spec = PLUGIN_SPECS[agent];
    const file =
      scope === 'project' ? path.join(path.resolve(projectRoot), spec.project) : spec.user(env, path.resolve(env.HOME ?? homedir()));
    return { agent, scope, file };
  }
  const spec = AGENT_SPECS[agent];
  let base = scope === 'project' ? projectRoot : (env.HOME ?? homedir());
  if (agent === 'copilot' && scope === 'user' && env.COPILOT_HOME)
    return { agent, scope, file: path.join(env.COPILOT_HOME, 'hooks', 'git-ckpt.json') };
  if (agent === 'qwen' && scope === 'user' && env.QWEN_HOME) return { agent, scope, file: path.join(env.QWEN_HOME, 'settings.json') };
  base = path.resolve(base);
  return { agent, scope, file: path.join(base, spec.file[scope]) };
}

/** The agent's events that git-ckpt's wiring covers. */
function agentEvents(agent: HookAgent): string[] {
  return (isPluginAgent(agent) ? PLUGIN_SPECS[agent].events : AGENT_SPECS[agent].events).map((e) => e.event);
}

export interface InstallResult extends HookTarget {
  changed: boolean;
  backup?: string;
  events: string[];
  /** Why this config could not be written (the others were). */
  error?: string;
}

/** One file an install or uninstall writes: its new text, or null to remove it. */
interface FileWrite {
  file: string;
  text: string | null;
  hadFile: boolean;
}

/** What install or uninstall will do to one agent's config, worked out before anything is written. */
interface HookChange {
  target: HookTarget;
  /** The files to write or remove (none: no change). */
  writes: FileWrite[];
  events: string[];
}

const jsonText = (config: Json) => `${JSON.stringify(config, null, 2)}\n`;

/** The files a plugin agent's wiring is, as we would write them: the shipped templates with the entry script's path. */
function wantedPlugin(target: HookTarget & { agent: PluginAgent }, script: string): { file: string; event: string; text: string }[] {
  const hooks = path.dirname(script);
  const read = (name: string) => readFileSync(path.join(hooks, name), 'utf8');
  const templates = { transport: PLUGIN_SPECS[target.agent].hookFiles ? '' : read(PLUGIN_TRANSPORT), adapter: read };
  return pluginFiles(target.agent, target.file, templates, script, (phase) => hookCommand(script, target.agent, phase));
}

function pluginInstallChange(target: HookTarget & { agent: PluginAgent }, script: string): HookChange {
  const writes: FileWrite[] = [];
  for (const { file, text } of wantedPlugin(target, script)) {
    const current = readConfigText(file);
    if (current !== undefined && !isOurPlugin(current, target.agent))
      throw new CkptError('config', `${file} is not git-ckpt's plugin; left untouched`);
    if (text !== current) writes.push({ file, text, hadFile: current !== undefined });
  }
  return { target, writes, events: agentEvents(target.agent) };
}

function installChange(target: HookTarget, script: string, http?: HttpTransport): HookChange {
  if (isPluginAgent(target.agent)) return pluginInstallChange({ ...target, agent: target.agent }, script);
  const agent = target.agent;
  const current = readConfig(target.file);
  const next = mergeHooks(current ?? {}, agent, script, target.file, http);
  const changed = current === undefined || JSON.stringify(next) !== JSON.stringify(current);
  const writes = changed ? [{ file: target.file, text: jsonText(next), hadFile: current !== undefined }] : [];
  return { target, writes, events: wiredEvents(next, agent) };
}

function uninstallChange(target: HookTarget): HookChange {
  const agent = target.agent;
  if (isPluginAgent(agent)) {
    // Only our own files go; a file of the user's in their place stays.
    const writes = wantedPlugin({ ...target, agent }, hookEntryScript())
      .filter(({ file }) => {
        const current = readConfigText(file);
        return current !== undefined && isOurPlugin(current, agent);
      })
      .map(({ file }) => ({ file, text: null, hadFile: true }));
    return { target, writes, events: [] };
  }
  const current = readConfig(target.file);
  if (current === undefined) return { target, writes: [], events: [] };
  const next = removeHooks(current, agent, target.file);
  if (JSON.stringify(next) === JSON.stringify(current)) return { target, writes: [], events: [] };
  const spec = AGENT_SPECS[agent];
  // Our own file (Copilot's git-ckpt.json) with nothing else in it goes away.
  const empty = path.basename(target.file) === 'git-ckpt.json' && Object.keys(next).every((k) => k in spec.skeleton);
  return { target, writes: [{ file: target.file, text: empty ? null : jsonText(next), hadFile: true }], events: [] };
}

/** A plugin's folder, and the agent's folder above it, once nothing else is in them: uninstall leaves no trace. */
function removeEmptyFolders(file: string): void {
  const plugins = path.dirname(file);
  for (const dir of [plugins, path.dirname(plugins)]) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (or not ours to judge): it stays, and so does everything above it
    }
  }
}

function applyChange(change: HookChange, env: NodeJS.ProcessEnv): InstallResult {
  const { target, writes, events } = change;
  if (writes.length === 0) return { ...target, changed: false, events };
  let first: string | undefined;
  try {
    for (const { file, text, hadFile } of writes) {
      let backup: string | undefined;
      if (text === null) {
        backup = backUp(file, env);
        rmSync(file);
        if (isPluginAgent(target.agent)) removeEmptyFolders(file);
      } else backup = writeConfigText(file, text, hadFile, env);
      first ??= backup;
    }
    return { ...target, changed: true, ...(first ? { backup: first } : {}), events };
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
  http?: HttpTransport,
): InstallResult[] {
  const changes: HookChange[] = [];
  const refused: { agent: HookAgent; message: string }[] = [];
  for (const target of targets) {
    try {
      changes.push(action === 'install' ? installChange(target, script, http) : uninstallChange(target));
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
  /** How each wired event reaches git-ckpt: HTTP to the daemon, a command, or our plugin inside the agent. */
  transports: Record<string, 'http' | 'command' | 'plugin'>;
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

/** A plugin agent's status: our files there (for this agent), and whether the entry script they call still exists. */
function pluginStatus(target: HookTarget & { agent: PluginAgent }): HookStatus {
  const all = agentEvents(target.agent);
  const ours: { event: string; text: string }[] = [];
  try {
    for (const { file, event } of wantedPlugin(target, hookEntryScript())) {
      const text = readConfigText(file);
      if (text !== undefined && isOurPlugin(text, target.agent)) ours.push({ event, text });
    }
  } catch (err) {
    return { ...target, state: 'unreadable', events: [], transports: {}, missing: all, error: (err as Error).message };
  }
  if (ours.length === 0) return { ...target, state: 'not wired', events: [], transports: {}, missing: all };
  // One plugin file covers every event; Cline's hook files one each.
  const events = ours.some((o) => o.event === '*') ? all : all.filter((e) => ours.some((o) => o.event === e));
  const missing = all.filter((e) => !events.includes(e));
  const broken = ours.some(({ text }) => {
    const entry = pluginEntry(text);
    return entry === null || !existsSync(entry);
  });
  return {
    ...target,
    state: missing.length ? 'partly wired' : 'wired',
    events,
    transports: Object.fromEntries(events.map((e) => [e, 'plugin' as const])),
    missing,
    ...(broken ? { brokenScript: true } : {}),
  };
}

/** @public (tests use it) */
export function hookStatus(target: HookTarget): HookStatus {
  const agent = target.agent;
  if (isPluginAgent(agent)) return pluginStatus({ ...target, agent });
  const all = agentEvents(agent);
  let config: Json | undefined;
  try {
    config = readConfig(target.file);
  } catch (err) {
    return { ...target, state: 'unreadable', events: [], transports: {}, missing: all, error: (err as Error).message };
  }
  const events = config ? wiredEvents(config, agent) : [];
  const missing = all.filter((e) => !events.includes(e));
  const state = events.length === 0 ? 'not wired' : missing.length ? 'partly wired' : 'wired';
  const scripts = new Set<string>();
  const text = config ? JSON.stringify(config) : '';
  for (const m of text.matchAll(/sh '((?:[^'\\]|\\.)*?git-ckpt-hook)'/g)) scripts.add(m[1]!);
  const brokenScript = [...scripts].some((s) => !existsSync(s));
  return {
    ...target,
    state,
    events,
    transports: config ? transports(config, agent) : {},
    missing,
    ...(brokenScript ? { brokenScript } : {}),
  };
}

/** The first Claude Code with HTTP hooks. */
const CLAUDE_HTTP_HOOKS = '2.1.63';

/** The installed Claude Code's version (`claude --version`), or null when there is none on PATH. */
export function claudeVersion(env: NodeJS.ProcessEnv = process.env): string | null {
  const r = spawnSync('claude', ['--version'], { env, encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) return null;
  return /(\d+\.\d+\.\d+)/.exec(r.stdout)?.[1] ?? null;
}

/** Pure: whether a Claude Code version has HTTP hooks. */
export function claudeHasHttpHooks(version: string | null): boolean {
  return version !== null && !versionBelow(version, CLAUDE_HTTP_HOOKS);
}

/** The daemon's HTTP endpoint for HTTP hooks: it is started (it must be running to have a port and a token). */
export async function httpTransport(env: NodeJS.ProcessEnv = process.env): Promise<HttpTransport> {
  const { endpoint } = await startDaemon(env);
  return { port: endpoint.port, token: daemonToken(env) };
}
