// The real-agents suite's shared harness: agent CLIs installed on demand into a
// cache outside the repository, a sandbox per session (temp HOME, a git
// workspace, the store under that HOME), the real git-ckpt CLI, and the checks
// every agent's scenarios share (the user's .git byte-identical, no secret text
// anywhere in the store).
import { spawn, spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** An agent that cannot run here is skipped, never passed; failed under CI (see test/helpers.mjs). */
import { cannotRun } from '../helpers.mjs';

export { IN_CI } from '../helpers.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = path.join(ROOT, 'dist', 'bin', 'main.js');
export const ENTRY = path.join(ROOT, 'hooks', 'git-ckpt-hook');

/** Exact versions: on Node 20 npm would otherwise pick an old Claude Code (newer ones declare Node 22). */
export const AGENT_PACKAGES = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  copilot: { pkg: '@github/copilot', version: '1.0.102', bin: 'copilot' },
  opencode: { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
  // 7.8.1 has no Linux binary on the registry (@kilocode/cli-linux-x64 stops at 7.7.9, which has no @kilocode/cli).
  kilo: { pkg: '@kilocode/cli', version: '7.7.7', bin: 'kilo' },
  // 0.75 on needs Node 22.19; the same agent was published as @mariozechner/pi-coding-agent up to 0.73.1.
  pi: { pkg: '@earendil-works/pi-coding-agent', version: '0.74.2', bin: 'pi' },
  // 0.21 on declare Node 22; 0.15.10 has the hooks (Claude's protocol, timeouts in milliseconds).
  qwen: { pkg: '@qwen-code/qwen-code', version: '0.15.10', bin: 'qwen' },
  // 0.225.1 pins a native package the registry does not have (its install then fetches nothing and
  // leaves no binary); 0.225.2's works with it.
  // 3.x: a native binary (Bun inside) behind a Node wrapper; its @cline/* dependencies declare Node 22 (warnings only).
  cline: { pkg: 'cline', version: '3.0.65', bin: 'cline' },
  droid: { pkg: '@factory/cli', version: '0.225.1', bin: 'droid', extra: [`@factory/cli-${process.platform}-${process.arch}@0.225.2`] },
};

export function cacheRoot() {
  return process.env.GIT_CKPT_AGENT_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'git-ckpt-agents');
}

/**
 * Install an agent CLI into the cache (once; later runs reuse it). Returns
 * { bin, version } or { skip: reason } when the package cannot be installed.
 */
export function installAgent(name) {
  const spec = AGENT_PACKAGES[name];
  const prefix = path.join(cacheRoot(), `${name}-${spec.version}`);
  const bin = path.join(prefix, 'node_modules', '.bin', spec.bin);
  const done = path.join(prefix, '.installed');
  if (existsSync(done) && existsSync(bin)) return { bin, version: spec.version, prefix };
  mkdirSync(prefix, { recursive: true });
  if (!existsSync(path.join(prefix, 'package.json'))) writeFileSync(path.join(prefix, 'package.json'), '{"private":true}\n');
  const r = spawnSync(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--loglevel=error',
      '--engine-strict=false',
      `${spec.pkg}@${spec.version}`,
      ...(spec.extra ?? []),
    ],
    {
      cwd: prefix,
      encoding: 'utf8',
      timeout: 600_000,
    },
  );
  if (r.status !== 0 || !existsSync(bin)) {
    return {
      skip: `${spec.pkg}@${spec.version} could not be installed: ${(r.stderr || r.error?.message || 'no binary').trim().split('\n').slice(-1)[0]}`,
    };
  }
  writeFileSync(done, `${new Date().toISOString()}\n`);
  return { bin, version: spec.version, prefix };
}

/**
 * One real agent's suite: its CLI installed (cached between runs), then `body(agent)` registers the
 * tests, with `agent` as { bin, version, prefix }. When the CLI cannot be installed, one test named
 * `title` stands for the suite instead: skipped with the reason, failed under CI (`cannotRun`).
 * Returns what `installAgent` did, for helpers outside the body (they run inside its tests only).
 */
export function agentSuite(test, name, title, body) {
  const agent = installAgent(name);
  if (agent.skip) cannotRun(test, title, agent.skip);
  else body(agent);
  return agent;
}

/** Environment without the developer's git, agent or model variables. */
export function cleanEnv(extra = {}) {
  const env = {};
  const drop =
    /^(GIT_|CLAUDE|ANTHROPIC|OPENAI|CODEX|GEMINI|GOOGLE|COPILOT|GH_|GITHUB_|CURSOR|QWEN|OPENCODE|KILO|PI_|FACTORY|DROID|CLINE|NO_COLOR|XDG_)/;
  for (const [k, v] of Object.entries(process.env)) if (!drop.test(k)) env[k] = v;
  env.GIT_CONFIG_NOSYSTEM = '1';
  return { ...env, ...extra };
}

/**
 * A sandbox for one agent session: a temp HOME (the agent's config, the store
 * at its default place under ~/.local/state), and a git workspace with one commit.
 */
export function sandbox(name = 'project') {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-agent-')));
  const home = path.join(base, 'home');
  const ws = path.join(base, name);
  mkdirSync(home);
  mkdirSync(ws);
  // The daemon on only for GIT_CKPT_TEST_DAEMON=1 runs, as in the main suite (test/helpers.mjs).
  writeFileSync(
    path.join(home, '.gitconfig'),
    `[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\t${process.env.GIT_CKPT_TEST_DAEMON === '1' ? 'daemonIdle = 60s' : 'daemon = false'}\n`,
  );
  const env = cleanEnv({ HOME: home, TMPDIR: tmpdir(), LANG: 'C', TERM: 'dumb' });
  const box = { base, home, ws, env, store: path.join(home, '.local', 'state', 'git-ckpt') };
  git(box, ['init', '-q']);
  writeFileSync(path.join(ws, 'README.md'), '# project\n');
  git(box, ['add', '-A']);
  git(box, ['commit', '-qm', 'initial']);
  return box;
}

/**
 * A sandbox for test `t`: removed when the test passed; kept when it failed (or under
 * GIT_CKPT_KEEP_SANDBOX), and then named in the test's log.
 */
export function testSandbox(t, name) {
  const box = sandbox(name);
  t.teardown(async () => {
    if (!t.passed || process.env.GIT_CKPT_KEEP_SANDBOX) return t.log(`sandbox kept: ${box.base}`);
    try {
      await removeSandbox(box);
    } catch (err) {
      // A process the agent left behind (Cline's detached hooks, an MCP server it started) still writing
      // there after some seconds: the test's own checks are done, so the folder is only named.
      t.log(`sandbox not removed (${err.code ?? err.message}): ${box.base}`);
    }
  });
  return box;
}

/**
 * Remove a sandbox, retrying while a hook the agent ran detached (Cline's TaskComplete) still writes into
 * the store. Never `rmSync` with retries: its waits are a blocking sleep with a linear backoff (50 tries of
 * 200 ms came to 255 s), which froze the test worker, and with it the other agents' tests in the same file
 * (their pipes undrained, their timers late): Cline's two-turn tests "hung" in CI that way.
 */
export async function removeSandbox(box) {
  await rm(box.base, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}

export function git(box, args, opts = {}) {
  const r = spawnSync('git', args, { cwd: opts.cwd ?? box.ws, env: box.env, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0 && !opts.allowFail) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** Run a command; resolves with { code, signal, stdout, stderr }. Killed after `timeoutMs`. */
export function run(command, args, { cwd, env, input = '', stdin = 'pipe', timeoutMs = 180_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: [stdin, 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // With the daemon on, what it answered before recording (posts, turn ends) is recorded before the test looks.
      if (env) flushDaemon(env);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
  });
}

/** Wait until the daemon of this environment's store root has recorded every event it answered (none runs: at once). */
export function flushDaemon(env) {
  const root =
    env.GIT_CKPT_HOME ??
    (env.XDG_STATE_HOME ? path.join(env.XDG_STATE_HOME, 'git-ckpt') : path.join(env.HOME ?? '', '.local', 'state', 'git-ckpt'));
  const socket = path.join(root, 'daemon', 'socket');
  if (existsSync(socket)) spawnSync('curl', ['-s', '-m', '30', '-X', 'POST', '--unix-socket', socket, 'http://daemon/flush']);
}

/** The real git-ckpt CLI in the sandbox. */
export async function ckpt(box, args, opts = {}) {
  const r = await run(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? box.ws, env: { ...box.env, ...(opts.env ?? {}) } });
  // `hooks install` starts the first snapshot in the background (project scope); a user starts the
  // agent after it, and so do these tests, so that the agent's own events are what they check. At
  // user scope the first session start would begin it: it is taken here instead, as `git ckpt init` would.
  if (args[0] === 'hooks' && args[1] === 'install') {
    await waitForBaseline(box);
    if (r.code === 0 && ledgerRecords(box).length === 0) await run(process.execPath, [CLI, 'init'], { cwd: box.ws, env: box.env });
  }
  return r;
}

/** Wait until no first snapshot runs in the background (30 s at most). */
export async function waitForBaseline(box) {
  for (let i = 0; i < 300; i++) {
    const dir = storeDir(box);
    if (!dir || !existsSync(path.join(dir, 'baseline.json'))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function ckptJson(box, args) {
  const r = await ckpt(box, args);
  if (r.code !== 0) throw new Error(`git ckpt ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Every record of the workspace's ledger, oldest first, as git-ckpt wrote them. */
export function ledgerRecords(box) {
  const dir = storeDir(box);
  if (!dir) return [];
  return readFileSync(path.join(dir, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

export function storeDir(box) {
  if (!existsSync(box.store)) return null;
  const dirs = readdirSync(box.store).filter((d) => existsSync(path.join(box.store, d, 'ledger.jsonl')));
  return dirs.length === 1 ? path.join(box.store, dirs[0]) : null;
}

/** Every text the store keeps: ledger, hook log, session state and every object (commit messages, blobs). */
export function storeText(box) {
  const dir = storeDir(box);
  if (!dir) return '';
  const parts = [];
  for (const f of ['ledger.jsonl', 'hook.log', 'sessions.json'])
    if (existsSync(path.join(dir, f))) parts.push(readFileSync(path.join(dir, f), 'utf8'));
  const r = spawnSync('git', ['--git-dir', path.join(dir, 'git'), 'cat-file', '--batch-all-objects', '--batch'], {
    encoding: 'latin1',
    maxBuffer: 1 << 28,
  });
  parts.push(r.stdout);
  return parts.join('\n');
}

/** A fingerprint of the user's .git: every path, mode, size, mtime and content hash. */
export function gitDirFingerprint(box) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      const st = lstatSync(p);
      const rel = path.relative(box.ws, p);
      if (st.isDirectory()) {
        out.push(`d ${rel} ${st.mode}`);
        walk(p);
      } else if (st.isSymbolicLink()) out.push(`l ${rel} ${readlinkSync(p)}`);
      else out.push(`f ${rel} ${st.mode} ${st.size} ${st.mtimeMs} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(path.join(box.ws, '.git'));
  return out.join('\n');
}

/** The workspace's files (outside .git) with their bytes, for byte-exact comparisons. */
export function workspaceFiles(box) {
  const files = {};
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      if (dir === box.ws && name === '.git') continue;
      const p = path.join(dir, name);
      const st = lstatSync(p);
      const rel = path.relative(box.ws, p).split(path.sep).join('/');
      if (st.isDirectory()) walk(p);
      else files[rel] = st.isSymbolicLink() ? `-> ${readlinkSync(p)}` : readFileSync(p).toString('base64');
    }
  };
  walk(box.ws);
  return files;
}

/**
 * A scripted model server on 127.0.0.1. `handle(req, body, res, server)` answers one
 * request; every request is logged in `server.requests` as { method, url, body }.
 */
import http from 'node:http';
export async function startServer(handle) {
  const server = { requests: [], url: '', close: () => {} };
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      server.requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      Promise.resolve()
        .then(() => handle(req, body, res, server))
        .catch((err) => {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: String(err?.stack ?? err) } }));
        });
    });
  });
  // An agent may reuse a connection after a pause longer than Node's 5 s default under load; one the server
  // closed as the request went out is an error or a hang in some clients (Bun's fetch), never the test's point.
  srv.keepAliveTimeout = 120_000;
  srv.headersTimeout = 125_000;
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  server.port = port;
  server.url = `http://127.0.0.1:${port}`;
  server.close = () =>
    new Promise((resolve) => {
      srv.closeAllConnections?.();
      srv.close(() => resolve());
    });
  return server;
}

/** The hook trace: one JSON line per hook invocation (GIT_CKPT_HOOK_TRACE). */
export function readTrace(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** The hook events git-ckpt recorded, as "phase:tool@tTURN.sSTEP" strings, for compact assertions. */
export function addresses(records) {
  return records.filter((r) => r.agent).map((r) => `${r.phase}${r.tool ? `:${r.tool}` : ''}@t${r.turn ?? '-'}.s${r.step ?? '-'}`);
}
