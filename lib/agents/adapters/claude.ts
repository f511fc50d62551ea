import path from 'node:path';
import { isToolResult } from '../../model/rewind-detect.js';
import {
  allToolsBut,
  resumeOption,
  selfAndParents,
  settingsHooks,
  stdioEntry,
  userFile,
  type AgentAdapter,
  type TrustSpec,
} from '../adapter.js';

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

interface TranscriptLine {
  type?: string;
  uuid?: string;
  parentUuid?: unknown;
  message?: { content?: unknown };
}

/**
 * Pure: the uuid of the last message (a user or assistant line) before the prompt `promptId` in a transcript's
 * lines (null: it is the first), or undefined when they do not say. `--resume-session-at` takes a message:
 * the line a prompt hangs off is often a system one (the last turn's stop-hook summary).
 */
function messageBeforePrompt(lines: readonly string[], promptId: string): string | null | undefined {
  const needle = `"promptId":"${promptId}"`;
  const byId = new Map<string, TranscriptLine>();
  for (const text of lines) {
    let line: TranscriptLine;
    try {
      line = JSON.parse(text) as TranscriptLine;
    } catch {
      continue;
    }
    if (typeof line.uuid === 'string') byId.set(line.uuid, line);
    if (!text.includes(needle)) continue;
    if (line.type !== 'user' || isToolResult(line as Record<string, unknown>)) continue;
    if (typeof line.parentUuid !== 'string') return null;
    let at = byId.get(line.parentUuid);
    while (at && at.type !== 'user' && at.type !== 'assistant')
      at = typeof at.parentUuid === 'string' ? byId.get(at.parentUuid) : undefined;
    return at?.uuid;
  }
  return undefined;
}

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
  // Print mode continues from an exact message (`--resume-session-at`, into a fork of the session), which
  // finds only messages of the conversation's current branch.
  resume: {
    argv: resumeOption('claude'),
    fresh: ['claude'],
    step: (prompt) => `press Esc twice, pick ${prompt} and choose “Restore conversation” (git-ckpt has restored the files already)`,
    headless: {
      lineBefore: messageBeforePrompt,
      argv: (session, lineBefore) => ['claude', '-p', `--resume=${session}`, '--fork-session', `--resume-session-at=${lineBefore}`],
    },
  },
} as const satisfies AgentAdapter;
