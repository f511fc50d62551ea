import path from 'node:path';
import { continuesFrom, parseLine, type TranscriptIndex } from '../../model/rewind-detect.js';
import {
  plainEntry,
  selfAndParents,
  settingsHooks,
  sha256OfSortedJson,
  userFile,
  type AgentAdapter,
  type Json,
  type RunVerdict,
  type TrustFacts,
  type TrustSpec,
} from '../adapter.js';

/**
 * Pure: the failure of call `callId` as Codex's rollout (JSONL) records it, the exit code its post leaves out;
 * null when the lines do not say.
 */
function failureInRollout(text: string, callId: string): string | null {
  let failure: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes(callId)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // the first line of a tail is usually cut
    }
    const stack: unknown[] = [parsed];
    while (stack.length) {
      const v = stack.pop();
      if (!v || typeof v !== 'object') continue;
      const o = v as Record<string, unknown>;
      if ((o.id === callId || o.call_id === callId) && (typeof o.exit_code === 'number' || o.status === 'failed')) {
        const code = typeof o.exit_code === 'number' ? o.exit_code : null;
        failure = code !== null && code !== 0 ? `exit code ${code}` : o.status === 'failed' ? 'failed' : null;
      }
      stack.push(...Object.values(o));
    }
  }
  return failure;
}

/** Codex's label of each hook event, as its trust keys spell them. @public (tests use it) */
export const CODEX_EVENT_LABELS: Record<string, string> = {
  PreToolUse: 'pre_tool_use',
  PermissionRequest: 'permission_request',
  PostToolUse: 'post_tool_use',
  PreCompact: 'pre_compact',
  PostCompact: 'post_compact',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
  UserPromptSubmit: 'user_prompt_submit',
  SubagentStart: 'subagent_start',
  SubagentStop: 'subagent_stop',
  Stop: 'stop',
};
/** Events whose matcher Codex ignores, and leaves out of the hash. */
const NO_MATCHER = new Set(['UserPromptSubmit', 'Stop']);

/**
 * Pure: Codex's trust key and hash of every command handler in a hooks.json
 * (0.171: `<file>:<event label>:<group>:<handler>`, and sha256 over the
 * key-sorted JSON of the event label, the matcher and the normalised handler;
 * what `/hooks` records as `hooks.state."<key>".trusted_hash`).
 * @public (tests use it)
 */
export function codexHookTrustEntries(hooksFile: string, config: Json): { key: string; hash: string; command: string }[] {
  const out: { key: string; hash: string; command: string }[] = [];
  const hooks = (config.hooks ?? {}) as Record<string, unknown>;
  for (const [event, groups] of Object.entries(hooks)) {
    const label = CODEX_EVENT_LABELS[event];
    if (!label || !Array.isArray(groups)) continue;
    groups.forEach((group: Json, gi) => {
      const handlers = Array.isArray(group?.hooks) ? (group.hooks as Json[]) : [];
      handlers.forEach((h, hi) => {
        if (h?.type !== 'command' || typeof h.command !== 'string') return;
        const handler: Json = {
          type: 'command',
          command: h.command,
          timeout: Math.max(1, Number(h.timeout ?? 600)),
          async: h.async === true,
        };
        if (h.statusMessage != null) handler.statusMessage = h.statusMessage;
        const identity: Json = { event_name: label, hooks: [handler] };
        if (!NO_MATCHER.has(event) && group.matcher != null) identity.matcher = group.matcher;
        out.push({ key: `${hooksFile}:${label}:${gi}:${hi}`, hash: sha256OfSortedJson(identity), command: h.command });
      });
    });
  }
  return out;
}

/**
 * Pure: Codex's verdict for our handlers in the hooks file, from the user's config.toml: hooks can be turned
 * off, a project's .codex/ is ignored until the project is trusted, and each hook must be trusted by its hash.
 */
function verdict({ scope, projectRoot, hooksFile, config, path: where, unreadable, isOurs }: TrustFacts): RunVerdict {
  if (unreadable.user) return { runs: 'unknown', reason: `cannot read ${where.user}: ${unreadable.user}` };
  const userConfig = config.user;
  const features = (userConfig?.features ?? {}) as Json;
  if (features.hooks === false || features.codex_hooks === false)
    return {
      runs: 'no',
      reason: 'hooks are turned off in ~/.codex/config.toml ([features] hooks = false)',
      step: 'remove hooks = false from [features] in ~/.codex/config.toml',
    };
  if (scope === 'project' && projectRoot) {
    const projects = (userConfig?.projects ?? {}) as Record<string, Json>;
    if (!selfAndParents(projectRoot).some((d) => projects[d]?.trust_level === 'trusted'))
      return {
        runs: 'no',
        reason: 'Codex ignores a project .codex/ folder until the project is trusted',
        step: 'start codex in this project and trust it (or run codex exec --trust once); then open /hooks and trust git-ckpt’s hooks',
      };
  }
  const hooksConfig = config.hooks;
  const ours = hooksConfig ? codexHookTrustEntries(hooksFile, hooksConfig).filter((e) => isOurs(e.command)) : [];
  const state = ((userConfig?.hooks as Json | undefined)?.state ?? {}) as Record<string, Json>;
  const untrusted = ours.filter((e) => state[e.key]?.trusted_hash !== e.hash || state[e.key]?.enabled === false);
  if (untrusted.length)
    return {
      runs: 'no',
      reason: `${untrusted.length} of git-ckpt’s ${ours.length} hooks are not trusted (Codex skips new or changed hooks without a word)`,
      step: 'open /hooks in Codex and trust git-ckpt’s hooks (again after every change to them), or run codex with --dangerously-bypass-hook-trust',
    };
  return { runs: 'yes', reason: ours.length ? `all ${ours.length} hooks trusted in ~/.codex/config.toml` : 'nothing wired' };
}

const trust: TrustSpec = {
  files: ({ hooksFile, env, home }) => ({
    user: { file: path.join(env.CODEX_HOME ?? path.join(home, '.codex'), 'config.toml'), format: 'toml' },
    hooks: { file: hooksFile },
  }),
  verdict,
};

/** Pure: Codex rollout lines read into the index: where each turn started, and what a revert or a rollback dropped. @public (tests use it) */
export function indexCodexLines(index: TranscriptIndex, lines: readonly string[]): TranscriptIndex {
  let rolledBack = index.rolledBack;
  const turnStarts = { ...index.turnStarts };
  let historyEnd = index.historyEnd ?? null;
  let fork = index.fork ?? null;
  for (const text of lines) {
    if (
      !text.includes('thread_rolled_back') &&
      !text.includes('task_started') &&
      !text.includes('history_base') &&
      !text.includes('forked_from_id')
    )
      continue;
    const line = parseLine(text);
    const payload = line?.payload as
      | {
          type?: unknown;
          num_turns?: unknown;
          turn_id?: unknown;
          history_base?: { end_ordinal_exclusive?: unknown };
          forked_from_id?: unknown;
          forked_from_ordinal_exclusive?: unknown;
        }
      | undefined;
    if (!line || !payload) continue;
    if (line.type === 'session_meta' && typeof payload.forked_from_id === 'string' && payload.forked_from_id !== '' && !fork)
      fork = {
        session: payload.forked_from_id,
        ...(Number.isInteger(payload.forked_from_ordinal_exclusive) ? { ordinal: payload.forked_from_ordinal_exclusive as number } : {}),
      };
    if (line.type === 'event_msg' && payload.type === 'thread_rolled_back' && Number.isInteger(payload.num_turns))
      rolledBack += Math.max(0, payload.num_turns as number);
    else if (
      line.type === 'event_msg' &&
      payload.type === 'task_started' &&
      typeof payload.turn_id === 'string' &&
      Number.isInteger(line.ordinal)
    )
      turnStarts[payload.turn_id] ??= line.ordinal as number;
    else if (line.type === 'session_meta' && Number.isInteger(payload.history_base?.end_ordinal_exclusive))
      historyEnd = payload.history_base!.end_ordinal_exclusive as number;
  }
  return { ...index, rolledBack, turnStarts, historyEnd, fork };
}

/**
 * Pure: how many turns of the branch a new Codex segment keeps: those that started before its history
 * end. Undefined when a turn's start was never read (no claim then).
 * @public (tests use it)
 */
export function codexKept(
  branch: readonly number[],
  turnIdOf: (serial: number) => string | undefined,
  index: TranscriptIndex,
): number | undefined {
  const end = index.historyEnd;
  if (end === null || end === undefined) return branch.length - index.rolledBack;
  // From the newest turn back: turns start in order, so the first one that started before the end keeps
  // every one before it (whose ids a long session's state may no longer hold).
  for (let i = branch.length - 1; i >= 0; i--) {
    const id = turnIdOf(branch[i]!);
    const start = id === undefined ? undefined : index.turnStarts?.[id];
    if (start === undefined) return undefined;
    if (start < end) return Math.max(0, i + 1 - index.rolledBack);
  }
  return 0;
}

/** OpenAI's Codex CLI: `.codex/hooks.json`. */
export const codex = {
  name: 'codex',
  title: 'Codex CLI',
  payload: { projectDirEnv: [], aliases: { turnKey: ['turn_id'] }, failureInTranscript: failureInRollout },
  output: { neutral: '', systemMessage: true },
  // No PostToolUseFailure (its PostToolUse also fires after a failed shell command), and it hooks only its
  // shell, apply_patch and MCP tools; its matcher is a Rust regex, without look-ahead: all.
  wiring: settingsHooks({
    file: { project: '.codex/hooks.json', user: userFile('.codex/hooks.json') },
    failureEvent: false,
    toolMatcher: '*',
    timeoutUnit: 's',
    asyncPost: true,
  }),
  trust,
  // Its config.toml is the user's own text: our table goes between marker comments.
  mcp: {
    file: { project: '.codex/config.toml', user: userFile('.codex/config.toml', { variable: 'CODEX_HOME', file: 'config.toml' }) },
    format: 'toml-table',
    key: 'mcp_servers',
    entry: plainEntry,
  },
  // clap takes the session id after `--`. The app-server (JSON-RPC on stdio, the API its TUI uses) forks a
  // thread after a turn (`thread/fork {threadId, lastTurnId}`): a new thread holding the turns up to that
  // one, the thread forked from left as it is.
  resume: {
    argv: (session) => ['codex', 'resume', '--', session],
    fresh: ['codex'],
    step: (prompt) => `press Esc twice and step back to ${prompt}, then Enter to edit it`,
    fork: {
      command: ['codex', 'app-server'],
      initialize: { clientInfo: { name: 'git-ckpt', title: null, version: '0' } },
      request: (threadId, lastTurnId) => ({ method: 'thread/fork', params: { threadId, lastTurnId } }),
      sessionOf: (result) => {
        const thread = result.thread;
        const id = thread && typeof thread === 'object' ? (thread as Json).id : undefined;
        return typeof id === 'string' ? id : null;
      },
      planned: (prompt) => `git-ckpt forks the thread right before ${prompt} and opens the fork; the thread itself stays as it is`,
      made: (prompt) => `a fork of the thread, right before ${prompt} (the thread itself is as it was)`,
    },
  },
  // 0.171's revert (its app-server's `thread/revert`, what the TUI's backtrack calls) starts a new rollout
  // segment, `<rollout>_<segment>.jsonl`, whose `session_meta` says `history_base.end_ordinal_exclusive`: the
  // thread keeps what came before that ordinal. Older builds wrote `thread_rolled_back` with `num_turns`. Both
  // are written at the rewind: the prompt reads them. A forked thread's `session_meta` names `forked_from_id`
  // and `forked_from_ordinal_exclusive`.
  transcript: {
    readsAt: ['turn-start'],
    read: (index, lines, { branch, turnKeys }) => {
      const next = indexCodexLines(index, lines);
      const idOf = new Map(Object.entries(turnKeys).map(([id, serial]) => [serial, id]));
      const kept = codexKept(branch, (serial) => idOf.get(serial), next);
      return {
        index: { ...next, rolledBack: 0, historyEnd: null },
        verdict: kept === undefined ? { rewound: false, why: "a turn's start is not in the rollout" } : continuesFrom(branch, kept),
      };
    },
    // A new segment: where its turns started, and its fork's mark, are still known.
    carryOver: (saved) => ({ turnStarts: saved.turnStarts ?? {}, fork: saved.fork ?? null, forkChecked: saved.forkChecked }),
    fileTools: { patch: ['apply_patch'] },
  },
  readme: {
    tested: '0.171.0',
    wiredThrough: '`.codex/hooks.json`',
    waits: '104 ms',
    gaps: 'two trust gates (project, then `/hooks`)',
  },
} as const satisfies AgentAdapter;
