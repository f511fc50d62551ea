import type { AgentAdapter } from '../adapter.js';

/** Factory's Droid: Claude-shaped settings hooks in `.factory/`. */
export const droid = {
  name: 'droid',
  title: 'Factory Droid',
  payload: {
    projectDirEnv: ['FACTORY_PROJECT_DIR', 'DROID_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
    // Its response text ends `[Process exited with code 3]`.
    exitCode: [/^\[Process exited with code (\d+)\]\s*$/m],
    missingPostFailure: 'failed (Droid sends no post for a failed call)',
  },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
