/**
 * Pure: numbering hook events into turns and steps, per agent session.
 *
 * - A turn is a prompt a person submitted. A prompt the agent injects (a
 *   background task's completion) stays in the current turn.
 * - The agent's own ids decide where they exist: its turn id (prompt_id,
 *   turn_id, generation_id) names the turn, its tool-call id the step, so a post
 *   that arrives late (a background subagent's, after the turn ended or the next
 *   prompt began) is attributed to its own call, not to the order of arrival.
 * - Without ids, turn-start opens a turn, and so does the first tool call after
 *   a turn-end; a post takes the step of the pre before it.
 * - One event delivered twice (Copilot and Cursor also run Claude's hooks) is
 *   counted once: the agent's own timestamp, tool-call id or turn id names it.
 */
import type { Phase } from './phases.js';

export interface SessionState {
  /** The current turn number (1-based); 0 before the first turn. */
  turn: number;
  /** Agent turn ids already numbered, to their turn. */
  turnKeys: Record<string, number>;
  /** Set by turn-end: the next tool call without a turn id opens a new turn. */
  ended: boolean;
  /** Tool calls so far in the current turn. */
  step: number;
  /** Tool-call ids already numbered, to their [turn, step] (kept across turns for late posts). */
  calls: Record<string, [number, number | null]>;
  /** A pre without an id is waiting for its post (agents without tool-call ids). */
  preOpen: boolean;
  /** Subagent tool calls whose post has not come yet: when their pre came, and the file a file tool writes. */
  running: Record<string, { since: number; path: string | null; call?: OpenCall }>;
  /** The current turn's title, until a checkpoint carries it. */
  title: string | null;
  /**
   * The main thread's tool call whose pre came and whose post has not: its post
   * may run in the background (async hooks), after the next pre or the turn's end.
   */
  open: OpenCall | null;
  /** Calls whose changes a later hook took as theirs (their own post came too late). */
  adopted: string[];
  /** Keys of recent events, to count an event delivered twice once. */
  seen: string[];
  /** The newest turn whose transcript was read for a rewind inside the agent before it (rewind-detect.ts). */
  rewindChecked: number;
  /**
   * The turns that followed a rewind, to the turn they continue from (serial → serial), as their marks
   * in the ledger say: the current branch without reading the ledger. Null in a state from before them.
   */
  rewindParents: Record<string, number> | null;
  /** The agent said at the session's start that it is a fork of another session (the transcript tells which). */
  forked: boolean;
}

/** A tool call as the state remembers it, to record its post for it (null: an agent without call ids). */
interface OpenCall {
  callId: string | null;
  tool: string | null;
  input: string | null;
  turn: number;
  step: number | null;
  agentTurn: string | null;
  transcript?: string | null;
  subagent?: { id: string; type: string | null } | null;
}

/** What numbering reads of a hook event (agents/hook-payload.ts's HookEvent has it all). */
export interface NumberedEvent {
  /** The agent really running, and the one whose configuration delivered the event. */
  agent: string;
  via: string;
  /** The agent runs another's hooks too (agents/registry.ts), so one event may arrive twice. */
  crossLoaded?: boolean;
  phase: Phase;
  turnKey: string | null;
  callId: string | null;
  injected: boolean;
  subagent: { id: string; type: string | null } | null;
  eventTime: number | null;
  forkStart?: boolean;
  transcript?: string | null;
  tool?: string | null;
  input?: string | null;
  /** The workspace-relative file a file tool writes, when it is one. */
  targetPath?: string | null;
  /** The prompt's title (turn-start), already redacted; null when prompts are not recorded. */
  title?: string | null;
}

export interface Numbering {
  /** null before the session's first turn. */
  turn: number | null;
  step: number | null;
  /** The same event was already counted (delivered by a second configuration): record nothing. */
  duplicate: boolean;
  /**
   * A turn-end while a subagent's tool call is still running: its post will
   * capture what it wrote, attributed to it, so the turn-end takes nothing now.
   */
  defer: boolean;
  /** The title for a checkpoint made now in the current turn (the turn's first). */
  title: string | null;
  /**
   * Files that running subagent calls are writing: a checkpoint made now for
   * another event leaves them as they were, so each lands in its own call's post.
   */
  hold: string[];
  /**
   * The open call whose post has not come: this event first records what
   * changed as that call's post, so attribution stays exact with async posts.
   */
  adopt: OpenCall | null;
  /** A post whose changes a later hook already took: record nothing. */
  taken: boolean;
  /**
   * A turn's start or end that arrived after its moment (Cline runs TaskStart, TaskResume and
   * TaskComplete detached, so they race the tool calls): what changes now is a call's work, so it
   * records nothing and adopts nothing.
   */
  late: boolean;
  state: SessionState;
}

export function emptySessionState(): SessionState {
  return {
    turn: 0,
    turnKeys: {},
    ended: false,
    step: 0,
    calls: {},
    preOpen: false,
    running: {},
    title: null,
    open: null,
    adopted: [],
    seen: [],
    rewindChecked: 0,
    rewindParents: {},
    forked: false,
  };
}

/** Pure: whether a stored value is a usable state (older git-ckpt wrote fewer fields: those are filled in). */
export function reviveSessionState(value: unknown): SessionState | undefined {
  const v = value as Partial<SessionState> | null;
  if (
    !v ||
    typeof v !== 'object' ||
    !Number.isInteger(v.turn) ||
    !Number.isInteger(v.step) ||
    typeof v.turnKeys !== 'object' ||
    v.turnKeys === null
  )
    return undefined;
  const calls: SessionState['calls'] = {};
  for (const [id, at] of Object.entries((v.calls ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(at) && Number.isInteger(at[0])) calls[id] = [at[0] as number, Number.isInteger(at[1]) ? (at[1] as number) : null];
    else if (Number.isInteger(at)) calls[id] = [v.turn!, at as number];
  }
  return {
    ...emptySessionState(),
    turn: v.turn!,
    turnKeys: v.turnKeys as Record<string, number>,
    ended: Boolean(v.ended),
    step: v.step!,
    calls,
    preOpen: Boolean(v.preOpen),
    running: reviveRunning(v.running),
    title: typeof v.title === 'string' ? v.title : null,
    open: v.open && typeof v.open === 'object' && validCallId((v.open as OpenCall).callId) ? (v.open as OpenCall) : null,
    adopted: Array.isArray(v.adopted) ? v.adopted.filter((k): k is string => typeof k === 'string') : [],
    seen: Array.isArray(v.seen) ? v.seen.filter((k): k is string => typeof k === 'string') : [],
    // A state from before rewinds were read: its turns so far count as read.
    rewindChecked: Number.isInteger(v.rewindChecked) ? v.rewindChecked! : v.turn!,
    rewindParents: reviveParents(v.rewindParents),
    forked: v.forked === true,
  };
}

function reviveParents(value: unknown): SessionState['rewindParents'] {
  if (!value || typeof value !== 'object') return null;
  const out: Record<string, number> = {};
  for (const [serial, parent] of Object.entries(value as Record<string, unknown>))
    if (Number.isInteger(parent) && Number.isInteger(Number(serial)) && (parent as number) < Number(serial)) out[serial] = parent as number;
  return out;
}

function reviveRunning(value: unknown): SessionState['running'] {
  const out: SessionState['running'] = {};
  if (!value || typeof value !== 'object') return out;
  for (const [id, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'number') out[id] = { since: v, path: null };
    else if (v && typeof v === 'object' && Number.isFinite((v as { since?: unknown }).since)) {
      const p = (v as { path?: unknown }).path;
      const call = (v as { call?: OpenCall }).call;
      out[id] = {
        since: (v as { since: number }).since,
        path: typeof p === 'string' ? p : null,
        ...(call && typeof call.callId === 'string' ? { call } : {}),
      };
    }
  }
  return out;
}

const KEPT_KEYS = 200;
const SEEN_KEPT = 64;
/** A subagent call older than this is taken as lost (its post will never come). @public (tests use it) */
export const RUNNING_STALE_MS = 10 * 60_000;

function trim<T>(map: Record<string, T>, keep = KEPT_KEYS): Record<string, T> {
  const keys = Object.keys(map);
  if (keys.length <= keep) return map;
  return Object.fromEntries(keys.slice(-keep).map((k) => [k, map[k]!]));
}

/** Pure: the key that names one real event, or null when the payload has nothing to tell two events apart. */
function eventKey(e: NumberedEvent): string | null {
  if (e.eventTime === null && e.callId === null && e.turnKey === null) return null;
  return [e.phase, e.eventTime ?? '', e.callId ?? '', e.turnKey ?? ''].join('|');
}

/** An open call's id as the state may hold it: the agent's, or null for an agent that gives none. */
function validCallId(v: unknown): boolean {
  return typeof v === 'string' || v === null;
}

/** Pure: what the state keeps of a pre's call, to record its post for it later. */
function remembered(event: NumberedEvent, turn: number, step: number | null): OpenCall {
  return {
    callId: event.callId,
    tool: event.tool ?? null,
    input: event.input ?? null,
    turn,
    step,
    agentTurn: event.turnKey,
    transcript: event.transcript ?? null,
  };
}

/** Pure: number one event and return the next state (the input is not changed). */
export function numberEvent(state: SessionState, event: NumberedEvent, now: number): Numbering {
  const next: SessionState = {
    ...state,
    turnKeys: { ...state.turnKeys },
    calls: { ...state.calls },
    running: { ...state.running },
    seen: [...state.seen],
  };

  if (event.crossLoaded || event.agent !== event.via) {
    const key = eventKey(event);
    if (key !== null) {
      if (next.seen.includes(key))
        return {
          turn: state.turn || null,
          step: null,
          duplicate: true,
          defer: false,
          title: null,
          hold: [],
          adopt: null,
          taken: false,
          late: false,
          state,
        };
      next.seen = [...next.seen, key].slice(-SEEN_KEPT);
    }
  }

  const openTurn = (title: string | null) => {
    next.turn += 1;
    next.step = 0;
    next.ended = false;
    next.preOpen = false;
    next.title = title;
  };
  const realPrompt = event.phase === 'turn-start' && !(event.injected && next.turn > 0);
  // A background post that lands after its turn ended belongs to its own call's turn: it opens none.
  const lateKnownPost = event.phase === 'post' && event.callId !== null && next.calls[event.callId] !== undefined;
  let turn = next.turn;
  const knownTurn = event.turnKey !== null && next.turnKeys[event.turnKey] !== undefined;
  if (knownTurn) {
    turn = next.turnKeys[event.turnKey!]!;
  } else if (event.phase === 'turn-start') {
    if (realPrompt) openTurn(event.title ?? null);
    else next.ended = false;
    turn = next.turn;
  } else if (
    event.phase !== 'session-start' &&
    !lateKnownPost &&
    (next.turn === 0 || event.turnKey !== null || (next.ended && (event.phase === 'pre' || event.phase === 'post')))
  ) {
    // A tool call in a new turn whose prompt hook never fired (hooks installed mid-session, or no prompt hook).
    openTurn(null);
    turn = next.turn;
  }
  if (event.turnKey !== null && next.turnKeys[event.turnKey] === undefined && next.turn > 0) next.turnKeys[event.turnKey] = turn;

  let step: number | null = null;
  if (event.phase === 'pre' || event.phase === 'post') {
    const known = event.callId !== null ? next.calls[event.callId] : undefined;
    if (known) {
      [turn, step] = known;
    } else if (turn !== next.turn) {
      // A new call of an earlier turn (a background subagent after the next prompt): its turn, no step.
      if (event.callId !== null) next.calls[event.callId] = [turn, null];
    } else if (event.callId === null && event.phase === 'post' && next.preOpen) {
      step = next.step;
    } else {
      next.step += 1;
      step = next.step;
      if (event.callId !== null) next.calls[event.callId] = [turn, step];
    }
    if (turn === next.turn) next.preOpen = event.callId === null && event.phase === 'pre';
    if (event.callId !== null && event.subagent) {
      if (event.phase === 'pre') {
        const call = { ...remembered(event, turn, step), subagent: event.subagent };
        next.running[event.callId] = { since: now, path: event.targetPath ?? null, call };
      } else delete next.running[event.callId];
    } else if (event.callId !== null && event.phase === 'post') delete next.running[event.callId];
  }
  for (const [id, call] of Object.entries(next.running)) if (now - call.since > RUNNING_STALE_MS) delete next.running[id];
  const defer = event.phase === 'turn-end' && Object.keys(next.running).length > 0;

  // A start of a turn whose tool calls came already, or an end of a turn after the next one began.
  const late = knownTurn && (event.phase === 'turn-start' || (event.phase === 'turn-end' && turn !== next.turn));
  // The main thread's next step (a pre, the turn's end, a new prompt) closes the call still open.
  let adopt: OpenCall | null = null;
  const mainThread = !event.subagent;
  // Without call ids, any such event is another call's: a pre that found the one before it still open
  // means that call's post never came (Droid sends none for a failed call).
  if (
    next.open &&
    !late &&
    (next.open.callId !== event.callId || next.open.callId === null) &&
    mainThread &&
    (event.phase === 'pre' || event.phase === 'turn-end' || event.phase === 'turn-start')
  ) {
    adopt = next.open;
    if (adopt.callId !== null) next.adopted = [...next.adopted, adopt.callId].slice(-SEEN_KEPT);
    next.open = null;
  }
  // A subagent's next call or its end closes its call still open the same way (its post runs in the background too).
  if (!adopt && (event.phase === 'subagent-end' || event.phase === 'pre') && event.subagent) {
    const mine = Object.entries(next.running)
      .filter(([id, r]) => id !== event.callId && r.call?.subagent?.id === event.subagent!.id)
      .sort((a, b) => b[1].since - a[1].since)[0];
    if (mine?.[1].call) {
      adopt = mine[1].call;
      delete next.running[mine[0]];
      next.adopted = [...next.adopted, mine[0]].slice(-SEEN_KEPT);
    }
  }
  // A late post of an adopted call records nothing: its call had finished when the next event took
  // its changes, so whatever changed since belongs to later work.
  const taken = event.phase === 'post' && event.callId !== null && next.adopted.includes(event.callId);
  const hold = Object.entries(next.running)
    .filter(([id, call]) => id !== event.callId && call.path !== null)
    .map(([, call]) => call.path!);

  if (event.phase === 'pre' && mainThread && turn === next.turn) {
    next.open = remembered(event, turn, step);
  } else if (event.phase === 'post' && (next.open?.callId === event.callId || (event.callId === null && !event.subagent))) next.open = null;
  if (event.phase === 'turn-end' && turn === next.turn) next.ended = true;
  if (event.forkStart) next.forked = true;

  next.turnKeys = trim(next.turnKeys);
  next.calls = trim(next.calls);
  return {
    turn: turn > 0 ? turn : null,
    step,
    duplicate: false,
    defer,
    title: turn === next.turn && turn > 0 ? next.title : null,
    hold: [...new Set(hold)],
    adopt,
    taken,
    late,
    state: next,
  };
}

/** Pure: the state after a checkpoint carried the turn's title. */
export function titleRecorded(state: SessionState, turn: number): SessionState {
  return state.turn === turn ? { ...state, title: null } : state;
}
