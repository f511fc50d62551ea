import type { AgentAdapter } from '../adapter.js';

/** Google's Gemini CLI: it reads stderr when stdout is empty, so a hook prints `{}`. */
export const gemini = {
  name: 'gemini',
  title: 'Gemini CLI',
  payload: {
    projectDirEnv: ['GEMINI_PROJECT_DIR'],
    sessionEnv: ['GEMINI_SESSION_ID'],
    // An `Exit Code: 3` line in tool_response's llmContent, or `Command exited with code: 3`.
    exitCode: [/^Exit Code: (\d+)\s*$/m, /^Command exited with code: (\d+)/m],
  },
  output: { neutral: '{}\n', systemMessage: true },
} as const satisfies AgentAdapter;
