/**
 * An agent hook, end to end: read the payload, find the workspace, record the
 * event. It never throws and never reports on stdout or stderr: the agent sees
 * only the neutral output it requires, and every problem goes to `hook.log` in
 * the store (or, without a store, next to the store root).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Workspace } from '../workspace.js';
import { CkptError } from '../model/errors.js';
import { hookMessage, kindForPhase, parseHookPayload, promptTitle, type HookEvent } from './hook-payload.js';
import { adapterOf, neutralOutput, outputWithMessage } from './registry.js';
import { updateSessionState } from '../store/sessions.js';
import { snapshotLocked, type SnapshotResult } from '../capture/snapshot.js';
import { numberEvent, titleRecorded, type Numbering } from '../model/turns.js';
import { rootHookLog, storePaths, storeRoot, type StorePaths } from '../store/store.js';
import { DEFAULT_SETTINGS, readUserSettings, type Settings } from '../store/settings.js';
import { callFailure } from './transcript.js';
import { followRewind, noticeRewindLocked, rewindCheckDue, type RewindFinding } from './rewind.js';
import { noCheckpointYet, runningBaseline } from '../capture/baseline.js';
import { displayPath, unsafePathReason } from '../model/paths.js';
import { locateWorkspace } from '../store/locate.js';
import { spawnBackground } from '../store/background.js';
import type { ChangeSource } from '../store/context.js';

export interface HookRun {
  /** Exactly what to print on stdout. */
  stdout: string;
  event: HookEvent;
  /** The checkpoint this event created (undefined when nothing changed or nothing was taken). */
  created?: string;
  /** Lines written to the hook log. */
  logged: string[];
  /** ckpt.daemon is on and this hook ran outside the daemon: the caller makes sure one runs. */
  wantsDaemon?: boolean;
}

export interface HookOptions {
  env: Record<string, string | undefined>;
  /** The hook process's own working directory (the last fallback for the workspace). */
  cwd: string;
  /** When the hook process started: the budget counts from there. */
  startedAt: number;
  /** The daemon's watcher account of changes, per workspace root. */
  changesFor?: (root: string) => ChangeSource | undefined;
}

const LOG_MAX_BYTES = 1024 * 1024;

function isDirectory(dir: string | null): dir is string {
  if (!dir || !path.isAbsolute(dir)) return false;
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `inner` is `outer` or below it (both absolute). */
function within(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Whether the hook's own working directory vouches for the workspace a payload
 * names: it is the workspace of that directory, or inside it. Agents start
 * their hooks in the project (or the session's cwd), and a payload's cwd
 * follows `cd` within it. `/` and the home directory are no workspace, so
 * they vouch for nothing.
 */
function vouchedByProcessCwd(workspaceRoot: string, processCwd: string): boolean {
  try {
    return within(workspaceRoot, locateWorkspace(processCwd).root);
  } catch {
    return false;
  }
}

/**
 * The workspace an event is recorded in. The agent's project directory from
 * its environment is trusted like the hook process itself. A directory from
 * the payload (its cwd, Cursor's workspace_roots) is input: it is used only
 * when the hook's working directory vouches for it or its workspace already
 * has a store, so a payload cannot point a hook at any directory (`"cwd":"/etc"`).
 */
function openHookWorkspace(event: HookEvent, options: HookOptions): Workspace {
  const open = (dir: string) =>
    Workspace.open(dir, { env: options.env as NodeJS.ProcessEnv, ...(options.changesFor ? { changesFor: options.changesFor } : {}) });
  if (isDirectory(event.projectDir)) return open(event.projectDir);
  const named = [event.workspaceRoot, event.cwd].find(isDirectory);
  if (named) {
    const ws = open(named);
    if (ws.store || vouchedByProcessCwd(ws.root, options.cwd)) return ws;
    throw new CkptError(
      'bad-workspace',
      `payload directory ${JSON.stringify(named)} refused: it is outside the workspace the hook runs in (${options.cwd}) and has no store yet`,
    );
  }
  if (!isDirectory(options.cwd)) throw new Error('no usable workspace directory in the payload or the environment');
  return open(options.cwd);
}

/**
 * The root of the workspace an event is recorded in, as runHook picks it (the
 * daemon queues each event by it, so a flush of that workspace waits for it).
 * Throws as runHook would log when no directory may be used.
 */
export function hookWorkspaceRoot(event: HookEvent, options: HookOptions): string {
  return openHookWorkspace(event, options).root;
}

/** Append to a log file, keeping one previous generation once it passes 1 MiB. */
function appendLog(file: string, lines: string[]): boolean {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    try {
      if (statSync(file).size > LOG_MAX_BYTES) renameSync(file, `${file}.1`);
    } catch {
      /* no log yet */
    }
    appendFileSync(file, lines.map((l) => `${l}\n`).join(''), { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

/** What one hook event did: its checkpoint (when something changed), its turn and step. */
type HookEventResult = Omit<SnapshotResult, 'tree'> & {
  /** The captured tree; none when the event was not captured (duplicate, deferred). */
  tree?: string;
  turn: number | null;
  step: number | null;
  /** The same event was delivered by a second configuration and was counted once. */
  duplicate?: boolean;
  /** A turn-end while a subagent's tool call runs: that call's post takes the changes. */
  deferred?: boolean;
  /** The checkpoint made for the previous call, whose post had not come. */
  adopted?: string;
  /** This post's changes were already taken by a later hook. */
  taken?: boolean;
  /** A turn's start or end that came after its moment: its turn's calls record what changed. */
  late?: boolean;
  /** What is not captured now, when that differs from what was last logged. */
  skipNote?: string;
  /** A rewind of the conversation inside the agent was noticed under the lock: what it left. */
  rewind?: RewindFinding;
  /** And what the user is told of it, once followed. */
  rewindNotice?: string;
};

/**
 * Record an agent hook event: number its turn and step in the session's
 * state, then snapshot with full attribution, all under the workspace lock.
 * Content dedup makes a hook that fires twice for one change create one
 * checkpoint. Lock wait and snapshot share the hook budget, counted from `startedAt`.
 */
async function recordHookEvent(
  ws: Workspace,
  event: HookEvent,
  timing: { startedAt: number; newStoreWaitMs: number },
  note: (text: string) => void,
): Promise<HookEventResult> {
  const result = await recordLocked(ws, event, timing, note);
  // Followed after the lock is released: a restore takes it itself.
  if (!result.rewind || event.session === null) return result;
  return { ...result, ...(await followRewind(ws, event, result.rewind, note)) };
}

async function recordLocked(
  ws: Workspace,
  event: HookEvent,
  { startedAt, newStoreWaitMs }: { startedAt: number; newStoreWaitMs: number },
  note: (text: string) => void,
): Promise<HookEventResult> {
  // A new store's settings are read once it is made under the lock; that wait has the user's own budget.
  const settings = await ws.settings({ lockTimeoutMs: Math.max(1, newStoreWaitMs - (Date.now() - startedAt)) });
  const left = () => settings.hookBudgetMs - (Date.now() - startedAt);
  if (left() <= 0) throw new CkptError('budget', `hook budget of ${settings.hookBudgetMs} ms ran out before the lock was taken`);
  const { failureInTranscript, missingPostFailure } = adapterOf(event.agent).payload;
  if (failureInTranscript && event.phase === 'post' && !event.failed && event.callId) {
    const failure = await transcriptFailure(failureInTranscript, event.transcript, event.callId, left(), note);
    if (failure) Object.assign(event, { failed: true, error: event.resultLine ? `${failure}: ${event.resultLine}` : failure });
  }
  const title = turnTitle(settings, event);
  const nothing = { created: false, skipped: [], skippedCount: 0, elapsedMs: 0 };
  return ws.locked(
    async (ctx) => {
      const numbered: Numbering | null =
        event.session === null
          ? null
          : await updateSessionState(ctx.paths.dir, event.session, (state) => numberEvent(state, { ...event, title }, Date.now()));
      const turn = numbered?.turn ?? null;
      const step = numbered?.step ?? null;
      if (numbered?.duplicate) return { ...nothing, duplicate: true, turn, step };
      if (numbered?.taken) return { ...nothing, taken: true, turn, step };
      if (numbered?.late) return { ...nothing, late: true, turn, step };
      const budget = left();
      if (budget <= 0) throw new CkptError('budget', `hook budget of ${settings.hookBudgetMs} ms ran out while waiting for the lock`);
      // The previous call's post has not come (it runs in the background, or was killed): what changed is its.
      const adopt = numbered?.adopt;
      let adopted: SnapshotResult | undefined;
      // The turn's title goes on its first checkpoint: the adopted call's, when that is in this turn.
      let prompt = numbered?.title ?? undefined;
      if (adopt && event.session !== null) {
        const adoptedPrompt = adopt.turn === turn ? prompt : undefined;
        // Some agents write a failed command's exit code only to their transcript (Codex); some send a post only
        // for a call that succeeded (Droid: synchronously, before its next call), so one that never came is a failure.
        const failure =
          adopt.callId !== null
            ? failureInTranscript
              ? await transcriptFailure(failureInTranscript, adopt.transcript, adopt.callId, left(), note)
              : null
            : (missingPostFailure ?? null);
        const what = adopt.tool ? `${adopt.tool}${adopt.input ? `: ${adopt.input}` : ''}` : 'post';
        adopted = await snapshotLocked(ctx, {
          kind: 'post',
          message: `${event.agent} post ${what}`.slice(0, 300),
          session: event.session,
          turn: adopt.turn,
          step: adopt.step ?? undefined,
          tool: adopt.tool ?? undefined,
          hook: {
            agent: event.agent,
            phase: 'post',
            call: adopt.callId ?? undefined,
            input: adopt.input ?? undefined,
            agentTurn: adopt.agentTurn ?? undefined,
            transcript: adopt.transcript ?? undefined,
            subagent: adopt.subagent ?? undefined,
            prompt: adoptedPrompt,
            ...(failure ? { failed: true, error: failure } : {}),
          },
          holdPaths: numbered?.hold,
          timeBudgetMs: budget,
        });
        if (adopted.created && adoptedPrompt !== undefined) {
          await updateSessionState(ctx.paths.dir, event.session, (state) => ({ state: titleRecorded(state, adopt.turn) }));
          prompt = undefined;
        }
      }
      const remaining = Math.max(1, left());
      if (numbered?.defer) return { ...nothing, deferred: true, turn, step, ...(adopted?.created ? { adopted: adopted.id } : {}) };
      const result = await snapshotLocked(ctx, {
        kind: kindForPhase(event.phase),
        message: hookMessage(event),
        session: event.session ?? undefined,
        turn: turn ?? undefined,
        step: step ?? undefined,
        tool: event.tool ?? undefined,
        hook: {
          agent: event.agent,
          phase: event.phase,
          call: event.callId ?? undefined,
          input: event.input ?? undefined,
          ...(event.failed ? { failed: true, error: event.error ?? 'failed' } : {}),
          subagent: event.subagent ?? undefined,
          agentTurn: event.turnKey ?? undefined,
          transcript: event.transcript ?? undefined,
          prompt,
        },
        holdPaths: numbered?.hold,
        timeBudgetMs: remaining,
      });
      if (result.created && prompt !== undefined && turn !== null && event.session !== null) {
        await updateSessionState(ctx.paths.dir, event.session, (state) => ({ state: titleRecorded(state, turn) }));
      }
      // The same files stay uncaptured on every later call: a note only when that list changes (under the lock, so
      // two hooks at once do not both log it).
      const skips = result.skippedCount
        ? `${result.skippedCount} path(s) not captured: ${result.skipped
            .slice(0, 5)
            .map((s) => `${displayPath(s.path)} (${s.reason})`)
            .join(', ')}`
        : '';
      const skipNote = changedSkipNote(ctx.paths.hookSkips, skips) && skips ? skips : undefined;
      // A rewind inside the agent shows in its transcript by now (rewind-detect.ts): once per turn, failing open.
      const due = numbered && event.session !== null ? rewindCheckDue(event, turn, numbered.state.rewindChecked) : null;
      const rewind =
        due && turn !== null
          ? await noticeRewindLocked(
              ctx,
              event,
              due,
              turn,
              numbered!.state,
              result.tree,
              { readMs: Math.min(TRANSCRIPT_WAIT_MS, Math.max(1, left())), left },
              note,
            ).catch((err: unknown) => {
              note(
                `a rewind inside the agent was not followed (the turn's next event that reads the transcript tries again): ${(err as Error).message}`,
              );
              return undefined;
            })
          : undefined;
      return {
        ...result,
        ...(rewind ? { rewind } : {}),
        turn,
        step,
        ...(adopted?.created ? { adopted: adopted.id } : {}),
        ...(skipNote ? { skipNote } : {}),
      };
    },
    { lockTimeoutMs: Math.max(1, left()) },
  );
}

/** A local file's tail reads in milliseconds; a stalled mount must leave the snapshot its budget. */
const TRANSCRIPT_WAIT_MS = 1000;

/** A call's failure from the agent's transcript (its post leaves it out), within the hook's budget. */
async function transcriptFailure(
  failureIn: (lines: string, callId: string) => string | null,
  transcript: string | null | undefined,
  callId: string,
  left: number,
  note: (text: string) => void,
): Promise<string | null> {
  if (!transcript || !path.isAbsolute(transcript)) return null;
  const read = await callFailure(transcript, callId, Math.min(TRANSCRIPT_WAIT_MS, left), failureIn);
  if (read.problem) note(read.problem);
  return read.failure;
}

/** The title a turn-start gives its turn: the prompt a person typed, unless prompts are not kept. */
function turnTitle(settings: Pick<Settings, 'recordPrompts'>, event: HookEvent): string | null {
  return settings.recordPrompts && event.prompt !== null && !event.injected ? promptTitle(event.prompt) : null;
}

/** Settings without the lock: from their cache once the shadow repository exists; undefined before. */
async function settingsWithoutLock(ws: Workspace, store: StorePaths): Promise<Settings | undefined> {
  return existsSync(store.shadowHead) ? ws.settings() : undefined;
}

/**
 * ckpt.share.auto=turn: at a turn's end, its session goes to the remote share init named, pushed by a
 * git-ckpt of its own in the background: the network never holds up the agent, and no tool call's hook starts one.
 */
async function maybeAutoPush(ws: Workspace, store: StorePaths, event: HookEvent, env: NodeJS.ProcessEnv): Promise<void> {
  if (event.phase !== 'turn-end' || event.session === null || !existsSync(store.share)) return;
  try {
    if ((await settingsWithoutLock(ws, store))?.shareAuto !== 'turn') return;
    spawnBackground(['-C', ws.root, 'push', `--session=${event.session}`, '--auto'], {
      env: { ...env, GIT_CKPT_HOME: path.dirname(store.dir) },
    });
  } catch {
    /* a push is never worth a hook's failure: the next turn's end tries again */
  }
}

/**
 * How long a hook may wait for a store another process is making: the user's own ckpt.hookBudget, since the
 * store's settings cannot be read before it exists (an existing store's are read without the lock).
 */
async function newStoreWaitMs(store: StorePaths, env: NodeJS.ProcessEnv): Promise<number> {
  if (existsSync(store.shadowHead)) return DEFAULT_SETTINGS.hookBudgetMs;
  return (await readUserSettings(env).catch(() => DEFAULT_SETTINGS)).hookBudgetMs;
}

/**
 * Whether ckpt.daemon is on for this workspace. A store made a moment ago (the first snapshot is
 * still creating it) has no cached settings yet: the user's own config decides then.
 */
async function daemonWanted(ws: Workspace, store: StorePaths, env: NodeJS.ProcessEnv): Promise<boolean> {
  try {
    return ((await settingsWithoutLock(ws, store)) ?? (await readUserSettings(env))).daemon;
  } catch {
    return DEFAULT_SETTINGS.daemon;
  }
}

/** Number an event without a checkpoint (the first snapshot holds the workspace lock meanwhile). */
async function numberOnly(ws: Workspace, store: StorePaths, event: HookEvent): Promise<Numbering | undefined> {
  if (event.session === null) return undefined;
  const settings = (await settingsWithoutLock(ws, store)) ?? DEFAULT_SETTINGS;
  const title = turnTitle(settings, event);
  return updateSessionState(store.dir, event.session, (state) => numberEvent(state, { ...event, title }, Date.now()));
}

export async function runHook(
  agentArg: string,
  phaseArg: string,
  payload: string,
  options: HookOptions,
  /** The same payload already parsed with `options.env` (the daemon reads it when the event arrives). */
  parsed?: HookEvent,
): Promise<HookRun> {
  const event = parsed ?? parseHookPayload(agentArg, phaseArg, payload, options.env);
  let stdout = neutralOutput(event.agent);
  const logged: string[] = [];
  const stamp = () => new Date().toISOString();
  const note = (text: string) => logged.push(`${stamp()} ${event.agent} ${event.phase} ${event.session ?? '-'}: ${text}`);
  for (const problem of event.problems) note(`${problem}; snapshot taken without that attribution`);

  let logFile: string | undefined;
  let created: string | undefined;
  let numbering: Record<string, unknown> = {};
  let wantsDaemon = false;
  let opened: { ws: Workspace; store: StorePaths } | undefined;
  try {
    const ws = openHookWorkspace(event, options);
    // A file path inside the workspace reads better relative to it.
    if (event.input && path.isAbsolute(event.input)) event.input = workspaceRelative(ws.root, ws.root, event.input) ?? event.input;
    // The file a tool writes, for holding it out of other events' checkpoints while a subagent writes it.
    event.targetPath = event.targetPath ? workspaceRelative(ws.root, event.cwd ?? ws.root, event.targetPath) : null;
    const store = storePaths(ws.storeDirPath());
    opened = { ws, store };
    logFile = store.hookLog;
    // The first snapshot of a large workspace takes longer than a hook may wait: it runs in the
    // background, and captures the state this hook would have; the hook returns at once.
    const baseline = runningBaseline(store)
      ? 'the first snapshot is still being taken in the background; it captures this state'
      : event.phase === 'session-start' && noCheckpointYet(store) && (await ws.startBaseline())
        ? 'no checkpoint yet: the first snapshot started in the background'
        : undefined;
    if (baseline) {
      note(baseline);
      // Turns and steps are still counted: the numbers must not shift because this event took no checkpoint.
      const numbered = await numberOnly(ws, store, event);
      numbering = { baseline: true, turn: numbered?.turn ?? null, step: numbered?.step ?? null };
    } else {
      const timing = { startedAt: options.startedAt, newStoreWaitMs: await newStoreWaitMs(store, options.env) };
      const result = await recordHookEvent(ws, event, timing, note);
      if (result.created) created = result.id;
      numbering = {
        turn: result.turn,
        step: result.step,
        duplicate: Boolean(result.duplicate),
        deferred: Boolean(result.deferred),
        late: Boolean(result.late),
      };
      if (result.skipNote) note(`${result.skipNote} (git ckpt status lists them)`);
      if (result.rewindNotice) stdout = outputWithMessage(event.agent, result.rewindNotice);
    }
  } catch (err) {
    note(`no checkpoint: ${(err as Error).message ?? String(err)}`);
  }
  // Any event may find the daemon gone (killed, idle), whatever became of this one: the next hook
  // that runs here starts it again.
  if (!options.changesFor && opened) wantsDaemon = await daemonWanted(opened.ws, opened.store, options.env);
  if (opened) await maybeAutoPush(opened.ws, opened.store, event, options.env);
  traceEvent(options.env, { agent: agentArg, phase: phaseArg, event, created, numbering, payload });
  if (logged.length) {
    const fallback = rootHookLog(safeStoreRoot(options.env) ?? tmpdir());
    if (!(logFile && appendLog(logFile, logged)))
      appendLog(fallback, logged) || appendLog(path.join(tmpdir(), 'git-ckpt-hook.log'), logged);
  }
  return { stdout, event, created, logged, wantsDaemon };
}

function safeStoreRoot(env: Record<string, string | undefined>): string | undefined {
  try {
    return storeRoot(env as NodeJS.ProcessEnv);
  } catch {
    return undefined;
  }
}

/**
 * GIT_CKPT_HOOK_TRACE=<absolute file>: one JSON line per hook event, with the
 * payload as received and what git-ckpt made of it. For debugging a wiring and
 * for the real-agents suite; off unless the variable is set.
 */
function traceEvent(
  env: Record<string, string | undefined>,
  entry: { agent: string; phase: string; event: HookEvent; created?: string; numbering: Record<string, unknown>; payload: string },
): void {
  const file = env.GIT_CKPT_HOOK_TRACE;
  if (!file || !path.isAbsolute(file)) return;
  let payload: unknown = entry.payload;
  try {
    payload = JSON.parse(entry.payload);
  } catch {
    /* kept as text */
  }
  const { event } = entry;
  const line = {
    time: Date.now(),
    // The hook process's wall time so far, Node's start-up included.
    ms: Math.round(performance.now()),
    agent: entry.agent,
    phase: entry.phase,
    realAgent: event.agent,
    session: event.session,
    tool: event.tool,
    call: event.callId,
    ...entry.numbering,
    created: entry.created ?? null,
    payload,
  };
  try {
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  } catch {
    /* tracing never disturbs the hook */
  }
}

/** Whether the skip note differs from the last one logged (and remember it). */
function changedSkipNote(file: string, note: string): boolean {
  try {
    if (readFileSync(file, 'utf8') === note) return false;
  } catch {
    if (note === '') return false;
  }
  try {
    writeFileSync(file, note, { mode: 0o600 });
  } catch {
    /* logged again next time */
  }
  return true;
}

/** A path inside the workspace, workspace-relative with `/`, or null (outside it, or unsafe). */
function workspaceRelative(root: string, base: string, p: string): string | null {
  const rel = path.relative(root, path.resolve(base, p)).split(path.sep).join('/');
  return rel && !unsafePathReason(rel) ? rel : null;
}
