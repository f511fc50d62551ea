// npm run bench: medians and ratios measured side by side in one run, never a timed test.
// Writes bench/out/results.json. Set BENCH_QUICK=1 for a smaller, faster run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, lstatSync, rmSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { libPath } from '../test/helpers.mjs';
import { fileURLToPath } from 'node:url';
import { replaySessions } from './replay.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { Workspace } = await import(libPath('index'));
const QUICK = process.env.BENCH_QUICK === '1';
const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-bench-')));
const home = path.join(base, 'home');
mkdirSync(home);
writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n');
// The library reads the store root and the user's global config from the environment.
for (const key of Object.keys(process.env)) if (key.startsWith('GIT_')) delete process.env[key];
process.env.HOME = home;
process.env.GIT_CONFIG_NOSYSTEM = '1';
const gitEnv = { ...process.env };

function git(args, opts = {}) {
  const r = spawnSync('git', args, { cwd: opts.cwd, env: { ...gitEnv, ...(opts.env ?? {}) }, input: opts.input, maxBuffer: 1 << 30 });
  if (r.status !== 0 && !opts.allowFail) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

// Deterministic pseudo-source text: compresses roughly like real code.
let seed = 42;
// mulberry32
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
};
const words =
  'const let function return if else for while import export from class extends new this await async try catch throw value result index count items data error config options state props render update create delete list map filter reduce string number boolean'.split(
    ' ',
  );
function sourceText(bytes) {
  const lines = [];
  let size = 0;
  while (size < bytes) {
    const n = 3 + Math.floor(rand() * 9);
    const indent = '  '.repeat(Math.floor(rand() * 4));
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(rand() < 0.15 ? String(Math.floor(rand() * 100000)) : words[Math.floor(rand() * words.length)]);
    const line = `${indent}${parts.join(' ')};`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

function makeWorkspace(name, files, bytesEach, dirs) {
  const ws = path.join(base, name);
  for (let i = 0; i < files; i++) {
    const dir = path.join(ws, `pkg${i % dirs}`, `mod${i % 7}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `file${i}.ts`), sourceText(bytesEach * (0.5 + rand())));
  }
  git(['init', '-q'], { cwd: ws });
  git(['add', '-A'], { cwd: ws });
  git(['commit', '-qm', 'content'], { cwd: ws });
  return ws;
}

function duBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    const st = lstatSync(full);
    // Disk blocks, not apparent size: loose-object bloat is what users see.
    total += st.isDirectory() ? duBytes(full) : st.blocks * 512;
  }
  return total;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function measure(runs, fn, setup) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    if (setup) await setup(i);
    const start = process.hrtime.bigint();
    await fn(i);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(times);
}

let storeCounter = 0;
function freshStoreEnv() {
  process.env.GIT_CKPT_HOME = path.join(base, `stores-${storeCounter++}`);
  return process.env.GIT_CKPT_HOME;
}

const rows = [];
const results = { date: new Date().toISOString(), node: process.version, git: git(['--version']).trim(), quick: QUICK, workspaces: {} };
function row(workspace, operation, ms, reference, refMs, target) {
  const ratio = refMs ? ms / refMs : undefined;
  rows.push({ workspace, operation, ms, reference, refMs, ratio, target });
}

async function benchWorkspace(label, ws, runs) {
  const out = {};
  results.workspaces[label] = out;
  // First snapshot, each run into a fresh store.
  let lastStore;
  const first = await measure(
    runs.first,
    async () => {
      const r = await Workspace.open(ws).snapshot();
      if (!r.created) throw new Error('first snapshot created nothing');
    },
    () => {
      lastStore = freshStoreEnv();
    },
  );
  const rawAdd = await measure(runs.first, () => {
    const gitDir = path.join(base, `raw-${storeCounter++}`);
    git(['init', '-q', '--bare', gitDir]);
    const env = { GIT_DIR: gitDir, GIT_WORK_TREE: ws };
    git(['add', '-A'], { cwd: ws, env });
    git(['write-tree'], { cwd: ws, env });
  });
  const clineFirst = await measure(runs.first, () => {
    const gitDir = path.join(base, `cline-${storeCounter++}`);
    git(['init', '-q', '--bare', gitDir]);
    const env = { GIT_DIR: gitDir, GIT_WORK_TREE: ws };
    git(['config', 'core.bare', 'false'], { env });
    git(['add', '.', '--ignore-errors'], { cwd: ws, env });
    git(['commit', '-q', '--allow-empty', '--no-verify', '-m', 'checkpoint'], { cwd: ws, env });
  });
  row(label, 'first snapshot', first, 'git add -A && write-tree (fresh repo)', rawAdd, 1.5);
  row(label, 'first snapshot', first, 'Cline: git add . && git commit (fresh shadow repo)', clineFirst);

  // Store size after the first snapshot, against what `git gc` packs the same content into.
  const storeBytes = duBytes(lastStore);
  const gcRepo = path.join(base, `gc-${storeCounter++}`);
  git(['init', '-q', '--bare', gcRepo]);
  git(['add', '-A'], { cwd: ws, env: { GIT_DIR: gcRepo, GIT_WORK_TREE: ws } });
  const tree = git(['write-tree'], { cwd: ws, env: { GIT_DIR: gcRepo, GIT_WORK_TREE: ws } }).trim();
  const commit = git(['commit-tree', tree, '-m', 'x'], { env: { GIT_DIR: gcRepo } }).trim();
  git(['update-ref', 'refs/heads/main', commit], { env: { GIT_DIR: gcRepo } });
  git(['gc', '-q'], { env: { GIT_DIR: gcRepo } });
  const gcPackBytes = duBytes(path.join(gcRepo, 'objects'));
  const looseBytes = (() => {
    const loose = path.join(base, `loose-${storeCounter++}`);
    git(['init', '-q', '--bare', loose]);
    git(['add', '-A'], { cwd: ws, env: { GIT_DIR: loose, GIT_WORK_TREE: ws } });
    return duBytes(path.join(loose, 'objects'));
  })();
  out.storeBytes = storeBytes;
  out.gcPackBytes = gcPackBytes;
  out.looseObjectsBytes = looseBytes;
  out.storeRatio = storeBytes / gcPackBytes;

  // Steady state: one store, warm.
  freshStoreEnv();
  const workspace = Workspace.open(ws);
  await workspace.snapshot({ timeBudgetMs: 0 });
  const noChange = await measure(runs.steady, async () => {
    const r = await workspace.snapshot();
    if (r.created) throw new Error('no-change snapshot created a checkpoint');
  });
  const status = await measure(runs.steady, () => git(['status', '--porcelain'], { cwd: ws }));
  const clineGitDir = path.join(base, `cline-steady-${storeCounter++}`);
  git(['init', '-q', '--bare', clineGitDir]);
  const clineEnv = { GIT_DIR: clineGitDir, GIT_WORK_TREE: ws };
  git(['config', 'core.bare', 'false'], { env: clineEnv });
  const clineCommit = () => {
    git(['add', '.', '--ignore-errors'], { cwd: ws, env: clineEnv });
    git(['commit', '-q', '--allow-empty', '--no-verify', '-m', 'checkpoint'], { cwd: ws, env: clineEnv });
  };
  clineCommit();
  const clineNoChange = await measure(runs.steady, clineCommit);
  row(label, 'no-change snapshot', noChange, 'git status --porcelain', status, 1.5);
  row(label, 'no-change snapshot', noChange, 'Cline: git add . && git commit', clineNoChange);

  const target = path.join(ws, 'pkg0', 'mod0', 'file0.ts');
  let n = 0;
  const touch = () => writeFileSync(target, `// edit ${n++}\n${sourceText(4000)}`);
  const oneChange = await measure(
    runs.steady,
    async () => {
      const r = await workspace.snapshot();
      if (!r.created) throw new Error('one-file change created nothing');
    },
    touch,
  );
  const statusDirty = await measure(runs.steady, () => git(['status', '--porcelain'], { cwd: ws }), touch);
  const clineOne = await measure(runs.steady, clineCommit, touch);
  row(label, 'one-file-change snapshot', oneChange, 'git status --porcelain (dirty)', statusDirty);
  row(label, 'one-file-change snapshot', oneChange, 'Cline: git add . && git commit', clineOne);
  git(['checkout', '-q', '--', '.'], { cwd: ws });
  return workspace;
}

/** Restore of 1,000 changed files, against `git restore --source` of the same files in the plain repository. */
async function benchRestore(label, ws, runs) {
  freshStoreEnv();
  const workspace = Workspace.open(ws);
  const base = await workspace.snapshot({ timeBudgetMs: 0 });
  const files = git(['ls-files', '-z'], { cwd: ws }).split('\0').filter(Boolean).slice(0, 1000);
  let round = 0;
  const dirty = () => {
    round++;
    for (const f of files) writeFileSync(path.join(ws, f), `// round ${round}\n${f}\n`);
  };
  const restore = async () => {
    const r = await workspace.restore(base.id);
    if (r.counts.restore !== files.length || r.counts.failed) throw new Error(`restore did ${JSON.stringify(r.counts)}`);
  };
  // As under an agent: its post hook already checkpointed the changes, so the guard is free.
  const afterHooks = await measure(runs, restore, async () => {
    dirty();
    await workspace.snapshot({ timeBudgetMs: 0 });
  });
  // Worst case: nothing captured the changes, so the guard hashes and stores all of them first.
  const uncaptured = await measure(runs, restore, dirty);
  const head = git(['rev-parse', 'HEAD'], { cwd: ws }).trim();
  const reference = await measure(runs, () => git(['restore', `--source=${head}`, '--worktree', '--', ...files], { cwd: ws }), dirty);
  row(
    label,
    `restore of ${files.length} changed files (changes already checkpointed)`,
    afterHooks,
    'git restore --source=<commit> --worktree -- <paths>',
    reference,
    2,
  );
  row(
    label,
    `restore of ${files.length} changed files (guard captures them first)`,
    uncaptured,
    'git restore --source=<commit> --worktree -- <paths>',
    reference,
    2,
  );
}

/** Medians of several commands measured in alternation, so that a noisy neighbour weighs on each alike. */
async function interleaved(runs, fns, setup) {
  const times = fns.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of fns.entries()) {
      if (setup?.[k]) await setup[k](i);
      const start = process.hrtime.bigint();
      await fn(i);
      times[k].push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return times.map(median);
}

const nodeStart = () => spawnSync(process.execPath, ['-e', '0']);
// The command on PATH, as `git-ckpt` runs it.
const CLI = path.join(ROOT, 'dist', 'bin', 'git-ckpt.cjs');
const runCli = (args, ws, input) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ws, env: process.env, input });
  if (r.status !== 0) throw new Error(`git ckpt ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r;
};

/**
 * Processes as an agent and a person start them, against the start-up budgets (docs/design.md):
 * `node -e 0` plus a multiple of `git status --porcelain` on the same tree, all
 * measured in alternation in this run. The budget is the reference column, so
 * the ratio must stay ≤ 1.
 */
async function benchProcesses(label, ws, runs) {
  freshStoreEnv();
  await Workspace.open(ws).snapshot({ timeBudgetMs: 0 });
  let call = 0;
  // A fresh call id each run: an event delivered twice is recorded once, and a repeat would skip the scan.
  const post = () =>
    JSON.stringify({
      session_id: 'bench',
      prompt_id: 'p1',
      cwd: ws,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_use_id: `toolu_${call++}`,
    });
  const hook = () => {
    const r = runCli(['hook', 'claude', 'post'], ws, post());
    if (r.stdout.length) throw new Error(`hook wrote to stdout: ${r.stdout}`);
  };
  const status = () => git(['status', '--porcelain'], { cwd: ws });
  const [hookMs, snapshotMs, nodeMs, statusMs] = await interleaved(runs, [hook, () => runCli(['snapshot'], ws), nodeStart, status]);
  const noChangeBudget = nodeMs + 1.5 * statusMs;
  const budget = 'node -e 0 + 1.5 × git status --porcelain';
  row(label, 'hook process, no change (stdin JSON in, exit)', hookMs, budget, noChangeBudget, 1);
  row(label, 'git ckpt snapshot, no change (CLI process)', snapshotMs, budget, noChangeBudget, 1);
  const target = path.join(ws, 'pkg0', 'mod1', 'file1.ts');
  let n = 0;
  const touch = () => writeFileSync(target, `// edit ${n++}\n${sourceText(4000)}`);
  const [postMs, nodeMs2, statusDirtyMs] = await interleaved(runs, [hook, nodeStart, status], [touch, undefined, touch]);
  row(
    label,
    'hook process, one-file change (post: a checkpoint made)',
    postMs,
    'node -e 0 + 3 × git status --porcelain',
    nodeMs2 + 3 * statusDirtyMs,
    1,
  );
  git(['checkout', '-q', '--', '.'], { cwd: ws });
  results.processes ??= {};
  results.processes[label] = { hookMs, snapshotMs, nodeMs, statusMs, postMs, statusDirtyMs };
}

/** `git ckpt --version` against `node -e 0`: what a script or an installer pays to ask. */
async function benchVersion(runs) {
  const [versionMs, nodeMs] = await interleaved(runs, [() => runCli(['--version'], base), nodeStart]);
  row('any', 'git ckpt --version (CLI process)', versionMs, 'node -e 0', nodeMs, 1.25);
}

/**
 * `git ckpt ui` over a store of 10,000 checkpoints: from navigation to the first
 * timeline row on screen, in Debian's Chromium when it is installed (the
 * browser tests need it), else the page's own requests over HTTP in the order
 * the page makes them. The server runs in this process; the target is 1 s.
 */
async function benchUiFirstScreen(ws, count, runs) {
  const { startUiServer } = await import(libPath('ui-server'));
  const server = await startUiServer({ cwd: ws, port: 0 });
  const chromiumPath = '/usr/bin/chromium';
  const { existsSync } = await import('node:fs');
  try {
    if (existsSync(chromiumPath)) {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({
        executablePath: chromiumPath,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      try {
        const ms = await measure(runs, async () => {
          const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
          await page.goto(server.url);
          await page.locator('.row.checkpoint').first().waitFor();
          await page.close();
        });
        row(`${count} checkpoints`, 'git ckpt ui: navigation to the first timeline row (Chromium)', ms, '1 s', 1000, 1);
      } finally {
        await browser.close();
      }
      return;
    }
    const cookie = `ckpt_ui_${server.port}=${server.token}`;
    const fetchText = async (p) => (await fetch(`http://127.0.0.1:${server.port}${p}`, { headers: { cookie } })).text();
    const ms = await measure(runs, async () => {
      await fetchText('/');
      await Promise.all([fetchText('/app.js'), fetchText('/app.css')]);
      const { current } = JSON.parse(await fetchText('/api/summary'));
      await fetchText(`/api/timeline?ws=${current}&limit=200`);
    });
    row(`${count} checkpoints`, 'git ckpt ui: the first screen’s requests over HTTP (no Chromium here)', ms, '1 s', 1000, 1);
  } finally {
    await server.close();
  }
}

/**
 * What the agent waits for per mutating tool call, in the recorded sessions of
 * the real-agents suite replayed through the installed hooks; Claude Code's
 * budget is 2 × `node -e 0`, the others are reported.
 */
async function benchReplay(ws, repeats) {
  const { AGENT_SPECS } = await import(libPath('hook-specs'));
  const { PLUGIN_SPECS } = await import(libPath('plugin-specs'));
  const [nodeMs] = await interleaved(15, [nodeStart]);
  const replay = replaySessions({
    ws,
    cli: CLI,
    agentSpecs: AGENT_SPECS,
    pluginSpecs: PLUGIN_SPECS,
    entry: path.join(ROOT, 'hooks', 'git-ckpt-hook'),
    repeats,
    freshStore: freshStoreEnv,
  });
  for (const [agent, r] of Object.entries(replay)) {
    const what = `session replay: ${r.calls} tool calls (${r.mutating} mutating), ${r.processes} hook processes; the agent waits per mutating call`;
    row(`${agent} (recorded session)`, what, r.perMutatingCallMs, '2 × node -e 0', 2 * nodeMs, agent === 'claude' ? 1 : undefined);
  }
  results.replay = { nodeMs, agents: replay };
  git(['checkout', '-q', '--', '.'], { cwd: ws });
}

/**
 * A whole agent session reverted three-way (`git ckpt revert --session`, the CLI
 * process, guard and journal included) against what a person could do by hand:
 * replay each checkpoint's inverse patch, newest first, with `git apply -3` in a
 * scratch repository holding the present state. The session's calls each edit
 * a few lines of one file; the user edited other lines of some of them since.
 */
async function benchSessionRevert(label, ws, calls, runs) {
  const { readFileSync } = await import('node:fs');
  freshStoreEnv();
  const workspace = Workspace.open(ws);
  await workspace.snapshot({ timeBudgetMs: 0 });
  const files = git(['ls-files'], { cwd: ws }).trim().split('\n');
  const picked = Array.from({ length: calls }, (_, i) => files[(i * 13) % files.length]);
  for (const [i, f] of picked.entries()) {
    const full = path.join(ws, f);
    const lines = readFileSync(full, 'utf8').split('\n');
    lines[1] = `// edited by the agent in call ${i}`;
    writeFileSync(full, lines.join('\n'));
    await workspace.snapshot({ session: 'bench-revert', turn: Math.floor(i / 20) + 1, step: (i % 20) + 1, tool: 'Edit', kind: 'post' });
  }
  for (const f of picked.filter((_, i) => i % 5 === 0)) {
    const full = path.join(ws, f);
    const lines = readFileSync(full, 'utf8').split('\n');
    lines[lines.length - 2] = '// the user’s own line';
    writeFileSync(full, lines.join('\n'));
  }
  const records = (await workspace.list({ session: 'bench-revert' })).records; // newest first
  const gitDir = workspace.store.gitDir;
  const present = spawnSync('git', ['stash', 'create'], { cwd: ws, env: gitEnv }).stdout.toString().trim();
  const ckptMs = await measure(
    runs,
    () => {
      const r = spawnSync(process.execPath, [CLI, 'revert', '--session', 'bench-revert'], { cwd: ws, env: process.env });
      if (r.status !== 0) throw new Error(`revert: ${r.stderr}`);
    },
    (i) => {
      if (i > 0) {
        const u = spawnSync(process.execPath, [CLI, 'undo'], { cwd: ws, env: process.env });
        if (u.status !== 0) throw new Error(`undo: ${u.stderr}`);
      }
    },
  );
  spawnSync(process.execPath, [CLI, 'undo'], { cwd: ws, env: process.env });
  let scratch;
  const applyMs = await measure(
    runs,
    () => {
      for (const r of records) {
        const patch = git(['diff-tree', '-p', '--binary', '-R', r.parent, r.id], { env: { GIT_DIR: gitDir } });
        git(['apply', '-3', '--index'], { cwd: scratch, input: patch });
      }
    },
    () => {
      scratch = path.join(base, `apply-${storeCounter++}`);
      git(['clone', '-q', '--no-checkout', ws, scratch]);
      git(['read-tree', '-u', '--reset', present || 'HEAD'], { cwd: scratch });
      git(['commit', '-qm', 'present', '--allow-empty'], { cwd: scratch });
    },
  );
  row(
    label,
    `revert of a ${calls}-checkpoint session, three-way (CLI process)`,
    ckptMs,
    `git apply -3 of ${calls} inverse patches (scratch repo)`,
    applyMs,
  );
  git(['checkout', '-q', '--', '.'], { cwd: ws });
  git(['stash', 'drop', '-q'], { cwd: ws, allowFail: true });
}

/**
 * log over 10,000 checkpoints. The fixture's commits are made by one `git fast-import`
 * into the shadow repository (10,000 snapshots would take minutes); the ledger
 * records point at them, so the degraded probe checks real objects.
 */
async function benchLog(runs) {
  const ws = path.join(base, 'log-ws');
  mkdirSync(ws, { recursive: true });
  writeFileSync(path.join(ws, 'seed.txt'), 'seed\n');
  freshStoreEnv();
  const workspace = Workspace.open(ws);
  await workspace.snapshot({ timeBudgetMs: 0 });
  const count = QUICK ? 2000 : 10_000;
  const gitDir = workspace.store.gitDir;
  const stream = [];
  for (let i = 0; i < count; i++) {
    const content = `${i}\n`;
    stream.push(
      `commit refs/heads/bench\ncommitter git-ckpt <git-ckpt@localhost.invalid> ${1_700_000_000 + i} +0000\ndata 4\nckpt\nM 100644 inline f${i % 50}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`,
    );
  }
  git(['fast-import', '--quiet'], { env: { GIT_DIR: gitDir }, input: stream.join('') });
  const lines = git(['log', '--reverse', '--format=%H %T %P', 'refs/heads/bench'], { env: { GIT_DIR: gitDir } })
    .trim()
    .split('\n');
  git(['update-ref', '-d', 'refs/heads/bench'], { env: { GIT_DIR: gitDir } });
  const ledger = lines.map((line, i) => {
    const [id, tree, parent] = line.split(' ');
    return JSON.stringify({
      v: 1,
      id,
      parent: parent ?? null,
      tree,
      time: Date.now() - (count - i) * 1000,
      session: `s${i % 3}`,
      turn: i,
      step: 1,
      tool: 'Edit',
      kind: 'post',
      message: `edit ${i}`,
      stats: { added: 0, modified: 1, deleted: 0 },
      bytes: 4,
      paths: [{ path: `f${i % 50}.txt`, status: 'M' }],
      changed: 1,
      skipped: [],
      skippedCount: 0,
    });
  });
  writeFileSync(workspace.store.ledger, `${ledger.join('\n')}\n`);
  const logInProcess = async () => {
    const w = Workspace.open(ws);
    const { records } = await w.list({ limit: 20 });
    const degraded = await w.degraded();
    if (records.length !== 20 || Object.keys(degraded).length) throw new Error('log fixture broken');
  };
  rmSync(path.join(workspace.store.dir, 'probe.json'), { force: true });
  const cold = await measure(1, logInProcess);
  const warm = await measure(runs, logInProcess);
  const [cli, nodeMs] = await interleaved(runs, [() => runCli(['log', '-n', '20'], ws), nodeStart]);
  const gitLog = await measure(runs, () => git(['log', '--oneline', '-n', '20', lines.at(-1).split(' ')[0]], { env: { GIT_DIR: gitDir } }));
  row(
    `${count} checkpoints`,
    'log -n 20 with the degraded probe (library, first run: probe not cached)',
    cold,
    'git log --oneline -n 20 (shadow repo)',
    gitLog,
  );
  row(
    `${count} checkpoints`,
    'log -n 20 with the degraded probe (library, probe cached)',
    warm,
    'git log --oneline -n 20 (shadow repo)',
    gitLog,
  );
  row(`${count} checkpoints`, 'git ckpt log -n 20 (CLI process)', cli, 'node -e 0 + 100 ms', nodeMs + 100, 1);
  await benchUiFirstScreen(ws, count, QUICK ? 3 : 5);
  results.log = { checkpoints: count, coldMs: cold, warmMs: warm, targetMs: 300 };
}

/**
 * A simulated agent session: 1,000 tool calls on the 3,000-file workspace, each
 * changing 1 to 3 files, every 25th adding a file of up to 1 MB. The store's size
 * is set against the compressed size of all the content it had to hold (the
 * first snapshot's files plus every version written since), then gc runs under
 * a quota and the store must fit it.
 */
async function benchSession(_label, ws, calls) {
  const { deflateSync } = await import('node:zlib');
  freshStoreEnv();
  const workspace = Workspace.open(ws);
  const files = git(['ls-files', '-z'], { cwd: ws }).split('\0').filter(Boolean);
  let contentCompressed = 0;
  for (const f of files) contentCompressed += deflateSync((await import('node:fs')).readFileSync(path.join(ws, f))).length;
  await workspace.snapshot({ timeBudgetMs: 0 });
  const added = [];
  const started = Date.now();
  for (let call = 0; call < calls; call++) {
    const n = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < n; k++) {
      const f = files[Math.floor(rand() * files.length)];
      const text = sourceText(4000 + rand() * 20000);
      writeFileSync(path.join(ws, f), text);
      contentCompressed += deflateSync(text).length;
    }
    if (call % 25 === 24) {
      const f = `generated/out${call}.txt`;
      mkdirSync(path.join(ws, 'generated'), { recursive: true });
      const text = sourceText(rand() * 1024 * 1024);
      writeFileSync(path.join(ws, f), text);
      added.push(f);
      contentCompressed += deflateSync(text).length;
    }
    await workspace.snapshot({
      session: 'bench-session',
      turn: Math.floor(call / 10) + 1,
      step: (call % 10) + 1,
      tool: 'Edit',
      kind: 'post',
      timeBudgetMs: 0,
    });
  }
  const sessionMs = Date.now() - started;
  const storeDirPath = workspace.store.dir;
  const beforeGc = duBytes(storeDirPath);
  // The quota: half again what one checkpoint of the final workspace needs (gc can never go below that).
  const floorStore = freshStoreEnv();
  await Workspace.open(ws).snapshot({ timeBudgetMs: 0 });
  const floorBytes = duBytes(floorStore);
  process.env.GIT_CKPT_HOME = path.dirname(storeDirPath);
  const quota = Math.round(floorBytes * 1.5);
  writeFileSync(path.join(storeDirPath, 'config'), `[ckpt]\n\tmaxBytes = ${quota}\n`);
  const gc = await Workspace.open(ws).gc();
  const afterGc = duBytes(storeDirPath);
  results.session = {
    calls,
    sessionMs,
    perCallMs: sessionMs / calls,
    storeBytes: beforeGc,
    contentCompressedBytes: contentCompressed,
    ratio: beforeGc / contentCompressed,
    floorBytes,
    quota,
    afterGcBytes: afterGc,
    underQuota: afterGc <= quota,
    dropped: gc.dropped.length,
    kept: gc.kept,
  };
  rmSync(path.join(ws, 'generated'), { recursive: true, force: true });
  git(['checkout', '-q', '--', '.'], { cwd: ws });
}

const small = makeWorkspace('ws-3k', QUICK ? 600 : 3000, 13_300, 60);
console.error(`generated ${small}`);
const smallLabel = QUICK ? '600 files' : '3,000 files (~40 MB)';
await benchWorkspace(smallLabel, small, { first: QUICK ? 2 : 5, steady: QUICK ? 7 : 21 });
await benchRestore(smallLabel, small, QUICK ? 5 : 11);
await benchProcesses(smallLabel, small, QUICK ? 11 : 21);
await benchVersion(QUICK ? 11 : 21);
await benchSession(smallLabel, small, QUICK ? 200 : 1000);
const large = makeWorkspace('ws-50k', QUICK ? 5000 : 50_000, 600, 500);
console.error(`generated ${large}`);
const largeLabel = QUICK ? '5,000 small files' : '50,000 small files';
await benchWorkspace(largeLabel, large, { first: 3, steady: QUICK ? 7 : 11 });
await benchProcesses(largeLabel, large, QUICK ? 7 : 11);
await benchLog(QUICK ? 7 : 21);
await benchReplay(small, QUICK ? 3 : 7);
await benchSessionRevert(smallLabel, small, QUICK ? 50 : 200, QUICK ? 2 : 3);

const fmt = (ms) => (ms === undefined ? '' : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const lines = ['| workspace | operation | git-ckpt ms | reference | reference ms | ratio | target |', '|---|---|---:|---|---:|---:|---:|'];
for (const r of rows)
  lines.push(
    `| ${r.workspace} | ${r.operation} | ${fmt(r.ms)} | ${r.reference} | ${fmt(r.refMs)} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}×`} | ${r.target ? `≤ ${r.target}×` : ''} |`,
  );
lines.push(
  '',
  '| workspace | store after first snapshot | `git gc` pack of the same content | loose objects (plain `git add`) | ratio | target |',
  '|---|---:|---:|---:|---:|---:|',
);
for (const [label, w] of Object.entries(results.workspaces)) {
  lines.push(
    `| ${label} | ${(w.storeBytes / 1e6).toFixed(1)} MB | ${(w.gcPackBytes / 1e6).toFixed(1)} MB | ${(w.looseObjectsBytes / 1e6).toFixed(1)} MB | ${w.storeRatio.toFixed(2)}× | ≤ 1.5× |`,
  );
}
if (results.session) {
  const r = results.session;
  lines.push(
    '',
    `agent session of ${r.calls} tool calls (${fmt(r.perCallMs)} ms per snapshot): store ${(r.storeBytes / 1e6).toFixed(1)} MB against ${(r.contentCompressedBytes / 1e6).toFixed(1)} MB of compressed content = ${r.ratio.toFixed(2)}× (target ≤ 2×); gc under a ${(r.quota / 1e6).toFixed(1)} MB quota (1.5× a one-checkpoint store of the final workspace) dropped ${r.dropped}, kept ${r.kept}: ${(r.afterGcBytes / 1e6).toFixed(1)} MB${r.underQuota ? ', under the quota' : ', OVER the quota'}`,
  );
}
if (results.log)
  lines.push(
    '',
    `log -n 20 over ${results.log.checkpoints} checkpoints, in-process with the degraded probe: ${fmt(results.log.coldMs)} ms cold, ${fmt(results.log.warmMs)} ms cached (target ≤ 300 ms)`,
  );
const table = lines.join('\n');
console.log(table);
results.rows = rows;
results.table = table;
mkdirSync(path.join(ROOT, 'bench', 'out'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench', 'out', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
rmSync(base, { recursive: true, force: true });
