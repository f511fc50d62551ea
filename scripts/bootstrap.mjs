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

/**
 * The environment of the `npm ci` into this folder. Inside a global install's lifecycle (`npm install -g
 * <folder or git URL>`) npm sets npm_config_global, and a global `npm ci` is refused (ECIGLOBAL): the
 * dependencies go into this folder all the same.
 */
function localInstallEnv() {
  const env = { ...process.env, GIT_CKPT_BOOTSTRAP: '1' };
  for (const key of Object.keys(env)) if (/^npm_config_(global|location)$/i.test(key)) delete env[key];
  return env;
}

if (!upToDate()) {
  process.stderr.write('git-ckpt: installing the dependencies package-lock.json pins (npm ci)…\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // GIT_CKPT_BOOTSTRAP: the package's own `prepare`, which npm ci runs, skips its build (the caller builds).
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: root,
    stdio: 'inherit',
    env: localInstallEnv(),
  });
  if (r.status !== 0) {
    process.stderr.write(`git-ckpt: npm ci failed (exit ${r.status ?? r.signal}); see its output above\n`);
    process.exit(1);
  }
}
