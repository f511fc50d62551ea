import path from 'node:path';
import { plainEntry, settingsHooks, trustedByRules, userFile, type AgentAdapter, type Json, type TrustSpec } from '../adapter.js';

/**
 * A Gemini CLI fork: user hooks always run; project hooks only in a trusted folder, and every folder is
 * trusted while folder trust is off (its default). `disableAllHooks` turns them all off.
 */
const trust: TrustSpec = {
  files: ({ projectRoot, env, home }) => {
    const dir = env.QWEN_HOME ?? path.join(home, '.qwen');
    return {
      user: { file: path.join(dir, 'settings.json') },
      ...(projectRoot ? { project: { file: path.join(projectRoot, '.qwen', 'settings.json') } } : {}),
      trustedFolders: { file: env.QWEN_CODE_TRUSTED_FOLDERS_PATH ?? path.join(dir, 'trustedFolders.json') },
    };
  },
  verdict: ({ scope, projectRoot, config }) => {
    for (const [where, settings] of [
      ['~/.qwen/settings.json', config.user],
      ['.qwen/settings.json', config.project],
    ] as const)
      if (settings?.disableAllHooks === true)
        return { runs: 'no', reason: `disableAllHooks is true in ${where}`, step: `remove "disableAllHooks": true from ${where}` };
    if (scope === 'user') return { runs: 'yes', reason: 'hooks in ~/.qwen/settings.json run in every folder, trusted or not' };
    const folderTrust = ((config.user?.security as Json | undefined)?.folderTrust ?? {}) as Json;
    if (folderTrust.enabled !== true) return { runs: 'yes', reason: 'folder trust is off (its default), so every folder is trusted' };
    if (!projectRoot) return { runs: 'unknown', reason: 'Qwen Code runs project hooks only in folders it trusts' };
    const { trusted, why } = trustedByRules(projectRoot, config.trustedFolders ?? {}, '~/.qwen/trustedFolders.json');
    if (trusted) return { runs: 'yes', reason: `the folder is trusted (${why})` };
    return {
      runs: 'no',
      reason: `Qwen Code drops project hooks in a folder it does not trust (${why})`,
      step: 'trust the folder when Qwen Code asks, or install at --scope user (user hooks need no trust)',
    };
  },
};

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
  // Its timeouts are in milliseconds (0.15; later versions read a value of 1000 or more as milliseconds
  // still), its settings carry a `$version` it would otherwise write back itself. Tool names are matched
  // with aliases and unanchored regexps: all. A shell that exited non-zero is told only in its PostToolUse
  // (`Exit Code: 3` in its text), which stays synchronous.
  wiring: settingsHooks({
    file: { project: '.qwen/settings.json', user: userFile('.qwen/settings.json', { variable: 'QWEN_HOME', file: 'settings.json' }) },
    failureEvent: true,
    toolMatcher: '*',
    timeoutUnit: 'ms',
    asyncPost: false,
    skeleton: { $version: 4 },
  }),
  trust,
  // Gemini CLI's, which it forked.
  mcp: {
    file: { project: '.qwen/settings.json', user: userFile('.qwen/settings.json', { variable: 'QWEN_HOME', file: 'settings.json' }) },
    format: 'json',
    key: 'mcpServers',
    entry: plainEntry,
  },
  readme: {
    tested: '0.15.10',
    wiredThrough: '`.qwen/settings.json` command hooks',
    waits: '106 ms',
    gaps: '0.21+ need Node 22; turns counted, not named',
  },
} as const satisfies AgentAdapter;
