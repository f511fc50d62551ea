/**
 * Pure: the one view of each record that every surface returns — the CLI's
 * `--json`, the MCP tools' structured content and the web API — with the same
 * fields under the same names. Prose for people or models is each surface's
 * own; the data is this.
 */
import { turnTitleKey, type ChangedPath, type CheckpointRecord, type OperationInfo, type SkippedPath } from '../model/ledger.js';
import type { OperationReport } from '../restore/restore.js';
import type { PlannedFile } from '../restore/restore-plan.js';
import type { ActionCounts } from '../model/tree.js';

/** A checkpoint as every surface shows it. Times are milliseconds since the epoch. */
export interface CheckpointView {
  id: string;
  parent: string | null;
  tree: string;
  time: number;
  session: string | null;
  turn: number | null;
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
  /** Its commit or root tree is gone from the store. */
  degraded: boolean;
}

/** Pure: a checkpoint record as every surface shows it; `titles` are the turn titles (ledger `list().titles`). */
export function checkpointView(r: CheckpointRecord, titles: Readonly<Record<string, string>> = {}, degraded = false): CheckpointView {
  return {
    id: r.id,
    parent: r.parent,
    tree: r.tree,
    time: r.time,
    session: r.session,
    turn: r.turn,
    step: r.step,
    kind: r.kind,
    agent: r.agent ?? null,
    phase: r.phase ?? null,
    call: r.call ?? null,
    agentTurn: r.agentTurn ?? null,
    tool: r.tool,
    input: r.input ?? null,
    message: r.message || null,
    prompt: r.session !== null && r.turn !== null ? (titles[turnTitleKey(r.session, r.turn)] ?? r.prompt ?? null) : (r.prompt ?? null),
    failed: r.failed ?? false,
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
    ...(shown ? { diff: shown.text, diffTruncated: shown.truncated } : {}),
  };
}
