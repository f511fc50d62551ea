import path from 'node:path';
import { allToolsBut, selfAndParents, settingsHooks, stdioEntry, userFile, type AgentAdapter, type TrustSpec } from '../adapter.js';

/** Its tools that cannot change files (hooks/README.md). */
const READ_ONLY_TOOLS = [
  'Read',
  'Glob',
  'Grep',
  'LS',
  'WebFetch',
  'WebSearch',
  'TodoWrite',
  'TodoRead',
  'NotebookRead',
  'ExitPlanMode',
  'EnterPlanMode',
  'AskUserQuestion',
  'BashOutput',
  'TaskOutput',
  'TaskList',
  'TaskGet',
  'ListMcpResourcesTool',
  'ReadMcpResourceTool',
  'ToolSearch',
];

/**
 * `disableAllHooks` in any of its settings turns every hook off, whatever scope ours are at; an interactive
 * session holds hooks back until its workspace-trust dialog was accepted (~/.claude.json's `projects`).
 */
const trust: TrustSpec = {
  files: ({ projectRoot, env, home }) => {
    const configDir = env.CLAUDE_CONFIG_DIR ?? path.join(home, '.claude');
    return {
      user: { file: path.join(configDir, 'settings.json') },
      ...(projectRoot
        ? {
            shared: { file: path.join(projectRoot, '.claude', 'settings.json') },
            local: { file: path.join(projectRoot, '.claude', 'settings.local.json') },
          }
        : {}),
      global: { file: env.CLAUDE_CONFIG_DIR ? path.join(env.CLAUDE_CONFIG_DIR, '.claude.json') : path.join(home, '.claude.json') },
    };
  },
  verdict: ({ config, path: where, projectRoot }) => {
    const off = ['user', 'shared', 'local'].find((name) => config[name]?.disableAllHooks === true);
    if (off) return { runs: 'no', reason: `"disableAllHooks": true in ${where[off]}`, step: `remove "disableAllHooks" from ${where[off]}` };
    const projects = (config.global?.projects ?? {}) as Record<string, { hasTrustDialogAccepted?: unknown }>;
    const trusted = projectRoot ? selfAndParents(projectRoot).some((d) => projects[d]?.hasTrustDialogAccepted === true) : false;
    if (trusted) return { runs: 'yes', reason: 'the workspace-trust dialog was accepted for this folder' };
    return {
      runs: 'unknown',
      reason:
        'headless runs (claude -p) run them; an interactive session holds them back until the workspace-trust dialog is accepted, not yet done here',
      step: 'start claude in this folder once and accept the workspace-trust dialog',
    };
  },
};

/** Anthropic's Claude Code: settings-file hooks, and HTTP hooks to the daemon. */
export const claude = {
  name: 'claude',
  title: 'Claude Code',
  payload: { projectDirEnv: ['CLAUDE_PROJECT_DIR'], sessionEnv: ['CLAUDE_CODE_SESSION_ID'] },
  output: { neutral: '', systemMessage: true },
  // Its project settings are two files: `settings.json`, which teams commit, and `settings.local.json`, the
  // user's own (Claude Code has git ignore it). Ours go in the user's. Its user settings are in
  // CLAUDE_CONFIG_DIR when that is set.
  wiring: settingsHooks({
    file: {
      project: '.claude/settings.local.json',
      user: userFile('.claude/settings.json', { variable: 'CLAUDE_CONFIG_DIR', file: 'settings.json' }),
    },
    sharedProjectFile: '.claude/settings.json',
    failureEvent: true,
    toolMatcher: allToolsBut(READ_ONLY_TOOLS),
    timeoutUnit: 's',
    asyncPost: true,
    // HTTP hooks since 2.1.63: tool events POSTed to the daemon, no process per call.
    http: { events: ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'SubagentStop'], versionCommand: 'claude', since: '2.1.63' },
  }),
  trust,
  mcp: {
    file: { project: '.mcp.json', user: (_env, home) => path.join(home, '.claude.json') },
    format: 'json',
    key: 'mcpServers',
    entry: stdioEntry,
  },
} as const satisfies AgentAdapter;
