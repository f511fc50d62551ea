/** git ckpt status: where the store is, what it holds, and whether the workspace moved on. */
import type { Command } from 'commander';
import { agentTitle } from '../lib/agents/registry.js';
import { argsOf, openWorkspace, printJson, warn, type GlobalArgs } from './common.js';
import { formatBytes, relativeAge, shortId, skippedLines } from './format.js';
import type { StatusReport } from '../lib/workspace.js';
import { daemonStatus, type WatchedWorkspace } from '../lib/store/daemon-client.js';
import { watchState } from './daemon.js';

interface StatusArgs extends GlobalArgs {
  json?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('show the workspace, its store and its latest checkpoint')
    .option('--json', 'print one JSON object')
    .action((...params) => runStatus(argsOf<StatusArgs>(params)));
}

/** Changed paths named in full up to this many; past it, the count and the command that lists them. */
const NAMED_CHANGES = 10;

function comparison(report: StatusReport): string[] {
  if (report.notCompared) return [`not compared with the latest checkpoint (${report.notCompared})`];
  if (report.dirty === null) return ['no checkpoint to compare with'];
  if (!report.dirty) return ['same as the latest checkpoint'];
  const n = report.changedCount;
  const head = `${n} path${n === 1 ? '' : 's'} changed since the latest checkpoint`;
  if (n > NAMED_CHANGES || n > report.changed.length) return [`${head} (git ckpt diff --stat lists them)`];
  return [`${head}:`, ...report.changed.map((c) => `  ${c.status} ${c.path}`)];
}

async function runStatus(argv: StatusArgs): Promise<void> {
  const ws = openWorkspace(argv);
  const report = await ws.status();
  warn(report.warnings);
  // The daemon's watcher of this workspace, when one runs: why its next capture scans everything, and the fix.
  const daemon = await daemonStatus(process.env, 1000).catch(() => null);
  const watcher: WatchedWorkspace | null = daemon?.workspaces.find((w) => w.root === report.workspace) ?? null;
  if (argv.json) {
    printJson({ ...report, latest: report.latest?.id ?? null, latestTime: report.latest?.time ?? null, watcher });
    return;
  }
  const lines = [
    `workspace:   ${report.workspace}${report.git ? '' : ' (not a git repository)'}`,
    `store:       ${report.store}`,
    `checkpoints: ${report.checkpoints} in ${report.sessions.length} session${report.sessions.length === 1 ? '' : 's'}`,
    `disk:        ${formatBytes(report.bytesOnDisk)} of a ${formatBytes(report.maxBytes)} quota (${Math.round((100 * report.bytesOnDisk) / Math.max(1, report.maxBytes))}%)`,
    `secrets:     never stored: ${report.secretPatterns.join(' ') || 'nothing (ckpt.secretPatterns drops every pattern)'}`,
    `latest:      ${report.latest ? `${shortId(report.latest.id)} (${relativeAge(report.latest.time)})` : 'none'}`,
  ];
  const [first, ...more] = comparison(report);
  lines.push(`dirty:       ${first}`, ...more.map((line) => `           ${line}`));
  // The same sentence as `git ckpt daemon status` prints for this workspace.
  if (watcher) {
    lines.push(`daemon:      ${watchState(watcher)}`);
    if (watcher.fix) lines.push(`             fix: ${watcher.fix}`);
  } else if (daemon) lines.push(`daemon:      running (pid ${daemon.pid}), not watching this workspace yet: the next hook event starts it`);
  else if (!(await ws.settings()).daemon) lines.push('daemon:      off (ckpt.daemon=false): hooks record each event themselves');
  else lines.push('daemon:      not running: hooks record each event themselves and start it (`git ckpt daemon start`)');
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
    const kept = r.kind === 'code' ? `what ${agentTitle(r.agent)}'s rewind did not put back of ${r.turns}` : `${r.turns}'s changes`;
    lines.push(
      `rewound: session ${r.session.slice(0, 8)}'s conversation went back to before turn ${r.beforeTurn} (${relativeAge(r.time)}); the workspace still has ${kept} (${r.pending} file${r.pending === 1 ? '' : 's'}${shell})`,
    );
    lines.push(`         bring the files back too with: git ckpt restore ${r.address}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
