// Start-up on the Node.js versions people run: the lowest `engines` allows, 22 and 24 (the registry's
// node-<platform>-<arch> packages, through scripts/node-bin.mjs), each against its own `node -e 0`,
// measured in alternation in this run. On 22 and 24 also with the module compile cache
// (NODE_COMPILE_CACHE, what `module.enableCompileCache()` turns on). Writes bench/out/node-versions.json.
// BENCH_QUICK=1: fewer runs; BENCH_NODE_VERSIONS=20.19.0,22,24 chooses the versions.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = path.join(ROOT, 'dist', 'bin', 'git-ckpt.cjs');
const RUNS = process.env.BENCH_QUICK === '1' ? 9 : 25;
const lowest = /(\d+\.\d+(\.\d+)?)/.exec(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node)[1];
const VERSIONS = (process.env.BENCH_NODE_VERSIONS ?? `${lowest.split('.').length === 2 ? `${lowest}.0` : lowest},22,24`).split(',');

const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-bench-node-')));
const home = path.join(base, 'home');
const ws = path.join(base, 'ws');
mkdirSync(home);
mkdirSync(ws);
writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = B\n\temail = b@example.com\n[ckpt]\n\tdaemon = false\n');
const env = { HOME: home, PATH: process.env.PATH, GIT_CKPT_HOME: path.join(base, 'store'), GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
spawnSync('git', ['init', '-q'], { cwd: ws, env });
for (let i = 0; i < 50; i++) writeFileSync(path.join(ws, `f${i}.txt`), `${i}\n`);
for (let i = 0; i < 20; i++) {
  writeFileSync(path.join(ws, 'f0.txt'), `${i}\n`);
  spawnSync(process.execPath, [ENTRY, 'snapshot'], { cwd: ws, env });
}
const payload = JSON.stringify({
  session_id: 's',
  cwd: ws,
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'true' },
});

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
function timed(node, args, extraEnv, input) {
  const start = process.hrtime.bigint();
  const r = spawnSync(node, args, { cwd: ws, env: { ...env, ...extraEnv }, input });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${node} ${args.join(' ')}: ${r.stderr}`);
  return ms;
}

const rows = [];
for (const version of VERSIONS) {
  const bin = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'node-bin.mjs'), version], { encoding: 'utf8' });
  if (bin.status !== 0) {
    rows.push({ version, error: bin.stderr.trim() });
    continue;
  }
  const node = path.join(bin.stdout.trim(), 'node');
  const full = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const major = Number(full.slice(1).split('.')[0]);
  const cache = { NODE_COMPILE_CACHE: path.join(base, `compile-cache-${version}`) };
  const withCache = major >= 22;
  const commands = [
    ['git ckpt version', [ENTRY, 'version'], undefined],
    ['git ckpt log -n 20', [ENTRY, 'log', '-n', '20'], undefined],
    ['git ckpt hook claude pre (no daemon, nothing changed)', [ENTRY, 'hook', 'claude', 'pre'], payload],
  ];
  for (const [name, args, input] of commands) {
    const plain = [];
    const cached = [];
    const reference = [];
    timed(node, args, {}, input); // warm-up
    if (withCache) timed(node, args, cache, input); // and the compile cache written
    // In alternation: node -e 0, the command, the command with the compile cache.
    for (let i = 0; i < RUNS; i++) {
      reference.push(timed(node, ['-e', '0'], {}));
      plain.push(timed(node, args, {}, input));
      if (withCache) cached.push(timed(node, args, cache, input));
    }
    rows.push({
      version: full,
      operation: name,
      medianMs: median(plain),
      nodeZeroMs: median(reference),
      compileCacheMs: withCache ? median(cached) : null,
    });
  }
}

const out = path.join(ROOT, 'bench', 'out');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'node-versions.json'), `${JSON.stringify({ runs: RUNS, rows }, null, 2)}\n`);
console.log('\n## Start-up on each Node.js version (median ms; the ratio is against node -e 0 on the same version, in alternation)\n');
console.log('| Node.js | operation | median | node -e 0 | ratio | with the compile cache |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  if (r.error) console.log(`| ${r.version} | (not measured: ${r.error}) | | | | |`);
  else {
    const cache =
      r.compileCacheMs === null ? '—' : `${r.compileCacheMs.toFixed(1)} (${(r.compileCacheMs / r.medianMs).toFixed(2)}× without)`;
    console.log(
      `| ${r.version} | ${r.operation} | ${r.medianMs.toFixed(1)} | ${r.nodeZeroMs.toFixed(1)} | ${(r.medianMs / r.nodeZeroMs).toFixed(2)}× | ${cache} |`,
    );
  }
}
