/**
 * Pure parsing of agent hook payloads, the event engine every agent's hooks
 * reach. Most agents copy Claude Code's payload (`session_id`, `prompt_id`,
 * `tool_use_id`, `tool_name`, `tool_input` …); each field is read from that
 * canonical key or its camelCase, then from the spellings the adapters declare
 * as aliases (Cursor's `conversation_id`, Codex's `turn_id` …). An agent with
 * a shape of its own (a plugin's envelope, Cline's hook files) is mapped to
 * these fields first by its adapter's `normalize`.
 *
 * Agents that run others' hooks send their own shape through that wiring, so
 * every payload is read with every alias. Nothing here throws: a payload that
 * cannot be read yields an unattributed event with the reason.
 */

import { oneLine } from '../model/text.js';
import { redact } from '../model/redact.js';
import { PHASES, type Phase } from '../model/phases.js';
import type { AgentEnv, PayloadField } from './adapter.js';
import {
  adapterOf,
  EXIT_CODE_TEXTS,
  isAgentName,
  payloadAliases,
  pickAgentEnv,
  projectDirOf,
  runningAgent,
  sessionFromEnv,
  type AgentName,
} from './registry.js';

export interface HookEvent {
  /** The agent really running: Copilot and Cursor also run Claude's hooks, and say so in the environment. */
  agent: AgentName;
  /** The agent whose configuration delivered the event (the hook's command line). */
  via: AgentName;
  /** The running agent also runs hooks wired for another, so this event may arrive twice (numbering counts it once). */
  crossLoaded: boolean;
  phase: Phase;
  session: string | null;
  /** The agent's own turn id (prompt_id, turn_id, generation_id), when it gives one. */
  turnKey: string | null;
  /** The agent's tool-call id (tool_use_id), when it gives one. */
  callId: string | null;
  tool: string | null;
  /** One line about the tool input, never file content: the file path, a patch's paths, the redacted command. */
  input: string | null;
  /** A tool call that failed (PostToolUseFailure and the like), with the first line of its error, redacted. */
  failed: boolean;
  error: string | null;
  /** The file a file tool writes (Write, Edit, create …), as the payload names it. */
  targetPath: string | null;
  /** The first line of a tool's text result (redacted), for an error line when the agent reports the failure elsewhere. */
  resultLine: string | null;
  /** The subagent that made the call, when a subagent did. */
  subagent: { id: string; type: string | null } | null;
  /** The agent's transcript of the session, when the payload names it. */
  transcript: string | null;
  /** The prompt of a turn-start, as the agent sent it (not kept: see promptTitle). */
  prompt: string | null;
  /** A prompt the agent injected itself (a background task's completion), not one a person typed. */
  injected: boolean;
  /** A session start that says the session is a fork of another (Claude's SessionStart source "fork"). */
  forkStart: boolean;
  /** The payload's own timestamp in ms: the same event delivered through two configurations shares it. */
  eventTime: number | null;
  /** The agent's project directory, from its environment (set by the agent, not by the payload). */
  projectDir: string | null;
  /** Directories the payload names: its first workspace root (Cursor) and its cwd. */
  workspaceRoot: string | null;
  cwd: string | null;
  /** Why the payload could not be used fully (empty, malformed, unknown agent …). */
  problems: string[];
}

const INPUT_MAX = 200;
const ERROR_MAX = 200;
const PROMPT_TITLE_MAX = 100;

function str(v: unknown): string | null {
  if (typeof v === 'string' && v.trim() !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

function pick(obj: Record<string, unknown>, ...keys: string[]): string | null {
  for (const k of keys) {
    const v = str(obj[k]);
    if (v !== null) return v;
  }
  return null;
}

/** Each field's canonical keys (Claude Code's spellings, which most agents copy); each one's camelCase is read too. */
const CANONICAL: Record<PayloadField, readonly string[]> = {
  session: ['session_id'],
  turnKey: ['prompt_id'],
  callId: ['tool_use_id'],
  tool: ['tool_name'],
  input: ['tool_input'],
  cwd: ['cwd'],
  roots: [],
  eventName: ['hook_event_name'],
  error: ['error', 'error_message'],
  prompt: ['prompt'],
  transcript: ['transcript_path'],
  subagentId: ['agent_id'],
  subagentType: ['agent_type'],
};

const camelCase = (key: string) => key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** The keys a field is read from, first found wins: the canonical ones, then every adapter's aliases. */
const KEYS = {} as Record<PayloadField, readonly string[]>;
for (const [name, keys] of Object.entries(CANONICAL) as [PayloadField, readonly string[]][])
  KEYS[name] = [...new Set([...keys.flatMap((k) => [k, camelCase(k)]), ...payloadAliases(name)])];

const field = (payload: Record<string, unknown>, name: PayloadField) => pick(payload, ...KEYS[name]);

/** Tool arguments may come as an object or as a JSON string (Copilot's toolArgs, Cline's parameters). */
function asObject(v: unknown): Record<string, unknown> | null {
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v === 'string') {
    try {
      const parsed: unknown = JSON.parse(v);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      return { command: v };
    }
  }
  return null;
}

/** Keys whose value is a file path. */
const PATH_KEYS = ['file_path', 'filePath', 'path', 'notebook_path', 'absolute_path', 'target_file'];
/** Keys whose value is a command line. */
const COMMAND_KEYS = ['command', 'cmd', 'commandLine', 'command_line'];
/** Keys that describe a call without carrying file content. */
const DESCRIPTION_KEYS = ['pattern', 'url', 'query', 'description', 'prompt', 'instruction'];

/** `*** Begin Patch` (Codex apply_patch): its paths with their action, never its content. */
const PATCH_HEADER = /^\*\*\* (Add|Update|Delete) File: (.+)$/gm;
const PATCH_MOVE = /^\*\*\* Move to: (.+)$/gm;

/** Pure: `A .env, M src/app.ts` for a patch, or null when the text is not one. */
function summarizePatch(text: string): string | null {
  if (!/^\s*\*\*\* Begin Patch/.test(text)) return null;
  const letters: Record<string, string> = { Add: 'A', Update: 'M', Delete: 'D' };
  const items = [...text.matchAll(PATCH_HEADER)].map((m) => `${letters[m[1]!]} ${m[2]!.trim()}`);
  items.push(...[...text.matchAll(PATCH_MOVE)].map((m) => `R ${m[1]!.trim()}`));
  return items.length ? items.join(', ') : 'patch';
}

/**
 * Pure: the one-line summary of a tool input, which never holds file content:
 * a file path if there is one, else a patch's paths with their action, else the
 * command, redacted, else a description or pattern, redacted; for anything else
 * only the argument names.
 * @public (tests use it)
 */
export function summarizeInput(input: unknown): string | null {
  const obj = asObject(input);
  if (!obj) return null;
  const path = pick(obj, ...PATH_KEYS);
  if (path) return oneLine(path, INPUT_MAX);
  const command = pick(obj, ...COMMAND_KEYS, 'patch', 'input');
  if (command) return summarizePatch(command) ?? oneLine(redact(command), INPUT_MAX);
  const other = pick(obj, ...DESCRIPTION_KEYS);
  if (other) return oneLine(redact(other), INPUT_MAX);
  const keys = Object.keys(obj);
  return keys.length ? oneLine(`(${keys.join(', ')})`, INPUT_MAX) : null;
}

/** Pure: a turn's title from its prompt: the first line that has text, redacted, at most 100 characters. */
export function promptTitle(prompt: string): string | null {
  const first = prompt.split(/\r?\n/).find((l) => l.trim() !== '');
  return first ? oneLine(redact(first), PROMPT_TITLE_MAX) : null;
}

/**
 * Pure: a prompt the agent submitted itself. Claude Code sends a background
 * agent's or command's completion as a UserPromptSubmit whose prompt is one
 * `<task-notification>` element; the same shape with any `*-notification` or
 * `system-reminder` tag is read the same way. Other agents inject none that
 * reach their prompt hook (hooks/README.md).
 * @public (tests use it)
 */
export function isInjectedPrompt(prompt: string | null): boolean {
  if (prompt === null) return false;
  return /^\s*<([a-z][a-z0-9]*-notification|system-reminder)>/i.test(prompt);
}

function firstLine(text: string | null): string | null {
  if (text === null) return null;
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '');
  return line ? oneLine(redact(line), ERROR_MAX) : null;
}

/**
 * Pure: a shell call that exited non-zero, where the agent reports it only in
 * the result text (Copilot CLI fires postToolUse with `<shellId: 1 completed
 * with exit code 3>`; Claude Code sends PostToolUseFailure instead).
 */
function shellExitError(payload: Record<string, unknown>): string | null {
  const field = (o: unknown, ...keys: string[]) => (o && typeof o === 'object' ? pick(o as Record<string, unknown>, ...keys) : null);
  // Copilot CLI: `<shellId: 1 completed with exit code 3>`; Gemini CLI: an `Exit Code: 3` line, or `Command exited with code: 3`;
  // Droid: its response text ends `[Process exited with code 3]`.
  const texts = [
    field(payload.toolResult ?? payload.tool_result, 'textResultForLlm', 'text_result_for_llm'),
    field(payload.tool_response, 'llmContent'),
    field(payload.tool_response, 'returnDisplay'),
    str(payload.tool_response),
  ];
  for (const text of texts) {
    if (!text) continue;
    const code = EXIT_CODE_TEXTS.map((pattern) => pattern.exec(text)?.[1]).find((c) => c !== undefined);
    if (code !== undefined && code !== '0') return `exit code ${code}`;
  }
  return null;
}

function timestampMs(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v !== '') {
    const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

function isPhase(v: string): v is Phase {
  return (PHASES as readonly string[]).includes(v);
}

/**
 * Pure: read a payload. `agentArg` and `phaseArg` come from the hook's command
 * line; an unknown agent is read as `generic` (every spelling), an unknown
 * phase as `post` (a checkpoint is the safe default), both with a problem noted.
 */
export function parseHookPayload(agentArg: string, phaseArg: string, text: string, environment: AgentEnv = {}): HookEvent {
  const env = pickAgentEnv(environment);
  const problems: string[] = [];
  // A name no adapter has is read as the neutral protocol's (every spelling).
  const via = adapterOf(agentArg).name;
  const agent = runningAgent(via, env);
  if (!isAgentName(agentArg)) problems.push(`unknown agent ${JSON.stringify(String(agentArg)).slice(0, 40)}, read as generic`);
  const phase: Phase = isPhase(phaseArg) ? phaseArg : 'post';
  if (!isPhase(phaseArg)) problems.push(`unknown phase ${JSON.stringify(String(phaseArg)).slice(0, 40)}, taken as post`);

  let payload: Record<string, unknown> = {};
  if (text.trim() === '') problems.push('empty payload');
  else {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
      else problems.push('payload is not a JSON object');
      // A payload of the agent's own shape (a plugin's envelope, a hook file's JSON) is read by its adapter first.
      payload = adapterOf(via).payload.normalize?.(payload) ?? payload;
    } catch {
      problems.push('payload is not valid JSON');
    }
  }

  const session = field(payload, 'session') ?? sessionFromEnv(env);
  const turnKey = field(payload, 'turnKey');
  const callId = field(payload, 'callId');
  const tool = field(payload, 'tool');
  const inputSource = KEYS.input.map((k) => payload[k]).find((v) => v !== undefined && v !== null);
  const input = summarizeInput(inputSource);
  const inputObject = asObject(inputSource);
  const targetPath = inputObject && !pick(inputObject, ...COMMAND_KEYS) ? pick(inputObject, ...PATH_KEYS) : null;
  const roots = KEYS.roots.map((k) => payload[k]).find(Array.isArray) ?? [];
  const projectDir = projectDirOf(agent, env);
  const cwd = field(payload, 'cwd');
  const eventName = field(payload, 'eventName') ?? '';
  const response =
    payload.tool_response && typeof payload.tool_response === 'object' ? (payload.tool_response as Record<string, unknown>) : {};
  // Gemini's tool_response.error is an object {type, message}.
  const responseError =
    str(response.error) ??
    (response.error && typeof response.error === 'object' ? pick(response.error as Record<string, unknown>, 'message', 'type') : null);
  const errorText = field(payload, 'error') ?? (phase === 'post' ? (responseError ?? shellExitError(payload)) : null);
  const failed = phase === 'post' && (/failure$/i.test(eventName) || errorText !== null);
  const agentId = field(payload, 'subagentId');
  const prompt = phase === 'turn-start' ? field(payload, 'prompt') : null;
  return {
    agent,
    via,
    crossLoaded: adapterOf(agent).payload.runsOthersHooks === true || agent !== via,
    phase,
    session,
    turnKey,
    callId,
    tool,
    input,
    failed,
    error: failed ? (firstLine(errorText) ?? 'failed') : null,
    targetPath,
    resultLine: phase === 'post' ? firstLine(str(payload.tool_response) ?? str(payload.tool_output)) : null,
    subagent: agentId ? { id: agentId, type: field(payload, 'subagentType') } : null,
    transcript: field(payload, 'transcript'),
    prompt,
    // A subagent's prompt (OpenCode's task tool starts a child session with one) is not the user's turn.
    // pi says so of a message an extension sent (adapters/pi.ts); Qwen Code 0.15 sends UserPromptSubmit
    // without a prompt when it hands tool results back to the model: that continues the user's turn.
    injected:
      isInjectedPrompt(prompt) ||
      (phase === 'turn-start' &&
        (agentId !== null || payload.injected === true || (adapterOf(via).payload.promptlessStartContinues === true && prompt === null))),
    forkStart: phase === 'session-start' && payload.source === 'fork',
    eventTime: timestampMs(payload.timestamp),
    projectDir,
    workspaceRoot: str(roots[0]),
    cwd,
    problems,
  };
}

/** Pure: the checkpoint kind for a phase. */
export function kindForPhase(phase: Phase): 'pre' | 'post' | 'turn' {
  // subagent-end, like the turn's own end, catches what the calls' post hooks did not.
  return phase === 'pre' ? 'pre' : phase === 'post' ? 'post' : 'turn';
}

/** Pure: the checkpoint message: who did what, in one line. */
export function hookMessage(e: HookEvent): string {
  const what = e.tool ? `${e.tool}${e.input ? `: ${e.input}` : ''}` : e.phase;
  return oneLine(`${e.agent} ${e.phase === 'pre' || e.phase === 'post' ? `${e.phase} ` : ''}${what}`, 300);
}
