/**
 * Pure parsing of agent hook payloads. Each agent names the same facts
 * differently (see ../shared/reference/agent-hooks.md):
 *
 *   agent    session                 turn            tool call     tool / input
 *   claude   session_id              prompt_id       tool_use_id   tool_name / tool_input
 *   codex    session_id              turn_id         tool_use_id   tool_name / tool_input
 *   gemini   session_id              —               —             tool_name / tool_input
 *   cursor   conversation_id         generation_id   tool_use_id   tool_name / tool_input
 *   copilot  sessionId | session_id  —               —             toolName / toolArgs (or tool_name / tool_input)
 *   generic  any of the above, plus Cline's taskId and Windsurf's trajectory_id / execution_id
 *
 * Cursor and Copilot also run hooks configured for Claude, with their own
 * payload shape, so every parser reads every spelling. Nothing here throws:
 * a payload that cannot be read yields an unattributed event with the reason.
 */

export const AGENTS = ['claude', 'codex', 'gemini', 'cursor', 'copilot', 'generic'] as const;
export type Agent = (typeof AGENTS)[number];
export const PHASES = ['pre', 'post', 'turn-start', 'turn-end', 'session-start'] as const;
export type Phase = (typeof PHASES)[number];

export interface HookEvent {
  agent: Agent;
  phase: Phase;
  session: string | null;
  /** The agent's own turn id (prompt_id, turn_id, generation_id), when it gives one. */
  turnKey: string | null;
  /** The agent's tool-call id (tool_use_id), when it gives one. */
  callId: string | null;
  tool: string | null;
  /** One line about the tool input: the file path, or the command cut to 200 characters. */
  input: string | null;
  /** Where the agent runs: its project directory first, then the payload's cwd. */
  projectDir: string | null;
  cwd: string | null;
  /** Why the payload could not be used fully (empty, malformed, unknown agent …). */
  problems: string[];
}

const INPUT_MAX = 200;

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

/** Pure: one line, at most `max` characters. */
export function oneLine(text: string, max = INPUT_MAX): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

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

/**
 * Pure: the one-line summary of a tool input: a file path if there is one,
 * else the command, else a pattern or URL, else the first string argument.
 */
export function summarizeInput(input: unknown): string | null {
  const obj = asObject(input);
  if (!obj) return null;
  const path = pick(obj, 'file_path', 'filePath', 'path', 'notebook_path', 'absolute_path', 'target_file');
  if (path) return oneLine(path);
  const command = pick(obj, 'command', 'cmd', 'commandLine', 'command_line');
  if (command) return oneLine(command);
  const other = pick(obj, 'pattern', 'url', 'query', 'description', 'prompt');
  if (other) return oneLine(other);
  for (const v of Object.values(obj)) {
    const s = str(v);
    if (s) return oneLine(s);
  }
  return null;
}

export function isAgent(v: string): v is Agent {
  return (AGENTS as readonly string[]).includes(v);
}

export function isPhase(v: string): v is Phase {
  return (PHASES as readonly string[]).includes(v);
}

/**
 * Pure: read a payload. `agentArg` and `phaseArg` come from the hook's command
 * line; an unknown agent is read as `generic` (every spelling), an unknown
 * phase as `post` (a checkpoint is the safe default), both with a problem noted.
 */
export function parseHookPayload(agentArg: string, phaseArg: string, text: string, env: Record<string, string | undefined> = {}): HookEvent {
  const problems: string[] = [];
  const agent: Agent = isAgent(agentArg) ? agentArg : 'generic';
  if (!isAgent(agentArg)) problems.push(`unknown agent ${JSON.stringify(agentArg).slice(0, 40)}, read as generic`);
  const phase: Phase = isPhase(phaseArg) ? phaseArg : 'post';
  if (!isPhase(phaseArg)) problems.push(`unknown phase ${JSON.stringify(phaseArg).slice(0, 40)}, taken as post`);

  let payload: Record<string, unknown> = {};
  if (text.trim() === '') problems.push('empty payload');
  else {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
      else problems.push('payload is not a JSON object');
    } catch {
      problems.push('payload is not valid JSON');
    }
  }

  const session = pick(payload, 'session_id', 'sessionId', 'conversation_id', 'conversationId', 'taskId', 'trajectory_id', 'thread_id') ?? str(env.CLAUDE_CODE_SESSION_ID ?? env.GEMINI_SESSION_ID);
  const turnKey = pick(payload, 'prompt_id', 'turn_id', 'generation_id', 'turnId', 'generationId', 'execution_id');
  const callId = pick(payload, 'tool_use_id', 'toolUseId', 'tool_call_id', 'toolCallId');
  const tool = pick(payload, 'tool_name', 'toolName');
  const inputSource = payload.tool_input ?? payload.toolArgs ?? payload.tool_args ?? payload.parameters;
  const input = summarizeInput(inputSource);
  const roots = Array.isArray(payload.workspace_roots) ? payload.workspace_roots : Array.isArray(payload.workspaceRoots) ? payload.workspaceRoots : [];
  const projectDir =
    str(agent === 'claude' ? env.CLAUDE_PROJECT_DIR : undefined) ??
    str(agent === 'gemini' ? env.GEMINI_PROJECT_DIR : undefined) ??
    str(agent === 'cursor' ? env.CURSOR_PROJECT_DIR : undefined) ??
    str(roots[0]) ??
    null;
  const cwd = pick(payload, 'cwd', 'workspacePath');
  return { agent, phase, session, turnKey, callId, tool, input, projectDir, cwd, problems };
}

/** Pure: what the hook must print on stdout so that the agent proceeds untouched. */
export function neutralOutput(agent: string): string {
  // Gemini parses stderr when stdout is empty, and Cursor reads stdout as JSON: `{}` decides nothing.
  return agent === 'gemini' || agent === 'cursor' ? '{}\n' : '';
}

/** Per-session counters kept in the store, for agents that give no turn id or tool-call id. */
export interface SessionState {
  /** The current turn number (1-based); 0 before the first turn. */
  turn: number;
  /** Agent turn ids already numbered. */
  turnKeys: Record<string, number>;
  /** Set by turn-end: the next tool call without a turn id opens a new turn. */
  ended: boolean;
  /** Tool calls so far in the current turn. */
  step: number;
  /** Tool-call ids already numbered (pre and post of one call share a step). */
  calls: Record<string, number>;
  /** A pre without an id is waiting for its post (agents without tool-call ids). */
  preOpen: boolean;
}

export function emptySessionState(): SessionState {
  return { turn: 0, turnKeys: {}, ended: false, step: 0, calls: {}, preOpen: false };
}

const KEPT_KEYS = 200;

function trim(map: Record<string, number>): Record<string, number> {
  const keys = Object.keys(map);
  if (keys.length <= KEPT_KEYS) return map;
  return Object.fromEntries(keys.slice(-KEPT_KEYS).map((k) => [k, map[k]!]));
}

/**
 * Pure: number an event's turn and step, and return the next state.
 * - An agent turn id is numbered once; a new one opens a new turn.
 * - Without turn ids, turn-start opens a turn, and so does the first tool call after a turn-end.
 * - pre and post of one call share a step (by tool-call id; without ids, post reuses the last pre's step).
 */
export function numberEvent(state: SessionState, event: Pick<HookEvent, 'phase' | 'turnKey' | 'callId'>): { turn: number; step: number | null; state: SessionState } {
  const next: SessionState = { ...state, turnKeys: { ...state.turnKeys }, calls: { ...state.calls } };
  const openTurn = () => {
    next.turn += 1;
    next.step = 0;
    next.calls = {};
    next.ended = false;
    next.preOpen = false;
  };
  if (event.turnKey !== null) {
    const known = next.turnKeys[event.turnKey];
    if (known === undefined) {
      openTurn();
      next.turnKeys[event.turnKey] = next.turn;
    } else if (known !== next.turn) {
      // An event of an earlier turn arriving late: attribute it there, leave the counters alone.
      return { turn: known, step: null, state };
    }
  } else if (event.phase === 'turn-start' || next.turn === 0 || (next.ended && (event.phase === 'pre' || event.phase === 'post'))) {
    if (event.phase !== 'session-start') openTurn();
  }
  if (event.phase === 'turn-end') next.ended = true;
  let step: number | null = null;
  if (event.phase === 'pre' || event.phase === 'post') {
    if (event.callId !== null && next.calls[event.callId] !== undefined) step = next.calls[event.callId]!;
    else if (event.callId === null && event.phase === 'post' && next.preOpen) step = next.step;
    else {
      next.step += 1;
      step = next.step;
      if (event.callId !== null) next.calls[event.callId] = step;
    }
    next.preOpen = event.callId === null && event.phase === 'pre';
  }
  next.turnKeys = trim(next.turnKeys);
  next.calls = trim(next.calls);
  return { turn: next.turn, step, state: next };
}

/** Pure: the checkpoint kind for a phase. */
export function kindForPhase(phase: Phase): 'pre' | 'post' | 'turn' {
  return phase === 'pre' ? 'pre' : phase === 'post' ? 'post' : 'turn';
}

/** Pure: the checkpoint message: who did what, in one line. */
export function hookMessage(e: HookEvent): string {
  const what = e.tool ? `${e.tool}${e.input ? `: ${e.input}` : ''}` : e.phase;
  return oneLine(`${e.agent} ${e.phase === 'pre' || e.phase === 'post' ? `${e.phase} ` : ''}${what}`, 300);
}
