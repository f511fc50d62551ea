/**
 * Will the agent actually run the hooks we wired? Each agent has a gate of its
 * own that leaves hooks silently unrun: Codex's per-hook trust and project
 * trust, Claude Code's `disableAllHooks` and workspace-trust dialog, Gemini
 * CLI's folder trust and hook settings, Copilot CLI's trusted folders. This
 * reads the agent's own files where it keeps that state; where it keeps none we
 * can read (Cursor), it says so. The verdict functions are pure; the readers
 * never throw (an unreadable file is "unknown", with the reason).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { isObject, type Json, type Scope } from './agent-config.js';
import { adapterOf, type AgentName } from './registry.js';

export interface RunVerdict {
  /** yes: the agent runs them; no: it will not until the step is taken; unknown: cannot be read from here. */
  runs: 'yes' | 'no' | 'unknown';
  /** What decided it, in one line. */
  reason: string;
  /** What the user must do (for `no`, and for `unknown` where a step is known). */
  step?: string;
}

function readJson(file: string): Json | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME ?? homedir();
}

/** The folder and each of its parents, nearest first. */
function selfAndParents(dir: string): string[] {
  const out: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    out.push(d);
    if (path.dirname(d) === d) return out;
  }
}

// ---------------------------------------------------------------- Claude Code

/** Pure: Claude Code's verdict from its settings files and its global config (~/.claude.json). @public (tests use it) */
export function claudeVerdict(
  settings: { file: string; config: Json | undefined }[],
  globalConfig: Json | undefined,
  projectRoot: string | null,
): RunVerdict {
  const off = settings.find((s) => s.config?.disableAllHooks === true);
  if (off) return { runs: 'no', reason: `"disableAllHooks": true in ${off.file}`, step: `remove "disableAllHooks" from ${off.file}` };
  const projects = (globalConfig?.projects ?? {}) as Record<string, { hasTrustDialogAccepted?: unknown }>;
  const trusted = projectRoot ? selfAndParents(projectRoot).some((d) => projects[d]?.hasTrustDialogAccepted === true) : false;
  if (trusted) return { runs: 'yes', reason: 'the workspace-trust dialog was accepted for this folder' };
  return {
    runs: 'unknown',
    reason:
      'headless runs (claude -p) run them; an interactive session holds them back until the workspace-trust dialog is accepted, not yet done here',
    step: 'start claude in this folder once and accept the workspace-trust dialog',
  };
}

function claudeCheck(scope: Scope, projectRoot: string | null, env: NodeJS.ProcessEnv): RunVerdict {
  const configDir = env.CLAUDE_CONFIG_DIR ?? path.join(home(env), '.claude');
  const files = [path.join(configDir, 'settings.json')];
  if (projectRoot) files.push(path.join(projectRoot, '.claude', 'settings.json'), path.join(projectRoot, '.claude', 'settings.local.json'));
  const globalFile = env.CLAUDE_CONFIG_DIR ? path.join(env.CLAUDE_CONFIG_DIR, '.claude.json') : path.join(home(env), '.claude.json');
  void scope; // disableAllHooks at any level turns every hook off, whatever scope ours are at
  return claudeVerdict(
    files.map((file) => ({ file, config: readJson(file) })),
    readJson(globalFile),
    projectRoot,
  );
}

// ---------------------------------------------------------------- Codex

/** Codex's label of each hook event, as its trust keys spell them. @public (tests use it) */
export const CODEX_EVENT_LABELS: Record<string, string> = {
  PreToolUse: 'pre_tool_use',
  PermissionRequest: 'permission_request',
  PostToolUse: 'post_tool_use',
  PreCompact: 'pre_compact',
  PostCompact: 'post_compact',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
  UserPromptSubmit: 'user_prompt_submit',
  SubagentStart: 'subagent_start',
  SubagentStop: 'subagent_stop',
  Stop: 'stop',
};
/** Events whose matcher Codex ignores, and leaves out of the hash. */
const CODEX_NO_MATCHER = new Set(['UserPromptSubmit', 'Stop']);

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Json)[k])]),
    );
  }
  return v;
}

/**
 * Pure: Codex's trust key and hash of every command handler in a hooks.json
 * (0.171: `<file>:<event label>:<group>:<handler>`, and sha256 over the
 * key-sorted JSON of the event label, the matcher and the normalised handler;
 * what `/hooks` records as `hooks.state."<key>".trusted_hash`).
 * @public (tests use it)
 */
export function codexHookTrustEntries(hooksFile: string, config: Json): { key: string; hash: string; command: string }[] {
  const out: { key: string; hash: string; command: string }[] = [];
  const hooks = (config.hooks ?? {}) as Record<string, unknown>;
  for (const [event, groups] of Object.entries(hooks)) {
    const label = CODEX_EVENT_LABELS[event];
    if (!label || !Array.isArray(groups)) continue;
    groups.forEach((group: Json, gi) => {
      const handlers = Array.isArray(group?.hooks) ? (group.hooks as Json[]) : [];
      handlers.forEach((h, hi) => {
        if (h?.type !== 'command' || typeof h.command !== 'string') return;
        const handler: Json = {
          type: 'command',
          command: h.command,
          timeout: Math.max(1, Number(h.timeout ?? 600)),
          async: h.async === true,
        };
        if (h.statusMessage != null) handler.statusMessage = h.statusMessage;
        const identity: Json = { event_name: label, hooks: [handler] };
        if (!CODEX_NO_MATCHER.has(event) && group.matcher != null) identity.matcher = group.matcher;
        const hash = `sha256:${createHash('sha256')
          .update(JSON.stringify(canonical(identity)))
          .digest('hex')}`;
        out.push({ key: `${hooksFile}:${label}:${gi}:${hi}`, hash, command: h.command });
      });
    });
  }
  return out;
}

/** Pure: Codex's verdict for our handlers in `hooksFile`, from the user's parsed config.toml. @public (tests use it) */
export function codexVerdict(
  scope: Scope,
  projectRoot: string | null,
  hooksFile: string,
  hooksConfig: Json | undefined,
  userConfig: Json | undefined,
  isOurs: (command: string) => boolean,
): RunVerdict {
  const features = (userConfig?.features ?? {}) as Json;
  if (features.hooks === false || features.codex_hooks === false)
    return {
      runs: 'no',
      reason: 'hooks are turned off in ~/.codex/config.toml ([features] hooks = false)',
      step: 'remove hooks = false from [features] in ~/.codex/config.toml',
    };
  if (scope === 'project' && projectRoot) {
    const projects = (userConfig?.projects ?? {}) as Record<string, Json>;
    const trusted = selfAndParents(projectRoot).some((d) => projects[d]?.trust_level === 'trusted');
    if (!trusted) {
      return {
        runs: 'no',
        reason: 'Codex ignores a project .codex/ folder until the project is trusted',
        step: 'start codex in this project and trust it (or run codex exec --trust once); then open /hooks and trust git-ckpt’s hooks',
      };
    }
  }
  const ours = hooksConfig ? codexHookTrustEntries(hooksFile, hooksConfig).filter((e) => isOurs(e.command)) : [];
  const state = ((userConfig?.hooks as Json | undefined)?.state ?? {}) as Record<string, Json>;
  const untrusted = ours.filter((e) => state[e.key]?.trusted_hash !== e.hash || state[e.key]?.enabled === false);
  if (untrusted.length) {
    return {
      runs: 'no',
      reason: `${untrusted.length} of git-ckpt’s ${ours.length} hooks are not trusted (Codex skips new or changed hooks without a word)`,
      step: 'open /hooks in Codex and trust git-ckpt’s hooks (again after every change to them), or run codex with --dangerously-bypass-hook-trust',
    };
  }
  return { runs: 'yes', reason: ours.length ? `all ${ours.length} hooks trusted in ~/.codex/config.toml` : 'nothing wired' };
}

async function codexCheck(
  scope: Scope,
  projectRoot: string | null,
  hooksFile: string,
  env: NodeJS.ProcessEnv,
  isOurs: (c: string) => boolean,
): Promise<RunVerdict> {
  const codexHome = env.CODEX_HOME ?? path.join(home(env), '.codex');
  let userConfig: Json | undefined;
  try {
    const { parse } = await import('smol-toml');
    userConfig = parse(readFileSync(path.join(codexHome, 'config.toml'), 'utf8')) as Json;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      return { runs: 'unknown', reason: `cannot read ${path.join(codexHome, 'config.toml')}: ${(err as Error).message.split('\n')[0]}` };
  }
  return codexVerdict(scope, projectRoot, hooksFile, readJson(hooksFile), userConfig, isOurs);
}

// ---------------------------------------------------------------- Gemini CLI

/**
 * Pure: whether Gemini CLI 0.61 trusts a folder: the longest matching rule of
 * trustedFolders.json wins (TRUST_FOLDER covers the folder and below it,
 * TRUST_PARENT the rule path's parent and below, DO_NOT_TRUST nothing), after
 * the environment's overrides.
 */
function geminiTrusts(
  folder: string,
  rules: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  file = '~/.gemini/trustedFolders.json',
): { trusted: boolean; why: string } {
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return { trusted: true, why: 'GEMINI_CLI_TRUST_WORKSPACE=true' };
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'false') return { trusted: false, why: 'GEMINI_CLI_TRUST_WORKSPACE=false' };
  if (env.GEMINI_RESTRICTED_MODE === 'true') return { trusted: false, why: 'GEMINI_RESTRICTED_MODE=true' };
  const target = path.resolve(folder);
  let best: { length: number; trusted: boolean; why: string } | undefined;
  for (const [rulePath, rule] of Object.entries(rules)) {
    const covered = rule === 'TRUST_PARENT' ? path.dirname(path.resolve(rulePath)) : path.resolve(rulePath);
    if (!(target === covered || target.startsWith(covered.endsWith(path.sep) ? covered : covered + path.sep))) continue;
    const length = path.resolve(rulePath).length;
    if (!best || length > best.length)
      best = {
        length,
        trusted: rule === 'TRUST_FOLDER' || rule === 'TRUST_PARENT',
        why: `${rulePath}: ${String(rule)} in ${file}`,
      };
  }
  return best ?? { trusted: false, why: `no rule in ${file} covers it` };
}

/**
 * Pure: Gemini CLI's verdict. In 0.61 hooks from settings files (user and
 * project alike) are registered only in a trusted folder; `hooksConfig`
 * can turn them off.
 * @public (tests use it)
 */
export function geminiVerdict(
  projectRoot: string | null,
  userSettings: Json | undefined,
  projectSettings: Json | undefined,
  trustedFolders: Json | undefined,
  env: NodeJS.ProcessEnv = {},
): RunVerdict {
  for (const [where, settings] of [
    ['~/.gemini/settings.json', userSettings],
    ['.gemini/settings.json', projectSettings],
  ] as const) {
    const hooksConfig = (settings?.hooksConfig ?? {}) as Json;
    if (hooksConfig.enabled === false)
      return { runs: 'no', reason: `hooksConfig.enabled is false in ${where}`, step: `remove hooksConfig.enabled = false from ${where}` };
    const disabled = Array.isArray(hooksConfig.disabled)
      ? hooksConfig.disabled.filter((n) => typeof n === 'string' && n.startsWith('git-ckpt-'))
      : [];
    if (disabled.length)
      return {
        runs: 'no',
        reason: `hooksConfig.disabled lists ${disabled.join(', ')} in ${where}`,
        step: `remove them from hooksConfig.disabled in ${where}`,
      };
  }
  const folderTrust = ((userSettings?.security as Json | undefined)?.folderTrust ?? {}) as Json;
  if (folderTrust.enabled === false)
    return { runs: 'yes', reason: 'folder trust is turned off in ~/.gemini/settings.json, so every folder is trusted' };
  if (!projectRoot)
    return {
      runs: 'unknown',
      reason: 'Gemini CLI runs hooks only in folders it trusts; that depends on the folder',
      step: 'trust each project folder when Gemini CLI asks',
    };
  const { trusted, why } = geminiTrusts(projectRoot, (trustedFolders ?? {}) as Record<string, unknown>, env);
  if (trusted) return { runs: 'yes', reason: `the folder is trusted (${why})` };
  return {
    runs: 'no',
    reason: `Gemini CLI registers no hooks, user or project, in a folder it does not trust (${why}); gemini -p exits with code 55 there`,
    step: 'trust the folder when Gemini CLI asks (or /permissions), which writes ~/.gemini/trustedFolders.json',
  };
}

function geminiCheck(scope: Scope, projectRoot: string | null, env: NodeJS.ProcessEnv): RunVerdict {
  const dir = path.join(home(env), '.gemini');
  void scope; // user and project hooks share the folder's trust
  return geminiVerdict(
    projectRoot,
    readJson(path.join(dir, 'settings.json')),
    projectRoot ? readJson(path.join(projectRoot, '.gemini', 'settings.json')) : undefined,
    readJson(env.GEMINI_CLI_TRUSTED_FOLDERS_PATH ?? path.join(dir, 'trustedFolders.json')),
    env,
  );
}

// ---------------------------------------------------------------- Qwen Code

/**
 * Pure: Qwen Code's verdict (a Gemini CLI fork). User hooks always run; project
 * hooks only in a trusted folder, and every folder is trusted while folder
 * trust is off (its default). `disableAllHooks` turns them all off.
 * @public (tests use it)
 */
export function qwenVerdict(
  scope: Scope,
  projectRoot: string | null,
  userSettings: Json | undefined,
  projectSettings: Json | undefined,
  trustedFolders: Json | undefined,
): RunVerdict {
  for (const [where, settings] of [
    ['~/.qwen/settings.json', userSettings],
    ['.qwen/settings.json', projectSettings],
  ] as const)
    if (settings?.disableAllHooks === true)
      return { runs: 'no', reason: `disableAllHooks is true in ${where}`, step: `remove "disableAllHooks": true from ${where}` };
  if (scope === 'user') return { runs: 'yes', reason: 'hooks in ~/.qwen/settings.json run in every folder, trusted or not' };
  const folderTrust = ((userSettings?.security as Json | undefined)?.folderTrust ?? {}) as Json;
  if (folderTrust.enabled !== true) return { runs: 'yes', reason: 'folder trust is off (its default), so every folder is trusted' };
  if (!projectRoot) return { runs: 'unknown', reason: 'Qwen Code runs project hooks only in folders it trusts' };
  const { trusted, why } = geminiTrusts(projectRoot, (trustedFolders ?? {}) as Record<string, unknown>, {}, '~/.qwen/trustedFolders.json');
  if (trusted) return { runs: 'yes', reason: `the folder is trusted (${why})` };
  return {
    runs: 'no',
    reason: `Qwen Code drops project hooks in a folder it does not trust (${why})`,
    step: 'trust the folder when Qwen Code asks, or install at --scope user (user hooks need no trust)',
  };
}

function qwenCheck(scope: Scope, projectRoot: string | null, env: NodeJS.ProcessEnv): RunVerdict {
  const dir = env.QWEN_HOME ?? path.join(home(env), '.qwen');
  return qwenVerdict(
    scope,
    projectRoot,
    readJson(path.join(dir, 'settings.json')),
    projectRoot ? readJson(path.join(projectRoot, '.qwen', 'settings.json')) : undefined,
    readJson(env.QWEN_CODE_TRUSTED_FOLDERS_PATH ?? path.join(dir, 'trustedFolders.json')),
  );
}

/** Pure: the trusted folder that covers `projectRoot` (it or a folder above it), if any. */
function coveringFolder(projectRoot: string | null, folders: readonly string[]): string | undefined {
  if (!projectRoot) return undefined;
  const root = path.resolve(projectRoot);
  return folders.find((f) => root === path.resolve(f) || root.startsWith(path.resolve(f) + path.sep));
}

// ---------------------------------------------------------------- Factory Droid

/**
 * Pure: Droid's verdict. `hooks.hooksDisabled` turns every hook off; `droid exec` runs project hooks in
 * any folder, the interactive TUI only once the folder is trusted (`trustedFolders` in its settings).
 * @public (tests use it)
 */
export function droidVerdict(
  scope: Scope,
  projectRoot: string | null,
  userSettings: Json | undefined,
  projectSettings: Json | undefined,
): RunVerdict {
  for (const [where, settings] of [
    ['~/.factory/settings.json', userSettings],
    ['.factory/settings.json', projectSettings],
  ] as const)
    if (((settings?.hooks ?? {}) as Json).hooksDisabled === true)
      return { runs: 'no', reason: `hooks.hooksDisabled is true in ${where}`, step: `remove "hooksDisabled": true from ${where}` };
  if (scope === 'user') return { runs: 'yes', reason: 'hooks in ~/.factory/settings.json run in every folder' };
  const by = coveringFolder(projectRoot, Object.keys((userSettings?.trustedFolders ?? {}) as Json));
  if (by) return { runs: 'yes', reason: `the folder is trusted (${by} in trustedFolders)` };
  return {
    runs: 'unknown',
    reason: '`droid exec` runs project hooks in any folder; the interactive droid only in a folder you trusted',
    step: 'trust the folder when droid asks (or install at --scope user)',
  };
}

function droidCheck(scope: Scope, projectRoot: string | null, env: NodeJS.ProcessEnv): RunVerdict {
  return droidVerdict(
    scope,
    projectRoot,
    readJson(path.join(home(env), '.factory', 'settings.json')),
    projectRoot ? readJson(path.join(projectRoot, '.factory', 'settings.json')) : undefined,
  );
}

// ---------------------------------------------------------------- Copilot CLI

/** Pure: Copilot CLI's verdict from its config.json (trustedFolders; a folder covers the ones below it). @public (tests use it) */
export function copilotVerdict(scope: Scope, projectRoot: string | null, config: Json | undefined, env: NodeJS.ProcessEnv): RunVerdict {
  if (scope === 'user') return { runs: 'yes', reason: 'hooks in ~/.copilot/hooks run in every folder, trusted or not' };
  if (env.COPILOT_ALLOW_ALL === 'true') return { runs: 'yes', reason: 'COPILOT_ALLOW_ALL=true trusts every folder' };
  const folders = Array.isArray(config?.trustedFolders)
    ? (config.trustedFolders as unknown[]).filter((f): f is string => typeof f === 'string')
    : [];
  const by = coveringFolder(projectRoot, folders);
  if (by) return { runs: 'yes', reason: `the folder is trusted (${by} in trustedFolders)` };
  return {
    runs: 'no',
    reason: 'Copilot CLI skips project hooks (.github/hooks, and .claude/settings.json) in a folder it does not trust, without a word',
    step: 'trust the folder: answer Copilot’s prompt when it starts here, or start it with --trust-folder, or add it to trustedFolders in ~/.copilot/config.json (or install at --scope user: user hooks need no trust)',
  };
}

function copilotCheck(scope: Scope, projectRoot: string | null, env: NodeJS.ProcessEnv): RunVerdict {
  const dir = env.COPILOT_HOME ?? path.join(home(env), '.copilot');
  return copilotVerdict(scope, projectRoot, readJson(path.join(dir, 'config.json')), env);
}

// ---------------------------------------------------------------- OpenCode and Kilo

/** Pure: OpenCode (and Kilo) load every plugin file in their plugin folders at start, with no trust step. */
function pluginCheck(agent: 'opencode' | 'kilo', scope: Scope): RunVerdict {
  const name = agent === 'opencode' ? 'OpenCode' : 'Kilo Code CLI';
  return {
    runs: 'yes',
    reason: `${name} loads every plugin in its ${scope === 'project' ? "project's" : "user's"} plugin folder when it starts (a running ${name} picks it up at its next start)`,
  };
}

// ---------------------------------------------------------------- all agents

/** Whether `agent` will run our hooks wired in `hooksFile` at `scope`. */
export async function willRunHooks(
  agent: AgentName,
  scope: Scope,
  projectRoot: string | null,
  hooksFile: string,
  env: NodeJS.ProcessEnv,
  isOurs: (command: string) => boolean,
): Promise<RunVerdict> {
  switch (agent) {
    case 'claude':
      return claudeCheck(scope, projectRoot, env);
    case 'codex':
      return codexCheck(scope, projectRoot, hooksFile, env, isOurs);
    case 'gemini':
      return geminiCheck(scope, projectRoot, env);
    case 'copilot':
      return copilotCheck(scope, projectRoot, env);
    case 'qwen':
      return qwenCheck(scope, projectRoot, env);
    case 'droid':
      return droidCheck(scope, projectRoot, env);
    case 'cursor':
      return {
        runs: 'unknown',
        reason: 'Cursor keeps its workspace trust where git-ckpt cannot read it',
        step: scope === 'project' ? 'trust the workspace in Cursor (project hooks run only in a trusted workspace)' : undefined,
      };
    case 'opencode':
    case 'kilo':
      return pluginCheck(agent, scope);
    case 'cline':
      return {
        runs: 'yes',
        reason: `Cline 3 runs every hook file in ${scope === 'project' ? '.clinerules/hooks' : '~/.cline/hooks'} by its event's name, with no setting to turn on`,
      };
    case 'pi':
      return {
        runs: 'yes',
        reason: `pi loads every extension in ${scope === 'project' ? '.pi/extensions' : 'its agent folder’s extensions/'} when it starts, with no trust step (a running pi picks it up at its next start or /reload)`,
      };
    default:
      return { runs: 'unknown', reason: `git-ckpt cannot tell whether ${adapterOf(agent).title} runs the hooks wired for it` };
  }
}
