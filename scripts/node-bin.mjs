// `node scripts/node-bin.mjs <version>` prints a folder holding that Node.js's `node`, to put first on PATH:
// `PATH="$(node scripts/node-bin.mjs 24):$PATH" npm test` runs the suite on Node 24. The binaries come from
// the npm registry's node-<platform>-<arch> packages (no download outside npm), kept under
// ~/.cache/git-ckpt-node/<version>. <version> is what npm takes: 24, 22, 20.19.0. Node built-ins only.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

const version = process.argv[2];
if (!version || !/^\d+(\.\d+){0,2}$/.test(version)) {
  process.stderr.write('usage: node scripts/node-bin.mjs <version> (24, 22, 20.19.0)\n');
  process.exit(2);
}
const platform = { linux: 'linux', darwin: 'darwin', win32: 'win' }[process.platform];
if (!platform) {
  process.stderr.write(`node-bin: no registry package of Node.js for ${process.platform}\n`);
  process.exit(1);
}
const name = `node-${platform}-${process.arch}`;
const cache = process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache');
const prefix = path.join(cache, 'git-ckpt-node', version);
const bin = path.join(prefix, 'node_modules', name, 'bin');
if (!existsSync(path.join(bin, process.platform === 'win32' ? 'node.exe' : 'node'))) {
  mkdirSync(prefix, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(
    npm,
    ['install', '--prefix', prefix, `${name}@${version}`, '--no-save', '--no-audit', '--no-fund', '--loglevel=error'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      shell: process.platform === 'win32',
    },
  );
  if (r.status !== 0) {
    process.stderr.write(`node-bin: npm install ${name}@${version} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(1);
  }
}
process.stdout.write(`${bin}\n`);
