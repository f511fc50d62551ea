import { settingsHooks, userFile, type AgentAdapter } from '../adapter.js';

/** Qwen Code, a Gemini CLI fork with Claude-shaped hooks (it sets Claude's project variable too). */
export const qwen = {
  name: 'qwen',
  title: 'Qwen Code',
  payload: {
    projectDirEnv: ['QWEN_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
    // Qwen Code 0.15 sends UserPromptSubmit without a prompt when it hands tool results back to the model.
    promptlessStartContinues: true,
  },
  output: { neutral: '', systemMessage: false },
  // Its timeouts are in milliseconds (0.15; later versions read a value of 1000 or more as milliseconds
  // still), its settings carry a `$version` it would otherwise write back itself. Tool names are matched
  // with aliases and unanchored regexps: all. A shell that exited non-zero is told only in its PostToolUse
  // (`Exit Code: 3` in its text), which stays synchronous.
  wiring: settingsHooks({
    file: { project: '.qwen/settings.json', user: userFile('.qwen/settings.json', { variable: 'QWEN_HOME', file: 'settings.json' }) },
    failureEvent: true,
    toolMatcher: '*',
    timeoutUnit: 'ms',
    asyncPost: false,
    skeleton: { $version: 4 },
  }),
} as const satisfies AgentAdapter;
