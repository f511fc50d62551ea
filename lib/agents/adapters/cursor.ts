import { flatHooks, HOOK_TIMEOUT_S, plainEntry, userFile, type AgentAdapter } from '../adapter.js';

/** Cursor's agent (the editor and `cursor-agent`): it reads stdout as JSON, and also runs Claude Code's hooks. */
export const cursor = {
  name: 'cursor',
  title: 'Cursor',
  payload: {
    projectDirEnv: ['CURSOR_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
    markers: ['CURSOR_VERSION', 'CURSOR_PROJECT_DIR'],
    runsOthersHooks: true,
    aliases: {
      session: ['conversation_id', 'conversationId'],
      turnKey: ['generation_id', 'generationId'],
      roots: ['workspace_roots', 'workspaceRoots'],
    },
  },
  output: { neutral: '{}\n', systemMessage: false },
  wiring: flatHooks({
    file: { project: '.cursor/hooks.json', user: userFile('.cursor/hooks.json') },
    names: { prompt: 'beforeSubmitPrompt', stop: 'stop' },
    commandKey: 'command',
    handler: (command) => ({ command, timeout: HOOK_TIMEOUT_S }),
  }),
  trust: {
    files: () => ({}),
    verdict: ({ scope }) => ({
      runs: 'unknown',
      reason: 'Cursor keeps its workspace trust where git-ckpt cannot read it',
      ...(scope === 'project' ? { step: 'trust the workspace in Cursor (project hooks run only in a trusted workspace)' } : {}),
    }),
  },
  mcp: { file: { project: '.cursor/mcp.json', user: userFile('.cursor/mcp.json') }, format: 'json', key: 'mcpServers', entry: plainEntry },
  readme: {
    tested: 'payloads only',
    wiredThrough: '`.cursor/hooks.json`',
    waits: '—',
    gaps: 'no CLI to run here; trust not readable',
  },
} as const satisfies AgentAdapter;
