/**
 * `git ckpt resume turn:N`: the checkpoint before turn N of a session, and
 * how to open the agent's conversation there (model/resume-plan.ts). Claude
 * Code's print mode can start right before that prompt when its transcript
 * still names the line before it.
 */
import { CkptError } from '../model/errors.js';
import { parseAddress, promptTurn, resolveSession } from '../model/address.js';
import { turnTitleKey, type CheckpointRecord } from '../model/ledger.js';
import { RESUMABLE_AGENTS, resumePlan, type ResumePlan } from '../model/resume-plan.js';
import { serialAt, turnTree } from '../model/turn-tree.js';
import { splitForeignSession } from '../model/share-plan.js';
import { completeLines, isToolResult } from '../model/rewind-detect.js';
import type { Workspace } from '../workspace.js';
import type { OperationReport } from '../restore/transaction.js';
import { readTranscriptFrom, withinTime } from './transcript.js';

/** A transcript is read this far at most, for this long, looking for one prompt's line. */
const SCAN_MAX_BYTES = 64 * 1024 * 1024;
const SCAN_MS = 3000;

export interface ResumeTarget {
  /** The checkpoint holding the files as they were before that turn. */
  target: CheckpointRecord;
  plan: ResumePlan;
}

/** Where `resume` goes back to, and how: `address` is turn:N[~K][@SESSION] or prompt:ID; `session` a prefix it may name instead. */
async function planResume(ws: Workspace, address: string, session: string | undefined, dryRun: boolean): Promise<ResumeTarget> {
  const listed = await ws.list();
  const records = [...listed.records].reverse();
  const given = parseAddress(address);
  // An agent's prompt id names its session and the turn's place on the branch that holds it.
  const parsed = given.kind === 'before-prompt' ? { kind: given.kind, ...promptTurn(records, given.prompt) } : given;
  if (parsed.kind !== 'before-turn' && parsed.kind !== 'before-prompt')
    throw new CkptError(
      'bad-address',
      `resume goes back to a turn of an agent session: turn:N[~K][@SESSION] or prompt:ID, not ${JSON.stringify(address).slice(0, 80)}`,
    );
  // A prompt id gives the session's whole id, which --session may name by a prefix.
  if (parsed.session && session && (parsed.kind === 'before-prompt' ? !parsed.session.startsWith(session) : parsed.session !== session))
    throw new CkptError(
      'usage',
      `two sessions named: ${JSON.stringify(parsed.session)} in the address and ${JSON.stringify(session)} by --session`,
    );
  const sessionId = resolveSession(records, parsed.session ?? session);
  // A fetched session's conversation lives on the machine that pushed it; its records name no file here to read.
  const foreign = splitForeignSession(sessionId);
  if (foreign)
    throw new CkptError(
      'refused',
      `session ${sessionId.slice(0, 24)} came from another store (${foreign.writer}): its conversation is not on this machine; git ckpt restore turn:${parsed.turn}@${sessionId} takes its files`,
    );
  const full = `turn:${parsed.turn}${parsed.back ? `~${parsed.back}` : ''}@${sessionId}`;
  // A dry run (and --print) writes nothing, not even the probe's cache.
  const target = await ws.resolve(full, { writeCache: !dryRun });
  const tree = turnTree(records, sessionId);
  const serial = serialAt(tree, parsed.turn, parsed.back)!;
  const ofSession = records.filter((r) => r.session === sessionId);
  const agent = ofSession.find((r) => r.agent)?.agent;
  if (!agent)
    throw new CkptError(
      'nothing',
      `session ${sessionId.slice(0, 8)} has no agent on record: its checkpoints came from --session, not a hook`,
    );
  const ofTurn = ofSession.find((r) => r.turn === serial && r.agentTurn && r.transcript);
  const resumeAt = agent === 'claude' && ofTurn ? await lineBeforePrompt(ofTurn.transcript!, ofTurn.agentTurn!) : undefined;
  const plan = resumePlan({
    agent,
    session: sessionId,
    turn: parsed.turn,
    title: listed.titles[turnTitleKey(sessionId, serial)] ?? null,
    resumeAt,
    leftBehind: parsed.back > 0,
    previousTurnId:
      agent === 'codex' && parsed.back === 0 && parsed.turn > 1 ? turnId(ofSession, serialAt(tree, parsed.turn - 1)) : undefined,
  });
  if (!plan) throw new CkptError('usage', `resume knows ${RESUMABLE_AGENTS.join(', ')}; session ${sessionId.slice(0, 8)} is ${agent}'s`);
  return { target, plan };
}

/**
 * The plan and resume's restore: made, or as a dry run (what the agent tools and the web page show).
 * As `restore` does, it deletes files the checkpoint lacks only when asked (`deleteNew`, captured ones only).
 */
export async function resumeWithRestore(
  ws: Workspace,
  address: string,
  options: { session?: string; dryRun: boolean; deleteNew?: boolean },
): Promise<ResumeTarget & { restore: OperationReport }> {
  const planned = await planResume(ws, address, options.session, options.dryRun);
  return {
    ...planned,
    restore: await ws.restore(planned.target.id, { dryRun: options.dryRun, deleteNew: options.deleteNew ?? false }),
  };
}

interface TranscriptLine {
  type?: string;
  uuid?: string;
  parentUuid?: unknown;
  message?: { content?: unknown };
}

/**
 * The uuid of the last message (a user or assistant line) before Claude's prompt `promptId` (null: it
 * is the first), or undefined when the transcript does not say. `--resume-session-at` takes a
 * message: the line a prompt hangs off is often a system one (the last turn's stop-hook summary).
 */
async function lineBeforePrompt(transcript: string, promptId: string): Promise<string | null | undefined> {
  try {
    const { chunk } = await withinTime(readTranscriptFrom(transcript, 0, SCAN_MAX_BYTES), SCAN_MS);
    const needle = `"promptId":"${promptId}"`;
    const byId = new Map<string, TranscriptLine>();
    for (const text of completeLines(chunk).lines) {
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
  } catch {
    /* no transcript, or not readable: the interactive plan needs none */
  }
  return undefined;
}

/** The agent's id of a turn (Codex's turn_id), when one of the session's records carries it. */
function turnId(ofSession: readonly CheckpointRecord[], serial: number | undefined): string | undefined {
  return ofSession.find((r) => r.turn === serial && r.agentTurn)?.agentTurn;
}
