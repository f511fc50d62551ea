// The first snapshot at scale: `git ckpt init` (a CLI process, fresh store) against a raw
// `git add -A && git write-tree` into a fresh repository, in alternation, on generated workspaces
// of small files, with the peak resident memory of each (the largest process of its tree), and
// the resident memory of a daemon watching the largest one. Writes bench/out/init.json.
// BENCH_INIT_FILES=300000,1000000: the sizes; BENCH_QUICK=1: one round each.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist', 'bin', 'main.js');
const SIZES = (process.env.BENCH_INIT_FILES ?? '300000,1000000').split(',').map(Number);
const ROUNDS = process.env.BENCH_QUICK === '1' ? 1 : 2;

const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-bench-init-')));
const home = path.join(base, 'home');
mkdirSync(home);
writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = B\n\temail = b@example.com\n[ckpt]\n\tdaemon = false\n');
const env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
for (const key of Object.keys(env)) if (key.startsWith('GIT_') && key !== 'GIT_CONFIG_NOSYSTEM') delete env[key];

/**
 * Run a command under the system's `time`, for its wall time and the peak RSS of its largest
 * process (GNU time on Linux, BSD time -l on macOS, which reports bytes).
 */
function measured(cmd, args, opts) {
  const mac = process.platform === 'darwin';
  const start = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', mac ? ['-l', cmd, ...args] : ['-f', 'maxrss %M', cmd, ...args], {
    ...opts,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.slice(-500)}`);
  const kb = mac ? Number(/(\d+)\s+maximum resident set size/.exec(r.stderr)?.[1]) / 1024 : Number(/maxrss (\d+)/.exec(r.stderr)?.[1]);
  return { ms, rssMiB: kb / 1024, stdout: r.stdout };
}

/** Files of ~100 bytes, 100 to a folder, 100 folders at the top (the layout of bench/daemon.mjs). */
function makeWorkspace(files) {
  const ws = path.join(base, `ws-${files}`);
  const text = 'export const value = 1;\n'.repeat(4);
  const dirs = Math.max(30, files / 100);
  for (let i = 0; i < files; i++) {
    const d = i % dirs;
    const dir = path.join(ws, `pkg${d % 100}`, `mod${Math.floor(d / 100)}`);
    if (i < dirs) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `f${i}.ts`), `${text}// ${i}\n`);
  }
  spawnSync('git', ['init', '-q'], { cwd: ws, env });
  return ws;
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const results = [];
let counter = 0;
for (const files of SIZES) {
  const ws = makeWorkspace(files);
  const raw = [];
  const ckpt = [];
  let lastStore;
  for (let round = 0; round < ROUNDS; round++) {
    const gitDir = path.join(base, `raw-${counter++}`);
    spawnSync('git', ['init', '-q', '--bare', gitDir], { env });
    const rawEnv = { ...env, GIT_DIR: gitDir, GIT_WORK_TREE: ws };
    const add = measured('git', ['add', '-A'], { cwd: ws, env: rawEnv });
    const tree = measured('git', ['write-tree'], { cwd: ws, env: rawEnv });
    raw.push({ ms: add.ms + tree.ms, rssMiB: Math.max(add.rssMiB, tree.rssMiB), tree: tree.stdout.trim() });
    rmSync(gitDir, { recursive: true, force: true });
    if (lastStore) rmSync(lastStore, { recursive: true, force: true });
    lastStore = path.join(base, `store-${counter++}`);
    const init = measured(process.execPath, [CLI, 'init', '--json'], { cwd: ws, env: { ...env, GIT_CKPT_HOME: lastStore } });
    ckpt.push({ ms: init.ms, rssMiB: init.rssMiB, tree: JSON.parse(init.stdout).tree });
  }
  if (ckpt.some((c) => c.tree !== raw[0].tree)) throw new Error(`init captured another tree than git add -A at ${files} files`);
  const storeDir = readdirSync(lastStore).find((d) => /-[0-9a-f]{16}$/.test(d));
  const index = path.join(lastStore, storeDir, 'index');
  // git's own index in memory: the peak RSS of a git command that loads this index and lists it.
  const gitIndex = measured('git', ['ls-files', '-s'], {
    cwd: ws,
    env: { ...env, GIT_DIR: path.join(lastStore, storeDir, 'git'), GIT_WORK_TREE: ws, GIT_INDEX_FILE: index },
  });
  // A daemon watching the workspace: its RSS once the watcher is up and a capture ran.
  const daemonEnv = { ...env, GIT_CKPT_HOME: lastStore };
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = B\n\temail = b@example.com\n[ckpt]\n\tdaemon = true\n');
  spawnSync(process.execPath, [CLI, 'daemon', 'start'], { cwd: ws, env: daemonEnv });
  spawnSync(process.execPath, [CLI, 'watch', '--quiet-ms', '1000'], { cwd: ws, env: daemonEnv });
  writeFileSync(path.join(ws, 'pkg0', 'mod0', 'f0.ts'), '// edited\n');
  let status;
  for (let i = 0; i < 120; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    status = JSON.parse(
      spawnSync(process.execPath, [CLI, 'daemon', 'status', '--json'], { cwd: ws, env: daemonEnv, encoding: 'utf8' }).stdout,
    );
    const watched = status.workspaces?.find((w) => w.root === ws);
    if (watched && watched.captures >= 1 && !watched.unknown) break;
  }
  spawnSync(process.execPath, [CLI, 'watch', '--stop'], { cwd: ws, env: daemonEnv });
  spawnSync(process.execPath, [CLI, 'daemon', 'stop'], { cwd: ws, env: daemonEnv });
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = B\n\temail = b@example.com\n[ckpt]\n\tdaemon = false\n');
  results.push({
    files,
    rawMs: median(raw.map((r) => r.ms)),
    initMs: median(ckpt.map((c) => c.ms)),
    rawRuns: raw.map((r) => Math.round(r.ms)),
    initRuns: ckpt.map((c) => Math.round(c.ms)),
    rawRssMiB: Math.max(...raw.map((r) => r.rssMiB)),
    initRssMiB: Math.max(...ckpt.map((c) => c.rssMiB)),
    indexMiB: statSync(index).size / 2 ** 20,
    gitIndexRssMiB: gitIndex.rssMiB,
    daemonRssMiB: status?.rssBytes ? status.rssBytes / 2 ** 20 : undefined,
  });
  rmSync(ws, { recursive: true, force: true });
  rmSync(lastStore, { recursive: true, force: true });
}

const f = (v, d = 0) => (v === undefined ? 'n/a' : v.toFixed(d));
const lines = [
  '| workspace | git ckpt init ms (runs) | raw git add -A && write-tree ms (runs) | ratio | init peak RSS | git peak RSS | ratio | daemon RSS | shadow index (disk) | git with that index loaded | daemon / git index |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.files.toLocaleString('en-US')} files | ${f(r.initMs)} (${r.initRuns.join(', ')}) | ${f(r.rawMs)} (${r.rawRuns.join(', ')}) | ${(r.initMs / r.rawMs).toFixed(2)}× | ${f(r.initRssMiB)} MiB | ${f(r.rawRssMiB)} MiB | ${(r.initRssMiB / r.rawRssMiB).toFixed(2)}× | ${f(r.daemonRssMiB)} MiB | ${f(r.indexMiB, 1)} MiB | ${f(r.gitIndexRssMiB)} MiB | ${r.daemonRssMiB ? (r.daemonRssMiB / r.gitIndexRssMiB).toFixed(2) : 'n/a'}× |`,
  ),
];
console.log(lines.join('\n'));
mkdirSync(path.join(ROOT, 'bench', 'out'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench', 'out', 'init.json'), JSON.stringify({ date: new Date().toISOString(), results }, null, 2));
rmSync(base, { recursive: true, force: true });
