import type { AgentAdapter } from '../adapter.js';

/** Google's Gemini CLI: it reads stderr when stdout is empty, so a hook prints `{}`. */
export const gemini = {
  name: 'gemini',
  title: 'Gemini CLI',
  payload: { projectDirEnv: ['GEMINI_PROJECT_DIR'], sessionEnv: ['GEMINI_SESSION_ID'] },
  output: { neutral: '{}\n', systemMessage: true },
} as const satisfies AgentAdapter;
