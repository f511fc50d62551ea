import { allToolsBut, settingsHooks, userFile, type AgentAdapter } from '../adapter.js';

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
} as const satisfies AgentAdapter;
