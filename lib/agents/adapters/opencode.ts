import { busEnvelope, isPluginEnvelope, type AgentAdapter, type Json } from '../adapter.js';

/** OpenCode: an in-process plugin forwards its bus events (hooks/opencode-plugin.js). */
export const opencode = {
  name: 'opencode',
  title: 'OpenCode',
  payload: { projectDirEnv: [], normalize: (payload: Json) => (isPluginEnvelope(payload) ? busEnvelope(payload) : payload) },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
