/**
 * What git-ckpt knows of one agent, held in one pure file per agent
 * (`adapters/<name>.ts`) and read by agent-neutral engines through
 * `registry.ts`, never by an agent's name. So far it holds the variables a
 * hook's environment carries, what a hook prints and the payload's quirks;
 * wiring, trust, MCP, resume and transcripts join it as their engines learn
 * to read adapters (docs/research/adapters-plan.md, issue 34).
 */

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

/**
 * Pure: an envelope of the plugin bus OpenCode 1 and its fork Kilo share (hooks/opencode-plugin.js forwards
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
