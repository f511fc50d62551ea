import type { AgentAdapter } from '../adapter.js';

/** Anthropic's Claude Code: settings-file hooks, and HTTP hooks to the daemon. */
export const claude = {
  name: 'claude',
  title: 'Claude Code',
  payload: { projectDirEnv: ['CLAUDE_PROJECT_DIR'], sessionEnv: ['CLAUDE_CODE_SESSION_ID'] },
  output: { neutral: '', systemMessage: true },
} as const satisfies AgentAdapter;
