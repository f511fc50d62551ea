import type { AgentAdapter } from '../adapter.js';

/** OpenAI's Codex CLI: `.codex/hooks.json`. */
export const codex = {
  name: 'codex',
  title: 'Codex CLI',
  payload: { projectDirEnv: [] },
  output: { neutral: '', systemMessage: true },
} as const satisfies AgentAdapter;
