import type { AgentAdapter } from '../adapter.js';

/** Qwen Code, a Gemini CLI fork with Claude-shaped hooks (it sets Claude's project variable too). */
export const qwen = {
  name: 'qwen',
  title: 'Qwen Code',
  payload: { projectDirEnv: ['QWEN_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'] },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
