/**
 * Pure: the one view of each record that every surface returns — the CLI's
 * `--json`, the MCP tools' structured content and the web API — with the same
 * fields under the same names. Prose for people or models is each surface's
 * own; the data is this.
 */
import {
  turnTitleKey,
  type ChangedPath,
  type CheckpointOrigin,
  type CheckpointRecord,
  type ForkMark,
  type OperationInfo,
  type SkippedPath,
} from '../model/ledger.js';
import type { OperationReport } from '../restore/restore.js';
import { resumeCommandLine, shellLine, type ResumePlan } from '../agents/resume-plan.js';
import type { PlannedFile } from '../restore/restore-plan.js';
import type { ActionCounts } from '../model/tree.js';
import { labelOfTurn } from '../model/turn-tree.js';

/** A rewind inside an agent that left changes in the workspace (status, the web page). */
export type { PendingRewind } from '../model/rewind-plan.js';

/** A checkpoint as every surface shows it. Times are milliseconds since the epoch. */
export interface CheckpointView {
  id: string;
  parent: string | null;
  tree: string;
  time: number;
  session: string | null;
  /** The turn's serial in its session (the order prompts came in). */
  turn: number | null;
  /** How people name the turn: its position on the current branch (`2`), or on one a rewind inside the agent left (`2~1`). */
  turnLabel: string | null;
  /** The first checkpoint of a turn that followed a rewind inside the agent. */
  rewind: CheckpointRecord['rewind'] | null;
  /** Where a session forked from another was first seen: that session, and its last turn the fork holds (serial and label). */
  fork: { session: string; turn: number | null; turnLabel: string | null } | null;
  step: number | null;
  kind: CheckpointRecord['kind'];
  agent: string | null;
  phase: string | null;
  /** The agent's id of the tool call, and of its turn. */
  call: string | null;
  agentTurn: string | null;
  tool: string | null;
  /** A one-line summary of the tool's input (redacted, no file content). */
  input: string | null;
  message: string | null;
  /** The turn's title: the first line of the user's prompt, on every checkpoint of that turn. */
  prompt: string | null;
  failed: boolean;
  /** A post that may hold changes made after its event arrived (the daemon captured it after answering). */
  mayIncludeLater: boolean;
  error: string | null;
  subagent: { id: string; type: string | null } | null;
  stats: { added: number; modified: number; deleted: number };
  bytes: number;
  /** How many paths changed, and the first of them. */
  changed: number;
  paths: ChangedPath[];
  /** What it could not capture: the first of them, and how many. */
  skipped: SkippedPath[];
  skippedCount: number;
  /** Restore, revert and undo records: what they did. */
  op: OperationInfo | null;
  /** The ids it had before `forget` rewrote the chain, oldest first. */
  formerIds: string[];
  /** Fetched from another machine's store: the remote, the writer, and its id there. */
  origin: CheckpointOrigin | null;
  /** Its commit or root tree is gone from the store. */
  degraded: boolean;
}

/** The turns' titles and labels, as `Workspace.list()` gathers them. */
export interface TurnNames {
  titles: Readonly<Record<string, string>>;
  labels: Readonly<Record<string, string>>;
  /** Sessions forked from another, to where they came from. */
  forks?: Readonly<Record<string, ForkMark>>;
}

/** Pure: a checkpoint record as every surface shows it, with its turn's title and label. */
export function checkpointView(r: CheckpointRecord, names: TurnNames = { titles: {}, labels: {} }, degraded = false): CheckpointView {
  const key = r.session !== null && r.turn !== null ? turnTitleKey(r.session, r.turn) : null;
  return {
    id: r.id,
    parent: r.parent,
    tree: r.tree,
    time: r.time,
    session: r.session,
    turn: r.turn,
    turnLabel: r.turn === null ? null : labelOfTurn(names.labels, r.session, r.turn),
    rewind: r.rewind ?? null,
    fork: r.fork
      ? {
          ...r.fork,
          turnLabel: r.fork.turn === null ? null : labelOfTurn(names.labels, r.fork.session, r.fork.turn),
        }
      : null,
    step: r.step,
    kind: r.kind,
    agent: r.agent ?? null,
    phase: r.phase ?? null,
    call: r.call ?? null,
    agentTurn: r.agentTurn ?? null,
    tool: r.tool,
    input: r.input ?? null,
    message: r.message || null,
    prompt: (key !== null ? names.titles[key] : undefined) ?? r.prompt ?? null,
    failed: r.failed ?? false,
    mayIncludeLater: r.mayIncludeLater ?? false,
    error: r.error ?? null,
    subagent: r.subagent ?? null,
    stats: r.stats,
    bytes: r.bytes,
    changed: r.changed,
    paths: r.paths,
    skipped: r.skipped,
    skippedCount: r.skippedCount || r.skipped.length,
    op: r.op ?? null,
    formerIds: r.formerIds ?? [],
    origin: r.origin ?? null,
    degraded,
  };
}

/** One path of an operation's plan, as every surface shows it (unchanged paths are left out). */
interface PlanFileView {
  path: string;
  action: PlannedFile['action'];
  reason?: string;
}

/** A restore, revert or undo (planned or done) as every surface shows it. */
export interface OperationView {
  op: OperationReport['op'];
  dryRun: boolean;
  target: string;
  guard: string | null;
  record: string | null;
  /** Pass it back to apply exactly this plan. */
  planId: string;
  counts: ActionCounts & { failed: number };
  files: PlanFileView[];
  leftovers: string[];
  uncaptured: { path: string; reason: string }[];
  failures: { path: string; error: string }[];
  /** What the operation's record holds (`+A ~M -D`), and the paths in it the operation did not write. */
  recorded?: OperationReport['recorded'];
  /** A dry run's line diff, when previewed; `diffTruncated` when it was cut to fit. */
  diff?: string;
  diffTruncated?: boolean;
}

/** Pure: an operation report as every surface shows it; `diff` replaces the report's own (a surface may cut it). */
export function operationView(r: OperationReport, diff?: { text: string; truncated: boolean }): OperationView {
  const shown = diff ?? (r.diff === undefined ? undefined : { text: r.diff, truncated: false });
  return {
    op: r.op,
    dryRun: r.dryRun,
    target: r.target,
    guard: r.guard,
    record: r.record,
    planId: r.planId,
    counts: r.counts,
    files: r.plan.files
      .filter((f) => f.action !== 'unchanged')
      .map((f) => ({ path: f.path, action: f.action, ...(f.reason ? { reason: f.reason } : {}) })),
    leftovers: r.leftovers,
    uncaptured: r.uncaptured.map((s) => ({ path: s.path, reason: s.reason })),
    failures: r.failures,
    ...(r.recorded ? { recorded: r.recorded } : {}),
    ...(shown ? { diff: shown.text, diffTruncated: shown.truncated } : {}),
  };
}

/**
 * `resume` as every surface shows it: where the files go back to and what a restore there does (a dry run, or
 * the one made), and how to open the conversation there: the command's words and its shell line, the step
 * inside the agent, a print-mode fork, the agent's own fork still to be made, and the `git ckpt resume` line
 * that does it all.
 */
export interface ResumeView {
  agent: string;
  session: string;
  turn: number;
  title: string | null;
  /** The checkpoint the files go back to. */
  target: string;
  command: string[];
  commandLine: string;
  steps: string[];
  headless: string[] | null;
  headlessLine: string | null;
  fork: { threadId: string; lastTurnId: string } | null;
  resumeCommand: string;
  restore: OperationView;
}

/** Pure: the view of a resume of `address`. */
export function resumeView(address: string, r: { target: { id: string }; plan: ResumePlan; restore: OperationReport }): ResumeView {
  const { plan } = r;
  return {
    agent: plan.agent,
    session: plan.session,
    turn: plan.turn,
    title: plan.title,
    target: r.target.id,
    command: plan.command,
    commandLine: shellLine(plan.command),
    steps: plan.steps,
    headless: plan.headless ?? null,
    headlessLine: plan.headless ? shellLine(plan.headless) : null,
    fork: plan.fork ?? null,
    resumeCommand: resumeCommandLine(address, plan.session),
    restore: operationView(r.restore),
  };
}
