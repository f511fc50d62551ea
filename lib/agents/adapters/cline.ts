import path from 'node:path';
import { obj, plainEntry, text, userFile, type AgentAdapter, type Json } from '../adapter.js';

/** Cline's `commands` list (a JSON string in `parameters`) as one command line. */
function clineInput(input: unknown): unknown {
  const fields = obj(input);
  let commands = fields.commands;
  if (typeof commands === 'string') {
    try {
      commands = JSON.parse(commands);
    } catch {
      return input;
    }
  }
  if (Array.isArray(commands) && commands.every((c) => typeof c === 'string')) return { ...fields, command: commands.join('; ') };
  return input;
}

/**
 * Pure: a Cline 3 hook payload as Claude-style fields. Its session is `sessionContext.rootSessionId`
 * (kept across prompts and reloads), its `taskId` changes with each run: the turn. A failed call is
 * `tool_result.error`, an output with `success: false` (a shell that exited non-zero), or
 * `postToolUse.success: false`. Any other payload (without Cline's `hookName`) unchanged.
 */
function hookFilePayload(payload: Json): Json {
  if (typeof payload.hookName !== 'string') return payload;
  const call = obj(payload.tool_call);
  const result = obj(payload.tool_result);
  const pre = obj(payload.preToolUse);
  const post = obj(payload.postToolUse);
  const roots = Array.isArray(payload.workspaceRoots) ? payload.workspaceRoots : [];
  // A tool's output is one {result, error, success} or a list of them (run_commands: one a command).
  const outputs = (Array.isArray(result.output) ? result.output : [result.output]).map(obj);
  const failedOutput = outputs.find((o) => o.success === false);
  const error =
    text(result.error) ??
    text(obj(result.error).message) ??
    (failedOutput ? (text(failedOutput.error) ?? 'failed') : null) ??
    (post.success === false ? (text(post.result) ?? 'failed') : null);
  const parent = text(payload.parent_agent_id);
  return {
    hook_event_name: text(payload.hookName),
    session_id: text(obj(payload.sessionContext).rootSessionId) ?? text(payload.taskId),
    turn_id: text(payload.taskId),
    tool_use_id: text(call.id) ?? text(result.id),
    tool_name: text(call.name) ?? text(result.name) ?? text(pre.toolName) ?? text(post.toolName),
    tool_input: clineInput(call.input ?? result.input ?? pre.parameters ?? post.parameters),
    tool_response: text(result.output) ?? text(outputs[0]?.result) ?? text(post.result),
    ...(error ? { error } : {}),
    ...(parent ? { agent_id: text(payload.agent_id), agent_type: 'subagent' } : {}),
    cwd: text(roots[0]) ?? text(obj(payload.workspaceInfo).rootPath),
    timestamp: payload.timestamp,
  };
}

/** Cline's CLI: one executable per hook event, which must print JSON. */
export const cline = {
  name: 'cline',
  title: 'Cline CLI',
  payload: { projectDirEnv: [], normalize: hookFilePayload },
  output: { neutral: '{}\n', systemMessage: false },
  // A file named after each event in ~/.cline/hooks ($CLINE_DIR/hooks) and .clinerules/hooks, run through bash
  // unless it has a shebang or an extension. PreToolUse waits for the hook; PostToolUse does not hold the turn
  // (3.0.65 started TaskComplete's hook, and answered the prompt, while the post hook still ran); TaskStart and
  // TaskComplete run detached (their checkpoint may land after the first call's).
  wiring: {
    kind: 'hook-files',
    file: { project: '.clinerules/hooks', user: userFile('.cline/hooks', { variable: 'CLINE_DIR', file: 'hooks' }) },
    events: [
      { event: 'PreToolUse', phase: 'pre' },
      { event: 'PostToolUse', phase: 'post' },
      { event: 'TaskStart', phase: 'turn-start' },
      { event: 'TaskResume', phase: 'turn-start' },
      { event: 'TaskComplete', phase: 'turn-end' },
      { event: 'TaskCancel', phase: 'turn-end' },
      { event: 'TaskError', phase: 'turn-end' },
    ],
  },
  trust: {
    files: () => ({}),
    verdict: ({ scope }) => ({
      runs: 'yes',
      reason: `Cline 3 runs every hook file in ${scope === 'project' ? '.clinerules/hooks' : '~/.cline/hooks'} by its event's name, with no setting to turn on`,
    }),
  },
  // It reads MCP servers only from its user settings.
  mcp: {
    file: {
      project: null,
      user: (env, home) => {
        const data = env.CLINE_DATA_DIR ?? path.join(env.CLINE_DIR ?? path.join(home, '.cline'), 'data');
        return env.CLINE_MCP_SETTINGS_PATH ?? path.join(data, 'settings', 'cline_mcp_settings.json');
      },
    },
    userOnly: 'Cline keeps MCP servers only in its user settings: use --scope user',
    format: 'json',
    key: 'mcpServers',
    entry: plainEntry,
  },
  readme: {
    tested: '3.0.65',
    wiredThrough: 'a hook file per event in `.clinerules/hooks/`',
    waits: '149 ms',
    gaps: 'no hook gets the prompt: turns numbered, not titled; a turn is a Cline task',
  },
} as const satisfies AgentAdapter;
