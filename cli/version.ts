/** git ckpt version (and --version): the versions of git-ckpt, git and Node.js. */
import type { Command } from 'commander';
import { packageVersion } from '../lib/store/layout.js';
import { gitVersion, MIN_GIT, versionBelow } from '../lib/git/runner.js';

export async function printVersion(json: boolean): Promise<void> {
  const ckpt = packageVersion();
  const git = await gitVersion().catch(() => 'not found');
  const node = process.versions.node;
  if (json) {
    process.stdout.write(`${JSON.stringify({ gitCkpt: ckpt, git, node }, null, 2)}\n`);
    return;
  }
  const gitNote = git === 'not found' || versionBelow(git, MIN_GIT) ? ` (git-ckpt needs ${MIN_GIT} or newer)` : '';
  process.stdout.write(`git-ckpt version ${ckpt}\ngit version ${git}${gitNote}\nnode version ${node}\n`);
}

export function define(command: Command): Command {
  return command
    .description('print the versions of git-ckpt, git and Node.js')
    .option('--json', 'print one JSON object')
    .action((options: { json?: boolean }) => printVersion(Boolean(options.json)));
}
