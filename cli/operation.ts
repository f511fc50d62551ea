/** Output shared by restore, revert and undo: the plan table and the summary. */
import type { Command } from 'commander';
import type { OperationReport, RecoveryReport } from '../lib/restore/restore.js';
import { operationView } from '../lib/surfaces/views.js';
import type { PlannedFile } from '../lib/restore/restore-plan.js';
import { displayPath } from '../lib/model/paths.js';
import { printJson } from './common.js';
import { dim, green, red, shortId, yellow } from './format.js';

const ACTION_PAINT: Record<PlannedFile['action'], (t: string) => string> = {
  restore: yellow,
  recreate: green,
  delete: red,
  unchanged: dim,
  skip: red,
};

const LEFTOVERS_SHOWN = 20;

function countsLine(r: OperationReport): string {
  const c = r.counts;
  return `${c.restore} restored, ${c.recreate} recreated, ${c.delete} deleted, ${c.skip} skipped, ${c.failed} failed (${c.unchanged} unchanged)`;
}

/** What an operation's record holds, as `show` counts it. */
function recordedLine(c: NonNullable<OperationReport['recorded']>): string {
  return `+${c.added} ~${c.modified} -${c.deleted}`;
}

function verb(r: OperationReport): string {
  return r.op === 'undo' ? `undo of ${shortId(r.target)}` : `${r.op} ${r.op === 'revert' ? 'of' : 'to'} ${shortId(r.target)}`;
}

/** Print a report: with --json one object, otherwise a table (dry run) or a summary. */
export function printOperation(r: OperationReport, json: boolean): void {
  if (json) {
    printJson(operationView(r));
    return;
  }
  const out: string[] = [];
  const changing = r.plan.files.filter((f) => f.action !== 'unchanged');
  if (r.dryRun) {
    out.push(`${verb(r)}: dry run, nothing was changed`);
    for (const f of changing)
      out.push(`  ${ACTION_PAINT[f.action](f.action.padEnd(9))} ${displayPath(f.path)}${f.reason ? dim(`  (${f.reason})`) : ''}`);
    if (changing.length === 0) {
      // Leftovers (files the checkpoint lacks) are listed below: the workspace matches only without them.
      out.push(
        r.leftovers.length
          ? '  every file of the checkpoint already matches; nothing would be written'
          : '  the workspace already matches; nothing to do',
      );
    }
  } else {
    for (const f of changing.filter((f) => f.action === 'skip')) out.push(`skipped: ${displayPath(f.path)} (${f.reason})`);
    for (const f of r.failures) out.push(`failed:  ${displayPath(f.path)}: ${f.error}`);
  }
  if (r.leftovers.length) {
    const note = r.op === 'restore' ? ' (not in the checkpoint, left alone; --delete-new removes captured ones)' : '';
    out.push(`leftovers: ${r.leftovers.length}${note}`);
    for (const p of r.leftovers.slice(0, LEFTOVERS_SHOWN)) out.push(`  ${displayPath(p)}`);
    if (r.leftovers.length > LEFTOVERS_SHOWN) out.push(`  … and ${r.leftovers.length - LEFTOVERS_SHOWN} more`);
  }
  // A skipped path is listed once: in the plan's lines above, with the plan's reason.
  const listed = new Set(changing.filter((f) => f.action === 'skip').map((f) => f.path));
  for (const s of r.uncaptured.filter((u) => !listed.has(u.path)).slice(0, LEFTOVERS_SHOWN))
    out.push(`not captured, never touched: ${displayPath(s.path)} (${s.reason})`);
  out.push(`${r.dryRun ? 'would be: ' : ''}${countsLine(r)}`);
  if (!r.dryRun) {
    if (r.record) {
      const held = r.recorded ? ` (${recordedLine(r.recorded)})` : '';
      out.push(
        `${verb(r)} recorded as ${shortId(r.record)}${held}; the state before it is guard checkpoint ${shortId(r.guard!)}: run \`git ckpt undo\` to reverse it`,
      );
      if (r.recorded?.unwrittenCount) {
        const { unwritten, unwrittenCount } = r.recorded;
        const shown = unwritten.slice(0, LEFTOVERS_SHOWN).map(displayPath).join(', ');
        out.push(
          `its record also holds ${unwrittenCount} path${unwrittenCount === 1 ? '' : 's'} the ${r.op} did not write (newly captured, such as a file an ignore file it wrote no longer ignores, or changed while it ran): ${shown}${unwrittenCount > LEFTOVERS_SHOWN ? ', …' : ''}`,
        );
      }
    } else if (r.counts.skip > 0 || r.failures.length > 0)
      out.push(`nothing was written: every path that differs was ${r.failures.length ? 'skipped or failed' : 'skipped'} (listed above)`);
    else
      out.push(
        r.leftovers.length
          ? 'every file of the checkpoint already matched; nothing was written'
          : 'the workspace already matches; nothing was written',
      );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

export function printRecovery(r: RecoveryReport, json: boolean): void {
  if (json) {
    printJson(r);
    return;
  }
  const out: string[] = [];
  const done = r.entries - r.leftAlone.length;
  if (r.dryRun) {
    out.push(
      r.alreadyRecorded
        ? `the interrupted ${r.op} had already finished (recorded as ${shortId(r.record!)}); --${r.action} would ${r.action === 'abort' ? 'undo it' : 'close its journal'}: dry run, nothing was changed`
        : `--${r.action} would bring ${done} paths ${r.action === 'continue' ? `to the target ${shortId(r.target)}` : `back to guard checkpoint ${shortId(r.guard)}`}: dry run, nothing was changed`,
    );
    for (const l of r.leftAlone) out.push(`would leave alone: ${l.path} (${l.reason})`);
    process.stdout.write(`${out.join('\n')}\n`);
    return;
  }
  if (r.alreadyRecorded && r.action === 'continue')
    out.push(`the interrupted ${r.op} had already finished (recorded as ${shortId(r.record!)})`);
  else if (r.alreadyRecorded)
    out.push(`the interrupted ${r.op} had already finished; it was undone${r.record ? ` (recorded as ${shortId(r.record)})` : ''}`);
  else if (r.action === 'continue')
    out.push(
      `finished the interrupted ${r.op} to ${shortId(r.target)}: ${done} paths brought to the target${r.record ? `, recorded as ${shortId(r.record)}` : ''}`,
    );
  else
    out.push(
      `rolled back the interrupted ${r.op}: ${done} paths brought back to guard checkpoint ${shortId(r.guard)}${r.record ? `, recorded as ${shortId(r.record)}` : ''}`,
    );
  for (const l of r.leftAlone) out.push(`left alone: ${l.path} (${l.reason})`);
  for (const f of r.failures) out.push(`failed:  ${f.path}: ${f.error}`);
  if (r.recoveryGuard && !r.alreadyRecorded)
    out.push(
      `the workspace as it was found is guard checkpoint ${shortId(r.recoveryGuard)}: ${
        r.action === 'abort' ? 'run `git ckpt undo` to go back to it' : `\`git ckpt restore ${shortId(r.recoveryGuard)}\` brings it back`
      }`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
}

/** Failures make the exit code 1; skips are reported but are not failures. */
export function exitCodeFor(failures: number): void {
  if (failures > 0) process.exitCode = 1;
}

/** The options every mutating command shares. */
export function previewOptions(command: Command): Command {
  return command.option('-n, --dry-run', 'print the plan; change nothing').option('--json', 'print one JSON object');
}
