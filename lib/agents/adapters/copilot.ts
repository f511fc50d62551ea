import { flatHooks, HOOK_TIMEOUT_S, userFile, type AgentAdapter } from '../adapter.js';

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
  wiring: flatHooks({
    file: {
      project: '.github/hooks/git-ckpt.json',
      user: userFile('.copilot/hooks/git-ckpt.json', { variable: 'COPILOT_HOME', file: 'hooks/git-ckpt.json' }),
    },
    names: { prompt: 'userPromptSubmitted', stop: 'agentStop' },
    commandKey: 'bash',
    handler: (command) => ({ type: 'command', bash: command, timeoutSec: HOOK_TIMEOUT_S }),
  }),
} as const satisfies AgentAdapter;
