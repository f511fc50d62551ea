import path from 'node:path';
import { continuesFrom, parseLine, type TranscriptIndex } from '../../model/rewind-detect.js';
import {
  allToolsBut,
  HOOK_TIMEOUT_S,
  plainEntry,
  resumeOption,
  slashRewind,
  trustedByRules,
  userFile,
  type AgentAdapter,
  type Json,
  type TrustSpec,
} from '../adapter.js';

/**
 * In 0.61 hooks from settings files (user and project alike) are registered only in a trusted folder, after
 * the environment's overrides; `hooksConfig` can turn them off, or name ours in its `disabled` list.
 */
const trust: TrustSpec = {
  files: ({ projectRoot, env, home }) => ({
    user: { file: path.join(home, '.gemini', 'settings.json') },
    ...(projectRoot ? { project: { file: path.join(projectRoot, '.gemini', 'settings.json') } } : {}),
    trustedFolders: { file: env.GEMINI_CLI_TRUSTED_FOLDERS_PATH ?? path.join(home, '.gemini', 'trustedFolders.json') },
  }),
  verdict: ({ projectRoot, config, env }) => {
    for (const [where, settings] of [
      ['~/.gemini/settings.json', config.user],
      ['.gemini/settings.json', config.project],
    ] as const) {
      const hooksConfig = (settings?.hooksConfig ?? {}) as Json;
      if (hooksConfig.enabled === false)
        return { runs: 'no', reason: `hooksConfig.enabled is false in ${where}`, step: `remove hooksConfig.enabled = false from ${where}` };
      const disabled = Array.isArray(hooksConfig.disabled)
        ? hooksConfig.disabled.filter((n) => typeof n === 'string' && n.startsWith('git-ckpt-'))
        : [];
      if (disabled.length)
        return {
          runs: 'no',
          reason: `hooksConfig.disabled lists ${disabled.join(', ')} in ${where}`,
          step: `remove them from hooksConfig.disabled in ${where}`,
        };
    }
    const folderTrust = ((config.user?.security as Json | undefined)?.folderTrust ?? {}) as Json;
    if (folderTrust.enabled === false)
      return { runs: 'yes', reason: 'folder trust is turned off in ~/.gemini/settings.json, so every folder is trusted' };
    if (!projectRoot)
      return {
        runs: 'unknown',
        reason: 'Gemini CLI runs hooks only in folders it trusts; that depends on the folder',
        step: 'trust each project folder when Gemini CLI asks',
      };
    const override = env.GEMINI_CLI_TRUST_WORKSPACE;
    const { trusted, why } =
      override === 'true' || override === 'false'
        ? { trusted: override === 'true', why: `GEMINI_CLI_TRUST_WORKSPACE=${override}` }
        : env.GEMINI_RESTRICTED_MODE === 'true'
          ? { trusted: false, why: 'GEMINI_RESTRICTED_MODE=true' }
          : trustedByRules(projectRoot, config.trustedFolders ?? {}, '~/.gemini/trustedFolders.json');
    if (trusted) return { runs: 'yes', reason: `the folder is trusted (${why})` };
    return {
      runs: 'no',
      reason: `Gemini CLI registers no hooks, user or project, in a folder it does not trust (${why}); gemini -p exits with code 55 there`,
      step: 'trust the folder when Gemini CLI asks (or /permissions), which writes ~/.gemini/trustedFolders.json',
    };
  },
};

/**
 * Pure: Gemini session lines read into the index: the conversation as the CLI holds it (0.61.0). A
 * `$set` record replaces it whole (written at each load and after a rewind), a message record adds a
 * message or updates one, and `$rewindTo` drops that message and what follows (an id it does not hold
 * empties it, as its own loader reads it). `userMessages` keeps each message's id, `*`-prefixed for a
 * prompt: a tool's result is recorded as the user's too, and is no prompt.
 * @public (tests use it)
 */
export function indexGeminiLines(index: TranscriptIndex, lines: readonly string[]): TranscriptIndex {
  let messages = [...index.userMessages];
  const key = (m: { id?: unknown; type?: unknown; content?: unknown }) =>
    `${m.type === 'user' && isGeminiPrompt(m.content) ? '*' : ''}${String(m.id)}`;
  const at = (id: string) => messages.findIndex((m) => m === id || m === `*${id}`);
  for (const text of lines) {
    const line = parseLine(text);
    if (!line) continue;
    const set = (line.$set as { messages?: unknown } | undefined)?.messages;
    if (Array.isArray(set)) {
      messages = (set as { id?: unknown }[]).filter((m) => typeof m?.id === 'string').map(key);
    } else if (typeof line.$rewindTo === 'string') {
      const found = at(line.$rewindTo);
      messages = found >= 0 ? messages.slice(0, found) : [];
    } else if (typeof line.id === 'string' && typeof line.type === 'string' && at(line.id) < 0) messages.push(key(line));
  }
  return { ...index, userMessages: messages };
}

/** Pure: how many prompts Gemini's conversation holds. @public (tests use it) */
export function geminiPrompts(index: TranscriptIndex): number {
  return index.userMessages.filter((m) => m.startsWith('*')).length;
}

/** A Gemini user record that is a prompt: its text, not a tool's result, nor the session context it starts with. */
function isGeminiPrompt(content: unknown): boolean {
  if (typeof content === 'string') return !content.startsWith('<session_context>');
  if (!Array.isArray(content)) return false;
  const parts = content as { text?: unknown; functionResponse?: unknown }[];
  return (
    parts.some((p) => typeof p?.text === 'string') &&
    !parts.some((p) => p?.functionResponse !== undefined || (typeof p?.text === 'string' && p.text.startsWith('<session_context>')))
  );
}

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
  trust,
  mcp: {
    file: { project: '.gemini/settings.json', user: userFile('.gemini/settings.json') },
    format: 'json',
    key: 'mcpServers',
    entry: plainEntry,
  },
  resume: { argv: resumeOption('gemini'), fresh: ['gemini'], step: slashRewind },
  // It appends `{"$rewindTo":"<message id>"}` to its session file at once: that message and everything after it
  // were dropped. BeforeAgent fires before its chat records the new prompt (0.61.0): what it holds came before.
  transcript: {
    readsAt: ['turn-start'],
    read: (index, lines, { branch }) => {
      const next = indexGeminiLines(index, lines);
      return { index: next, verdict: continuesFrom(branch, geminiPrompts(next)) };
    },
    fileTools: { path: ['write_file', 'replace', 'edit'] },
  },
  readme: {
    tested: '0.61.0',
    wiredThrough: '`.gemini/settings.json`',
    waits: '95 ms',
    gaps: 'hooks only in a trusted folder',
  },
} as const satisfies AgentAdapter;
