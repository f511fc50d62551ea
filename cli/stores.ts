/** git ckpt stores: every workspace store under the store root; --prune-missing removes those of deleted workspaces. */
import type { Command } from 'commander';
import { listStores, pruneMissingStores } from '../lib/store/stores.js';
import { argsOf, printJson, type GlobalArgs } from './common.js';
import { dim, formatBytes, relativeAge, yellow } from './format.js';

interface StoresArgs extends GlobalArgs {
  json?: boolean;
  pruneMissing?: boolean;
  dryRun?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('list every workspace store, its size and last use; flag those whose workspace is gone')
    .option('--json', 'print JSON')
    .option('--prune-missing', 'remove the stores whose workspace no longer exists')
    .option('-n, --dry-run', 'with --prune-missing: list what would go')
    .action((...params) => runStores(argsOf<StoresArgs>(params)));
}

async function runStores(argv: StoresArgs): Promise<void> {
  if (argv.pruneMissing) {
    const removed = await pruneMissingStores(process.env, argv.dryRun);
    if (argv.json) {
      printJson({ dryRun: Boolean(argv.dryRun), removed });
      return;
    }
    const verb = argv.dryRun ? 'would remove' : 'removed';
    for (const s of removed) process.stdout.write(`${verb} ${s.dir} (${formatBytes(s.bytes)}; workspace ${s.workspace} is gone)\n`);
    process.stdout.write(`${verb} ${removed.length} store(s)\n`);
    return;
  }
  const stores = listStores();
  if (argv.json) {
    printJson(stores);
    return;
  }
  if (stores.length === 0) process.stdout.write('no stores yet\n');
  else process.stdout.write(dim(`${'size'.padStart(10)}  ${'last used'.padEnd(15)} ${'checkpoints'.padStart(11)}  workspace\n`));
  for (const s of stores) {
    const flag = s.missing ? yellow(' (workspace missing)') : '';
    process.stdout.write(
      `${formatBytes(s.bytes).padStart(10)}  ${dim(relativeAge(s.lastUsed).padEnd(15))} ${String(s.checkpoints).padStart(11)}  ${s.workspace ?? '?'}${flag}\n`,
    );
  }
  const missing = stores.filter((s) => s.missing).length;
  if (missing)
    process.stdout.write(`${missing} store(s) belong to workspaces that no longer exist: git ckpt stores --prune-missing --dry-run\n`);
}
