/** git ckpt bundle create|verify|import <file>: checkpoints in one file, for machines no remote reaches. */
import type { Command } from 'commander';
import { CkptError } from '../lib/model/errors.js';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { exportLines, refSessionLabel } from './share-format.js';
import { formatBytes, shortId } from './format.js';

interface BundleArgs extends GlobalArgs {
  action: string;
  file: string;
  session?: string;
  incremental?: boolean;
  includeIgnored?: boolean;
  anyWorkspace?: boolean;
  json?: boolean;
}

export function define(command: Command): Command {
  return command
    .description("sessions' checkpoints in a git bundle: create one, verify one, or import one into this store")
    .argument('<action>', 'create, verify or import')
    .argument('<file>', 'the bundle file')
    .option('--session <id>', 'create: only this session (default: every one)')
    .option('--incremental', 'create: only what the last bundle did not hold (its tips become prerequisites)')
    .option('--include-ignored', 'create: also carry what your .gitignore ignores')
    .option('--any-workspace', "import: also take other workspaces' chains (by default only this workspace's)")
    .option('--json', 'print one JSON object')
    .action((...params) => runBundle(argsOf<BundleArgs>(params)));
}

async function runBundle(argv: BundleArgs): Promise<void> {
  const ws = openWorkspace(argv);
  if (argv.action === 'create') {
    const report = await ws.bundleCreate(argv.file, {
      session: argv.session,
      incremental: argv.incremental,
      includeIgnored: argv.includeIgnored,
    });
    if (argv.json) return printJson(report);
    const out = [`wrote ${report.file}: ${report.refs} session ref(s), ${formatBytes(report.bytes)}`];
    if (report.prerequisites.length)
      out.push(
        `  needs ${report.prerequisites.length} prerequisite(s) in the importing store (the previous bundle): ${report.prerequisites.map((p) => shortId(p)).join(', ')}`,
      );
    for (const s of report.sessions) out.push(...exportLines(s));
    process.stdout.write(`${out.join('\n')}\n`);
    return;
  }
  if (argv.action === 'verify') {
    const report = await ws.bundleVerify(argv.file);
    if (argv.json) printJson(report);
    else {
      const out = [`${report.file}: ${report.refs.length} session ref(s)`];
      for (const r of report.refs) out.push(`  ${refSessionLabel(r.session)}  writer ${r.writer}  workspace ${r.ws}  ${shortId(r.tip)}`);
      if (report.missing.length)
        out.push(
          `  this store lacks ${report.missing.length} prerequisite(s): ${report.missing.map((m) => shortId(m)).join(', ')}: import the bundle made before it first`,
        );
      else out.push(`  ok${report.prerequisites.length ? `: its ${report.prerequisites.length} prerequisite(s) are here` : ''}`);
      process.stdout.write(`${out.join('\n')}\n`);
    }
    if (report.missing.length) process.exitCode = 1;
    return;
  }
  if (argv.action === 'import') {
    const report = await ws.bundleImport(argv.file, { anyWorkspace: argv.anyWorkspace });
    if (report.rejected.length || report.refused.length) process.exitCode = 1;
    if (argv.json) return printJson(report);
    const added = report.fetched.reduce((n, f) => n + f.added, 0);
    const out = [
      `imported ${added} new checkpoint(s) from ${report.file}${report.ws ? ` (workspace ${report.ws})` : ' (every workspace it holds)'}`,
    ];
    for (const f of report.fetched) out.push(`  ${refSessionLabel(f.session)}  writer ${f.writer}: ${f.added} new, ${f.total} in all`);
    for (const r of report.rejected) out.push(`  not moved (not a fast-forward): ${r}`);
    for (const r of report.refused) out.push(`  ${r}`);
    for (const o of report.otherWorkspaces)
      out.push(`  left out: ${o.refs} session ref(s) of workspace ${o.ws} (--any-workspace takes them)`);
    process.stdout.write(`${out.join('\n')}\n`);
    return;
  }
  throw new CkptError('usage', `unknown bundle action ${JSON.stringify(argv.action).slice(0, 40)} (expected create, verify or import)`);
}
