import { obj, text, type AgentAdapter, type Json } from '../adapter.js';

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
} as const satisfies AgentAdapter;
