import type { AgentAdapter } from '../adapter.js';

/** Any other tool, through the documented neutral protocol: every spelling is read (hooks/README.md). */
export const generic = {
  name: 'generic',
  title: 'another agent',
  payload: {
    projectDirEnv: [],
    // Spellings of agents without an adapter of their own: Windsurf's trajectory and execution ids, flat
    // Cline-style keys, and the names other agents give a call id, a turn or a prompt.
    aliases: {
      session: ['taskId', 'trajectory_id', 'thread_id'],
      turnKey: ['turnId', 'execution_id'],
      callId: ['tool_call_id', 'toolCallId'],
      input: ['parameters'],
      cwd: ['workspacePath'],
      eventName: ['hookName'],
      prompt: ['user_prompt', 'userPrompt'],
    },
  },
  output: { neutral: '', systemMessage: false },
} as const satisfies AgentAdapter;
