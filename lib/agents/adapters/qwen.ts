import type { AgentAdapter } from '../adapter.js';

/** Qwen Code, a Gemini CLI fork with Claude-shaped hooks (it sets Claude's project variable too). */
export const qwen = {
  name: 'qwen',
  title: 'Qwen Code',
  payload: {
    projectDirEnv: ['QWEN_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
    // Qwen Code 0.15 sends UserPromptSubmit without a prompt when it hands tool results back to the model.
    promptlessStartContinues: true,
  },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
