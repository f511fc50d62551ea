/**
 * git ckpt daemon start|stop|status [--json]: the resident process that
 * watches workspaces so a hook scans only what changed. Hooks start it on
 * demand; these commands are for looking at it and for tests.
 */
import type { Command } from 'commander';
import { daemonStatus, startDaemon, stopDaemon, type WatchedWorkspace } from '../lib/store/daemon-client.js';
import { runDaemon } from '../lib/daemon/daemon.js';
import { withoutAgentEnv } from '../lib/agents/registry.js';
import { CkptError } from '../lib/model/errors.js';
import { cliEntry, packageVersion } from '../lib/store/layout.js';
import { printJson } from './common.js';
import { dim, formatBytes, relativeAge } from './format.js';

const ACTIONS = ['start', 'stop', 'status', 'run'] as const;

export function define(command: Command): Command {
  return command
    .description('the resident watcher hooks reach: start, stop, or show its status')
    .argument('<action>', 'start, stop or status')
    .option('--json', 'print one JSON object')
    .action((action: string, options: { json?: boolean }) => runDaemonCommand(action, Boolean(options.json)));
}

async function runDaemonCommand(action: string, json: boolean): Promise<void> {
  if (!(ACTIONS as readonly string[]).includes(action))
    throw new CkptError('usage', `unknown daemon action ${JSON.stringify(action).slice(0, 40)} (expected start, stop or status)`);
  if (action === 'run') {
    // The daemon itself, as `start` and the hooks spawn it.
    // Test-only: a shorter clock, and another file standing for the binary (touching it is an upgrade).
    const tickMs = Number(process.env.GIT_CKPT_TEST_DAEMON_TICK_MS) || undefined;
    const binary = process.env.GIT_CKPT_TEST_DAEMON_BINARY || cliEntry();
    const why = await runDaemon({ env: process.env, version: packageVersion(), binary, ...(tickMs ? { tickMs } : {}) });
    void why;
    process.exit(0);
  }
  if (action === 'start') {
    const { endpoint, started } = await startDaemon(withoutAgentEnv(process.env));
    if (json) return printJson({ running: true, started, pid: endpoint.pid, port: endpoint.port, socket: endpoint.socket });
    process.stdout.write(
      `${started ? 'started' : 'already running:'} pid ${endpoint.pid}, port ${endpoint.port}${endpoint.socket ? `, socket ${endpoint.socket}` : ''}\n`,
    );
    return;
  }
  if (action === 'stop') {
    const stopped = await stopDaemon();
    if (json) return printJson({ stopped });
    process.stdout.write(stopped ? 'stopped\n' : 'not running\n');
    return;
  }
  const status = await daemonStatus();
  if (json) return printJson(status ?? { running: false });
  if (!status) {
    process.stdout.write('not running (hooks start it on demand; ckpt.daemon=false turns it off)\n');
    return;
  }
  const out = [
    `running: pid ${status.pid}, version ${status.version}, up ${relativeAge(status.startedAt).replace(/ ago$/, '')}`,
    `memory: ${formatBytes(status.rssBytes)} resident; ${status.events} event(s) served, ${status.refused} refused`,
    `endpoint: ${status.socket ? `socket ${status.socket}, ` : ''}http 127.0.0.1:${status.port}`,
    dim(
      `exits after ${Math.round(status.idleExitMs / 60_000)} min idle (ckpt.daemonIdle); verifies every ${Math.round(status.verifyEveryMs / 60_000)} min of activity (ckpt.daemonVerify)`,
    ),
  ];
  if (status.inotify)
    out.push(
      `inotify: ${status.inotify.watches} folder watch(es) of this user's limit of ${status.inotify.limit ?? '?'} (fs.inotify.max_user_watches)`,
    );
  if (!status.workspaces.length) out.push('no workspace watched yet');
  for (const w of status.workspaces) {
    out.push(`${w.root}`);
    out.push(`  ${watchState(w)}`);
    if (w.fix) out.push(`  fix: ${w.fix}`);
    out.push(
      `  ${w.events} change event(s), ${w.captures} capture(s), ${w.fullScans} in full${w.lastFullScanReason ? ` (last: ${w.lastFullScanReason})` : ''}`,
    );
    out.push(`  last verification: ${w.verifiedAt ? `${relativeAge(w.verifiedAt)}, ${w.verification}` : 'none yet'}`);
    if (w.watch) out.push(`  git ckpt watch: a checkpoint after ${w.watch.quietMs} ms without changes; ${w.watch.checkpoints} taken`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

/** One line: whether the watcher's account narrows the next capture, and why not. */
export function watchState(w: WatchedWorkspace): string {
  if (w.unwatched) return `not fully watched: ${w.unwatched}; every capture scans everything until it is`;
  if (w.unknown) return `unknown (${w.unknown}): the next capture scans everything`;
  // What the watcher saw, not what differs: `git ckpt status` compares the files with the latest checkpoint.
  return `watching: ${w.pending} path(s) seen changing since its last capture`;
}
