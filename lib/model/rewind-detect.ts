/**
 * Pure: noticing, after the fact, that the user rewound the conversation
 * inside the agent. No agent fires a hook for it; each leaves it on disk, and
 * each is read here from the lines its transcript gained since the last read:
 *
 * - Claude Code writes nothing at the rewind itself. The next prompt's line
 *   (every user line of a turn carries the hook's `prompt_id` as `promptId`)
 *   has a `parentUuid` pointing back before the turns left behind. Each line's
 *   ancestry is kept as the serial of the deepest recorded prompt above it,
 *   so a parent far back in the file is known without reading it again.
 *   A compaction's boundary line has no parent but a `logicalParentUuid`.
 * - Codex 0.171 (its app-server's `thread/revert`, what the TUI's backtrack calls) starts a new
 *   rollout segment, `<rollout>_<segment>.jsonl`, whose `session_meta` says
 *   `history_base.end_ordinal_exclusive`: the thread keeps what came before that ordinal, so the
 *   turns that started at or after it were dropped. Older builds wrote
 *   `{"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":N}}` instead.
 * - Gemini CLI appends `{"$rewindTo":"<message id>"}` to its session file at
 *   once: that user message and everything after it were dropped.
 *
 * A fork is read from the same lines. Claude's /branch marks every line it copied into the new
 * session with `forkedFrom: {sessionId, messageUuid}`. Its --fork-session (2.1.332) copies the lines
 * with their own uuids and no mark (their promptId rewritten to the fork's first prompt's), so the fork
 * begins with lines the other session's index knows (`copiedFrom`). A forked Codex thread's
 * `session_meta` names `forked_from_id` and `forked_from_ordinal_exclusive`, where its history ends.
 *
 * Each reader returns the new index to keep and, when it saw a rewind, the
 * serial of the turn the conversation now continues from. Lines that do not
 * parse are skipped: a transcript is the agent's, and read only as a hint.
 */

/** What a session's transcript has told so far, kept in the store between hooks. */
export interface TranscriptIndex {
  agent: 'claude' | 'codex' | 'gemini';
  /** The transcript file read (another file: read again from its start). */
  file: string;
  /** Bytes read so far, always to the end of a line. */
  offset: number;
  /** Claude: each line's uuid → the serial of the deepest recorded prompt it descends from (0: none above it). */
  labels: Record<string, number>;
  /** Claude: each recorded turn's prompt line: its uuid and its parent's label (-1: a parent never read). */
  prompts: Record<string, { uuid: string; from: number }>;
  /** Codex: user turns rolled back since the last turn start. Gemini: the message ids of the conversation, in order (`*`: a prompt). */
  rolledBack: number;
  userMessages: string[];
  /** Codex: the ordinal each turn (by its turn id) started at, and a new segment's history end not yet applied. */
  turnStarts?: Record<string, number>;
  historyEnd?: number | null;
  /** The session this one was forked from, and where: Claude's last copied message, Codex's history end. */
  fork?: ForkSource | null;
  /** The fork was looked for already (and marked when its source was found). */
  forkChecked?: boolean;
}

export interface ForkSource {
  session: string;
  message?: string;
  ordinal?: number;
}

export function emptyIndex(agent: TranscriptIndex['agent'], file: string): TranscriptIndex {
  return { agent, file, offset: 0, labels: {}, prompts: {}, rolledBack: 0, userMessages: [] };
}

/** Claude's labels are kept for this many lines; a parent older than that is unknown, and no rewind is claimed. */
const LABELS_KEPT = 20_000;

/** Pure: the complete lines of `chunk` and the number of bytes they span (a last line still being written waits). */
export function completeLines(chunk: Buffer): { lines: string[]; bytes: number } {
  const end = chunk.lastIndexOf(10);
  if (end < 0) return { lines: [], bytes: 0 };
  return { lines: chunk.subarray(0, end).toString('utf8').split('\n'), bytes: end + 1 };
}

function parse(line: string): Record<string, unknown> | null {
  if (!line.trim()) return null;
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A Claude user line that carries tool results is a step of its turn, not its prompt. */
export function isToolResult(line: Record<string, unknown>): boolean {
  const content = (line.message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) && content.some((b) => (b as { type?: unknown })?.type === 'tool_result');
}

/**
 * Pure: Claude transcript lines read into the index. `turnOf` gives the
 * serial the hooks numbered a prompt id as (undefined: not one of ours).
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
    const line = parse(text);
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

/** What a reader concluded about the turn now starting or running. */
export type RewindVerdict =
  | { rewound: false; why?: string }
  /** The conversation continues from turn `parent` (0: from before the first prompt). */
  | { rewound: true; parent: number };

/**
 * Pure: whether Claude's turn `serial` continues from an earlier turn than
 * the one before it. Its prompt line may not be on disk yet (Claude writes
 * it as the turn goes on): `pending` then, and a later event of the turn asks again.
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

/** Pure: Codex rollout lines read into the index: where each turn started, and what a revert or a rollback dropped. */
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
    const line = parse(text);
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
 * Pure: how many of a Claude session's first lines are `other`'s (what --fork-session copies: the lines
 * with their own uuids), and the last of them. A session forked from a fork begins with lines both hold:
 * the one that holds more of them is the one it came from.
 */
export function copiedFrom(session: TranscriptIndex, other: TranscriptIndex): { lines: number; last: string } | undefined {
  let lines = 0;
  let last: string | undefined;
  for (const uuid of Object.keys(session.labels)) {
    if (other.labels[uuid] === undefined) break;
    lines += 1;
    last = uuid;
  }
  return last === undefined ? undefined : { lines, last };
}

/**
 * Pure: the serial of the other session's last turn a fork holds, from what git-ckpt read of that
 * session (its index, and its turn ids to serials): Claude's copied message is labelled with the deepest
 * prompt above it; a Codex fork keeps the turns that started before its history end. Undefined when
 * that session's transcript was never read here (or the point is not in what was).
 */
export function forkedTurn(
  source: ForkSource,
  parent: TranscriptIndex | undefined,
  parentTurnKeys: Readonly<Record<string, number>>,
): number | undefined {
  if (!parent) return undefined;
  if (source.message !== undefined) {
    const label = parent.labels[source.message];
    return label === undefined || label <= 0 ? undefined : label;
  }
  if (source.ordinal === undefined || !parent.turnStarts) return undefined;
  let last: number | undefined;
  for (const [turnId, start] of Object.entries(parent.turnStarts)) {
    const serial = parentTurnKeys[turnId];
    if (serial !== undefined && start < source.ordinal) last = Math.max(last ?? 0, serial);
  }
  return last;
}

/**
 * Pure: how many turns of the branch a new Codex segment keeps: those that started before its history
 * end. Undefined when a turn's start was never read (no claim then).
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

/**
 * Pure: Gemini session lines read into the index: the conversation as the CLI holds it (0.61.0). A
 * `$set` record replaces it whole (written at each load and after a rewind), a message record adds a
 * message or updates one, and `$rewindTo` drops that message and what follows (an id it does not hold
 * empties it, as its own loader reads it). `userMessages` keeps each message's id, `*`-prefixed for a
 * prompt: a tool's result is recorded as the user's too, and is no prompt.
 */
export function indexGeminiLines(index: TranscriptIndex, lines: readonly string[]): TranscriptIndex {
  let messages = [...index.userMessages];
  const key = (m: { id?: unknown; type?: unknown; content?: unknown }) =>
    `${m.type === 'user' && isGeminiPrompt(m.content) ? '*' : ''}${String(m.id)}`;
  const at = (id: string) => messages.findIndex((m) => m === id || m === `*${id}`);
  for (const text of lines) {
    const line = parse(text);
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

/** Pure: how many prompts Gemini's conversation holds. */
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

/**
 * Pure: where a turn that starts now continues from, given the current
 * branch before it (serials, root first) and how many of its last turns the
 * agent dropped (`kept` of them are left). Turns are dropped only from the
 * end of what the branch holds.
 */
export function continuesFrom(branch: readonly number[], kept: number): RewindVerdict {
  if (kept >= branch.length || kept < 0) return { rewound: false };
  return { rewound: true, parent: kept === 0 ? 0 : branch[kept - 1]! };
}

/**
 * Pure: whether this event is the one that reads the transcript for a rewind
 * before its turn. Claude writes the new prompt's line only as the turn goes
 * on: its first tool call or its end reads it. Codex and Gemini wrote their
 * markers at the rewind itself: the prompt reads them.
 */
export function rewindCheckDue(
  event: { agent: string; phase: string; subagent: unknown; transcript: string | null },
  turn: number | null,
  checked: number,
): TranscriptIndex['agent'] | null {
  if (turn === null || turn <= checked || event.subagent || !event.transcript) return null;
  if (event.agent === 'claude') return event.phase === 'pre' || event.phase === 'post' || event.phase === 'turn-end' ? 'claude' : null;
  if (event.agent === 'codex' || event.agent === 'gemini') return event.phase === 'turn-start' ? event.agent : null;
  return null;
}
