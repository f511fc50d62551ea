/**
 * The agent's own tools: checkpoint now, list, diff, restore (dry run first),
 * undo, forget (a preview only), status and a resume plan, as a model calls them (the MCP server in mcp.ts serves
 * them). Each tool is its input schema, its output schema, a description
 * written for a model, MCP's hints, and a handler that goes through the same
 * Workspace methods as the CLI: the one lock door, the one resolver, the one
 * path gate, the journaled restore engine. Handlers return text a model reads
 * well and the same facts as structured content.
 */
import { withArticle } from '../model/text.js';
import { z } from 'zod';
import { CkptError } from '../model/errors.js';
import { firstPaths, formatBytes, plainStats, relativeAge, shortId, skippedLines } from '../inspect/describe.js';
import { shortSession } from '../model/short-ids.js';
import { sessionWords } from '../model/share-plan.js';
import { userPath } from '../model/paths.js';
import type { OperationReport } from '../restore/restore.js';
import type { Workspace } from '../workspace.js';
import { checkpointView, operationView, resumeView } from './views.js';
import { resumeWithRestore } from '../agents/resume.js';

/** The most diff text a tool returns unless asked for more: a model's context is precious. */
const DIFF_MAX_BYTES = 64 * 1024;
/** Arguments larger than this are refused whole: no real call needs them. */
export const ARGUMENTS_MAX_BYTES = 64 * 1024;

interface ToolResult {
  text: string;
  structured: Record<string, unknown>;
}

interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** True only for the tool that reaches the remote share init named. */
  openWorldHint: boolean;
}

export interface AgentTool<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: Shape;
  output: z.ZodRawShape;
  annotations: ToolAnnotations;
  run(ws: Workspace, args: z.infer<z.ZodObject<Shape>>): Promise<ToolResult>;
}

const address = z.string().min(1).max(200);
const workspacePath = z.string().min(1).max(4096);
const paths = z.array(workspacePath).max(1000);
const stats = z.object({ added: z.number(), modified: z.number(), deleted: z.number() });
const fileAction = z.object({ path: z.string(), action: z.string(), reason: z.string().optional() });

/** Pure: at most `max` bytes of a diff, cut at a line end, with a line saying what was cut and how to see it. @public (tests use it) */
export function boundDiff(diff: string, max = DIFF_MAX_BYTES): { text: string; truncated: boolean; bytes: number } {
  const bytes = Buffer.byteLength(diff);
  if (bytes <= max) return { text: diff, truncated: false, bytes };
  // The bytes that fit, less a character the bound split in two (decoded as U+FFFD).
  const head = Buffer.from(diff)
    .subarray(0, max)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  const cut = head.lastIndexOf('\n') + 1 || head.length;
  const shown = head.slice(0, cut);
  const note = `[diff cut at ${formatBytes(Buffer.byteLength(shown))} of ${formatBytes(bytes)}: ask for fewer paths (paths: [...]), a narrower range (from/to), or format "stat"]\n`;
  return { text: `${shown}${note}`, truncated: true, bytes };
}

/** Workspace paths from a model's paths: relative to the workspace root (or absolute inside it), through the one path gate. */
function gatePaths(ws: Workspace, raw: string[] | undefined): string[] | undefined {
  return raw?.length ? [...new Set(raw.map((p) => userPath(ws.root, ws.root, p)))] : undefined;
}

function operationResult(r: OperationReport): ToolResult {
  const bounded = r.diff === undefined ? undefined : boundDiff(r.diff);
  const view = operationView(r, bounded && { text: bounded.text, truncated: bounded.truncated });
  const { files } = view;
  const c = r.counts;
  const countsLine = `${c.restore} restore, ${c.recreate} recreate, ${c.delete} delete, ${c.skip} skip${r.dryRun ? '' : `, ${c.failed} failed`}`;
  const lines: string[] = [];
  const what = r.op === 'undo' ? `undo of ${shortId(r.target)}` : `${r.op} ${r.op === 'revert' ? 'of' : 'to'} ${shortId(r.target)}`;
  if (r.dryRun) {
    lines.push(`${what}: DRY RUN, nothing was written. The plan: ${countsLine}.`);
    for (const f of files.slice(0, 200)) lines.push(`  ${f.action.padEnd(8)} ${f.path}${f.reason ? ` (${f.reason})` : ''}`);
    if (files.length > 200) lines.push(`  … and ${files.length - 200} more`);
    if (files.length === 0) lines.push('  nothing to do: the workspace already matches.');
  } else {
    lines.push(`${what}: done. ${countsLine}.`);
    for (const f of files.filter((f) => f.action === 'skip')) lines.push(`  skipped ${f.path} (${f.reason})`);
    for (const f of r.failures) lines.push(`  FAILED ${f.path}: ${f.error}`);
  }
  if (r.leftovers.length)
    lines.push(
      `leftovers (files not in the checkpoint, left alone): ${r.leftovers.slice(0, 20).join(', ')}${r.leftovers.length > 20 ? ' …' : ''}`,
    );
  for (const line of skippedLines({ skipped: r.uncaptured, skippedCount: r.uncaptured.length })) lines.push(`${line} (never touched)`);
  let undo: string | null = null;
  if (r.dryRun)
    lines.push(`To apply this plan, call the same tool again with apply: true and planId: "${r.planId}" (only with the user’s consent).`);
  else if (r.record) {
    undo = 'call checkpoint_undo with apply: true (or run `git ckpt undo`)';
    lines.push(`The state before it is guard checkpoint ${shortId(r.guard!)}; to reverse it, ${undo}.`);
  }
  if (bounded?.text) lines.push('', 'The diff it would apply (live workspace → result):', bounded.text);
  return { text: `${lines.join('\n')}\n`, structured: { ...view, undo } };
}

/** The output schema of an OperationView (lib/surfaces/views.ts), plus how to undo it. */
const operationOutput = {
  op: z.string(),
  dryRun: z.boolean(),
  target: z.string(),
  guard: z.string().nullable(),
  record: z.string().nullable(),
  planId: z.string(),
  counts: z.record(z.string(), z.number()),
  files: z.array(fileAction),
  leftovers: z.array(z.string()),
  uncaptured: z.array(z.object({ path: z.string(), reason: z.string() })),
  failures: z.array(z.object({ path: z.string(), error: z.string() })),
  recorded: z
    .object({ added: z.number(), modified: z.number(), deleted: z.number(), unwritten: z.array(z.string()), unwrittenCount: z.number() })
    .optional(),
  undo: z.string().nullable(),
  diff: z.string().optional(),
  diffTruncated: z.boolean().optional(),
};

/** The output schema of a CheckpointView (lib/surfaces/views.ts): the same fields the CLI's --json and the web API give. */
const checkpointViewSchema = z.object({
  id: z.string(),
  parent: z.string().nullable(),
  tree: z.string(),
  time: z.number(),
  session: z.string().nullable(),
  turn: z.number().nullable(),
  turnLabel: z.string().nullable(),
  rewind: z
    .object({ parent: z.number(), kind: z.enum(['conversation', 'code', 'unknown']), pending: z.number(), shell: z.number() })
    .nullable(),
  fork: z.object({ session: z.string(), turn: z.number().nullable(), turnLabel: z.string().nullable() }).nullable(),
  step: z.number().nullable(),
  kind: z.string(),
  agent: z.string().nullable(),
  phase: z.string().nullable(),
  call: z.string().nullable(),
  agentTurn: z.string().nullable(),
  tool: z.string().nullable(),
  input: z.string().nullable(),
  message: z.string().nullable(),
  prompt: z.string().nullable(),
  failed: z.boolean(),
  mayIncludeLater: z.boolean(),
  error: z.string().nullable(),
  subagent: z.object({ id: z.string(), type: z.string().nullable() }).nullable(),
  stats,
  bytes: z.number(),
  changed: z.number(),
  paths: z.array(z.object({ status: z.string(), path: z.string() })),
  skipped: z.array(z.object({ path: z.string(), reason: z.string(), size: z.number().optional() })),
  skippedCount: z.number(),
  op: z.record(z.string(), z.unknown()).nullable(),
  formerIds: z.array(z.string()),
  origin: z.object({ remote: z.string(), ws: z.string(), writer: z.string(), source: z.string() }).nullable(),
  degraded: z.boolean(),
});

const checkpointNow: AgentTool<{ message: z.ZodOptional<z.ZodString> }> = {
  name: 'checkpoint_now',
  title: 'Checkpoint now',
  description:
    'Take a checkpoint of the whole workspace right now, e.g. before a risky shell command (a migration, a mass rename, `rm -rf`, a code generator). ' +
    'Returns the new checkpoint id, or says nothing changed since the last one. Cheap: only changed files are hashed.',
  input: { message: z.string().max(500).optional().describe('why: a short note shown in the checkpoint list') },
  output: {
    created: z.boolean(),
    id: z.string().nullable(),
    stats: stats.nullable(),
    paths: z.array(z.string()),
    uncaptured: z.array(z.object({ path: z.string(), reason: z.string() })),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ws, { message }) {
    const r = await ws.snapshot({ message: message ?? 'checkpoint requested by the agent', kind: 'manual' });
    const lines =
      r.created && r.record
        ? [`checkpoint ${shortId(r.record.id)} taken (${plainStats(r.record)}): ${firstPaths(r.record, 5)}`]
        : [`nothing changed since checkpoint ${r.id ? shortId(r.id) : '(none)'}; no new checkpoint was needed`];
    lines.push(...skippedLines(r));
    return {
      text: `${lines.join('\n')}\n`,
      structured: {
        created: r.created,
        id: r.id ?? null,
        stats: r.created && r.record ? r.record.stats : null,
        paths: r.record?.paths.map((p) => `${p.status} ${p.path}`) ?? [],
        uncaptured: r.skipped.map((s) => ({ path: s.path, reason: s.reason })),
      },
    };
  },
};

const checkpointList: AgentTool<{
  limit: z.ZodOptional<z.ZodNumber>;
  session: z.ZodOptional<z.ZodString>;
  turn: z.ZodOptional<z.ZodNumber>;
}> = {
  name: 'checkpoint_list',
  title: 'List checkpoints',
  description:
    'List checkpoints of this workspace, newest first: id, age, session and turn (turn N is the Nth prompt the user typed, with its first line as a title), ' +
    'the tool that ran, +added ~modified -deleted and the first paths. Use it before proposing a rewind, to find the point to go back to.',
  input: {
    limit: z.number().int().min(1).max(200).optional().describe('how many (default 20)'),
    session: z.string().min(1).max(200).optional().describe('only this agent session (a unique prefix of its id)'),
    turn: z.number().int().min(0).optional().describe('only this turn'),
  },
  output: {
    total: z.number(),
    shown: z.number(),
    more: z.number(),
    checkpoints: z.array(checkpointViewSchema),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ws, { limit, session, turn }) {
    const listed = await ws.list({ limit: limit ?? 20, session, turn });
    const { records, total } = listed;
    const degraded = await ws.degraded(false);
    const entries = records.map((r) => checkpointView(r, listed, Boolean(degraded[r.id])));
    const lines: string[] = [];
    let group: string | undefined;
    for (const e of entries) {
      const key =
        e.session === null
          ? 'outside any agent session'
          : `session ${shortSession(e.session)}, turn ${e.turnLabel ?? '-'}${e.prompt ? ` “${e.prompt}”` : ''}`;
      if (key !== group) lines.push(`── ${key}`);
      group = key;
      const who = [e.tool, e.kind, e.failed ? 'FAILED' : '', e.degraded ? 'DEGRADED (objects missing)' : ''].filter(Boolean).join(' ');
      const paths = e.paths.slice(0, 5).map((p) => `${p.status} ${p.path}`);
      lines.push(
        `${shortId(e.id)}  ${relativeAge(e.time)}  ${who}  ${plainStats(e)}  ${paths.join(', ')}${e.message ? `  “${e.message}”` : ''}`,
      );
    }
    if (total === 0) lines.push('no checkpoints yet');
    if (total > entries.length)
      lines.push(`${total - entries.length} older checkpoint(s) not shown (raise limit, or filter by session/turn)`);
    return {
      text: `${lines.join('\n')}\n`,
      structured: { total, shown: entries.length, more: total - entries.length, checkpoints: entries },
    };
  },
};

const checkpointDiff: AgentTool<{
  from: z.ZodOptional<z.ZodString>;
  to: z.ZodOptional<z.ZodString>;
  paths: z.ZodOptional<typeof paths>;
  format: z.ZodOptional<z.ZodEnum<{ stat: 'stat'; patch: 'patch' }>>;
}> = {
  name: 'checkpoint_diff',
  title: 'Diff checkpoints',
  description:
    'Show what changed between two checkpoints, or between a checkpoint and the live workspace (the default: from the latest checkpoint to now). ' +
    'Addresses: an id prefix (4+ hex digits), latest, latest~N, or turn:N (the state just before turn N). Read-only. ' +
    `format "stat" (the default) lists files; "patch" gives the line diff, cut at ${DIFF_MAX_BYTES / 1024} KiB.`,
  input: {
    from: address.optional().describe('checkpoint address (default: latest)'),
    to: address.optional().describe('checkpoint address (default: the live workspace)'),
    paths: paths.optional().describe('only these files or directories, relative to the workspace root'),
    format: z.enum(['stat', 'patch']).optional().describe('stat (default) or patch'),
  },
  output: {
    from: z.string(),
    to: z.string(),
    format: z.string(),
    diff: z.string(),
    truncated: z.boolean(),
    bytes: z.number(),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ws, { from, to, paths: raw, format }) {
    const diff = await ws.diff({ from, to, format: format ?? 'stat', paths: gatePaths(ws, raw) });
    const bounded = boundDiff(diff);
    const range = `${from ?? 'latest'} → ${to ?? 'the live workspace'}`;
    return {
      text: bounded.text ? `diff ${range}:\n${bounded.text}` : `no difference (${range})\n`,
      structured: {
        from: from ?? 'latest',
        to: to ?? 'workspace',
        format: format ?? 'stat',
        diff: bounded.text,
        truncated: bounded.truncated,
        bytes: bounded.bytes,
      },
    };
  },
};

const planId = z
  .string()
  .regex(/^[0-9a-f]{16}$/, 'a planId is the 16 hex digits a dry run returned')
  .describe('with apply: true, the planId the dry run returned; the call refuses (nothing written) when the plan changed since');

/** Apply only the plan the user saw: a planId from a dry run is required, and checked against the plan made now. */
function expectedPlan(apply: boolean | undefined, id: string | undefined): string | undefined {
  if (apply !== true) return undefined;
  if (id === undefined)
    throw new CkptError(
      'usage',
      'apply: true needs the planId of the dry run shown to the user: run the dry run first, then pass its planId',
    );
  return id;
}

/** The restore tool, which the web API's rollback also calls (one plan, one view). */
export const checkpointRestore: AgentTool<{
  target: typeof address;
  mode: z.ZodOptional<z.ZodEnum<{ asof: 'asof'; revert: 'revert' }>>;
  paths: z.ZodOptional<typeof paths>;
  deleteNew: z.ZodOptional<z.ZodBoolean>;
  apply: z.ZodOptional<z.ZodBoolean>;
  planId: z.ZodOptional<typeof planId>;
}> = {
  name: 'checkpoint_restore',
  title: 'Restore a checkpoint',
  description:
    'Rewind files. mode "asof" (default) makes the workspace (or only `paths`) match checkpoint `target`; mode "revert" undoes the change ' +
    'that checkpoint recorded (or, with target "turn:3..turn:5@SESSION", what that turn range\'s tool calls changed), three-way: edits made since ' +
    'in other lines are kept, overlapping ones are reported as conflicts and left alone. WITHOUT apply: true IT IS A DRY RUN: it returns the plan (per file: restore, recreate, ' +
    'delete, skip with a reason), the diff it would apply and a planId, and writes nothing. Apply only after showing the plan to the user and getting their consent, ' +
    'with the same arguments plus apply: true and that planId: if the files changed since, the call refuses and you preview again. ' +
    'Applying first saves the current state as a guard checkpoint, so checkpoint_undo can reverse it. Files never captured (secrets, too large) are never touched; ' +
    'files that are not in the checkpoint are left alone unless deleteNew is true.',
  input: {
    target: address.describe(
      'checkpoint address: id prefix, latest, latest~N, or turn:N; for mode revert also a turn range turn:N..turn:M@SESSION',
    ),
    mode: z.enum(['asof', 'revert']).optional().describe('asof (default): return to that state; revert: undo that one checkpoint’s change'),
    paths: paths.optional().describe('asof only: just these files or directories, relative to the workspace root'),
    deleteNew: z.boolean().optional().describe('asof only: also delete captured files that are not in the checkpoint'),
    apply: z.boolean().optional().describe('true to write; otherwise a dry run'),
    planId: planId.optional(),
  },
  output: operationOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(ws, { target, mode, paths: raw, deleteNew, apply, planId: id }) {
    const dryRun = apply !== true;
    const options = { dryRun, preview: dryRun, expectPlan: expectedPlan(apply, id) };
    if ((mode ?? 'asof') === 'revert' && (raw?.length || deleteNew))
      throw new CkptError('usage', 'paths and deleteNew apply to mode "asof" only; a revert undoes the whole change of one checkpoint');
    const report =
      mode === 'revert' ? await ws.revert(target, options) : await ws.restore(target, { ...options, deleteNew, paths: gatePaths(ws, raw) });
    return operationResult(report);
  },
};

/** The undo tool, which the web API's rollback-undo also calls. */
export const checkpointUndo: AgentTool<{
  force: z.ZodOptional<z.ZodBoolean>;
  apply: z.ZodOptional<z.ZodBoolean>;
  planId: z.ZodOptional<typeof planId>;
}> = {
  name: 'checkpoint_undo',
  title: 'Undo the last restore',
  description:
    'Reverse the last restore, revert or undo (so calling it again redoes). WITHOUT apply: true IT IS A DRY RUN that returns the plan and a planId and writes nothing; ' +
    'apply with apply: true and that planId. ' +
    'It refuses when files it would touch changed since the operation, unless force is true.',
  input: {
    force: z.boolean().optional().describe('undo even though files it touches changed since'),
    apply: z.boolean().optional().describe('true to write; otherwise a dry run'),
    planId: planId.optional(),
  },
  output: operationOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(ws, { force, apply, planId: id }) {
    const dryRun = apply !== true;
    const report = await ws.undo({ dryRun, force, preview: dryRun, expectPlan: expectedPlan(apply, id) });
    return operationResult(report);
  },
};

const checkpointForget: AgentTool<{
  checkpoints: z.ZodOptional<z.ZodArray<typeof address>>;
  session: z.ZodOptional<z.ZodString>;
  before: z.ZodOptional<z.ZodString>;
  paths: z.ZodOptional<z.ZodArray<z.ZodString>>;
}> = {
  name: 'checkpoint_forget',
  title: 'Preview forgetting checkpoints or paths',
  description:
    'A DRY RUN ONLY: what `git ckpt forget` would remove from the checkpoint store for good, and the bytes it would free. Name one of: ' +
    'checkpoints (addresses: id prefix, latest, latest~N, turn:N), a session (a unique prefix of its id), before (a date like 2024-05-01, or an age like 30d: every older checkpoint), ' +
    'or paths (gitignore patterns relative to the workspace root, e.g. "credentials.json" or "secrets/": removed from every checkpoint, e.g. a secret captured by mistake). ' +
    'This tool never applies anything and cannot: forgetting cannot be undone, so only the user runs the command it returns, in their own terminal. The workspace files are never touched.',
  input: {
    checkpoints: z.array(address).min(1).max(100).optional().describe('checkpoint addresses to drop'),
    session: z.string().min(1).max(200).optional().describe('drop every checkpoint of this agent session (a unique prefix)'),
    before: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('drop every checkpoint older than this date or age (2024-05-01, 2024-05-01T14:30, 12h, 30d)'),
    paths: z.array(z.string().min(1).max(4096)).min(1).max(100).optional().describe('gitignore patterns to remove from every checkpoint'),
  },
  output: {
    command: z.string(),
    dropped: z.array(z.object({ id: z.string(), time: z.string(), session: z.string().nullable(), kind: z.string(), why: z.string() })),
    paths: z.array(z.object({ path: z.string(), checkpoints: z.number() })),
    stillStored: z.array(z.string()),
    content: z.array(z.object({ path: z.string(), versions: z.number() })),
    rewritten: z.number(),
    kept: z.number(),
    objects: z.number(),
    bytesBefore: z.number(),
    bytesAfter: z.number(),
    bytesFreed: z.number(),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ws, { checkpoints, session, before, paths: patterns }) {
    const r = await ws.forget({ checkpoints, session, before, paths: patterns }, { dryRun: true });
    const freed = Math.max(0, r.bytesBefore - r.bytesAfter);
    const lines: string[] = ['forget: DRY RUN, nothing was changed (this tool cannot apply it).'];
    if (r.selection.kind === 'paths') {
      lines.push(`It would remove ${r.paths.length} path(s) from every checkpoint that holds them:`);
      for (const p of r.paths.slice(0, 100)) lines.push(`  ${p.path} (${p.checkpoints} checkpoint(s))`);
      for (const p of r.stillStored) lines.push(`  still stored afterwards: ${p} (a kept path holds the same bytes)`);
      lines.push('Files matching these patterns would not be captured again.');
    } else {
      lines.push(`It would drop ${r.dropped.length} checkpoint(s):`);
      for (const d of r.dropped.slice(0, 100))
        lines.push(
          `  ${shortId(d.id)}  ${relativeAge(d.time)}  ${d.session ?? '-'}  ${d.kind}${d.why === 'guard' ? ' (its guard goes)' : ''}`,
        );
    }
    const versions = r.content.reduce((n, c) => n + c.versions, 0);
    if (versions)
      lines.push(
        `${versions} file version(s) would leave the store: ${r.content
          .map((c) => c.path)
          .slice(0, 20)
          .join(', ')}`,
      );
    lines.push(
      `${r.rewritten.length} kept checkpoint(s) would get new ids (the old ones keep resolving); ${r.kept} kept in all. Store ${formatBytes(r.bytesBefore)} → ~${formatBytes(r.bytesAfter)} (${r.bytesAfter <= r.bytesBefore ? `~${formatBytes(freed)} freed` : 'it grows: the objects kept go into one new pack with its index'}).`,
      ...r.shared.flatMap((c) => [
        ...c.remotes.map(
          (remote) =>
            `Still on ${remote.label} (${remote.url}) afterwards: session ${c.session ?? '(no session)'} as it was pushed; git ckpt unpush ${sessionWords(c.session)} deletes its ref there (the host keeps the objects until it purges them).`,
        ),
        ...c.bundles.map((file) => `Still in ${file}, a bundle this store made.`),
      ]),
      `To forget for good, the user runs (there is no undo): ${r.command}`,
    );
    return {
      text: `${lines.join('\n')}\n`,
      structured: {
        command: r.command,
        dropped: r.dropped.map((d) => ({ ...d, time: new Date(d.time).toISOString() })),
        paths: r.paths,
        stillStored: r.stillStored,
        content: r.content,
        rewritten: r.rewritten.length,
        kept: r.kept,
        objects: r.objects,
        bytesBefore: r.bytesBefore,
        bytesAfter: r.bytesAfter,
        bytesFreed: freed,
      },
    };
  },
};

const checkpointStatus: AgentTool<Record<string, never>> = {
  name: 'checkpoint_status',
  title: 'Checkpoint store status',
  description:
    'The workspace and its checkpoint store: how many checkpoints and sessions, disk use against the quota, the latest checkpoint, whether the workspace ' +
    'changed since, files that are not captured, and a restore that was interrupted.',
  input: {},
  output: {
    workspace: z.string(),
    store: z.string(),
    checkpoints: z.number(),
    sessions: z.number(),
    bytesOnDisk: z.number(),
    maxBytes: z.number(),
    latest: z.object({ id: z.string(), time: z.string(), age: z.string() }).nullable(),
    dirty: z.boolean().nullable(),
    notCompared: z.string().nullable(),
    baselineRunning: z.boolean(),
    uncaptured: z.array(z.object({ path: z.string(), reason: z.string() })),
    interrupted: z.string().nullable(),
    rewinds: z.array(
      z.object({
        session: z.string(),
        beforeTurn: z.number(),
        turns: z.string(),
        kind: z.string(),
        pending: z.number(),
        address: z.string(),
      }),
    ),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ws) {
    const s = await ws.status();
    const interrupted = !s.interrupted
      ? null
      : 'error' in s.interrupted
        ? s.interrupted.error
        : `a ${s.interrupted.op} to ${shortId(s.interrupted.target)} did not finish: the user should run git ckpt restore --continue or --abort`;
    const lines = [
      `workspace ${s.workspace}`,
      `${s.checkpoints} checkpoint(s) in ${s.sessions.length} session(s); store ${formatBytes(s.bytesOnDisk)} of a ${formatBytes(s.maxBytes)} quota`,
      `latest: ${s.latest ? `${shortId(s.latest.id)} (${relativeAge(s.latest.time)})` : 'none'}; the workspace ${s.notCompared ? `was not compared with it (${s.notCompared})` : s.dirty === null ? 'has no checkpoint to compare with' : s.dirty ? 'changed since' : 'is unchanged since'}`,
      ...(s.baseline ? ['the first snapshot is still being taken in the background'] : []),
      ...skippedLines({ skipped: s.uncaptured, skippedCount: s.uncapturedCount }),
      ...(interrupted ? [`interrupted: ${interrupted}`] : []),
      ...(s.interruptedForget ? [`interrupted: ${s.interruptedForget} (the user runs it)`] : []),
      ...s.rewinds.map(
        (r) =>
          `rewound: session ${shortSession(r.session)}'s conversation went back to before turn ${r.beforeTurn}; the workspace still has ${r.pending} file(s) of ${r.turns} (the user may restore them: git ckpt restore ${r.address})`,
      ),
    ];
    return {
      text: `${lines.join('\n')}\n`,
      structured: {
        workspace: s.workspace,
        store: s.store,
        checkpoints: s.checkpoints,
        sessions: s.sessions.length,
        bytesOnDisk: s.bytesOnDisk,
        maxBytes: s.maxBytes,
        latest: s.latest ? { id: s.latest.id, time: new Date(s.latest.time).toISOString(), age: relativeAge(s.latest.time) } : null,
        dirty: s.dirty,
        notCompared: s.notCompared,
        baselineRunning: s.baseline !== null,
        uncaptured: s.uncaptured.map((u) => ({ path: u.path, reason: u.reason })),
        interrupted,
        rewinds: s.rewinds.map(({ session, beforeTurn, turns, kind, pending, address }) => ({
          session,
          beforeTurn,
          turns,
          kind,
          pending,
          address,
        })),
      },
    };
  },
};

const resumePlanTool: AgentTool<{ turn: z.ZodString; session: z.ZodOptional<z.ZodString> }> = {
  name: 'resume_plan',
  title: 'Plan a resume at an earlier turn',
  description:
    'How the user can go back to before one of their prompts, files and conversation together: which files `git ckpt resume` would restore, and the command ' +
    'that reopens the conversation there with the one step inside it. Read-only: it changes nothing, and the user runs the command (a conversation cannot ' +
    'be rewound from inside itself). `turn` is turn:N (the Nth prompt of the current conversation), turn:N~K (of a branch left by a rewind K rewinds ago), ' +
    'optionally @SESSION.',
  input: {
    turn: z.string().min(1).max(200).describe("turn:N[~K][@SESSION], or prompt:ID (the agent's own prompt id)"),
    session: z.string().min(1).max(200).optional().describe('a unique prefix of the session id (default: the most recent session)'),
  },
  /** A ResumeView (lib/surfaces/views.ts): what the CLI's --json and the web API give. */
  output: {
    agent: z.string(),
    session: z.string(),
    turn: z.number(),
    title: z.string().nullable(),
    target: z.string(),
    command: z.array(z.string()),
    commandLine: z.string(),
    steps: z.array(z.string()),
    headless: z.array(z.string()).nullable(),
    headlessLine: z.string().nullable(),
    fork: z.object({ threadId: z.string(), lastTurnId: z.string() }).nullable(),
    resumeCommand: z.string(),
    /** What `git ckpt resume` would restore (a dry run of it). */
    restore: z.object(operationOutput).omit({ undo: true }),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ws, { turn, session }) {
    const resumed = await resumeWithRestore(ws, turn, { session, dryRun: true });
    const { target, plan, restore: preview } = resumed;
    const view = resumeView(turn, resumed);
    const changing = view.restore.files;
    const lines = [
      `before prompt ${plan.turn}${plan.title ? ` “${plan.title}”` : ''} of ${plan.agent} session ${shortSession(plan.session)}: checkpoint ${shortId(target.id)}`,
      `git ckpt resume would restore ${changing.length} path(s)${
        changing.length
          ? `: ${changing
              .slice(0, 10)
              .map((f) => `${f.action} ${f.path}`)
              .join(', ')}${changing.length > 10 ? ', …' : ''}`
          : ''
      }${preview.leftovers.length ? `, and leave ${preview.leftovers.length} file(s) that turn did not have (--delete-new deletes the captured ones)` : ''}`,
      `then the user opens the conversation with: ${view.commandLine}`,
      ...plan.steps.map((s) => `and inside it: ${s}`),
      ...(view.headlessLine ? [`or continues right before that prompt, headless, in a fork: ${view.headlessLine}`] : []),
      `the user runs it all with: ${view.resumeCommand}`,
    ];
    return { text: `${lines.join('\n')}\n`, structured: { ...view } };
  },
};

const checkpointShare: AgentTool<{
  action: z.ZodEnum<{ list: 'list'; fetch: 'fetch'; push: 'push' }>;
  session: z.ZodOptional<z.ZodString>;
  dryRun: z.ZodOptional<z.ZodBoolean>;
}> = {
  name: 'checkpoint_share',
  title: 'Checkpoints on the shared remote',
  description:
    "The remote the user named with `git ckpt share init` (nothing else is ever reached): list the sessions it holds, fetch other machines' sessions " +
    'of this workspace (then checkpoint_list, checkpoint_diff and checkpoint_restore reach them), or push a session. ' +
    'Push is refused unless the user set ckpt.share.agentPush=true; with dryRun it only says what would go and what is withheld (credentials, ignored files).',
  input: {
    action: z.enum(['list', 'fetch', 'push']).describe('list, fetch, or push'),
    session: z.string().min(1).max(200).optional().describe('fetch or push only this session (default: push the latest, fetch all)'),
    dryRun: z.boolean().optional().describe('push: say what would go, send nothing'),
  },
  output: {
    remote: z.string(),
    url: z.string(),
    sessions: z.array(
      z.object({
        session: z.string(),
        writer: z.string().nullable(),
        status: z.string(),
        checkpoints: z.number(),
        withheld: z.string().nullable(),
      }),
    ),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(ws, { action, session, dryRun }) {
    if (action === 'list') {
      const r = await ws.fetchCheckpoints({ list: true });
      const sessions = (r.listed ?? []).map((l) => ({
        session: l.session,
        writer: l.writer,
        status: l.mine ? 'this store' : l.thisWorkspace ? 'another machine' : `workspace ${l.ws}`,
        checkpoints: 0,
        withheld: null,
      }));
      const lines = sessions.map((x) => `${x.session}  writer ${x.writer}  ${x.status}`);
      return {
        text: `${r.remote} (${r.url}) holds ${sessions.length} session ref(s)\n${lines.join('\n')}\n`,
        structured: { remote: r.remote, url: r.url, sessions },
      };
    }
    if (action === 'fetch') {
      const r = await ws.fetchCheckpoints({ session });
      const sessions = r.fetched.map((f) => ({
        session: f.session,
        writer: f.writer,
        status: `${f.added} new`,
        checkpoints: f.total,
        withheld: null,
      }));
      const added = r.fetched.reduce((n, f) => n + f.added, 0);
      const refused = r.refused.map((line) => `${line}\n`).join('');
      return {
        text: `fetched ${added} new checkpoint(s) from ${r.remote}\n${refused}`,
        structured: { remote: r.remote, url: r.url, sessions },
      };
    }
    if (!dryRun && !(await ws.settings()).shareAgentPush)
      throw new CkptError(
        'refused',
        'pushing is the user’s to do (git ckpt push), unless they set ckpt.share.agentPush=true; dryRun: true shows what would go',
      );
    const r = await ws.push({ session, dryRun: dryRun === true });
    const sessions = r.sessions.map((x) => ({
      session: x.session ?? '(none)',
      writer: null,
      status: x.status === 'rejected' ? `rejected: ${x.reason}` : x.status,
      checkpoints: x.checkpoints,
      withheld: x.withheld
        ? `${x.withheld.count} checkpoint(s) from ${shortId(x.withheld.checkpoint)}: ${x.withheld.path} looks like ${withArticle(x.withheld.rule)}`
        : null,
    }));
    const lines = sessions.map((x) => `${x.session}: ${x.status}${x.withheld ? `; withheld ${x.withheld}` : ''}`);
    return {
      text: `${r.dryRun ? 'would push' : 'pushed'} to ${r.remote}\n${lines.join('\n')}\n`,
      structured: { remote: r.remote, url: r.url, sessions },
    };
  },
};

/** Every tool, in the order a client lists them. */
export const AGENT_TOOLS = [
  checkpointNow,
  checkpointList,
  checkpointDiff,
  checkpointRestore,
  checkpointUndo,
  checkpointForget,
  checkpointStatus,
  resumePlanTool,
  checkpointShare,
] as unknown as AgentTool[];

/** What the server tells the agent once, at the start of a session. */
export const AGENT_INSTRUCTIONS = [
  'git-ckpt keeps rewindable checkpoints of this workspace outside the user’s git history (hooks take one around every tool call).',
  '- Call checkpoint_now before a risky shell command or a large rewrite.',
  '- Before proposing to undo something, call checkpoint_list and checkpoint_diff to find the right point and show what would change.',
  '- checkpoint_restore and checkpoint_undo are dry runs unless apply is true. Show the plan, and apply only with the user’s consent.',
  '- Every applied restore can be reversed with checkpoint_undo.',
  '- checkpoint_forget only previews what `git ckpt forget` would remove for good (a secret captured by mistake, a session); only the user can run it.',
  '- checkpoint_share lists and fetches sessions on the remote the user shared to; it pushes only when the user allowed it (ckpt.share.agentPush).',
].join('\n');
