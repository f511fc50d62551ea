/** git ckpt version (and --version): the versions of git-ckpt, git and Node.js. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CommandModule } from 'yargs';
import { packageRoot } from '../lib/layout.js';
import { gitVersion, MIN_GIT, versionBelow } from '../lib/runner.js';
import { printJson, type GlobalArgs } from './common.js';

export async function printVersion(json: boolean): Promise<void> {
  const ckpt = (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  const git = await gitVersion().catch(() => 'not found');
  const node = process.versions.node;
  if (json) {
    printJson({ gitCkpt: ckpt, git, node });
    return;
  }
  const gitNote = git === 'not found' || versionBelow(git, MIN_GIT) ? ` (git-ckpt needs ${MIN_GIT} or newer)` : '';
  process.stdout.write(`git-ckpt version ${ckpt}\ngit version ${git}${gitNote}\nnode version ${node}\n`);
}

export const versionCommand: CommandModule<GlobalArgs, GlobalArgs & { json?: boolean }> = {
  command: 'version',
  describe: 'print the versions of git-ckpt, git and Node.js',
  builder: (yargs) => yargs.option('json', { type: 'boolean', describe: 'print one JSON object' }),
  handler: (argv) => printVersion(Boolean(argv.json)),
};
