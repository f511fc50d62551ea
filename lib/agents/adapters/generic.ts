import type { AgentAdapter } from '../adapter.js';

/** Any other tool, through the documented neutral protocol: every spelling is read (hooks/README.md). */
export const generic = {
  name: 'generic',
  title: 'another agent',
  payload: { projectDirEnv: [] },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
