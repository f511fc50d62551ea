// OpenCode's and Kilo Code CLI's side (their v1 plugin API); hooks/plugin-transport.js comes before it.

export const GitCkpt = async (ctx) => {
  const directory = ctx?.directory ?? process.cwd();
  /** Subagent sessions (the task tool) by id, with their parent: their calls belong to the parent's turn. */
  const parents = new Map();
  const log = (message) => ctx?.client?.app?.log?.({ body: { service: 'git-ckpt', level: 'warn', message } })?.catch?.(() => {});
  const sendToEntry = entrySender(log);
  const send = (phase, event, body, wait) => {
    const sessionID = body.sessionID ?? body.input?.sessionID ?? null;
    const payload = { event, directory, worktree: ctx?.worktree ?? null, parentSessionID: parents.get(sessionID) ?? null, ...body };
    return sendToEntry(phase, payload, directory, wait);
  };
  const clip = (output) =>
    output && typeof output === 'object' && typeof output.output === 'string'
      ? { ...output, output: output.output.slice(0, TEXT_MAX) }
      : output;

  return {
    'chat.message': async (input, output) => {
      const message = output?.message;
      if (message && message.role !== 'user') return;
      const parts = Array.isArray(output?.parts)
        ? output.parts.filter((p) => p?.type === 'text').map((p) => ({ type: 'text', text: p.text, synthetic: p.synthetic ?? false }))
        : [];
      const kept = message && { id: message.id, role: message.role, sessionID: message.sessionID };
      await send('turn-start', 'chat.message', { input, output: { message: kept, parts } }, true);
    },
    'tool.execute.before': async (input, output) => {
      await send('pre', 'tool.execute.before', { input, output }, true);
    },
    'tool.execute.after': async (input, output) => {
      // A failed shell call's post is awaited, as Claude Code's PostToolUseFailure is: its error lands on its own checkpoint.
      const exit = output?.metadata?.exit;
      await send('post', 'tool.execute.after', { input, output: clip(output) }, typeof exit === 'number' && exit !== 0);
    },
    event: async ({ event }) => {
      const type = event?.type;
      const properties = event?.properties ?? {};
      if (type === 'session.created') {
        const info = properties.info ?? {};
        if (info.parentID) {
          parents.set(info.id, info.parentID);
          return;
        }
        const sessionID = properties.sessionID ?? info.id;
        await send('session-start', type, { sessionID, info: { id: info.id, directory: info.directory, version: info.version } }, true);
      } else if (type === 'session.idle') {
        const sessionID = properties.sessionID;
        await send(parents.has(sessionID) ? 'subagent-end' : 'turn-end', type, { sessionID }, true);
      }
    },
  };
};
