import { busEnvelope, isPluginEnvelope, type AgentAdapter, type Json } from '../adapter.js';

/** Kilo Code's CLI, an OpenCode fork: the same plugin API. */
export const kilo = {
  name: 'kilo',
  title: 'Kilo Code CLI',
  payload: { projectDirEnv: [], normalize: (payload: Json) => (isPluginEnvelope(payload) ? busEnvelope(payload) : payload) },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
