/**
 * Pure: the agent-neutral half of noticing, after the fact, that the user
 * rewound the conversation inside the agent. No agent fires a hook for it;
 * each leaves it in its transcript, which its adapter reads (`transcript`)
 * from the lines gained since the last read, into the index kept here between
 * hooks. What every reader shares: complete lines, where a turn continues from
 * once an agent dropped turns, and a fork's source from what its lines copied.
 * Lines that do not parse are skipped: a transcript is the agent's, and read
 * only as a hint.
 */

/** What a session's transcript has told so far, kept in the store between hooks. */
export interface TranscriptIndex {
  /** The agent whose adapter reads it. */
  agent: string;
  /** The transcript file read (another file: read again from its start). */
  file: string;
  /** Bytes read so far, always to the end of a line. */
  offset: number;
  /** A transcript of linked lines: each line's id → the serial of the deepest recorded prompt it descends from (0: none above it). */
  labels: Record<string, number>;
  /** Each recorded turn's prompt line: its id and its parent's label (-1: a parent never read). */
  prompts: Record<string, { uuid: string; from: number }>;
  /** Turns the agent rolled back since the last turn start. */
  rolledBack: number;
  /** A transcript of messages: the conversation's message ids, in order (`*`: a prompt). */
  userMessages: string[];
  /** A transcript of numbered items: the ordinal each turn (by its turn id) started at, and a new segment's history end not yet applied. */
  turnStarts?: Record<string, number>;
  historyEnd?: number | null;
  /** The session this one was forked from, and where: the last message copied, or the history end. */
  fork?: ForkSource | null;
  /** The fork was looked for already (and marked when its source was found). */
  forkChecked?: boolean;
}

export interface ForkSource {
  session: string;
  message?: string;
  ordinal?: number;
}

export function emptyIndex(agent: string, file: string): TranscriptIndex {
  return { agent, file, offset: 0, labels: {}, prompts: {}, rolledBack: 0, userMessages: [] };
}

/** Pure: the complete lines of `chunk` and the number of bytes they span (a last line still being written waits). */
export function completeLines(chunk: Buffer): { lines: string[]; bytes: number } {
  const end = chunk.lastIndexOf(10);
  if (end < 0) return { lines: [], bytes: 0 };
  return { lines: chunk.subarray(0, end).toString('utf8').split('\n'), bytes: end + 1 };
}

/** Pure: a transcript line as a JSON object, or null. */
export function parseLine(line: string): Record<string, unknown> | null {
  if (!line.trim()) return null;
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** What a reader concluded about the turn now starting or running. */
export type RewindVerdict =
  | { rewound: false; why?: string }
  /** The conversation continues from turn `parent` (0: from before the first prompt). */
  | { rewound: true; parent: number };

/**
 * Pure: how many of a session's first lines are `other`'s (what a fork that leaves no mark copies: the
 * lines with their own ids), and the last of them. A session forked from a fork begins with lines both hold:
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
 * session (its index, and its turn ids to serials): a copied message is labelled with the deepest
 * prompt above it; a fork at a history end keeps the turns that started before it. Undefined when
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
 * Pure: where a turn that starts now continues from, given the current
 * branch before it (serials, root first) and how many of its last turns the
 * agent dropped (`kept` of them are left). Turns are dropped only from the
 * end of what the branch holds.
 */
export function continuesFrom(branch: readonly number[], kept: number): RewindVerdict {
  if (kept >= branch.length || kept < 0) return { rewound: false };
  return { rewound: true, parent: kept === 0 ? 0 : branch[kept - 1]! };
}
