/**
 * git ckpt watch [--quiet-ms N] [--stop] [--json]: for agents and editors
 * without hooks (Cursor's editor, Aider, Zed, a person), a checkpoint after
 * each quiet period of changes, kind `watch`, kept by the daemon's watcher
 * until `--stop` or the daemon's exit.
 */
import type { Command } from 'commander';
import { setWatch } from '../lib/store/daemon-client.js';
import { withoutAgentEnv } from '../lib/agents/registry.js';
import { CkptError } from '../lib/model/errors.js';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';

interface WatchArgs extends GlobalArgs {
  quietMs?: string;
  stop?: boolean;
  json?: boolean;
}

const DEFAULT_QUIET_MS = 2000;

export function define(command: Command): Command {
  return command
    .description('a checkpoint after each quiet period of changes, by the daemon (for agents and editors without hooks)')
    .option('--quiet-ms <ms>', `quiet period after the last change (default ${DEFAULT_QUIET_MS})`)
    .option('--stop', 'stop watching this workspace')
    .option('--json', 'print one JSON object')
    .action((...params) => runWatch(argsOf<WatchArgs>(params)));
}

async function runWatch(argv: WatchArgs): Promise<void> {
  const quietMs = argv.quietMs === undefined ? DEFAULT_QUIET_MS : Number(argv.quietMs);
  if (!argv.stop && !(Number.isInteger(quietMs) && quietMs > 0))
    throw new CkptError('usage', `--quiet-ms takes a whole number of milliseconds, not ${JSON.stringify(argv.quietMs)}`);
  const ws = openWorkspace(argv);
  // The store exists before the daemon watches: its first capture needs it.
  await ws.settings();
  const watched = await setWatch(withoutAgentEnv(process.env), ws.root, argv.stop ? null : quietMs);
  if (argv.json) return printJson(watched === null ? { watching: false } : { watching: true, ...watched });
  process.stdout.write(
    watched === null
      ? `no longer watching ${ws.root}\n`
      : `watching ${ws.root}: a checkpoint after each ${quietMs} ms without changes (git ckpt watch --stop ends it)\n`,
  );
}
