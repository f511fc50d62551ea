import type { AgentAdapter } from '../adapter.js';

/** GitHub Copilot CLI: `.github/hooks/*.json`, and it also runs Claude Code's hooks, with its own payload shape. */
export const copilot = {
  name: 'copilot',
  title: 'Copilot CLI',
  payload: {
    projectDirEnv: ['COPILOT_PROJECT_DIR'],
    markers: ['COPILOT_CLI_BINARY_VERSION', 'COPILOT_HOOK_DIR', 'COPILOT_PROJECT_DIR'],
    runsOthersHooks: true,
    // camelCase, the canonical keys' second spelling, for the rest; its arguments come as a JSON string.
    aliases: { input: ['toolArgs', 'tool_args'] },
    // `<shellId: 1 completed with exit code 3>` in postToolUse's textResultForLlm.
    exitCode: [/completed with exit code (\d+)>/],
  },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
