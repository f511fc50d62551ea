import path from 'node:path';
import {
  allToolsBut,
  coveringFolder,
  settingsHooks,
  stdioEntry,
  userFile,
  type AgentAdapter,
  type Json,
  type TrustSpec,
} from '../adapter.js';

/**
 * `hooks.hooksDisabled` turns every hook off; `droid exec` runs project hooks in any folder, the interactive
 * TUI only once the folder is trusted (`trustedFolders` in its settings).
 */
const trust: TrustSpec = {
  files: ({ projectRoot, home }) => ({
    user: { file: path.join(home, '.factory', 'settings.json') },
    ...(projectRoot ? { project: { file: path.join(projectRoot, '.factory', 'settings.json') } } : {}),
  }),
  verdict: ({ scope, projectRoot, config }) => {
    for (const [where, settings] of [
      ['~/.factory/settings.json', config.user],
      ['.factory/settings.json', config.project],
    ] as const)
      if (((settings?.hooks ?? {}) as Json).hooksDisabled === true)
        return { runs: 'no', reason: `hooks.hooksDisabled is true in ${where}`, step: `remove "hooksDisabled": true from ${where}` };
    if (scope === 'user') return { runs: 'yes', reason: 'hooks in ~/.factory/settings.json run in every folder' };
    const by = coveringFolder(projectRoot, Object.keys((config.user?.trustedFolders ?? {}) as Json));
    if (by) return { runs: 'yes', reason: `the folder is trusted (${by} in trustedFolders)` };
    return {
      runs: 'unknown',
      reason: '`droid exec` runs project hooks in any folder; the interactive droid only in a folder you trusted',
      step: 'trust the folder when droid asks (or install at --scope user)',
    };
  },
};

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
  trust,
  mcp: {
    file: { project: '.factory/mcp.json', user: userFile('.factory/mcp.json') },
    format: 'json',
    key: 'mcpServers',
    entry: stdioEntry,
  },
  readme: {
    tested: '0.225',
    wiredThrough: '`.factory/settings.json` command hooks',
    waits: '102 ms',
    gaps: 'no post for a failed call (the next pre records it, without the exit code)',
  },
} as const satisfies AgentAdapter;
