import type { AgentAdapter } from '../adapter.js';

/** pi, the coding agent: an extension forwards its events (hooks/pi-extension.js). */
export const pi = {
  name: 'pi',
  title: 'pi',
  payload: { projectDirEnv: [] },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
