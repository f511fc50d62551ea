import { allToolsBut, settingsHooks, userFile, type AgentAdapter } from '../adapter.js';

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
  // No PostToolUseFailure: a failed tool fires no post at all, and the next call's pre takes what it changed.
  // `.factory/settings.json` `hooks`; a `hooks.json` next to it replaces the same events, so ours live in
  // settings.json. Its PostToolUse stays synchronous: a shell's exit status is told only there.
  wiring: settingsHooks({
    file: { project: '.factory/settings.json', user: userFile('.factory/settings.json') },
    failureEvent: false,
    toolMatcher: allToolsBut(['Read', 'LS', 'Grep', 'Glob', 'TodoWrite', 'WebSearch', 'FetchUrl']),
    timeoutUnit: 's',
    asyncPost: false,
  }),
} as const satisfies AgentAdapter;
