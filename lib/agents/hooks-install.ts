/**
 * Wiring git-ckpt into each agent's own hook configuration: where each
 * agent's file is, install and removal (every target merged first, then
 * written), and status. The wiring is data with a pure merge (hook-specs.ts);
 * the config files' I/O is shared with the MCP installer (agent-config.ts).
 */
import { existsSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CkptError } from '../model/errors.js';
import { hookEntryScript } from '../store/layout.js';
import { versionBelow } from '../git/runner.js';
import type { RunVerdict } from './agent-trust.js';
import { backUp, readConfig, writeConfig, type HookAgent, type Json, type Scope } from './agent-config.js';
import { AGENT_SPECS, ENTRY_NAME, mergeHooks, removeHooks, transports, wiredEvents, type HttpTransport } from './hook-specs.js';
import { daemonToken, startDaemon } from '../store/daemon-client.js';
import { spawnSync } from 'node:child_process';

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

function installChange(target: HookTarget, script: string, http?: HttpTransport): HookChange {
  const current = readConfig(target.file);
  const next = mergeHooks(current ?? {}, target.agent, script, target.file, http);
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
  /** How each wired event reaches git-ckpt: HTTP to the daemon, or a command. */
  transports: Record<string, 'http' | 'command'>;
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
    return {
      ...target,
      state: 'unreadable',
      events: [],
      transports: {},
      missing: spec.events.map((e) => e.event),
      error: (err as Error).message,
    };
  }
  const events = config ? wiredEvents(config, target.agent) : [];
  const missing = spec.events.map((e) => e.event).filter((e) => !events.includes(e));
  const state = events.length === 0 ? 'not wired' : missing.length ? 'partly wired' : 'wired';
  const scripts = new Set<string>();
  const text = config ? JSON.stringify(config) : '';
  for (const m of text.matchAll(/sh '((?:[^'\\]|\\.)*?git-ckpt-hook)'/g)) scripts.add(m[1]!);
  const brokenScript = [...scripts].some((s) => !existsSync(s));
  return {
    ...target,
    state,
    events,
    transports: config ? transports(config, target.agent) : {},
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
