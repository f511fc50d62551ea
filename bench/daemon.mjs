// The daemon's rows: what a hook costs through the installed entry script with the daemon
// running, at 3,000 and 300,000 files, against the same without it and against `node -e 0`,
// all measured in alternation in this run. Writes bench/out/daemon.json and prints a table.
// BENCH_QUICK=1: fewer runs; BENCH_DAEMON_FILES=3000,300000: the workspace sizes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist', 'bin', 'main.js');
const HOOK = path.join(ROOT, 'hooks', 'git-ckpt-hook');
const QUICK = process.env.BENCH_QUICK === '1';
const RUNS = QUICK ? 7 : 21;
const SIZES = (process.env.BENCH_DAEMON_FILES ?? '3000,300000').split(',').map(Number);
/** What an agent's model takes between two tool calls, at the least: the watcher is quiet by then. */
const THINK_MS = 600;

const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-bench-daemon-')));
const home = path.join(base, 'home');
mkdirSync(home);
const gitconfig = path.join(home, '.gitconfig');
const config = (daemon) =>
  writeFileSync(gitconfig, `[user]\n\tname = B\n\temail = b@example.com\n[ckpt]\n\tdaemon = ${daemon}\n\tdaemonIdle = 30m\n`);
const env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
config(false);
for (const key of Object.keys(env)) if (key.startsWith('GIT_') && key !== 'GIT_CONFIG_NOSYSTEM') delete env[key];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return [s[Math.floor(s.length * 0.1)], s[Math.ceil(s.length * 0.9) - 1]];
};
function timed(cmd, args, opts) {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, opts);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return ms;
}
function git(args, cwd, extra = {}) {
  const r = spawnSync('git', args, { cwd, env: { ...env, ...extra }, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

function makeWorkspace(files) {
  const ws = path.join(base, `ws-${files}`);
  const text = 'export const value = 1;\n'.repeat(4);
  for (let i = 0; i < files; i++) {
    const dir = path.join(ws, `pkg${i % 100}`, `mod${Math.floor(i / 100) % 30}`);
    if (i < 3000) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `f${i}.ts`), `${text}// ${i}\n`);
  }
  git(['init', '-q'], ws);
  git(['add', '-A'], ws);
  git(['commit', '-qm', 'content'], ws);
  return ws;
}

const rows = [];
function row(workspace, operation, times, reference, refTimes, target) {
  const ms = median(times);
  const refMs = refTimes ? median(refTimes) : undefined;
  rows.push({ workspace, operation, ms, spread: spread(times), reference, refMs, ratio: refMs ? ms / refMs : undefined, target });
}

const payload = (ws, phase, id) =>
  JSON.stringify({
    session_id: 'bench',
    hook_event_name: phase === 'pre' ? 'PreToolUse' : 'PostToolUse',
    tool_name: 'Write',
    tool_use_id: id,
    tool_input: { file_path: 'pkg0/mod0/f0.ts' },
    cwd: ws,
  });

async function benchSize(files) {
  const label = `${files.toLocaleString('en-US')} files`;
  const ws = makeWorkspace(files);
  console.log(`generated ${ws}`);
  const storeRoot = path.join(base, `stores-${files}`);
  const wsEnv = { ...env, GIT_CKPT_HOME: storeRoot, CLAUDE_PROJECT_DIR: ws };
  config(false);
  timed(process.execPath, [CLI, 'init'], { cwd: ws, env: wsEnv });
  const hook = (phase, id) => timed('sh', [HOOK, 'claude', phase], { cwd: ws, env: wsEnv, input: payload(ws, phase, id) });
  const target = path.join(ws, 'pkg0', 'mod0', 'f0.ts');
  let n = 0;
  const touch = () => writeFileSync(target, `// edit ${n++}\n`);
  const nodeZero = [];
  const noDaemonPre = [];
  const noDaemonPost = [];
  for (let i = 0; i < RUNS; i++) {
    nodeZero.push(timed(process.execPath, ['-e', '0'], { env }));
    noDaemonPre.push(hook('pre', `n${i}`));
    touch();
    noDaemonPost.push(hook('post', `n${i}`));
  }
  config(true);
  timed(process.execPath, [CLI, 'daemon', 'start'], { cwd: ws, env: wsEnv });
  // The first events of a newly watched workspace scan in full.
  for (let i = 0; i < 3; i++) hook('pre', `warm${i}`);
  const pre = [];
  const post = [];
  const captured = [];
  const backToBack = [];
  for (let i = 0; i < RUNS; i++) {
    await sleep(THINK_MS);
    pre.push(hook('pre', `d${i}`));
    touch();
    post.push(hook('post', `d${i}`));
    // Until the post's checkpoint is in the ledger (what the next event waits for).
    const start = process.hrtime.bigint();
    timed(process.execPath, [CLI, 'log', '-n', '1'], { cwd: ws, env: wsEnv });
    captured.push(Number(process.hrtime.bigint() - start) / 1e6);
    backToBack.push(hook('pre', `b${i}`));
  }
  // What Claude Code waits for per mutating call with HTTP hooks: its pre, then its post, each one POST
  // to the daemon as Claude sends it (no process at all).
  const endpoint = JSON.parse(readFileSync(path.join(storeRoot, 'daemon', 'endpoint.json'), 'utf8'));
  const token = readFileSync(path.join(storeRoot, 'daemon', 'token'), 'utf8').trim();
  const httpHook = (phase, id) =>
    new Promise((resolve, reject) => {
      const body = payload(ws, phase, id);
      const start = process.hrtime.bigint();
      const req = http.request(
        {
          host: '127.0.0.1',
          port: endpoint.port,
          method: 'POST',
          path: `/hook/claude/${phase}`,
          headers: { 'content-type': 'application/json', 'x-ckpt-token': token, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const httpWait = [];
  for (let i = 0; i < RUNS; i++) {
    await sleep(THINK_MS);
    const preMs = await httpHook('pre', `h${i}`);
    touch();
    httpWait.push(preMs + (await httpHook('post', `h${i}`)));
  }
  const status = JSON.parse(
    spawnSync(process.execPath, [CLI, 'daemon', 'status', '--json'], { cwd: ws, env: wsEnv, encoding: 'utf8' }).stdout,
  );
  const watched = status.workspaces.find((w) => w.root === ws);
  const storeDirs =
    readFileSync(path.join(storeRoot, 'daemon', 'endpoint.json'), 'utf8') && spawnSync('ls', [storeRoot], { encoding: 'utf8' }).stdout;
  const storeDir = storeDirs.split('\n').find((d) => /-[0-9a-f]{16}$/.test(d));
  const indexBytes = statSync(path.join(storeRoot, storeDir, 'index')).size;
  timed(process.execPath, [CLI, 'daemon', 'stop'], { cwd: ws, env: wsEnv });
  row(label, 'no-change pre hook through the entry script, daemon running', pre, 'node -e 0', nodeZero);
  row(label, 'what Claude Code waits per mutating call with HTTP hooks (pre + post, one POST each)', httpWait, 'node -e 0', nodeZero);
  row(label, 'no-change pre hook through the entry script, no daemon', noDaemonPre, 'node -e 0', nodeZero);
  row(label, 'one-file post hook through the entry script, daemon running (answered when queued)', post, 'node -e 0', nodeZero);
  row(label, 'one-file post hook through the entry script, no daemon', noDaemonPost, 'node -e 0', nodeZero);
  row(label, 'pre hook right after a post (back to back: waits for its capture and a 50 ms sync)', backToBack, 'node -e 0', nodeZero);
  row(label, 'git ckpt log -n 1 right after a post (waits for its capture)', captured, 'node -e 0', nodeZero);
  return { label, rssBytes: status.rssBytes, indexBytes, captures: watched?.captures, fullScans: watched?.fullScans };
}

const memory = [];
for (const files of SIZES) memory.push(await benchSize(files));

const fmt = (v) => (v === undefined ? '' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const lines = [
  '| workspace | operation | ms (p10–p90) | reference | ms | ratio |',
  '|---|---|---:|---|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.workspace} | ${r.operation} | ${fmt(r.ms)} (${fmt(r.spread[0])}–${fmt(r.spread[1])}) | ${r.reference} | ${fmt(r.refMs)} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}×`} |`,
  ),
  '',
  '| workspace | daemon resident memory | shadow index on disk | captures, of them full scans |',
  '|---|---:|---:|---:|',
  ...memory.map(
    (m) =>
      `| ${m.label} | ${(m.rssBytes / 2 ** 20).toFixed(0)} MiB | ${(m.indexBytes / 2 ** 20).toFixed(1)} MiB | ${m.captures}, ${m.fullScans} |`,
  ),
];
console.log(lines.join('\n'));
mkdirSync(path.join(ROOT, 'bench', 'out'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench', 'out', 'daemon.json'), JSON.stringify({ date: new Date().toISOString(), rows, memory }, null, 2));
