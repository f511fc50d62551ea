/**
 * Pure: the events of agents whose hooks are in-process plugins (OpenCode, its
 * fork Kilo Code CLI, and pi), as the plugins in hooks/ forward them, read into
 * the Claude-style fields parseHookPayload reads for every agent. One payload
 * layer: the plugin sends what the agent gave it, and the mapping lives here,
 * tested from the real CLIs' captured events (test/fixtures/).
 *
 *   OpenCode event          phase          fields
 *   chat.message (user)     turn-start     input.sessionID, output.message.id (the turn), output.parts[].text
 *   tool.execute.before     pre            input {tool, sessionID, callID}, output.args
 *   tool.execute.after      post           input {tool, sessionID, callID, args}, output {title, output, metadata}
 *   session.idle            turn-end       sessionID (a subagent's: subagent-end)
 *   session.created         session-start  sessionID, info
 *
 *   pi event                phase          fields (with sessionId, sessionFile and cwd from its ctx)
 *   before_agent_start      turn-start     prompt; source of the `input` before it ("extension": injected)
 *   tool_call               pre            toolCallId, toolName, input
 *   tool_result             post           the same, isError, text (its first text part)
 *   agent_end               turn-end
 *   session_start           session-start  reason
 *
 * Cline 3 runs a hook file per event with its own payload (fromCline).
 */

type Fields = Record<string, unknown>;

function obj(v: unknown): Fields {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Fields) : {};
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
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

/** Pure: whether a payload is a plugin envelope (an `event` name and what came with it), not a hook's own JSON. */
export function isPluginEnvelope(payload: Fields): boolean {
  return typeof payload.event === 'string' && !('hook_event_name' in payload);
}

/** Pure: an OpenCode plugin envelope as Claude-style hook fields. */
export function fromOpencode(envelope: Fields): Fields {
  const input = obj(envelope.input);
  const output = obj(envelope.output);
  const event = text(envelope.event) ?? '';
  const own = text(input.sessionID) ?? text(envelope.sessionID) ?? text(obj(output.message).sessionID);
  const parent = text(envelope.parentSessionID);
  const fields: Fields = {
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

/** Pure: a pi extension envelope as Claude-style hook fields. */
export function fromPi(envelope: Fields): Fields {
  const event = text(envelope.event) ?? '';
  const fields: Fields = {
    hook_event_name: event,
    session_id: text(envelope.sessionId),
    transcript_path: text(envelope.sessionFile),
    cwd: text(envelope.cwd),
    timestamp: envelope.time,
  };
  if (event === 'before_agent_start')
    return { ...fields, prompt: text(envelope.prompt), ...(envelope.source === 'extension' ? { injected: true } : {}) };
  if (event === 'tool_call' || event === 'tool_result') {
    const result = event === 'tool_result' ? text(envelope.text) : null;
    // A shell that exited non-zero ends its text with the status line: that is the error, not the output's first line.
    const status = result ? (/^.*exited with code \d+.*$/m.exec(result)?.[0] ?? null) : null;
    return {
      ...fields,
      tool_name: text(envelope.toolName),
      tool_use_id: text(envelope.toolCallId),
      tool_input: envelope.input,
      ...(event === 'tool_result'
        ? { tool_response: result, ...(envelope.isError === true ? { error: status ?? result ?? 'failed' } : {}) }
        : {}),
    };
  }
  return fields;
}

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
 * `postToolUse.success: false`.
 */
export function fromCline(payload: Fields): Fields {
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
