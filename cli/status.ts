/** git ckpt status: where the store is, what it holds, and whether the workspace moved on. */
import type { Command } from 'commander';
import { agentName } from '../lib/model/rewind-plan.js';
import { argsOf, openWorkspace, printJson, warn, type GlobalArgs } from './common.js';
import { formatBytes, relativeAge, shortId, skippedLines } from './format.js';
import type { StatusReport } from '../lib/workspace.js';

interface StatusArgs extends GlobalArgs {
  json?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('show the workspace, its store and its latest checkpoint')
    .option('--json', 'print one JSON object')
    .action((...params) => runStatus(argsOf<StatusArgs>(params)));
}

function comparison(report: StatusReport): string {
  if (report.notCompared) return `not compared with the latest checkpoint (${report.notCompared})`;
  if (report.dirty === null) return 'no checkpoint to compare with';
  return report.dirty ? 'changed since the latest checkpoint' : 'same as the latest checkpoint';
}

async function runStatus(argv: StatusArgs): Promise<void> {
  const ws = openWorkspace(argv);
  const report = await ws.status();
  warn(report.warnings);
  if (argv.json) {
    printJson({ ...report, latest: report.latest?.id ?? null, latestTime: report.latest?.time ?? null });
    return;
  }
  const lines = [
    `workspace:   ${report.workspace}${report.git ? '' : ' (not a git repository)'}`,
    `store:       ${report.store}`,
    `checkpoints: ${report.checkpoints} in ${report.sessions.length} session${report.sessions.length === 1 ? '' : 's'}`,
    `disk:        ${formatBytes(report.bytesOnDisk)} of a ${formatBytes(report.maxBytes)} quota (${Math.round((100 * report.bytesOnDisk) / Math.max(1, report.maxBytes))}%)`,
    `secrets:     never stored: ${report.secretPatterns.join(' ') || 'nothing (ckpt.secretPatterns drops every pattern)'}`,
    `latest:      ${report.latest ? `${shortId(report.latest.id)} (${relativeAge(report.latest.time)})` : 'none'}`,
    `dirty:       ${comparison(report)}`,
  ];
  if (report.baseline) {
    const b = report.baseline;
    const progress = b.total ? `${b.hashed} of ${b.total} files hashed` : 'scanning';
    lines.push(`first snapshot: in the background, ${progress} (started ${relativeAge(b.started)}); hooks skip until it is done`);
  }
  lines.push(...skippedLines({ skipped: report.uncaptured, skippedCount: report.uncapturedCount }));
  const interrupted = report.interrupted;
  if (interrupted && 'error' in interrupted) lines.push(`interrupted: ${interrupted.error}`);
  else if (interrupted) {
    lines.push(
      `interrupted: a ${interrupted.op} to ${shortId(interrupted.target)} (${interrupted.entries} paths, started ${relativeAge(interrupted.started)}) did not finish`,
    );
    lines.push('             finish it with: git ckpt restore --continue, or roll it back with: git ckpt restore --abort');
  }
  if (report.interruptedForget) lines.push(`interrupted: ${report.interruptedForget}`);
  for (const r of report.rewinds) {
    const shell = r.shell ? `, ${r.shell} of them only by the shell` : '';
    const kept = r.kind === 'code' ? `what ${agentName(r.agent)}'s rewind did not put back of ${r.turns}` : `${r.turns}'s changes`;
    lines.push(
      `rewound: session ${r.session.slice(0, 8)}'s conversation went back to before turn ${r.beforeTurn} (${relativeAge(r.time)}); the workspace still has ${kept} (${r.pending} file${r.pending === 1 ? '' : 's'}${shell})`,
    );
    lines.push(`         bring the files back too with: git ckpt restore ${r.address}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
