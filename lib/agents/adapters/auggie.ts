import { allToolsBut, plainEntry, settingsHooks, userFile, type AgentAdapter } from '../adapter.js';

/**
 * Augment's Auggie CLI: Claude Code's settings hooks in `.augment/`, with `PromptSubmit` for the prompt, no
 * failure or subagent event, timeouts in milliseconds, and no call ids (payloads from its source, 0.36.0:
 * docs/research/auggie.md). It shows every line a hook prints, stderr too: the hook prints nothing.
 */
export const auggie = {
  name: 'auggie',
  title: 'Auggie',
  payload: {
    projectDirEnv: ['AUGMENT_PROJECT_DIR'],
    sessionEnv: ['AUGMENT_CONVERSATION_ID'],
    // Its session is `conversation_id` (an alias already), its folders `workspace_roots`; a post says
    // `tool_output` and `tool_error`.
    aliases: { error: ['tool_error'], prompt: ['user_prompt'] },
  },
  output: { neutral: '', systemMessage: false },
  // `settings.local.json` beside the shared `settings.json` (it adds the local file to .gitignore when it writes
  // it). Matchers are unanchored regular expressions; MCP tools never match a plain one.
  wiring: settingsHooks({
    file: { project: '.augment/settings.local.json', user: userFile('.augment/settings.json') },
    sharedProjectFile: '.augment/settings.json',
    failureEvent: false,
    noSubagentEvent: true,
    promptEvent: 'PromptSubmit',
    toolMatcher: allToolsBut(['view', 'codebase-retrieval', 'web-fetch', 'read-process']),
    timeoutUnit: 'ms',
    // A failed call has no event of its own: its post must land on its own checkpoint, before the next call.
    asyncPost: false,
  }),
  // Its hooks run only when the Augment backend turns them on for the account (`enableHooks`): nothing here says.
  trust: {
    files: () => ({}),
    verdict: () => ({
      runs: 'unknown',
      reason: "Auggie runs hooks only when Augment's backend turns them on for your account, which git-ckpt cannot read",
      step: 'run /hooks in Auggie: it is there only when hooks are on',
    }),
  },
  mcp: {
    file: { project: '.augment/settings.local.json', user: userFile('.augment/settings.json') },
    format: 'json',
    key: 'mcpServers',
    entry: plainEntry,
  },
  readme: {
    tested: 'payloads from its source, 0.36.0',
    wiredThrough: '`.augment/settings.local.json` command hooks',
    waits: '—',
    gaps: "not run here (hosted models only); hooks only where Augment's backend enables them; no call ids",
  },
} as const satisfies AgentAdapter;
