import { isPluginEnvelope, text, userFile, type AgentAdapter, type Json } from '../adapter.js';

/**
 * Pure: an envelope hooks/pi-extension.js forwards as hook fields (with sessionId, sessionFile and cwd from its ctx);
 * any other payload unchanged:
 *
 *   event                   phase          fields
 *   before_agent_start      turn-start     prompt; source of the `input` before it ("extension": injected)
 *   tool_call               pre            toolCallId, toolName, input
 *   tool_result             post           the same, isError, text (its first text part)
 *   agent_end               turn-end
 *   session_start           session-start  reason
 */
function extensionEvent(envelope: Json): Json {
  if (!isPluginEnvelope(envelope)) return envelope;
  const event = text(envelope.event) ?? '';
  const fields: Json = {
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

/** pi, the coding agent: an extension forwards its events (hooks/pi-extension.js). */
export const pi = {
  name: 'pi',
  title: 'pi',
  payload: { projectDirEnv: [], normalize: extensionEvent },
  output: { neutral: '', systemMessage: false },
  // Extensions load from <agent dir>/extensions (PI_CODING_AGENT_DIR, else ~/.pi/agent) and .pi/extensions.
  wiring: {
    kind: 'plugin',
    file: {
      project: '.pi/extensions/git-ckpt.js',
      user: userFile('.pi/agent/extensions/git-ckpt.js', { variable: 'PI_CODING_AGENT_DIR', file: 'extensions/git-ckpt.js' }),
    },
    template: 'pi-extension.js',
    events: [
      { event: 'tool_call', phase: 'pre' },
      { event: 'tool_result', phase: 'post' },
      { event: 'before_agent_start', phase: 'turn-start' },
      { event: 'agent_end', phase: 'turn-end' },
      { event: 'session_start', phase: 'session-start' },
    ],
  },
  trust: {
    files: () => ({}),
    verdict: ({ scope }) => ({
      runs: 'yes',
      reason: `pi loads every extension in ${scope === 'project' ? '.pi/extensions' : 'its agent folder’s extensions/'} when it starts, with no trust step (a running pi picks it up at its next start or /reload)`,
    }),
  },
  readme: {
    tested: '0.74.2',
    wiredThrough: 'an extension in `.pi/extensions/`',
    waits: '100 ms',
    gaps: 'no subagents to attribute',
  },
} as const satisfies AgentAdapter;
