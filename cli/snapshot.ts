/** git ckpt snapshot: capture the workspace as a checkpoint. */
import { Option, type Command } from 'commander';
import { SKIPPED_KEPT, USER_KINDS, type UserKind } from '../lib/model/ledger.js';
import type { SnapshotRequest } from '../lib/workspace.js';
import type { SnapshotProgress, SnapshotResult } from '../lib/capture/snapshot.js';
import { argsOf, nonNegativeInt, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { shortId, skippedLines, statsText } from './format.js';

interface SnapshotArgs extends GlobalArgs {
  message?: string;
  session?: string;
  turn?: string;
  step?: string;
  tool?: string;
  kind?: string;
  json?: boolean;
}

/**
 * Progress on stderr, on a terminal only, as git does: redrawn in place (`\r`)
 * at most every 200 ms, for a first snapshot and for any capture past a
 * second. Into a pipe or a file it says nothing (redraws there are only noise:
 * hundreds of them for a first snapshot of 300,000 files).
 */
export function progressReporter(
  terminal = Boolean(process.stderr.isTTY),
  write: (text: string) => void = (text) => process.stderr.write(text),
): ((p: SnapshotProgress) => void) | undefined {
  if (!terminal) return undefined;
  let last = 0;
  let finished = false;
  return (p) => {
    const done = p.hashed >= p.total;
    if (finished || !(p.first || p.elapsedMs > 1000)) return;
    const now = Date.now();
    if (!done && now - last < 200) return;
    last = now;
    finished = done;
    write(`hashing files: ${p.hashed}/${p.total}${done ? '\n' : '\r'}`);
  };
}

export function reportSnapshot(result: SnapshotResult, json: boolean | undefined): void {
  if (json) {
    printJson({
      created: result.created,
      id: result.id ?? null,
      parent: result.created ? (result.record?.parent ?? null) : null,
      tree: result.tree ?? null,
      stats: result.created ? result.record?.stats : { added: 0, modified: 0, deleted: 0 },
      skipped: result.skipped,
      skippedCount: result.skippedCount,
      elapsedMs: result.elapsedMs,
    });
    return;
  }
  // What the checkpoint before also left out was reported then, and `status` lists it: said once, not at every snapshot.
  const fresh = result.newlySkipped ?? result.skipped;
  for (const line of skippedLines({ skipped: fresh.slice(0, SKIPPED_KEPT), skippedCount: fresh.length }))
    process.stderr.write(`git-ckpt: ${line}\n`);
  if (result.created && result.record) {
    process.stdout.write(`checkpoint ${shortId(result.record.id)}  ${statsText(result.record)}\n`);
  } else {
    process.stdout.write(`nothing changed since ${result.id ? `checkpoint ${shortId(result.id)}` : 'the last checkpoint'}\n`);
  }
}

export async function runSnapshot(argv: SnapshotArgs, extra: Partial<SnapshotRequest> = {}): Promise<void> {
  const ws = openWorkspace(argv);
  const result = await ws.snapshot({
    message: argv.message,
    session: argv.session,
    turn: nonNegativeInt('turn', argv.turn),
    step: nonNegativeInt('step', argv.step),
    tool: argv.tool,
    kind: (argv.kind ?? 'manual') as UserKind,
    onProgress: argv.json ? undefined : progressReporter(),
    ...extra,
  });
  reportSnapshot(result, argv.json);
}

export function define(command: Command): Command {
  return command
    .description('capture the workspace as a checkpoint (nothing is created when nothing changed)')
    .option('-m, --message <message>', 'a message for the checkpoint')
    .option('--session <id>', 'the agent session id')
    .option('--turn <n>', 'the turn (user prompt) number')
    .option('--step <n>', 'the step (tool call) number')
    .option('--tool <name>', 'the tool that ran')
    .addOption(new Option('--kind <kind>', 'why the checkpoint was taken').choices(USER_KINDS))
    .option('--json', 'print one JSON object')
    .action((...params) => runSnapshot(argsOf<SnapshotArgs>(params)));
}
