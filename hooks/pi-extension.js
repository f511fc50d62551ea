// pi's side (its extension API: a default export that subscribes to pi's events); hooks/plugin-transport.js comes before it.

export default function gitCkpt(pi) {
  const sendToEntry = entrySender((message) => console.error(message));
  /** Where the prompt being answered came from: pi's `input` event says (an extension's message is no user turn). */
  let lastInputSource = null;
  const session = (ctx) => {
    try {
      return { sessionId: ctx?.sessionManager?.getSessionId?.() ?? null, sessionFile: ctx?.sessionManager?.getSessionFile?.() ?? null };
    } catch {
      return { sessionId: null, sessionFile: null };
    }
  };
  const send = (phase, event, body, ctx, wait) => {
    const cwd = ctx?.cwd ?? process.cwd();
    return sendToEntry(phase, { event, cwd, ...session(ctx), ...body }, cwd, wait);
  };
  const firstText = (content) => {
    const part = Array.isArray(content) ? content.find((p) => p?.type === 'text') : null;
    return typeof part?.text === 'string' ? part.text.slice(0, TEXT_MAX) : null;
  };

  pi.on('session_start', async (event, ctx) => {
    await send('session-start', 'session_start', { reason: event?.reason ?? null }, ctx, true);
  });
  pi.on('input', async (event) => {
    lastInputSource = event?.source ?? null;
  });
  pi.on('before_agent_start', async (event, ctx) => {
    await send('turn-start', 'before_agent_start', { prompt: event?.prompt ?? null, source: lastInputSource }, ctx, true);
    lastInputSource = null;
  });
  pi.on('tool_call', async (event, ctx) => {
    await send('pre', 'tool_call', { toolCallId: event?.toolCallId, toolName: event?.toolName, input: event?.input }, ctx, true);
  });
  pi.on('tool_result', async (event, ctx) => {
    const body = { toolCallId: event?.toolCallId, toolName: event?.toolName, input: event?.input, isError: event?.isError === true };
    // A failed call's post is awaited, as Claude Code's PostToolUseFailure is: its error lands on its own checkpoint.
    await send('post', 'tool_result', { ...body, text: firstText(event?.content) }, ctx, body.isError);
  });
  pi.on('agent_end', async (_event, ctx) => {
    await send('turn-end', 'agent_end', {}, ctx, true);
  });
}
