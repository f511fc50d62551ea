import path from 'node:path';
import {
  coveringFolder,
  flatHooks,
  HOOK_TIMEOUT_S,
  plainEntry,
  resumeOption,
  slashRewind,
  userFile,
  type AgentAdapter,
  type TrustSpec,
} from '../adapter.js';

/** User hooks run anywhere; project hooks only in a folder of its config.json's trustedFolders (or below one). */
const trust: TrustSpec = {
  files: ({ env, home }) => ({ config: { file: path.join(env.COPILOT_HOME ?? path.join(home, '.copilot'), 'config.json') } }),
  verdict: ({ scope, projectRoot, config, env }) => {
    if (scope === 'user') return { runs: 'yes', reason: 'hooks in ~/.copilot/hooks run in every folder, trusted or not' };
    if (env.COPILOT_ALLOW_ALL === 'true') return { runs: 'yes', reason: 'COPILOT_ALLOW_ALL=true trusts every folder' };
    const listed = config.config?.trustedFolders;
    const folders = Array.isArray(listed) ? listed.filter((f): f is string => typeof f === 'string') : [];
    const by = coveringFolder(projectRoot, folders);
    if (by) return { runs: 'yes', reason: `the folder is trusted (${by} in trustedFolders)` };
    return {
      runs: 'no',
      reason:
        'Copilot CLI skips project hooks (its .github/hooks, and the other agents’ hooks it runs) in a folder it does not trust, without a word',
      step: 'trust the folder: answer Copilot’s prompt when it starts here, or start it with --trust-folder, or add it to trustedFolders in ~/.copilot/config.json (or install at --scope user: user hooks need no trust)',
    };
  },
};

/** GitHub Copilot CLI: `.github/hooks/*.json`, and it also runs Claude Code's hooks, with its own payload shape. */
export const copilot = {
  name: 'copilot',
  title: 'Copilot CLI',
  payload: {
    projectDirEnv: ['COPILOT_PROJECT_DIR'],
    markers: ['COPILOT_CLI_BINARY_VERSION', 'COPILOT_HOOK_DIR', 'COPILOT_PROJECT_DIR'],
    runsOthersHooks: true,
    // camelCase, the canonical keys' second spelling, for the rest; its arguments come as a JSON string.
    aliases: { input: ['toolArgs', 'tool_args'] },
    // `<shellId: 1 completed with exit code 3>` in postToolUse's textResultForLlm.
    exitCode: [/completed with exit code (\d+)>/],
  },
  output: { neutral: '', systemMessage: false },
  wiring: flatHooks({
    file: {
      project: '.github/hooks/git-ckpt.json',
      user: userFile('.copilot/hooks/git-ckpt.json', { variable: 'COPILOT_HOME', file: 'hooks/git-ckpt.json' }),
    },
    names: { prompt: 'userPromptSubmitted', stop: 'agentStop' },
    commandKey: 'bash',
    handler: (command) => ({ type: 'command', bash: command, timeoutSec: HOOK_TIMEOUT_S }),
  }),
  trust,
  mcp: {
    file: {
      project: '.github/mcp.json',
      user: userFile('.copilot/mcp-config.json', { variable: 'COPILOT_HOME', file: 'mcp-config.json' }),
    },
    format: 'json',
    key: 'mcpServers',
    entry: (launch) => ({ type: 'local', ...plainEntry(launch), tools: ['*'] }),
  },
  resume: { argv: resumeOption('copilot'), fresh: ['copilot'], step: slashRewind },
  readme: {
    tested: '1.0.102',
    wiredThrough: '`.github/hooks/` or `~/.copilot/hooks/`',
    waits: '121 ms',
    gaps: 'project hooks only in a trusted folder',
  },
} as const satisfies AgentAdapter;
