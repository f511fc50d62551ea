/**
 * `git ckpt mcp install|uninstall|status`: the MCP server in each agent's own
 * MCP configuration (its adapter's `mcp`: the file, the format, where the
 * servers are and the entry it wants), merged (other servers and settings stay
 * as they are), idempotent, with a backup under the store root before any
 * change. A TOML file is the user's own text: our table is appended between
 * marker comments and removed by them, so their comments and layout survive;
 * the result is parsed before it is written.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { CkptError } from '../model/errors.js';
import type { Launch, McpSpec } from './adapter.js';
import { readConfig, readConfigText, writeConfig, writeConfigText, type Json, type Scope } from './agent-config.js';
import { adapterOf, type AgentName } from './registry.js';
import { mcpCommandOnPath, mcpEntryScript } from '../store/layout.js';

export { MCP_AGENTS } from './registry.js';
export type McpAgent = AgentName;

function mcpOf(agent: McpAgent): McpSpec {
  const adapter = adapterOf(agent);
  if (!adapter.mcp) throw new CkptError('usage', `${adapter.title} has no MCP client git-ckpt can configure`);
  return adapter.mcp;
}

/** Pure: whether an agent reads MCP servers at this scope (some keep them only in the user's settings). */
export function mcpHasScope(agent: McpAgent, scope: Scope): boolean {
  return scope === 'user' || mcpOf(agent).file.project !== null;
}

/** The server's name in every agent's configuration. */
const MCP_SERVER_NAME = 'git-ckpt';

export interface McpTarget {
  agent: McpAgent;
  scope: Scope;
  file: string;
}

export interface McpInstallResult extends McpTarget {
  changed: boolean;
  backup?: string;
}

export interface McpStatus extends McpTarget {
  state: 'installed' | 'not installed' | 'outdated' | 'unreadable';
  /** The script the installed entry names no longer exists. */
  brokenScript?: boolean;
  error?: string;
}

export function mcpTarget(agent: McpAgent, scope: Scope, projectRoot: string, env: NodeJS.ProcessEnv = process.env): McpTarget {
  const spec = mcpOf(agent);
  if (scope === 'user') return { agent, scope, file: spec.file.user(env, path.resolve(env.HOME ?? homedir())) };
  if (spec.file.project === null) throw new CkptError('usage', spec.userOnly ?? `${adapterOf(agent).title} has no project MCP file`);
  return { agent, scope, file: path.join(path.resolve(projectRoot), spec.file.project) };
}

/** Pure: the server entry an agent's JSON configuration gets. @public (tests use it) */
export function serverEntry(agent: AgentName, script: string): Json {
  return mcpOf(agent).entry(launchOf(script));
}

/** Pure: how the server is started: a bare name is the installed command on PATH (shared project files hold no one's own path); a path runs through sh. */
function launchOf(script: string): Launch {
  return script.includes('/') ? { command: 'sh', args: [script] } : { command: script, args: [] };
}

/**
 * The script an agent's config names: in a project's config (a file teams commit), the installed
 * `git-ckpt-mcp` on PATH when it is this package's, else this copy's path. @public (tests use it)
 */
export function mcpLaunchScript(scope: Scope, env: NodeJS.ProcessEnv = process.env): string {
  return (scope === 'project' ? mcpCommandOnPath(env) : undefined) ?? mcpEntryScript();
}

const TOML_BEGIN = '# git-ckpt: begin (written by `git ckpt mcp install`; `git ckpt mcp uninstall` removes it)';
const TOML_END = '# git-ckpt: end';

/** A TOML string (basic string, escaped). */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** Pure: the server's table under `key` (the entry's keys, strings and lists of strings), between the markers. */
function tomlBlock(key: string, entry: Json): string {
  const value = (v: unknown) => (Array.isArray(v) ? `[${v.map(tomlString).join(', ')}]` : tomlString(String(v)));
  const lines = Object.entries(entry).map(([k, v]) => `${k} = ${value(v)}`);
  return `${TOML_BEGIN}\n[${key}.${MCP_SERVER_NAME}]\n${lines.join('\n')}\n${TOML_END}\n`;
}

/** Pure: the text without our marked block (and the blank line before it). */
function withoutTomlBlock(text: string): string {
  const begin = text.indexOf(TOML_BEGIN);
  if (begin < 0) return text;
  const end = text.indexOf(TOML_END, begin);
  if (end < 0) return text;
  const after = text.slice(end + TOML_END.length).replace(/^\r?\n/, '');
  return `${text.slice(0, begin).replace(/\n\n$/, '\n')}${after}`;
}

function readToml(file: string): { text: string; parsed: Json } | undefined {
  const text = readConfigText(file);
  if (text === undefined) return undefined;
  try {
    return { text, parsed: parseToml(text) as Json };
  } catch (err) {
    throw new CkptError('config', `cannot parse ${file} (${(err as Error).message.split('\n')[0]}); left untouched`);
  }
}

function installedEntry(target: McpTarget): Json | undefined {
  const spec = mcpOf(target.agent);
  const config = spec.format === 'toml-table' ? readToml(target.file)?.parsed : readConfig(target.file);
  return (config?.[spec.key] as Json | undefined)?.[MCP_SERVER_NAME] as Json | undefined;
}

/** Whether an installed entry launches what we would write: its other keys (env, timeout …) are the user's. */
function sameLaunch(installed: unknown, wanted: Json): boolean {
  if (!installed || typeof installed !== 'object') return false;
  const entry = installed as Json;
  return Object.keys(wanted).every((k) => JSON.stringify(entry[k]) === JSON.stringify(wanted[k]));
}

/** The servers object (`mcpServers`, `mcp` …) of a JSON config, or a `config` error when it is something else. */
function serversOf(config: Json | undefined, file: string, key: string): Json {
  const servers = config?.[key] ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
    throw new CkptError('config', `${file}: "${key}" is not an object; left untouched`);
  return servers as Json;
}

export function installMcp(
  target: McpTarget,
  script = mcpLaunchScript(target.scope),
  env: NodeJS.ProcessEnv = process.env,
): McpInstallResult {
  const spec = mcpOf(target.agent);
  if (spec.format === 'toml-table') return installToml(target, spec, script, env);
  const current = readConfig(target.file);
  const key = spec.key;
  const servers = serversOf(current, target.file, key);
  const entry = serverEntry(target.agent, script);
  const installed = servers[MCP_SERVER_NAME];
  if (sameLaunch(installed, entry)) return { ...target, changed: false };
  // Keys the user added to our entry (env, timeout …) stay.
  const kept = installed && typeof installed === 'object' && !Array.isArray(installed) ? (installed as Json) : {};
  const next = { ...(current ?? {}), [key]: { ...servers, [MCP_SERVER_NAME]: { ...kept, ...entry } } };
  const backup = writeConfig(target.file, next, current !== undefined, env);
  return { ...target, changed: true, ...(backup ? { backup } : {}) };
}

function installToml(target: McpTarget, spec: McpSpec, script: string, env: NodeJS.ProcessEnv): McpInstallResult {
  const current = readToml(target.file);
  const existing = (current?.parsed[spec.key] as Json | undefined)?.[MCP_SERVER_NAME];
  const wanted = spec.entry(launchOf(script));
  if (existing && sameLaunch(existing, wanted)) return { ...target, changed: false };
  if (current && current.text.includes(TOML_BEGIN) !== current.text.includes(TOML_END))
    throw new CkptError('config', `${target.file}: git-ckpt's marker lines are not both there; left untouched`);
  if (existing && !current!.text.includes(TOML_BEGIN))
    throw new CkptError('config', `${target.file} has its own [${spec.key}.${MCP_SERVER_NAME}]; left untouched`);
  const base = withoutTomlBlock(current?.text ?? '');
  const text = `${base}${base && !base.endsWith('\n') ? '\n' : ''}${base.trim() ? '\n' : ''}${tomlBlock(spec.key, wanted)}`;
  try {
    parseToml(text);
  } catch (err) {
    throw new CkptError(
      'config',
      `${target.file}: adding the server would not parse (${(err as Error).message.split('\n')[0]}); left untouched`,
    );
  }
  const backup = writeConfigText(target.file, text, current !== undefined, env);
  return { ...target, changed: true, ...(backup ? { backup } : {}) };
}

export function uninstallMcp(target: McpTarget, env: NodeJS.ProcessEnv = process.env): McpInstallResult {
  const spec = mcpOf(target.agent);
  if (spec.format === 'toml-table') {
    const current = readToml(target.file);
    if (!current?.text.includes(TOML_BEGIN)) return { ...target, changed: false };
    if (!current.text.includes(TOML_END))
      throw new CkptError(
        'config',
        `${target.file}: git-ckpt's end marker is gone; remove its [${spec.key}.${MCP_SERVER_NAME}] table by hand`,
      );
    const backup = writeConfigText(target.file, withoutTomlBlock(current.text), true, env);
    return { ...target, changed: true, ...(backup ? { backup } : {}) };
  }
  const current = readConfig(target.file);
  const key = spec.key;
  const servers = serversOf(current, target.file, key);
  if (!current || !(MCP_SERVER_NAME in servers)) return { ...target, changed: false };
  const { [MCP_SERVER_NAME]: _ours, ...others } = servers;
  const next: Json = { ...current, [key]: others };
  const backup = writeConfig(target.file, next, true, env);
  return { ...target, changed: true, ...(backup ? { backup } : {}) };
}

export function mcpStatus(target: McpTarget, script = mcpLaunchScript(target.scope)): McpStatus {
  let entry: Json | undefined;
  try {
    entry = installedEntry(target);
  } catch (err) {
    return { ...target, state: 'unreadable', error: (err as Error).message };
  }
  if (!entry) return { ...target, state: 'not installed' };
  const launch = [entry.args, entry.command].flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : []));
  const named = launch.find((a) => typeof a === 'string' && a.endsWith('git-ckpt-mcp'));
  const brokenScript = typeof named === 'string' && named.includes('/') && !existsSync(named);
  const wanted = serverEntry(target.agent, script);
  return { ...target, state: sameLaunch(entry, wanted) ? 'installed' : 'outdated', ...(brokenScript ? { brokenScript } : {}) };
}
