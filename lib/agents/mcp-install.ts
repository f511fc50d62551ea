/**
 * `git ckpt mcp install|uninstall|status`: the MCP server in each agent's own
 * MCP configuration, merged (other servers and settings stay as they are),
 * idempotent, with a backup under the store root before any change.
 *
 *   agent    project file          user file                  format
 *   claude   .mcp.json             ~/.claude.json             mcpServers (type stdio)
 *   codex    .codex/config.toml    $CODEX_HOME/config.toml    [mcp_servers.git-ckpt]
 *   gemini   .gemini/settings.json ~/.gemini/settings.json    mcpServers
 *   cursor   .cursor/mcp.json      ~/.cursor/mcp.json         mcpServers
 *   copilot  .github/mcp.json      $COPILOT_HOME/mcp-config.json  mcpServers (type local)
 *   qwen     .qwen/settings.json   ~/.qwen/settings.json      mcpServers (Gemini CLI's, which it forked)
 *   opencode opencode.json         ~/.config/opencode/opencode.json  mcp (type local, command list)
 *   kilo     kilo.json             ~/.config/kilo/kilo.json          mcp (as OpenCode's)
 *   droid    .factory/mcp.json     ~/.factory/mcp.json        mcpServers (type stdio)
 *   cline    —                     ~/.cline/data/settings/cline_mcp_settings.json ($CLINE_MCP_SETTINGS_PATH)  mcpServers
 *
 * Codex's TOML is the user's own text: our table is appended between marker
 * comments and removed by them, so their comments and layout survive; the
 * result is parsed before it is written.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { CkptError } from '../model/errors.js';
import { readConfig, readConfigText, writeConfig, writeConfigText, type Json, type Scope } from './agent-config.js';
import { HOOK_AGENTS, type AgentName } from './registry.js';
import { mcpCommandOnPath, mcpEntryScript } from '../store/layout.js';

/** The agents whose MCP config git-ckpt writes: every hooked agent but pi, which has no MCP client (its extensions are its tools). */
export type McpAgent = AgentName;
export const MCP_AGENTS: readonly McpAgent[] = HOOK_AGENTS.filter((a) => a !== 'pi');

/** Pure: whether an agent reads MCP servers at this scope (Cline keeps them only in its user settings). */
export function mcpHasScope(agent: McpAgent, scope: Scope): boolean {
  return !(agent === 'cline' && scope === 'project');
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

const home = (env: NodeJS.ProcessEnv) => env.HOME ?? homedir();
const configHome = (env: NodeJS.ProcessEnv) => env.XDG_CONFIG_HOME ?? path.join(home(env), '.config');

/** Where an agent's JSON config keeps its servers: OpenCode and Kilo call it `mcp`. */
function serversKey(agent: AgentName): 'mcp' | 'mcpServers' {
  return agent === 'opencode' || agent === 'kilo' ? 'mcp' : 'mcpServers';
}

export function mcpTarget(agent: McpAgent, scope: Scope, projectRoot: string, env: NodeJS.ProcessEnv = process.env): McpTarget {
  const project = (rel: string) => path.join(path.resolve(projectRoot), rel);
  const files: Partial<Record<McpAgent, () => string>> = {
    claude: () => (scope === 'project' ? project('.mcp.json') : path.join(home(env), '.claude.json')),
    codex: () =>
      scope === 'project' ? project('.codex/config.toml') : path.join(env.CODEX_HOME ?? path.join(home(env), '.codex'), 'config.toml'),
    gemini: () => (scope === 'project' ? project('.gemini/settings.json') : path.join(home(env), '.gemini', 'settings.json')),
    cursor: () => (scope === 'project' ? project('.cursor/mcp.json') : path.join(home(env), '.cursor', 'mcp.json')),
    copilot: () =>
      scope === 'project'
        ? project('.github/mcp.json')
        : path.join(env.COPILOT_HOME ?? path.join(home(env), '.copilot'), 'mcp-config.json'),
    qwen: () =>
      scope === 'project' ? project('.qwen/settings.json') : path.join(env.QWEN_HOME ?? path.join(home(env), '.qwen'), 'settings.json'),
    opencode: () => (scope === 'project' ? project('opencode.json') : path.join(configHome(env), 'opencode', 'opencode.json')),
    kilo: () => (scope === 'project' ? project('kilo.json') : path.join(configHome(env), 'kilo', 'kilo.json')),
    droid: () => (scope === 'project' ? project('.factory/mcp.json') : path.join(home(env), '.factory', 'mcp.json')),
    cline: () => {
      if (scope === 'project') throw new CkptError('usage', 'Cline keeps MCP servers only in its user settings: use --scope user');
      const data = env.CLINE_DATA_DIR ?? path.join(env.CLINE_DIR ?? path.join(home(env), '.cline'), 'data');
      return env.CLINE_MCP_SETTINGS_PATH ?? path.join(data, 'settings', 'cline_mcp_settings.json');
    },
  };
  const file = files[agent];
  if (!file) throw new CkptError('usage', `${agent} has no MCP client git-ckpt can configure`);
  return { agent, scope, file: file() };
}

/** Pure: the server entry an agent's JSON configuration gets. @public (tests use it) */
export function serverEntry(agent: AgentName, script: string): Json {
  const launch = launchOf(script);
  if (agent === 'claude' || agent === 'droid') return { type: 'stdio', ...launch };
  if (agent === 'copilot') return { type: 'local', ...launch, tools: ['*'] };
  if (agent === 'opencode' || agent === 'kilo') return { type: 'local', command: [launch.command, ...launch.args], enabled: true };
  return launch;
}

/** Pure: how the server is started: a bare name is the installed command on PATH (shared project files hold no one's own path); a path runs through sh. */
function launchOf(script: string): { command: string; args: string[] } {
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

/** Pure: Codex's table for the server, between the markers. */
function tomlBlock(script: string): string {
  const { command, args } = launchOf(script);
  return `${TOML_BEGIN}\n[mcp_servers.${MCP_SERVER_NAME}]\ncommand = ${tomlString(command)}\nargs = [${args.map(tomlString).join(', ')}]\n${TOML_END}\n`;
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
  if (target.agent === 'codex') {
    const servers = readToml(target.file)?.parsed.mcp_servers as Json | undefined;
    return servers?.[MCP_SERVER_NAME] as Json | undefined;
  }
  return (readConfig(target.file)?.[serversKey(target.agent)] as Json | undefined)?.[MCP_SERVER_NAME] as Json | undefined;
}

/** Whether an installed entry launches what we would write: its other keys (env, timeout …) are the user's. */
function sameLaunch(installed: unknown, wanted: Json): boolean {
  if (!installed || typeof installed !== 'object') return false;
  const entry = installed as Json;
  return Object.keys(wanted).every((k) => JSON.stringify(entry[k]) === JSON.stringify(wanted[k]));
}

/** The servers object (`mcpServers`, or OpenCode's `mcp`) of a JSON config, or a `config` error when it is something else. */
function serversOf(config: Json | undefined, file: string, key: 'mcp' | 'mcpServers'): Json {
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
  if (target.agent === 'codex') return installToml(target, script, env);
  const current = readConfig(target.file);
  const key = serversKey(target.agent);
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

function installToml(target: McpTarget, script: string, env: NodeJS.ProcessEnv): McpInstallResult {
  const current = readToml(target.file);
  const existing = (current?.parsed.mcp_servers as Json | undefined)?.[MCP_SERVER_NAME];
  const wanted = launchOf(script);
  if (existing && sameLaunch(existing, wanted)) return { ...target, changed: false };
  if (current && current.text.includes(TOML_BEGIN) !== current.text.includes(TOML_END))
    throw new CkptError('config', `${target.file}: git-ckpt's marker lines are not both there; left untouched`);
  if (existing && !current!.text.includes(TOML_BEGIN))
    throw new CkptError('config', `${target.file} has its own [mcp_servers.${MCP_SERVER_NAME}]; left untouched`);
  const base = withoutTomlBlock(current?.text ?? '');
  const text = `${base}${base && !base.endsWith('\n') ? '\n' : ''}${base.trim() ? '\n' : ''}${tomlBlock(script)}`;
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
  if (target.agent === 'codex') {
    const current = readToml(target.file);
    if (!current?.text.includes(TOML_BEGIN)) return { ...target, changed: false };
    if (!current.text.includes(TOML_END))
      throw new CkptError(
        'config',
        `${target.file}: git-ckpt's end marker is gone; remove its [mcp_servers.${MCP_SERVER_NAME}] table by hand`,
      );
    const backup = writeConfigText(target.file, withoutTomlBlock(current.text), true, env);
    return { ...target, changed: true, ...(backup ? { backup } : {}) };
  }
  const current = readConfig(target.file);
  const key = serversKey(target.agent);
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
