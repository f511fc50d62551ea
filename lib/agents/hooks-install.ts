/**
 * Wiring git-ckpt into each agent's own hook configuration: where each
 * agent's file is, install and removal (every target merged first, then
 * written), and status. The wiring is data with a pure merge (hook-specs.ts);
 * the config files' I/O is shared with the MCP installer (agent-config.ts).
 * No secret of git-ckpt goes into a file a team shares: Claude Code's project
 * hooks go into its `settings.local.json`, the daemon token into the user's own
 * settings only, and one found in a shared file is taken out and renewed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CkptError } from '../model/errors.js';
import { hookCommandOnPath, hookEntryScript } from '../store/layout.js';
import { locateWorkspace } from '../store/locate.js';
import { listDir } from '../store/packs.js';
import { storeRoot } from '../store/store.js';
import { storeWorkspace } from '../store/stores.js';
import { git, versionBelow } from '../git/runner.js';
import type { RunVerdict } from './trust.js';
import { backUp, readConfig, readConfigText, writeConfigText, type Json, type Scope } from './agent-config.js';
import { fileWiring, isOurPlugin, pluginEntry, pluginFiles, PLUGIN_TRANSPORT } from './plugin-specs.js';
import {
  ENTRY_NAME,
  hasHttpHooks,
  hookCommand,
  isEmptyConfig,
  mergeHooks,
  removeHooks,
  setsToken,
  TOKEN_VARIABLE,
  tokenIn,
  transports,
  wiredEvents,
  withToken,
  withoutToken,
  type HttpTransport,
} from './hook-specs.js';
import { adapterOf, configWiring, wiringOf, withoutAgentEnv, type AgentName } from './registry.js';
import { currentDaemonToken, daemonToken, newDaemonToken, renewDaemonToken, startDaemon } from '../store/daemon-client.js';

export interface HookTarget {
  agent: AgentName;
  scope: Scope;
  file: string;
  /**
   * The project file the team shares beside the user's own `file` (Claude Code's `.claude/settings.json`
   * beside `settings.local.json`): nothing of ours stays there, and no daemon token.
   */
  sharedFile?: string;
}

export function hookTarget(agent: AgentName, scope: Scope, projectRoot: string, env: NodeJS.ProcessEnv = process.env): HookTarget {
  const wiring = wiringOf(agent);
  if (scope === 'user') return { agent, scope, file: wiring.file.user(env, path.resolve(env.HOME ?? homedir())) };
  const root = path.resolve(projectRoot);
  const shared = wiring.kind === 'config' && wiring.sharedProjectFile ? { sharedFile: path.join(root, wiring.sharedProjectFile) } : {};
  return { agent, scope, file: path.join(root, wiring.file.project), ...shared };
}

/** The agent's events that git-ckpt's wiring covers. */
function agentEvents(agent: AgentName): string[] {
  return wiringOf(agent).events.map((e) => e.event);
}

/** Something an install, an uninstall or a status has to tell besides the wiring, with its fix. */
export interface HookNotice {
  code:
    | 'moved-from-shared'
    | 'shared-file'
    | 'token-in-project-file'
    | 'token-renewed'
    | 'token-file'
    | 'token-kept'
    | 'token-removed'
    | 'token-missing'
    | 'token-stale'
    | 'not-ignored'
    | 'tracked';
  text: string;
}

export interface InstallResult extends HookTarget {
  changed: boolean;
  /** `file` itself was removed (uninstall: it held nothing but ours). */
  removed?: boolean;
  /** Every file written or removed: `file`, and for Claude Code the shared project file and the user's settings (the token). */
  files: string[];
  backup?: string;
  events: string[];
  notices: HookNotice[];
  /** Why this config could not be written (the others were). */
  error?: string;
}

/** One file an install or uninstall writes: its new text, or null to remove it. */
interface FileWrite {
  file: string;
  text: string | null;
  hadFile: boolean;
  /** Folders above the file (nearest first) that go with it when it is removed and they are left empty. */
  emptyParents?: number;
}

/** What install or uninstall will do to one agent's config, worked out before anything is written. */
interface HookChange {
  target: HookTarget;
  /** The files to write or remove (none: no change). */
  writes: FileWrite[];
  events: string[];
  notices: HookNotice[];
}

const jsonText = (config: Json) => `${JSON.stringify(config, null, 2)}\n`;
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The JSON configs one change reads and writes: each file read once (a config that cannot be
 * parsed refuses the whole change), edited in memory, then the writes that differ from disk.
 */
class ConfigEdits {
  private readonly files = new Map<string, { current: Json | undefined; next: Json | null | undefined }>();

  /** The config as the edits so far leave it (undefined: no such file, or removed). */
  get(file: string): Json | undefined {
    let entry = this.files.get(file);
    if (!entry) {
      const current = readConfig(file);
      entry = { current, next: current };
      this.files.set(file, entry);
    }
    return entry.next ?? undefined;
  }

  /** Edit a file that exists (or, with `create`, one that does not yet); `null` removes it. */
  edit(file: string, change: (config: Json) => Json | null, create = false): void {
    const config = this.get(file);
    if (config === undefined && !create) return;
    this.files.get(file)!.next = change(config ?? {});
  }

  /** Whether the edits change this file. */
  changes(file: string): boolean {
    const entry = this.files.get(file);
    return (
      entry !== undefined &&
      (entry.current === undefined ? entry.next !== undefined && entry.next !== null : !sameJson(entry.current, entry.next))
    );
  }

  writes(emptyParents: (file: string) => number): FileWrite[] {
    const out: FileWrite[] = [];
    for (const [file, { current, next }] of this.files) {
      if (!this.changes(file)) continue;
      if (next === null || next === undefined) out.push({ file, text: null, hadFile: true, emptyParents: emptyParents(file) });
      else out.push({ file, text: jsonText(next), hadFile: current !== undefined });
    }
    return out;
  }
}

/** The files a plugin agent's wiring is, as we would write them: the shipped templates with the entry script's path. */
function wantedPlugin(target: HookTarget, script: string): { file: string; event: string; text: string }[] {
  const hooks = path.dirname(script);
  const read = (name: string) => readFileSync(path.join(hooks, name), 'utf8');
  const templates = { transport: fileWiring(target.agent)?.kind === 'plugin' ? read(PLUGIN_TRANSPORT) : '', adapter: read };
  return pluginFiles(target.agent, target.file, templates, script, (phase) => hookCommand(script, target.agent, phase));
}

function pluginInstallChange(target: HookTarget, script: string): HookChange {
  const writes: FileWrite[] = [];
  for (const { file, text } of wantedPlugin(target, script)) {
    const current = readConfigText(file);
    if (current !== undefined && !isOurPlugin(current, target.agent))
      throw new CkptError('config', `${file} is not git-ckpt's plugin; left untouched`);
    if (text !== current) writes.push({ file, text, hadFile: current !== undefined });
  }
  return { target, writes, events: agentEvents(target.agent), notices: [] };
}

/** What the daemon token is to one change: its value now (the new one when it is being renewed), and whether it is. */
interface TokenFacts {
  value: string | undefined;
  renewed: boolean;
}

/** The agent's user config: where the daemon token lives, for every scope's HTTP hooks. */
function tokenFile(agent: AgentName, env: NodeJS.ProcessEnv): string {
  return hookTarget(agent, 'user', '', env).file;
}

/** Whether a config's hooks include one of our HTTP handlers (they send the token). */
function hasHttpHandlers(config: Json | undefined, agent: AgentName): boolean {
  return config !== undefined && Object.values(transports(config, agent)).includes('http');
}

/**
 * Whether the project settings of another workspace this store root knows (one with a store) hold our
 * HTTP hooks: they read the token from the user's settings, which must then keep it.
 */
function httpHooksInOtherProjects(agent: AgentName, env: NodeJS.ProcessEnv, except: string): boolean {
  for (const name of listDir(storeRoot(env))) {
    const known = storeWorkspace(name, env);
    if (!known || known.missing) continue;
    const file = hookTarget(agent, 'project', known.workspace, env).file;
    if (file === except) continue;
    try {
      if (hasHttpHandlers(readConfig(file), agent)) return true;
    } catch {
      // A file that cannot be read is no HTTP hook that works.
    }
  }
  return false;
}

/**
 * The daemon token in the user's settings, after the edits: there while any HTTP hook of ours reads it
 * (at user scope, or in a known project's own settings), with the daemon's current value; gone when none does.
 */
function editToken(edits: ConfigEdits, target: HookTarget, token: TokenFacts, env: NodeJS.ProcessEnv): HookNotice[] {
  const agent = target.agent;
  const file = tokenFile(agent, env);
  const local = target.scope === 'project' ? target.file : '';
  const elsewhere = (local !== '' && hasHttpHandlers(edits.get(local), agent)) || httpHooksInOtherProjects(agent, env, local);
  let user: Json | undefined;
  try {
    user = edits.get(file);
  } catch (err) {
    // The user's settings cannot be parsed: refused when the token must go there, left alone when not.
    if (elsewhere) throw err;
    return [];
  }
  const needed = elsewhere || hasHttpHandlers(user, agent);
  if (needed && token.value !== undefined) {
    const value = token.value;
    edits.edit(file, (c) => withToken(c, value), true);
    if (target.scope === 'user' && !hasHttpHandlers(edits.get(file), agent))
      return [{ code: 'token-kept', text: `the daemon token stays in ${file}: a project's HTTP hooks read it` }];
    return [{ code: 'token-file', text: `the daemon token is in ${file} (env ${TOKEN_VARIABLE}), your own settings, never a project's` }];
  }
  if (!needed) {
    const config = user;
    if (config === undefined || !setsToken(config)) return [];
    edits.edit(file, (c) => nothingLeft(config, withoutToken(c), agent));
    return [{ code: 'token-removed', text: `the daemon token left ${file}: no HTTP hook of ours reads it now` }];
  }
  return [];
}

/** Pure: `next`, or null (the file goes) when our removal left nothing in it. */
function nothingLeft(before: Json, next: Json, agent: AgentName): Json | null {
  return !sameJson(before, next) && isEmptyConfig(next, agent) ? null : next;
}

/** How many folders of a config file's path below the project go with it when it is removed: a project file's only. */
function emptyParentsOf(target: HookTarget): (file: string) => number {
  return (file) => {
    const wiring = wiringOf(target.agent);
    if (target.scope !== 'project' || wiring.kind !== 'config') return 0;
    const rel = file === target.file ? wiring.file.project : file === target.sharedFile ? wiring.sharedProjectFile : undefined;
    return rel ? rel.split('/').length - 1 : 0;
  };
}

/** The shared file's part of a change: ours and any daemon token out of it, with what to tell. */
function cleanShared(edits: ConfigEdits, target: HookTarget, agent: AgentName, token: TokenFacts, action: string): HookNotice[] {
  const shared = target.sharedFile;
  if (!shared) return [];
  const before = edits.get(shared);
  if (before === undefined) return [];
  edits.edit(shared, (c) => nothingLeft(c, withoutToken(removeHooks(c, agent, shared)), agent));
  if (!edits.changes(shared)) return [];
  const notices: HookNotice[] = [];
  if (wiredEvents(before, agent).length)
    notices.push({
      code: 'moved-from-shared',
      text: `git-ckpt's hooks left the shared ${shared}, which teams commit (an older git-ckpt put them there)${action === 'install' ? `; they are in ${target.file}, yours alone` : ''}: commit that change; each teammate runs git ckpt hooks install for themselves`,
    });
  if (token.renewed)
    notices.push({
      code: 'token-renewed',
      text: `the daemon token was in ${shared}, and so in its checkpoints and perhaps in your git history: a new one replaces it, and the old one is refused`,
    });
  else if (setsToken(before))
    notices.push({ code: 'token-in-project-file', text: `${TOKEN_VARIABLE} (a daemon token, not this one) left ${shared}` });
  return notices;
}

/**
 * The entry script a target's config names: in a project's file, which the team shares, the installed
 * command on PATH when there is one (every teammate's own git-ckpt); in a user's own file, or from a
 * checkout never installed, its absolute path. The JavaScript plugins start it through `sh <path>`: theirs
 * stays a path.
 */
function scriptFor(target: HookTarget, script: string, env: NodeJS.ProcessEnv): string {
  if (target.scope !== 'project' || script !== hookEntryScript()) return script;
  if (wiringOf(target.agent).kind === 'plugin') return script;
  return hookCommandOnPath(env) ?? script;
}

function installChange(target: HookTarget, given: string, token: TokenFacts, env: NodeJS.ProcessEnv, http?: HttpTransport): HookChange {
  const script = scriptFor(target, given, env);
  if (fileWiring(target.agent)) return pluginInstallChange(target, script);
  const agent = target.agent;
  const edits = new ConfigEdits();
  // A project file never holds the token: Claude's project env would also override the user's.
  edits.edit(
    target.file,
    (c) => {
      const next = mergeHooks(c, agent, script, target.file, http);
      return target.scope === 'project' ? withoutToken(next) : next;
    },
    true,
  );
  const notices = cleanShared(edits, target, agent, token, 'install');
  if (hasHttpHooks(agent)) notices.push(...editToken(edits, target, token, env));
  const writes = edits.writes(emptyParentsOf(target));
  // Nothing to write: the token's whereabouts were told at the install that put it there.
  return { target, writes, events: wiredEvents(edits.get(target.file) ?? {}, agent), notices: writes.length ? notices : [] };
}

function uninstallChange(target: HookTarget, token: TokenFacts, env: NodeJS.ProcessEnv): HookChange {
  const agent = target.agent;
  if (fileWiring(agent)) {
    // Only our own files go; a file of the user's in their place stays.
    const writes = wantedPlugin(target, hookEntryScript())
      .filter(({ file }) => {
        const current = readConfigText(file);
        return current !== undefined && isOurPlugin(current, agent);
      })
      .map(({ file }) => ({ file, text: null, hadFile: true }));
    return { target, writes, events: [], notices: [] };
  }
  const edits = new ConfigEdits();
  edits.edit(target.file, (c) => {
    const next = removeHooks(c, agent, target.file);
    return nothingLeft(c, target.scope === 'project' ? withoutToken(next) : next, agent);
  });
  const notices = cleanShared(edits, target, agent, token, 'uninstall');
  if (hasHttpHooks(agent)) notices.push(...editToken(edits, target, token, env).filter((n) => n.code !== 'token-file'));
  return { target, writes: edits.writes(emptyParentsOf(target)), events: [], notices };
}

/** A file's folders that held only it, once it is gone: uninstall leaves no trace. */
function removeEmptyFolders(file: string, levels: number): void {
  let dir = path.dirname(file);
  for (let i = 0; i < levels; i++, dir = path.dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (or not ours to judge): it stays, and so does everything above it
    }
  }
}

function applyChange(change: HookChange, env: NodeJS.ProcessEnv): InstallResult {
  const { target, writes, events, notices } = change;
  if (writes.length === 0) return { ...target, changed: false, files: [], events, notices };
  let first: string | undefined;
  let removed = false;
  const files: string[] = [];
  try {
    for (const { file, text, hadFile, emptyParents } of writes) {
      files.push(file);
      let backup: string | undefined;
      if (text === null) {
        backup = backUp(file, env);
        rmSync(file);
        // A plugin's folder and the agent's folder above it.
        removeEmptyFolders(file, fileWiring(target.agent) ? 2 : (emptyParents ?? 0));
        if (file === target.file) removed = true;
      } else backup = writeConfigText(file, text, hadFile, env);
      if (file === target.file || !first) first = backup ?? first;
    }
    return { ...target, changed: true, ...(removed ? { removed } : {}), files, ...(first ? { backup: first } : {}), events, notices };
  } catch (err) {
    return { ...target, changed: files.length > 1, files: files.slice(0, -1), events: [], notices: [], error: (err as Error).message };
  }
}

/** Whether this token (git-ckpt's own, current) is in a file teams share: then it must be renewed. */
function tokenShared(targets: HookTarget[], token: string | undefined): boolean {
  if (token === undefined) return false;
  return targets.some((t) => {
    if (!t.sharedFile) return false;
    const shared = readConfig(t.sharedFile);
    return shared !== undefined && tokenIn(shared) === token;
  });
}

/**
 * Install or uninstall for every target, all or nothing where it can be: every
 * config is read and merged first, so one that cannot be parsed fails the whole
 * command before any file is written. A write that fails after that (a full
 * disk, a read-only file) is reported in its own result, next to those written.
 * A daemon token found in a shared project file (an older git-ckpt's layout) is
 * renewed before the writes: the configs get the new one, and the old one is refused.
 */
export async function changeHooks(
  action: 'install' | 'uninstall',
  targets: HookTarget[],
  env: NodeJS.ProcessEnv = process.env,
  script = hookEntryScript(),
  http?: HttpTransport,
): Promise<InstallResult[]> {
  const changes: HookChange[] = [];
  const refused: { agent: AgentName; message: string }[] = [];
  let token: TokenFacts = { value: http?.token ?? currentDaemonToken(env), renewed: false };
  try {
    if (tokenShared(targets, token.value)) token = { value: newDaemonToken(), renewed: true };
  } catch {
    // A shared file that cannot be parsed is refused below, by its agent.
  }
  for (const target of targets) {
    try {
      changes.push(action === 'install' ? installChange(target, script, token, env, http) : uninstallChange(target, token, env));
    } catch (err) {
      refused.push({ agent: target.agent, message: (err as Error).message });
    }
  }
  if (refused.length === 1 && targets.length === 1) throw new CkptError('config', refused[0]!.message);
  if (refused.length)
    throw new CkptError('config', `${refused.map((r) => `${r.agent}: ${r.message}`).join('; ')}; no agent's config was written`);
  if (token.renewed) await renewDaemonToken(withoutAgentEnv(env), token.value);
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
  /** What is wrong besides the wiring (an older layout, the daemon token, the file git would commit), each with its fix. */
  notices: HookNotice[];
  error?: string;
}

/** Whether the entry script a config names is there: a path, or the installed command on PATH. */
function entryFound(entry: string, env: NodeJS.ProcessEnv): boolean {
  return entry.includes('/') ? existsSync(entry) : hookCommandOnPath(env) !== undefined;
}

/** Whether a command string is one of our handlers (it names the entry script). */
function isOurCommand(command: string): boolean {
  return command.includes(ENTRY_NAME);
}

/** hookStatus, plus whether the agent will actually run what is wired (see trust.ts). */
export async function hookStatusWithVerdict(
  target: HookTarget,
  projectRoot: string | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<HookStatus & { verdict?: RunVerdict }> {
  const status = hookStatus(target, env);
  if (status.state === 'not wired' || status.state === 'unreadable') return status;
  const notices = [...status.notices, ...(await gitStanding(target, projectRoot, env))];
  const { willRunHooks } = await import('./trust.js');
  return { ...status, notices, verdict: await willRunHooks(target.agent, target.scope, projectRoot, target.file, env, isOurCommand) };
}

/**
 * Whether git would commit a project's own settings file of the user's (Claude Code's
 * `settings.local.json`, which names this user's hook script and the daemon's port): asked of
 * the user's repository, read-only, with their ignore rules (Claude Code puts its rule for the
 * file in the global excludes file when it writes one itself). None when the folder is no repository.
 */
export async function gitStanding(target: HookTarget, projectRoot: string | null, env: NodeJS.ProcessEnv): Promise<HookNotice[]> {
  if (!target.sharedFile || !projectRoot || !existsSync(target.file)) return [];
  let location: ReturnType<typeof locateWorkspace>;
  try {
    location = locateWorkspace(projectRoot);
  } catch {
    return [];
  }
  if (!location.userGitDir) return [];
  const rel = path.relative(location.root, target.file).split(path.sep).join('/');
  const call = { cwd: location.root, userConfig: true, baseEnv: env };
  try {
    const tracked = await git({ ...call, verb: 'ls-files', args: ['-z'], paths: [rel] });
    if (tracked.stdout.length)
      return [
        {
          code: 'tracked',
          text: `${rel} is tracked by git: teammates get your hooks, which fail for them; git rm --cached ${rel}, and add it to .gitignore`,
        },
      ];
    const ignored = await git({ ...call, verb: 'check-ignore', args: ['--no-index', '--stdin', '-z'], input: `${rel}\0`, okCodes: [1] });
    if (ignored.stdout.length) return [];
  } catch {
    return []; // git could not tell: nothing to say
  }
  return [
    {
      code: 'not-ignored',
      text: `${rel} is not ignored by git here: add it to .gitignore (it is yours alone: it names your hook script and the daemon's port)`,
    },
  ];
}

/** A plugin agent's status: our files there (for this agent), and whether the entry script they call still exists. */
function pluginStatus(target: HookTarget, env: NodeJS.ProcessEnv): HookStatus {
  const all = agentEvents(target.agent);
  const ours: { event: string; text: string }[] = [];
  try {
    for (const { file, event } of wantedPlugin(target, hookEntryScript())) {
      const text = readConfigText(file);
      if (text !== undefined && isOurPlugin(text, target.agent)) ours.push({ event, text });
    }
  } catch (err) {
    return { ...target, state: 'unreadable', events: [], transports: {}, missing: all, notices: [], error: (err as Error).message };
  }
  if (ours.length === 0) return { ...target, state: 'not wired', events: [], transports: {}, missing: all, notices: [] };
  // One plugin file covers every event; Cline's hook files one each.
  const events = ours.some((o) => o.event === '*') ? all : all.filter((e) => ours.some((o) => o.event === e));
  const missing = all.filter((e) => !events.includes(e));
  const broken = ours.some(({ text }) => {
    const entry = pluginEntry(text);
    return entry === null || !entryFound(entry, env);
  });
  return {
    ...target,
    state: missing.length ? 'partly wired' : 'wired',
    events,
    transports: Object.fromEntries(events.map((e) => [e, 'plugin' as const])),
    missing,
    ...(broken ? { brokenScript: true } : {}),
    notices: [],
  };
}

/** @public (tests use it) */
export function hookStatus(target: HookTarget, env: NodeJS.ProcessEnv = process.env): HookStatus {
  const agent = target.agent;
  if (fileWiring(agent)) return pluginStatus(target, env);
  const all = agentEvents(agent);
  let config: Json | undefined;
  let shared: Json | undefined;
  try {
    config = readConfig(target.file);
    shared = target.sharedFile ? readConfig(target.sharedFile) : undefined;
  } catch (err) {
    return { ...target, state: 'unreadable', events: [], transports: {}, missing: all, notices: [], error: (err as Error).message };
  }
  // The agent merges the shared file's hooks with the user's own: both run.
  const how = { ...(shared ? transports(shared, agent) : {}), ...(config ? transports(config, agent) : {}) };
  const events = all.filter((e) => e in how);
  const missing = all.filter((e) => !events.includes(e));
  const state = events.length === 0 ? 'not wired' : missing.length ? 'partly wired' : 'wired';
  const scripts = new Set<string>();
  const text = JSON.stringify([config ?? {}, shared ?? {}]);
  for (const m of text.matchAll(/sh '((?:[^'\\]|\\.)*?git-ckpt-hook)'/g)) scripts.add(m[1]!);
  if (/"git-ckpt-hook [a-z]+ [a-z-]+ /.test(text)) scripts.add(ENTRY_NAME);
  const brokenScript = [...scripts].some((s) => !entryFound(s, env));
  return {
    ...target,
    state,
    events,
    transports: how,
    missing,
    ...(brokenScript ? { brokenScript } : {}),
    notices: statusNotices(target, config, shared, env),
  };
}

/** What a status tells besides the wiring: ours or a daemon token in the shared file, a token HTTP hooks cannot send. */
function statusNotices(target: HookTarget, config: Json | undefined, shared: Json | undefined, env: NodeJS.ProcessEnv): HookNotice[] {
  const agent = target.agent;
  const notices: HookNotice[] = [];
  const fix = `run git ckpt hooks install --agent ${agent}${target.scope === 'user' ? ' --scope user' : ''}`;
  if (target.sharedFile && shared && wiredEvents(shared, agent).length)
    notices.push({
      code: 'shared-file',
      text: `git-ckpt's hooks are in the shared ${target.sharedFile}, which teams commit (an older layout): ${fix} to move them to ${target.file}`,
    });
  for (const [file, cfg] of [
    [target.sharedFile, shared],
    [target.scope === 'project' ? target.file : undefined, config],
  ] as const)
    if (file && cfg && setsToken(cfg))
      notices.push({
        code: 'token-in-project-file',
        text: `${file} sets ${TOKEN_VARIABLE}, a daemon token in a project file (it also overrides yours): ${fix}, which takes it out (and renews it when it is this daemon's)`,
      });
  if (!hasHttpHooks(agent) || !(hasHttpHandlers(config, agent) || hasHttpHandlers(shared, agent))) return notices;
  // What the HTTP hooks send: the agent's env, the project's own settings over the shared file over the user's.
  const file = tokenFile(agent, env);
  let sent: string | undefined;
  try {
    const user = target.scope === 'user' ? config : readConfig(file);
    sent = [target.scope === 'project' ? config : undefined, shared, user]
      .map((c) => (c ? tokenIn(c) : undefined))
      .find((v) => v !== undefined);
  } catch {
    sent = undefined;
  }
  const current = currentDaemonToken(env);
  if (sent === undefined)
    notices.push({
      code: 'token-missing',
      text: `the HTTP hooks send ${TOKEN_VARIABLE}, which ${file} does not set: the daemon refuses them; ${fix}`,
    });
  else if (current !== undefined && sent !== current)
    notices.push({ code: 'token-stale', text: `the ${TOKEN_VARIABLE} the HTTP hooks send is not the daemon's: it refuses them; ${fix}` });
  return notices;
}

/** The installed agent's version (`<command> --version`), or null when there is none on PATH. */
function installedVersion(command: string, env: NodeJS.ProcessEnv): string | null {
  const r = spawnSync(command, ['--version'], { env, encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) return null;
  return /(\d+\.\d+\.\d+)/.exec(r.stdout)?.[1] ?? null;
}

/** Pure: whether this version of the agent has HTTP hooks. @public (tests use it) */
export function versionHasHttpHooks(agent: AgentName, version: string | null): boolean {
  const since = configWiring(agent).http?.since;
  return since !== undefined && version !== null && !versionBelow(version, since);
}

/** Whether the agent installed here (on PATH) has HTTP hooks. */
export function installedHasHttpHooks(agent: AgentName, env: NodeJS.ProcessEnv = process.env): boolean {
  const http = adapterOf(agent).wiring;
  if (http?.kind !== 'config' || !http.http) return false;
  return versionHasHttpHooks(agent, installedVersion(http.http.versionCommand, env));
}

/** The daemon's HTTP endpoint for HTTP hooks: it is started (it must be running to have a port and a token). */
export async function httpTransport(env: NodeJS.ProcessEnv = process.env): Promise<HttpTransport> {
  const { endpoint } = await startDaemon(withoutAgentEnv(env));
  return { port: endpoint.port, token: daemonToken(env) };
}
