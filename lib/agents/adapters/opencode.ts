import { busEnvelope, type AgentAdapter } from '../adapter.js';

/** OpenCode: an in-process plugin forwards its bus events (hooks/opencode-plugin.js). */
export const opencode = {
  name: 'opencode',
  title: 'OpenCode',
  payload: { projectDirEnv: [], normalize: busEnvelope },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
