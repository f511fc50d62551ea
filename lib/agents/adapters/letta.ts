import path from 'node:path';
import { obj, settingsHooks, text, userFile, type AgentAdapter, type Json, type TrustSpec } from '../adapter.js';

/**
 * Pure: a Letta Code hook payload as the common fields; any other payload unchanged. Its keys are its own
 * (`event_type`, `working_directory`, `tool_call_id`, `tool_result {status, output}`), and its session is the
 * agent (`agent_id`, which lives across conversations: tool events carry no conversation id). A post comes for
 * every call, a failed one's with `status: "error"`.
 */
function hookPayload(payload: Json): Json {
  if (typeof payload.event_type !== 'string') return payload;
  const { event_type, working_directory, agent_id, tool_call_id, tool_result, error_message, ...rest } = payload;
  const result = obj(tool_result);
  const failed = result.status === 'error' || text(error_message) !== null;
  return {
    ...rest,
    hook_event_name: event_type,
    cwd: text(working_directory),
    session_id: text(agent_id),
    tool_use_id: text(tool_call_id),
    ...(tool_result === undefined ? {} : { tool_response: text(result.output) ?? text(tool_result) }),
    ...(failed ? { error: text(error_message) ?? text(result.output) ?? 'failed' } : {}),
  };
}

/**
 * No trust gate on project hooks. `hooks.disabled`: the user's `false` forces them on, the user's `true` off,
 * and otherwise a project's or local `true` turns them off.
 */
const trust: TrustSpec = {
  files: ({ projectRoot, home }) => ({
    user: { file: path.join(home, '.letta', 'settings.json') },
    ...(projectRoot
      ? {
          project: { file: path.join(projectRoot, '.letta', 'settings.json') },
          local: { file: path.join(projectRoot, '.letta', 'settings.local.json') },
        }
      : {}),
  }),
  verdict: ({ config, path: where }) => {
    const disabled = (name: string) => obj(config[name]?.hooks).disabled;
    if (disabled('user') === false)
      return { runs: 'yes', reason: `hooks.disabled is false in ${where.user}, which turns them on everywhere` };
    const off = ['user', 'project', 'local'].find((name) => disabled(name) === true);
    if (off)
      return { runs: 'no', reason: `hooks.disabled is true in ${where[off]}`, step: `remove "disabled": true from hooks in ${where[off]}` };
    return { runs: 'yes', reason: 'Letta Code runs project and user hooks with no trust step' };
  },
};

/**
 * Letta Code: Claude Code's settings layout in `.letta/`, with a payload of its own (payloads from its source,
 * 0.32.18: docs/research/letta-code.md). Headless `letta -p` fires only the tool events.
 */
export const letta = {
  name: 'letta',
  title: 'Letta Code',
  payload: { projectDirEnv: ['LETTA_WORKING_DIR'], sessionEnv: ['LETTA_AGENT_ID'], normalize: hookPayload },
  output: { neutral: '', systemMessage: false },
  // Timeouts in milliseconds; `quiet`, or it prints each hook's command and output in the agent's own output.
  // Its matcher is anchored (`^(?:m)$`): all tools. A failed call's post says so itself: no failure event.
  wiring: settingsHooks({
    file: { project: '.letta/settings.local.json', user: userFile('.letta/settings.json') },
    sharedProjectFile: '.letta/settings.json',
    failureEvent: false,
    toolMatcher: '*',
    timeoutUnit: 'ms',
    asyncPost: false,
    handlerExtras: { quiet: true },
  }),
  trust,
  readme: {
    tested: 'payloads from its source, 0.32.18',
    wiredThrough: '`.letta/settings.local.json` command hooks',
    waits: '—',
    gaps: 'not run here yet (its local backend takes an OpenAI-compatible server); `-p` fires no prompt or stop hooks; MCP is per Letta agent, not wired',
  },
} as const satisfies AgentAdapter;
