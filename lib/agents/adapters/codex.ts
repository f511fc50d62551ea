import { settingsHooks, userFile, type AgentAdapter } from '../adapter.js';

/**
 * Pure: the failure of call `callId` as Codex's rollout (JSONL) records it, the exit code its post leaves out;
 * null when the lines do not say.
 */
function failureInRollout(text: string, callId: string): string | null {
  let failure: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes(callId)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // the first line of a tail is usually cut
    }
    const stack: unknown[] = [parsed];
    while (stack.length) {
      const v = stack.pop();
      if (!v || typeof v !== 'object') continue;
      const o = v as Record<string, unknown>;
      if ((o.id === callId || o.call_id === callId) && (typeof o.exit_code === 'number' || o.status === 'failed')) {
        const code = typeof o.exit_code === 'number' ? o.exit_code : null;
        failure = code !== null && code !== 0 ? `exit code ${code}` : o.status === 'failed' ? 'failed' : null;
      }
      stack.push(...Object.values(o));
    }
  }
  return failure;
}

/** OpenAI's Codex CLI: `.codex/hooks.json`. */
export const codex = {
  name: 'codex',
  title: 'Codex CLI',
  payload: { projectDirEnv: [], aliases: { turnKey: ['turn_id'] }, failureInTranscript: failureInRollout },
  output: { neutral: '', systemMessage: true },
  // No PostToolUseFailure (its PostToolUse also fires after a failed shell command), and it hooks only its
  // shell, apply_patch and MCP tools; its matcher is a Rust regex, without look-ahead: all.
  wiring: settingsHooks({
    file: { project: '.codex/hooks.json', user: userFile('.codex/hooks.json') },
    failureEvent: false,
    toolMatcher: '*',
    timeoutUnit: 's',
    asyncPost: true,
  }),
} as const satisfies AgentAdapter;
