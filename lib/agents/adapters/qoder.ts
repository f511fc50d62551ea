import path from 'node:path';
import { allToolsBut, plainEntry, settingsHooks, userFile, type AgentAdapter, type Json, type TrustSpec } from '../adapter.js';

/** Its settings folder: `QODER_CONFIG_DIR` moves it whole. */
const userDir = (env: Readonly<Record<string, string | undefined>>, home: string) =>
  env.QODER_CONFIG_DIR ? path.resolve(env.QODER_CONFIG_DIR) : path.join(home, '.qoder');

/**
 * `disableAllHooks` in any of its settings, or `hooksConfig.enabled: false`, turns every hook off;
 * `hooksConfig.headlessFastMode` skips user hooks in headless runs. Folder trust is off unless set (1.1.52 reads
 * `security.folderTrust.enabled ?? false`); when it is on, project hooks run only in a folder it trusts, kept where
 * git-ckpt does not read it.
 */
const trust: TrustSpec = {
  files: ({ projectRoot, env, home }) => ({
    user: { file: path.join(userDir(env, home), 'settings.json') },
    ...(projectRoot
      ? {
          shared: { file: path.join(projectRoot, '.qoder', 'settings.json') },
          local: { file: path.join(projectRoot, '.qoder', 'settings.local.json') },
        }
      : {}),
  }),
  verdict: ({ scope, config, path: where }) => {
    for (const name of ['user', 'shared', 'local']) {
      const settings = config[name];
      if (settings?.disableAllHooks === true)
        return { runs: 'no', reason: `"disableAllHooks": true in ${where[name]}`, step: `remove "disableAllHooks" from ${where[name]}` };
      if ((settings?.hooksConfig as Json | undefined)?.enabled === false)
        return { runs: 'no', reason: `hooksConfig.enabled is false in ${where[name]}`, step: `remove it from ${where[name]}` };
    }
    const user = config.user;
    if (scope === 'user' && (user?.hooksConfig as Json | undefined)?.headlessFastMode === true)
      return {
        runs: 'unknown',
        reason: 'hooksConfig.headlessFastMode skips user hooks in headless runs (qodercli -p); interactive sessions run them',
        step: 'install at --scope project, or turn headlessFastMode off',
      };
    const folderTrust = ((user?.security as Json | undefined)?.folderTrust ?? {}) as Json;
    if (scope === 'project' && folderTrust.enabled === true)
      return {
        runs: 'unknown',
        reason: 'folder trust is on: Qoder CLI runs project hooks only in a folder it trusts',
        step: 'trust the folder when Qoder CLI asks, or install at --scope user',
      };
    return { runs: 'yes', reason: 'no setting turns hooks off, and folder trust is off (its default)' };
  },
};

/**
 * Qoder CLI, a Gemini CLI fork with Claude Code's hooks: the same events, payload keys and handler shape, in
 * `.qoder/` (payloads from its source, 1.1.52: docs/research/qoder.md). It sets Claude's project variable too.
 */
export const qoder = {
  name: 'qoder',
  title: 'Qoder CLI',
  payload: { projectDirEnv: ['QODER_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'] },
  output: { neutral: '', systemMessage: true },
  // Its project settings are `settings.json`, which teams commit, and `settings.local.json`, the user's own:
  // ours go in the user's. Matchers are unanchored regular expressions, timeouts in seconds.
  wiring: settingsHooks({
    file: {
      project: '.qoder/settings.local.json',
      user: userFile('.qoder/settings.json', { variable: 'QODER_CONFIG_DIR', file: 'settings.json' }),
    },
    sharedProjectFile: '.qoder/settings.json',
    failureEvent: true,
    toolMatcher: allToolsBut(['Read', 'Glob', 'Grep', 'WebFetch', 'WebSearch', 'AskUserQuestion']),
    timeoutUnit: 's',
    asyncPost: true,
  }),
  trust,
  // `mcpServers` in the same settings files (`qodercli mcp add` writes the local one by default).
  mcp: {
    file: {
      project: '.qoder/settings.local.json',
      user: userFile('.qoder/settings.json', { variable: 'QODER_CONFIG_DIR', file: 'settings.json' }),
    },
    format: 'json',
    key: 'mcpServers',
    entry: plainEntry,
  },
  readme: {
    tested: 'payloads from its source, 1.1.52',
    wiredThrough: '`.qoder/settings.local.json` command hooks',
    waits: '—',
    gaps: 'not run here (a Qoder account to start; its `--fake-responses` test mode is the way in); HTTP hooks not used',
  },
} as const satisfies AgentAdapter;
