import { busEnvelope, type AgentAdapter } from '../adapter.js';

/** Kilo Code's CLI, an OpenCode fork: the same plugin API. */
export const kilo = {
  name: 'kilo',
  title: 'Kilo Code CLI',
  payload: { projectDirEnv: [], normalize: busEnvelope },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
