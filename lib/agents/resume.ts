/**
 * `git ckpt resume turn:N`: the checkpoint before turn N of a session, and
 * how to open the agent's conversation there (resume-plan.ts). An agent's
 * print mode can start right before that prompt when its transcript still
 * names the message before it (the adapter reads the lines).
 */
import { CkptError } from '../model/errors.js';
import { parseAddress, promptTurn, resolveSession } from '../model/address.js';
import { turnTitleKey, type CheckpointRecord } from '../model/ledger.js';
import { RESUMABLE_AGENTS, resumePlan, type ResumePlan } from './resume-plan.js';
import { serialAt, turnTree } from '../model/turn-tree.js';
import { splitForeignSession } from '../model/share-plan.js';
import { completeLines } from '../model/rewind-detect.js';
import { adapterOf } from './registry.js';
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
  const spec = adapterOf(agent).resume;
  const ofTurn = ofSession.find((r) => r.turn === serial && r.agentTurn && r.transcript);
  const lineBefore = spec?.headless?.lineBefore;
  const resumeAt = lineBefore && ofTurn ? await lineBeforePrompt(ofTurn.transcript!, ofTurn.agentTurn!, lineBefore) : undefined;
  const plan = resumePlan({
    agent,
    session: sessionId,
    turn: parsed.turn,
    title: listed.titles[turnTitleKey(sessionId, serial)] ?? null,
    resumeAt,
    leftBehind: parsed.back > 0,
    previousTurnId: spec?.fork && parsed.back === 0 && parsed.turn > 1 ? turnId(ofSession, serialAt(tree, parsed.turn - 1)) : undefined,
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

/** The transcript's message right before the prompt `promptId`, as the agent's adapter reads its lines (undefined: not said). */
async function lineBeforePrompt(
  transcript: string,
  promptId: string,
  read: (lines: readonly string[], promptId: string) => string | null | undefined,
): Promise<string | null | undefined> {
  try {
    const { chunk } = await withinTime(readTranscriptFrom(transcript, 0, SCAN_MAX_BYTES), SCAN_MS);
    return read(completeLines(chunk).lines, promptId);
  } catch {
    return undefined; // no transcript, or not readable: the interactive plan needs none
  }
}

/** The agent's id of a turn, when one of the session's records carries it. */
function turnId(ofSession: readonly CheckpointRecord[], serial: number | undefined): string | undefined {
  return ofSession.find((r) => r.turn === serial && r.agentTurn)?.agentTurn;
}
