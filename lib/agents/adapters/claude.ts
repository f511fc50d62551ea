import path from 'node:path';
import { parseLine, type RewindVerdict, type TranscriptIndex } from '../../model/rewind-detect.js';
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

/** A user line that carries tool results is a step of its turn, not its prompt. */
function isToolResult(line: Record<string, unknown>): boolean {
  const content = (line.message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) && content.some((b) => (b as { type?: unknown })?.type === 'tool_result');
}

/** Claude's labels are kept for this many lines; a parent older than that is unknown, and no rewind is claimed. */
const LABELS_KEPT = 20_000;

/**
 * Pure: Claude transcript lines read into the index. `turnOf` gives the
 * serial the hooks numbered a prompt id as (undefined: not one of ours).
 * @public (tests use it)
 */
export function indexClaudeLines(
  index: TranscriptIndex,
  lines: readonly string[],
  turnOf: (promptId: string) => number | undefined,
): TranscriptIndex {
  const labels = { ...index.labels };
  const prompts = { ...index.prompts };
  let fork = index.fork ?? null;
  for (const text of lines) {
    const line = parseLine(text);
    if (!line || typeof line.uuid !== 'string') continue;
    const from = line.forkedFrom as { sessionId?: unknown; messageUuid?: unknown } | undefined;
    if (typeof from?.sessionId === 'string' && from.sessionId !== '')
      fork = { session: from.sessionId, ...(typeof from.messageUuid === 'string' ? { message: from.messageUuid } : {}) };
    const parentId =
      typeof line.parentUuid === 'string' ? line.parentUuid : typeof line.logicalParentUuid === 'string' ? line.logicalParentUuid : null;
    const parentLabel = parentId === null ? 0 : (labels[parentId] ?? -1);
    const serial =
      line.type === 'user' && typeof line.promptId === 'string' && line.isSidechain !== true && !isToolResult(line)
        ? turnOf(line.promptId)
        : undefined;
    if (serial !== undefined && prompts[serial] === undefined) {
      prompts[serial] = { uuid: line.uuid, from: parentLabel };
      labels[line.uuid] = serial;
    } else labels[line.uuid] = parentLabel;
  }
  const keys = Object.keys(labels);
  const kept = keys.length > LABELS_KEPT ? Object.fromEntries(keys.slice(-LABELS_KEPT).map((k) => [k, labels[k]!])) : labels;
  return { ...index, labels: kept, prompts, fork };
}

/**
 * Pure: whether Claude's turn `serial` continues from an earlier turn than
 * the one before it. Its prompt line may not be on disk yet (Claude writes
 * it as the turn goes on): `pending` then, and a later event of the turn asks again.
 * @public (tests use it)
 */
export function claudeVerdict(index: TranscriptIndex, serial: number): RewindVerdict | { pending: true } {
  const prompt = index.prompts[serial];
  if (!prompt) return { pending: true };
  if (prompt.from < 0) return { rewound: false, why: "the prompt's parent line was never read" };
  if (prompt.from >= serial - 1) return { rewound: false };
  // Claimed only on evidence: a turn in between whose own prompt line this transcript holds.
  for (let s = prompt.from + 1; s < serial; s++) if (index.prompts[s]) return { rewound: true, parent: prompt.from };
  return { rewound: false, why: 'no prompt of the turns in between is in the transcript' };
}

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
  // It writes nothing at the rewind itself. The next prompt's line (every user line of a turn carries the hook's
  // `prompt_id` as `promptId`) has a `parentUuid` pointing back before the turns left behind; each line's
  // ancestry is kept as the serial of the deepest recorded prompt above it, so a parent far back in the file is
  // known without reading it again (a compaction's boundary line has no parent but a `logicalParentUuid`). That
  // line is written as the turn goes on: its first tool call or its end reads it. A fork: /branch marks every
  // line it copied with `forkedFrom: {sessionId, messageUuid}`; --fork-session (2.1.332) copies the lines with
  // their own uuids and no mark (their promptId rewritten to the fork's first prompt's).
  transcript: {
    readsAt: ['pre', 'post', 'turn-end'],
    read: (index, lines, { turn, turnKeys }) => {
      const next = indexClaudeLines(index, lines, (promptId) => turnKeys[promptId]);
      return { index: next, verdict: claudeVerdict(next, turn) };
    },
    forkByCopiedLines: true,
    fileTools: { path: ['Write', 'Edit', 'MultiEdit', 'NotebookEdit'] },
  },
  readme: {
    tested: '2.1.332',
    wiredThrough: '`.claude/settings.local.json` command hooks; tool events as HTTP hooks to the daemon (the token in your user settings)',
    waits: '100 ms (HTTP: ~7 ms)',
    gaps: '—',
  },
} as const satisfies AgentAdapter;
