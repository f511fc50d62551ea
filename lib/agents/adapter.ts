/**
 * What git-ckpt knows of one agent, held in one pure file per agent
 * (`adapters/<name>.ts`) and read by agent-neutral engines through
 * `registry.ts`, never by an agent's name. So far it holds the variables a
 * hook's environment carries, what a hook prints, the payload's quirks and
 * how hooks are wired into the agent; trust, MCP, resume and transcripts join
 * it as their engines learn to read adapters (docs/research/adapters-plan.md,
 * issue 34).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Phase } from '../model/phases.js';
import type { RewindVerdict, TranscriptIndex } from '../model/rewind-detect.js';

/** An environment as parsing may read it: only the variables the adapters name (registry.ts `pickAgentEnv`). */
export type AgentEnv = Readonly<Record<string, string | undefined>>;

/** A hook payload's JSON object. */
export type Json = Record<string, unknown>;

/**
 * The facts a hook payload carries, each read from its canonical key (Claude Code's spelling, which most
 * agents copy) or that key in camelCase, then from the adapters' aliases (hook-payload.ts).
 */
export type PayloadField =
  | 'session'
  | 'turnKey'
  | 'callId'
  | 'tool'
  | 'input'
  | 'cwd'
  | 'roots'
  | 'eventName'
  | 'error'
  | 'prompt'
  | 'transcript'
  | 'subagentId'
  | 'subagentType';

interface PayloadSpec {
  /** The variables that name the agent's project folder, first set wins; the entry script forwards them all. */
  readonly projectDirEnv: readonly string[];
  /** The variables that name the session when a payload does not. */
  readonly sessionEnv?: readonly string[];
  /** Variables the agent sets in every hook it runs: seen in a hook wired for another agent, this agent is the one running. */
  readonly markers?: readonly string[];
  /** The agent also runs hooks wired for another agent (Claude Code's), so one event may arrive twice. */
  readonly runsOthersHooks?: boolean;
  /**
   * The agent's own spellings of a field, read after the canonical keys. Every payload is read by every
   * adapter's aliases: an agent that runs others' hooks sends its own shape through their wiring.
   */
  readonly aliases?: Readonly<Partial<Record<PayloadField, readonly string[]>>>;
  /**
   * Pure: a payload of the agent's own shape (a plugin's envelope, a hook file's JSON) as the fields every
   * payload is read by (Claude Code's spellings, hook-payload.ts); the payload unchanged when it is not one.
   */
  readonly normalize?: (payload: Json) => Json;
  /** A shell's non-zero exit that the agent tells only in the result text: group 1 is the code. */
  readonly exitCode?: readonly RegExp[];
  /** A turn-start without a prompt hands tool results back to the model: it continues the user's turn. */
  readonly promptlessStartContinues?: boolean;
  /** Pure: a call's failure its post leaves out, from the tail of the agent's transcript (JSONL); null when it does not say. */
  readonly failureInTranscript?: (lines: string, callId: string) => string | null;
  /** The agent sends a post only for a call that succeeded: a call with no id whose post never came failed, and this says so. */
  readonly missingPostFailure?: string;
}

export type Scope = 'project' | 'user';

/** One of the agent's hook events, with the phase git-ckpt reads it as. */
export interface EventWiring {
  readonly event: string;
  readonly phase: Phase;
  /** Tool events: the agent's matcher for the tools that can change files (every tool where it has no such syntax). */
  readonly tools?: boolean;
}

/** Where a file (or folder) of git-ckpt's wiring is: relative to the project's root, and the user's one. */
export interface Place {
  readonly project: string;
  /** From the environment (an agent's own home variable) and the home directory, absolute. */
  readonly user: (env: Readonly<Record<string, string | undefined>>, home: string) => string;
}

/** Hooks in the agent's JSON config file, one handler of ours per event, merged among the user's own (hook-specs.ts). */
export interface ConfigWiring {
  readonly kind: 'config';
  readonly file: Place;
  /**
   * The project file the team shares (commits) when `file.project` is the user's own one beside it
   * (`settings.json` beside `settings.local.json`). Nothing of ours goes there: our handlers name this
   * user's script, port and token variable. An older git-ckpt wired the project there, with the daemon
   * token; install and uninstall take ours and the token out of it.
   */
  readonly sharedProjectFile?: string;
  /** `nested`: event → [{matcher, hooks: [handler]}]; `flat`: event → [handler]. */
  readonly layout: 'nested' | 'flat';
  /** Keys a new file starts with. */
  readonly skeleton: Json;
  /**
   * The matcher of tool events (nested layout): every tool but the read-only ones, where the agent's matcher
   * is a JavaScript regular expression (`allToolsBut`). A tool not in the list stays wired, the safe side;
   * edits made while a read-only tool ran are caught by the next mutating call's pre hook or by the turn's end.
   */
  readonly toolMatcher?: string;
  readonly events: readonly EventWiring[];
  readonly handler: (command: string, phase: Phase, event: string) => Json;
  /** Where the command string lives in a handler. */
  readonly commandKey: string;
  /**
   * The agent also has HTTP hooks: these events may be POSTed straight to the daemon, with the daemon token
   * taken from the `env` of the user's own config file (`file.user`), never a project's. From version `since`,
   * as `versionCommand --version` prints it.
   */
  readonly http?: { readonly events: readonly string[]; readonly versionCommand: string; readonly since: string };
}

/** A file of ours in the agent's plugin folder: the shipped transport and this template, the entry script written in. */
export interface PluginWiring {
  readonly kind: 'plugin';
  readonly file: Place;
  /** The agent's template in hooks/. */
  readonly template: string;
  /** The agent's events the plugin hands on, with their phase: what `hooks status` lists as wired. */
  readonly events: readonly EventWiring[];
}

/** An executable of ours per event in the agent's hook folder (`file`), each named after its event. */
interface HookFilesWiring {
  readonly kind: 'hook-files';
  readonly file: Place;
  readonly events: readonly EventWiring[];
}

export type Wiring = ConfigWiring | PluginWiring | HookFilesWiring;

/** Whether the agent will run the hooks wired for it. */
export interface RunVerdict {
  /** yes: the agent runs them; no: it will not until the step is taken; unknown: cannot be read from here. */
  readonly runs: 'yes' | 'no' | 'unknown';
  /** What decided it, in one line. */
  readonly reason: string;
  /** What the user must do (for `no`, and for `unknown` where a step is known). */
  readonly step?: string;
}

/** Where a trust verdict is asked: the wiring's scope and file, the project (null: none), the environment and home. */
export interface TrustQuestion {
  readonly scope: Scope;
  readonly projectRoot: string | null;
  readonly hooksFile: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
}

/** What the trust engine (trust.ts) read for a verdict: each file `files` named, parsed, by its name there. */
export interface TrustFacts extends TrustQuestion {
  /** Absent, unreadable or not an object: undefined (a file of the user's the agent itself would ignore). */
  readonly config: Readonly<Record<string, Json | undefined>>;
  /** The path of each file, for the reason and the step. */
  readonly path: Readonly<Record<string, string>>;
  /** A TOML file that is there but cannot be parsed, with why (its verdict is `unknown`). */
  readonly unreadable: Readonly<Record<string, string>>;
  /** Whether a command is one of our handlers. */
  readonly isOurs: (command: string) => boolean;
}

/**
 * Each agent has a gate of its own that leaves hooks silently unrun (a trust dialog, per-hook trust, a kill
 * switch): the files where it keeps that state, and the pure verdict from them.
 */
export interface TrustSpec {
  readonly files: (q: TrustQuestion) => Readonly<Record<string, { readonly file: string; readonly format?: 'toml' }>>;
  readonly verdict: (facts: TrustFacts) => RunVerdict;
}

/** How a server is started: a command and its arguments. */
export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
}

/** Where the agent's MCP client reads its servers, and the entry it wants for git-ckpt's (mcp-install.ts). */
export interface McpSpec {
  /** The project's file (null: the agent reads servers only from the user's, and says `userOnly`) and the user's. */
  readonly file: { readonly project: string | null; readonly user: Place['user'] };
  /** Why there is no project file, with what to do instead. */
  readonly userOnly?: string;
  /**
   * `json`: the servers are an object under `key`; `toml-table`: the user's own TOML text, where our
   * `[key.git-ckpt]` table goes between marker comments, so their comments and layout survive.
   */
  readonly format: 'json' | 'toml-table';
  readonly key: string;
  /** The entry for a server started by `launch` (its keys are what status compares; others are the user's). */
  readonly entry: (launch: Launch) => Json;
}

/**
 * How to open the agent's conversation again before a prompt, once git-ckpt has put the files back there
 * (resume-plan.ts). No agent has a flag that opens an interactive session at an earlier prompt, so it is
 * its resume command plus the one step inside it that goes back.
 */
interface ResumeSpec {
  /** The argv that reopens a session. The id comes from a record: it never stands as a word of its own. */
  readonly argv: (session: string) => string[];
  /** Before the first prompt: a new conversation. */
  readonly fresh: readonly string[];
  /** What to do inside the reopened conversation to go back to `prompt` (“prompt 3 “its title””). */
  readonly step: (prompt: string) => string;
  /** A print-mode command that continues right before the prompt, in a fork of the session. */
  readonly headless?: {
    /** Pure: the transcript's id of the message before the prompt `promptId` (null: it is the first; undefined: not said). */
    readonly lineBefore: (lines: readonly string[], promptId: string) => string | null | undefined;
    /** The argv, but for the next prompt, which the person adds. */
    readonly argv: (session: string, lineBefore: string) => string[];
  };
  /**
   * The agent's own fork of a session after a turn, asked of `command` over JSON-RPC on stdio (fork.ts):
   * after the `initialize` handshake, `request`; the new session is `sessionOf` its result.
   */
  readonly fork?: {
    readonly command: readonly string[];
    readonly initialize: Json;
    readonly request: (session: string, lastTurn: string) => { readonly method: string; readonly params: Json };
    readonly sessionOf: (result: Json) => string | null;
    /** The step while the fork is planned, and once it is made. */
    readonly planned: (prompt: string) => string;
    readonly made: (prompt: string) => string;
  };
}

/**
 * Noticing, after the fact, that the user rewound the conversation inside the agent: no agent fires a hook
 * for it; each leaves it in its transcript, read from the lines it gained since the last hook (rewind.ts).
 */
interface TranscriptSpec {
  /** The phases whose events read the transcript: when the agent has written what tells a rewind. */
  readonly readsAt: readonly Phase[];
  /**
   * Pure: the new lines read into the session's index, and whether turn `turn` continues from an earlier turn
   * than the one before it (`branch`: the turns before it, root first; `turnKeys`: the agent's turn ids to
   * serials); `pending` when the agent has not written it yet (a later event of the turn asks again).
   */
  readonly read: (
    index: TranscriptIndex,
    lines: readonly string[],
    at: { readonly turn: number; readonly branch: readonly number[]; readonly turnKeys: Readonly<Record<string, number>> },
  ) => { index: TranscriptIndex; verdict: RewindVerdict | { pending: true } };
  /** What an index of the session's previous transcript file carries over to a new one (a new segment); none: read anew. */
  readonly carryOver?: (saved: TranscriptIndex) => Partial<TranscriptIndex>;
  /** A fork that leaves no mark in its lines: found by the lines it copied from another session (its start says it is one). */
  readonly forkByCopiedLines?: boolean;
  /** The tools whose writes the agent's own rewind puts back: by the file path their input names, or a patch's paths. */
  readonly fileTools?: { readonly path?: readonly string[]; readonly patch?: readonly string[] };
}

export interface AgentAdapter<N extends string = string> {
  readonly name: N;
  /** The agent's name for people. */
  readonly title: string;
  readonly payload: PayloadSpec;
  /**
   * What a hook prints so that the agent proceeds untouched (some agents read stdout as JSON, or stderr
   * when stdout is empty), and whether the agent shows a hook's `systemMessage` to the user.
   */
  readonly output: { readonly neutral: '' | '{}\n'; readonly systemMessage: boolean };
  /** How `hooks install` wires git-ckpt into the agent; none for the neutral protocol. */
  readonly wiring?: Wiring;
  /** Whether the agent will run what is wired; without it, `hooks status` says it cannot tell. */
  readonly trust?: TrustSpec;
  /** The agent's MCP client; none for an agent without one. */
  readonly mcp?: McpSpec;
  /** Opening the conversation again before a prompt; none where git-ckpt cannot. */
  readonly resume?: ResumeSpec;
  /** Reading its transcript for a rewind inside the agent; none where git-ckpt does not follow one. */
  readonly transcript?: TranscriptSpec;
  /**
   * Its row in README's table of supported agents (scripts/agents.mjs writes it): the version its real CLI
   * was tested at, the files it is wired through, what it waits per mutating tool call (the bench's session
   * replay) and its known gaps.
   */
  readonly readme?: { readonly tested: string; readonly wiredThrough: string; readonly waits: string; readonly gaps: string };
}

// The kit: what adapters share, named by shape and never by agent.

/** A JSON value as an object: itself when it is one, else an empty one. */
export function obj(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

/** A JSON value as a non-empty string, or null. */
export function text(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** How long an agent waits for one hook of ours, in seconds (a hook never takes that long: it records and goes). */
export const HOOK_TIMEOUT_S = 30;

/**
 * A file under the home directory (`rel`), or `file` in the folder the agent's own variable names when it is
 * set (`CLAUDE_CONFIG_DIR`, `XDG_CONFIG_HOME` …).
 */
export function userFile(rel: string, override?: { variable: string; file: string }): Place['user'] {
  return (env, home) => {
    const folder = override ? env[override.variable] : undefined;
    return folder ? path.join(path.resolve(folder), override!.file) : path.join(home, rel);
  };
}

/** Pure: a JavaScript regular expression that matches every tool name but these (the read-only ones). */
export function allToolsBut(readOnly: readonly string[]): string {
  return `^(?!(?:${readOnly.join('|')})$)`;
}

/**
 * Claude Code's hooks, which most agents copied: `hooks` in a settings file, event → [{matcher, hooks}],
 * PreToolUse … SessionStart. Post hooks run in the background (`async`): the agent waits only for the pre
 * hook. The next pre, the prompt and the turn's end are synchronous and take a post that has not come yet as
 * that call's (turns.ts), so a post killed at the session's end loses nothing. A failed call's post stays
 * synchronous: its error is recorded on its own checkpoint, before the turn ends. An agent that tells a shell's
 * exit status only in its post (`asyncPost: false`) keeps it synchronous, or a background post would land after
 * the next call took its changes.
 */
export function settingsHooks(o: {
  file: Place;
  sharedProjectFile?: string;
  /** The agent fires PostToolUseFailure for a failed call. */
  failureEvent: boolean;
  toolMatcher: string;
  timeoutUnit: 's' | 'ms';
  asyncPost: boolean;
  skeleton?: Json;
  http?: ConfigWiring['http'];
  /** The prompt's event where the agent renamed it (default `UserPromptSubmit`). */
  promptEvent?: string;
  /** The agent has no SubagentStop. */
  noSubagentEvent?: boolean;
  /** Keys every handler of ours carries besides Claude Code's (an agent's own switches). */
  handlerExtras?: Json;
}): ConfigWiring {
  const timeout = o.timeoutUnit === 'ms' ? HOOK_TIMEOUT_S * 1000 : HOOK_TIMEOUT_S;
  return {
    kind: 'config',
    file: o.file,
    ...(o.sharedProjectFile ? { sharedProjectFile: o.sharedProjectFile } : {}),
    layout: 'nested',
    skeleton: o.skeleton ?? {},
    toolMatcher: o.toolMatcher,
    events: [
      { event: 'PreToolUse', phase: 'pre', tools: true },
      { event: 'PostToolUse', phase: 'post', tools: true },
      ...(o.failureEvent ? [{ event: 'PostToolUseFailure', phase: 'post' as const, tools: true }] : []),
      { event: o.promptEvent ?? 'UserPromptSubmit', phase: 'turn-start' },
      { event: 'Stop', phase: 'turn-end' },
      ...(o.noSubagentEvent ? [] : [{ event: 'SubagentStop', phase: 'subagent-end' as const }]),
      { event: 'SessionStart', phase: 'session-start' },
    ],
    handler: (command, _phase, event) => ({
      type: 'command',
      command,
      timeout,
      ...(o.asyncPost && event === 'PostToolUse' ? { async: true } : {}),
      ...o.handlerExtras,
    }),
    commandKey: 'command',
    ...(o.http ? { http: o.http } : {}),
  };
}

/**
 * Cursor's hooks, which Copilot CLI copied: a versioned file whose `hooks` map each event straight to a list
 * of handlers (no matchers: every tool is hooked), camelCase events of which only the prompt's and the turn's
 * end differ; `commandKey` names where `handler` puts the command.
 */
export function flatHooks(o: {
  file: Place;
  names: { prompt: string; stop: string };
  commandKey: string;
  handler: (command: string) => Json;
}): ConfigWiring {
  return {
    kind: 'config',
    file: o.file,
    layout: 'flat',
    skeleton: { version: 1 },
    events: [
      { event: 'preToolUse', phase: 'pre' },
      { event: 'postToolUse', phase: 'post' },
      { event: 'postToolUseFailure', phase: 'post' },
      { event: o.names.prompt, phase: 'turn-start' },
      { event: o.names.stop, phase: 'turn-end' },
      { event: 'subagentStop', phase: 'subagent-end' },
      { event: 'sessionStart', phase: 'session-start' },
    ],
    handler: o.handler,
    commandKey: o.commandKey,
  };
}

/** The verdict for an agent that loads every plugin in its folders when it starts, with no trust step. */
export function loadedAtStart(title: string): TrustSpec {
  return {
    files: () => ({}),
    verdict: ({ scope }) => ({
      runs: 'yes',
      reason: `${title} loads every plugin in its ${scope === 'project' ? "project's" : "user's"} plugin folder when it starts (a running ${title} picks it up at its next start)`,
    }),
  };
}

/** An MCP server entry as most agents take it: `command` and `args`, nothing else. */
export const plainEntry = (launch: Launch): Json => ({ command: launch.command, args: [...launch.args] });

/** The MCP servers of the plugin bus's agents (OpenCode's, which Kilo shares): `mcp`, the command as one list. */
export function busMcp(projectFile: string, user: Place['user']): McpSpec {
  return {
    file: { project: projectFile, user },
    format: 'json',
    key: 'mcp',
    entry: (launch) => ({ type: 'local', command: [launch.command, ...launch.args], enabled: true }),
  };
}

/** Claude Code's entry (`type: stdio`), which others copied. */
export const stdioEntry = (launch: Launch): Json => ({ type: 'stdio', ...plainEntry(launch) });

/**
 * Pure: the argv that reopens a session with a `--resume=<id>` option, which commander and yargs parsers
 * take whole, whatever follows the `=` (Claude Code 2.1.332 answers `--resume=--dangerously-skip-permissions`
 * with "not a UUID").
 */
export function resumeOption(command: string): (session: string) => string[] {
  return (session) => [command, `--resume=${session}`];
}

/** The step of agents with a `/rewind` command that goes back in the conversation only. */
export const slashRewind = (prompt: string) => `type /rewind and pick ${prompt} (the conversation only: the files are restored)`;

/** The folder and each of its parents, nearest first. */
export function selfAndParents(dir: string): string[] {
  const out: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    out.push(d);
    if (path.dirname(d) === d) return out;
  }
}

/** Pure: the trusted folder that covers `projectRoot` (it or a folder above it), if any. */
export function coveringFolder(projectRoot: string | null, folders: readonly string[]): string | undefined {
  if (!projectRoot) return undefined;
  const root = path.resolve(projectRoot);
  return folders.find((f) => root === path.resolve(f) || root.startsWith(path.resolve(f) + path.sep));
}

/**
 * Pure: whether a `trustedFolders.json` of rules trusts a folder: the longest matching rule wins
 * (TRUST_FOLDER covers the folder and below it, TRUST_PARENT the rule path's parent and below,
 * DO_NOT_TRUST nothing). Gemini CLI 0.61's, which its forks keep.
 */
export function trustedByRules(folder: string, rules: Json, file: string): { trusted: boolean; why: string } {
  const target = path.resolve(folder);
  let best: { length: number; trusted: boolean; why: string } | undefined;
  for (const [rulePath, rule] of Object.entries(rules)) {
    const covered = rule === 'TRUST_PARENT' ? path.dirname(path.resolve(rulePath)) : path.resolve(rulePath);
    if (!(target === covered || target.startsWith(covered.endsWith(path.sep) ? covered : covered + path.sep))) continue;
    const length = path.resolve(rulePath).length;
    if (!best || length > best.length)
      best = { length, trusted: rule === 'TRUST_FOLDER' || rule === 'TRUST_PARENT', why: `${rulePath}: ${String(rule)} in ${file}` };
  }
  return best ?? { trusted: false, why: `no rule in ${file} covers it` };
}

/** Pure: `sha256:<hex>` of a JSON value with its keys sorted at every level (how some agents pin a hook). */
export function sha256OfSortedJson(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Json)[k])]),
          )
        : v;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(sorted(value)))
    .digest('hex')}`;
}

/** Pure: whether a payload is a plugin envelope (an `event` name and what came with it), not a hook's own JSON. */
export function isPluginEnvelope(payload: Json): boolean {
  return typeof payload.event === 'string' && !('hook_event_name' in payload);
}

/**
 * `opencode run "a prompt"` hands the model the arguments joined, each one that
 * holds a space wrapped in double quotes: one pair around the whole prompt is
 * that quoting, not the user's.
 */
function unquote(prompt: string): string {
  const trimmed = prompt.trim();
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : prompt;
}

/** The plugin of the bus OpenCode 1 and its fork Kilo share (hooks/bus-plugin.js), in the agent's plugin folder. */
export function busPlugin(file: Place): PluginWiring {
  return {
    kind: 'plugin',
    file,
    template: 'bus-plugin.js',
    events: [
      { event: 'tool.execute.before', phase: 'pre' },
      { event: 'tool.execute.after', phase: 'post' },
      { event: 'chat.message', phase: 'turn-start' },
      { event: 'session.idle', phase: 'turn-end' },
      { event: 'session.created', phase: 'session-start' },
    ],
  };
}

/**
 * Pure: an envelope of the plugin bus OpenCode 1 and its fork Kilo share (hooks/bus-plugin.js forwards
 * each event as it came) as hook fields; any other payload unchanged (a `normalize` as it is):
 *
 *   event                   phase          fields
 *   chat.message (user)     turn-start     input.sessionID, output.message.id (the turn), output.parts[].text
 *   tool.execute.before     pre            input {tool, sessionID, callID}, output.args
 *   tool.execute.after      post           input {tool, sessionID, callID, args}, output {title, output, metadata}
 *   session.idle            turn-end       sessionID (a subagent's: subagent-end)
 *   session.created         session-start  sessionID, info
 */
export function busEnvelope(envelope: Json): Json {
  if (!isPluginEnvelope(envelope)) return envelope;
  const input = obj(envelope.input);
  const output = obj(envelope.output);
  const event = text(envelope.event) ?? '';
  const own = text(input.sessionID) ?? text(envelope.sessionID) ?? text(obj(output.message).sessionID);
  const parent = text(envelope.parentSessionID);
  const fields: Json = {
    hook_event_name: event,
    // A subagent's calls are its parent session's, made by the subagent.
    session_id: parent ?? own,
    ...(parent && own ? { agent_id: own, agent_type: 'subagent' } : {}),
    cwd: text(envelope.directory),
    timestamp: envelope.time,
  };
  if (event === 'chat.message') {
    const parts = Array.isArray(output.parts) ? output.parts.map(obj) : [];
    const typed = parts.filter((p) => p.type === 'text' && p.synthetic !== true).map((p) => text(p.text) ?? '');
    const prompt = typed.join('\n');
    return { ...fields, prompt_id: text(obj(output.message).id), prompt: prompt === '' ? null : unquote(prompt) };
  }
  if (event === 'tool.execute.before' || event === 'tool.execute.after') {
    const metadata = obj(output.metadata);
    const exit = metadata.exit;
    const failedExit = typeof exit === 'number' && exit !== 0 ? `exit code ${exit}` : null;
    return {
      ...fields,
      tool_name: text(input.tool),
      tool_use_id: text(input.callID),
      tool_input: event === 'tool.execute.before' ? output.args : input.args,
      ...(event === 'tool.execute.after'
        ? { tool_response: text(output.output) ?? text(output.title), ...(failedExit ? { error: failedExit } : {}) }
        : {}),
    };
  }
  return fields;
}
