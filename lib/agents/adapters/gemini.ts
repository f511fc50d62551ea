import { allToolsBut, HOOK_TIMEOUT_S, userFile, type AgentAdapter } from '../adapter.js';

/** Google's Gemini CLI: it reads stderr when stdout is empty, so a hook prints `{}`. */
export const gemini = {
  name: 'gemini',
  title: 'Gemini CLI',
  payload: {
    projectDirEnv: ['GEMINI_PROJECT_DIR'],
    sessionEnv: ['GEMINI_SESSION_ID'],
    // An `Exit Code: 3` line in tool_response's llmContent, or `Command exited with code: 3`.
    exitCode: [/^Exit Code: (\d+)\s*$/m, /^Command exited with code: (\d+)/m],
  },
  output: { neutral: '{}\n', systemMessage: true },
  wiring: {
    kind: 'config',
    file: { project: '.gemini/settings.json', user: userFile('.gemini/settings.json') },
    layout: 'nested',
    skeleton: {},
    toolMatcher: allToolsBut([
      'read_file',
      'read_many_files',
      'glob',
      'grep_search',
      'search_file_content',
      'list_directory',
      'web_fetch',
      'google_web_search',
      'write_todos',
      'ask_user',
      'get_internal_docs',
      'enter_plan_mode',
      'exit_plan_mode',
    ]),
    events: [
      { event: 'BeforeTool', phase: 'pre', tools: true },
      { event: 'AfterTool', phase: 'post', tools: true },
      { event: 'BeforeAgent', phase: 'turn-start' },
      { event: 'AfterAgent', phase: 'turn-end' },
      { event: 'SessionStart', phase: 'session-start' },
    ],
    // Its timeout is in milliseconds; the handler's name is what `hooksConfig.disabled` lists.
    handler: (command, phase) => ({ name: `git-ckpt-${phase}`, type: 'command', command, timeout: HOOK_TIMEOUT_S * 1000 }),
    commandKey: 'command',
  },
} as const satisfies AgentAdapter;
