// npm run test:agents: the real agent CLIs, installed on demand into a cache
// outside the repository (kept between runs), each driven offline by a scripted
// model server on 127.0.0.1. An agent whose package cannot be installed is
// skipped (AVA reports its tests as skipped), and the last line says so; under CI
// (CI=true) a skip fails the run.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { AGENT_PACKAGES, IN_CI, ROOT, cacheRoot, installAgent } from './harness.mjs';

const installed = [];
const skipped = [];
for (const name of Object.keys(AGENT_PACKAGES)) {
  const started = Date.now();
  const r = installAgent(name);
  if (r.skip) skipped.push(`${name}: ${r.skip}`);
  else installed.push(`${name} ${r.version}`);
  process.stdout.write(
    `${name.padEnd(8)} ${r.skip ? `SKIPPED (${r.skip})` : `${AGENT_PACKAGES[name].pkg}@${r.version}`} (${Date.now() - started} ms)\n`,
  );
}
process.stdout.write(`agent cache: ${cacheRoot()}\n`);
const ava = spawnSync(
  process.execPath,
  [path.join(ROOT, 'node_modules', 'ava', 'entrypoints', 'cli.mjs'), '--config', 'test/agents/ava.config.mjs', ...process.argv.slice(2)],
  {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, GIT_CKPT_AGENT_CACHE: cacheRoot() },
  },
);
process.stdout.write(
  `real agents run: ${installed.join(', ') || 'none'}${skipped.length ? `; skipped: ${skipped.join('; ')}` : '; none skipped'}\n`,
);
// A skip is no pass: under CI, where every agent must run, it fails the run (its tests failed too, saying why).
if (IN_CI && skipped.length) {
  process.stdout.write(`FAILED under CI: ${skipped.length} agent${skipped.length === 1 ? '' : 's'} could not run\n`);
  process.exit(1);
}
process.exit(ava.status ?? 1);
