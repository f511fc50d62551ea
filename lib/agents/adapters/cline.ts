import type { AgentAdapter } from '../adapter.js';

/** Cline's CLI: one executable per hook event, which must print JSON. */
export const cline = {
  name: 'cline',
  title: 'Cline CLI',
  payload: { projectDirEnv: [] },
  output: { neutral: '{}\n', systemMessage: false },
} as const satisfies AgentAdapter;
