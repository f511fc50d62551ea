/**
 * Settings live in git config under [ckpt]: the user's global config, or the
 * store's own `config` file (included by the shadow repository's config, so it
 * wins). They are read by git itself, in one process.
 */
import { CkptError } from '../model/errors.js';
import { commandLineConfigOf, git } from '../git/runner.js';
import { homedir } from 'node:os';
import path from 'node:path';
import { stampedCache, statStamp, type StorePaths } from './store.js';

export interface Settings {
  /** Files larger than this are not stored (bytes). */
  maxFileBytes: number;
  /** A directory that appears between two snapshots with more files than this is not stored. */
  maxNewFiles: number;
  /** gitignore-style patterns of secret files that are never stored: the defaults, with what ckpt.secretPatterns adds or drops. */
  secretPatterns: string[];
  /** Wall-clock budget of one snapshot (ms); 0 means none. */
  timeBudgetMs: number;
  /** How long to wait for another process's lock (ms). */
  lockTimeoutMs: number;
  /** Wall-clock budget of one agent hook, waiting for the lock included (ms); below every agent's hook timeout. */
  hookBudgetMs: number;
  /** Retention: checkpoints kept per session, the age past which they go (ms), and the store's soft quota (bytes). */
  keep: number;
  maxAgeMs: number;
  maxBytes: number;
  /** Keep the first line of each prompt (redacted) as its turn's title. */
  recordPrompts: boolean;
  /** Hooks reach a resident daemon that watches the workspace (false: every hook scans, as without one). */
  daemon: boolean;
  /** The daemon exits after this long without a request (ms). */
  daemonIdleMs: number;
  /** How often, in time of activity, the daemon checks its account of changes against a full scan (ms). */
  daemonVerifyMs: number;
  /**
   * After a rewind of the conversation inside the agent: `off` only records it; `ask` tells the user what the
   * workspace still holds of the turns left behind; `auto` also restores it when the agent put back its own
   * edits and every other change left was the abandoned turns' own.
   */
  followRewind: FollowRewind;
  /** The agent's MCP tools may push checkpoints (they may always list and fetch). */
  shareAgentPush: boolean;
  /** `turn`: after share init, each turn's end pushes its session in the background (never inside a tool call's hook). */
  shareAuto: 'off' | 'turn';
}

type FollowRewind = 'off' | 'ask' | 'auto';

const DEFAULT_SECRET_PATTERNS = ['.env', '.env.*', '*.pem', '*.key', 'id_rsa*', 'id_ed25519*'];

/** Hooks must finish before the shortest agent timeout (Copilot, Cline, Claude's UserPromptSubmit: 30 s). */
export const HOOK_BUDGET_CAP_MS = 25_000;

export const DEFAULT_SETTINGS: Settings = {
  maxFileBytes: 16 * 1024 * 1024,
  maxNewFiles: 5000,
  secretPatterns: DEFAULT_SECRET_PATTERNS,
  timeBudgetMs: 15_000,
  lockTimeoutMs: 30_000,
  hookBudgetMs: 10_000,
  keep: 500,
  maxAgeMs: 30 * 24 * 3600 * 1000,
  maxBytes: 2 * 1024 ** 3,
  recordPrompts: true,
  daemon: true,
  daemonIdleMs: 30 * 60_000,
  daemonVerifyMs: 10 * 60_000,
  followRewind: 'ask',
  shareAgentPush: false,
  shareAuto: 'off',
};

/**
 * Pure: `ckpt.secretPatterns` applied to the patterns so far (the defaults, then
 * each config file's value in git's order). An entry adds a pattern; `!p` drops
 * `p` when the list has it (a default such as `!*.key`), and is otherwise kept as
 * a gitignore negation that lets matching files be stored (`!.env.example`).
 * Adding, not replacing: setting one pattern must not quietly store `.env`.
 */
function withSecretPatterns(patterns: readonly string[], value: string): string[] {
  const next = [...patterns];
  for (const entry of value.split(/[,\s]+/).filter(Boolean)) {
    const dropped = entry.startsWith('!') ? next.indexOf(entry.slice(1)) : -1;
    if (dropped >= 0) next.splice(dropped, 1);
    else if (!next.includes(entry)) next.push(entry);
  }
  return next;
}

/** git's boolean syntax. */
function parseGitBool(key: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['true', 'yes', 'on', '1', ''].includes(v)) return true;
  if (['false', 'no', 'off', '0'].includes(v)) return false;
  throw new CkptError('config', `bad value for ckpt.${key}: ${JSON.stringify(value)} (expected true or false)`);
}

/** git's integer syntax: an optional k, m or g suffix, powers of 1024. */
function parseGitSize(key: string, value: string): number {
  const match = /^\s*(\d+)\s*([kmg]?)\s*$/i.exec(value);
  if (!match)
    throw new CkptError(
      'config',
      `bad value for ckpt.${key}: ${JSON.stringify(value)} (expected a number with an optional k, m or g suffix)`,
    );
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(match[1]) * unit;
}

/** A duration: `1500ms`, `15s`, `2m`, `12h`, `30d`, or a bare number of seconds. */
function parseDuration(key: string, value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  if (!match)
    throw new CkptError('config', `bad value for ckpt.${key}: ${JSON.stringify(value)} (expected e.g. 15s, 1500ms, 2m, 12h or 30d)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 's').toLowerCase() as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(match[1]) * unit);
}

/** Pure: fold `git config --list -z` output into settings. @public (tests use it) */
export function settingsFromConfigList(listing: string): Settings {
  const settings: Settings = { ...DEFAULT_SETTINGS };
  for (const entry of listing.split('\0')) {
    if (!entry) continue;
    const nl = entry.indexOf('\n');
    const key = (nl < 0 ? entry : entry.slice(0, nl)).toLowerCase();
    const value = nl < 0 ? 'true' : entry.slice(nl + 1);
    if (!key.startsWith('ckpt.')) continue;
    const name = key.slice(5);
    switch (name) {
      case 'maxfilebytes':
        settings.maxFileBytes = parseGitSize('maxFileBytes', value);
        break;
      case 'maxnewfiles':
        settings.maxNewFiles = parseGitSize('maxNewFiles', value);
        break;
      case 'secretpatterns':
        settings.secretPatterns = withSecretPatterns(settings.secretPatterns, value);
        break;
      case 'timebudget':
        settings.timeBudgetMs = parseDuration('timeBudget', value);
        break;
      case 'locktimeout':
        settings.lockTimeoutMs = parseDuration('lockTimeout', value);
        break;
      case 'keep':
        settings.keep = Math.max(1, parseGitSize('keep', value));
        break;
      case 'maxage':
        settings.maxAgeMs = parseDuration('maxAge', value);
        break;
      case 'maxbytes':
        settings.maxBytes = parseGitSize('maxBytes', value);
        break;
      case 'recordprompts':
        settings.recordPrompts = parseGitBool('recordPrompts', value);
        break;
      case 'daemon':
        settings.daemon = parseGitBool('daemon', value);
        break;
      case 'daemonidle':
        settings.daemonIdleMs = parseDuration('daemonIdle', value);
        break;
      case 'daemonverify':
        settings.daemonVerifyMs = parseDuration('daemonVerify', value);
        break;
      case 'followrewind': {
        const mode = value.trim().toLowerCase();
        if (mode !== 'off' && mode !== 'ask' && mode !== 'auto')
          throw new CkptError('config', `bad value for ckpt.followRewind: ${JSON.stringify(value)} (expected off, ask or auto)`);
        settings.followRewind = mode;
        break;
      }
      case 'share.agentpush':
        settings.shareAgentPush = parseGitBool('share.agentPush', value);
        break;
      case 'share.auto': {
        const mode = value.trim().toLowerCase();
        if (mode !== 'off' && mode !== 'turn')
          throw new CkptError('config', `bad value for ckpt.share.auto: ${JSON.stringify(value)} (expected off or turn)`);
        settings.shareAuto = mode;
        break;
      }
      case 'hookbudget':
        settings.hookBudgetMs = Math.min(HOOK_BUDGET_CAP_MS, parseDuration('hookBudget', value));
        break;
      default:
        break; // keys of later versions, or of the retention policy
    }
  }
  return settings;
}

/** The config files git reads for us: the user's global ones, the shadow repository's, and the store's own. */
function configSources(paths: StorePaths, env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME ?? homedir();
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return [path.join(xdg, 'git', 'config'), path.join(home, '.gitconfig'), paths.shadowConfig, paths.config];
}

/**
 * Read settings with one `git config --list`, cached in the store against the
 * config files' stat data: a hook runs on every tool call and should not pay a
 * git process for settings that did not change. (A file pulled in by
 * `include.path` from the global config is not watched: touch the global config
 * after editing it.)
 */
export async function readSettings(paths: StorePaths, env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): Promise<Settings> {
  // `git -c ckpt.key=value ckpt …` holds for this one command: its settings are part of the stamp.
  const stamp = [...configSources(paths, env).map((f) => `${f}:${statStamp(f)}`), JSON.stringify(commandLineConfigOf(env))].join('|');
  const isText = (v: unknown): v is string => typeof v === 'string';
  const listing = await stampedCache(paths.settingsCache, stamp, isText, async () => {
    // The git child reads the global config from the HOME the workspace was opened with.
    const { stdout } = await git({
      verb: 'config',
      args: ['--list', '-z', '--includes'],
      gitDir: paths.gitDir,
      cwd: paths.dir,
      userConfig: true,
      commandLineConfig: env,
      env: globalConfigEnv(env),
      signal,
    });
    const text = stdout.toString('utf8');
    // Parsed before it is cached: a bad value must fail every time.
    settingsFromConfigList(text);
    return text;
  });
  return settingsFromConfigList(listing);
}

/** Where git finds the global config: the HOME (and XDG_CONFIG_HOME) the workspace was opened with. */
function globalConfigEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return { HOME: env.HOME ?? homedir(), ...(env.XDG_CONFIG_HOME ? { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME } : {}) };
}

/** The user's own [ckpt] settings and those of `git -c`, without a store (the daemon's: one per store root, for every workspace). */
export async function readUserSettings(env: NodeJS.ProcessEnv = process.env, cwd: string = homedir()): Promise<Settings> {
  // `--global` would leave out `git -c`; the scopes say which entries are the user's (a repository at cwd is not).
  const { stdout } = await git({
    verb: 'config',
    args: ['--list', '-z', '--includes', '--show-scope'],
    cwd,
    userConfig: true,
    commandLineConfig: env,
    okCodes: [1],
    env: globalConfigEnv(env),
  });
  return settingsFromConfigList(userScopeEntries(stdout.toString('utf8')));
}

/** Pure: the global and command-line entries of `git config --list -z --show-scope`, as `--list -z` prints them. */
function userScopeEntries(scoped: string): string {
  const fields = scoped.split('\0');
  const kept: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'global' || fields[i] === 'command') kept.push(fields[i + 1]!);
  return kept.map((entry) => `${entry}\0`).join('');
}
