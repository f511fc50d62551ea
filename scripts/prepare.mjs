// `prepare`: npm runs it after `npm install` in a checkout, for a git URL installed as a dependency, and
// for `npm link` and `npm install -g <folder>`, where it runs before anything is installed in the folder.
// The build's tools (tsc, esbuild) are devDependencies: where they are missing it installs them first
// (scripts/bootstrap.mjs, the same `npm ci` README's set-up commands run), then builds. Node built-ins only.
// The `npm ci` started here runs `prepare` again: that inner run has nothing to do, nor has one in an
// installed copy, which has no sources (npm runs prepare there too after a git URL install).
// `npm install -g <git URL>` is npm's own bug (npm/cli#8440): the clone it prepares gets no dependencies
// and is linked into the global folder while it is still being prepared; docs/design.md says what to use.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (process.env.GIT_CKPT_BOOTSTRAP === '1' || !existsSync(path.join(root, 'tsconfig.json'))) process.exit(0);

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (command, args) => {
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' && command === npm });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
const tools = ['typescript/package.json', 'esbuild/package.json'].map((p) => path.join(root, 'node_modules', p));
if (!tools.every(existsSync)) run(process.execPath, [path.join(root, 'scripts', 'bootstrap.mjs')]);
run(npm, ['run', '--silent', 'build']);
