// Runs before `npm test`, `npm run demo` and the other scripts that need the
// dependencies: on a fresh clone (or after package-lock.json changed) it runs
// `npm ci`, so README's set-up commands work as the very first command typed.
// Node built-ins only: nothing is installed yet when it runs.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const installed = path.join(root, 'node_modules', '.package-lock.json');

/** npm ci writes node_modules/.package-lock.json: the same packages at the same versions means nothing to do. */
function upToDate() {
  if (!existsSync(installed)) return false;
  const want = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')).packages ?? {};
  const have = JSON.parse(readFileSync(installed, 'utf8')).packages ?? {};
  return Object.entries(want).every(([name, meta]) => name === '' || meta.optional || have[name]?.version === meta.version);
}

if (!upToDate()) {
  process.stderr.write('git-ckpt: installing the dependencies package-lock.json pins (npm ci)…\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write(`git-ckpt: npm ci failed (exit ${r.status ?? r.signal}); see its output above\n`);
    process.exit(1);
  }
}
