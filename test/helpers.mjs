// Shared test helpers: real temp directories, the real git binary, the real CLI.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  mkdirSync,
  readdirSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
  realpathSync,
} from 'node:fs';
import http from 'node:http';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(ROOT, 'dist', 'bin', 'main.js');

/** Whether this is a CI run (`CI=true`, as CI services set it, or `CI=1`): a test that cannot run here fails there. */
export const IN_CI = Boolean(process.env.CI) && !['0', 'false'].includes(process.env.CI.toLowerCase());

/**
 * Register a test that cannot run on this machine (no browser, an agent CLI not installable): skipped, with
 * the reason in its title, so AVA reports it as skipped, never as passed; under CI, a failure saying why.
 */
export function cannotRun(test, title, reason) {
  if (IN_CI) test(title, (t) => t.fail(`cannot run under CI: ${reason}`));
  else test.skip(`${title} (skipped: ${reason})`, () => {});
}

/** `test` where `canRun`; elsewhere each test it registers goes through cannotRun with `reason`. */
export function testIf(test, canRun, reason) {
  return canRun ? test : (title) => cannotRun(test, title, reason);
}

/** A sandbox: its own HOME (global git config), store root and workspace. */
export function sandbox({ git = true, name = 'ws' } = {}) {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-test-')));
  const home = path.join(base, 'home');
  const store = path.join(base, 'store');
  const ws = path.join(base, name);
  mkdirSync(home);
  mkdirSync(ws);
  const env = cleanEnv({ HOME: home, GIT_CKPT_HOME: store, XDG_CONFIG_HOME: path.join(home, '.config') });
  writeFileSync(
    path.join(home, '.gitconfig'),
    `[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\t${DAEMON_MODE ? 'daemonIdle = 20s' : 'daemon = false'}\n`,
  );
  const box = { base, home, store, ws, env };
  if (git) {
    sh(box, ['init', '-q']);
  }
  return box;
}

/**
 * The developer's environment minus what would make a test depend on it: no GIT_*
 * (we may run inside a git hook), no system git config, and the C locale, so the
 * messages git, commander and the CLI print are the English ones the tests match
 * whatever the developer's LANG (agent-events.test.mjs runs the exit-code
 * contract under de_DE and fr_FR on purpose, through `extra`).
 */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('GIT_') || k.startsWith('LC_') || k === 'LANG' || k === 'LANGUAGE') continue;
    env[k] = v;
  }
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.LANG = 'C';
  env.LC_ALL = 'C';
  delete env.NO_COLOR;
  return { ...env, ...extra };
}

/** Run the real git in the sandbox's workspace (as the user would). */
export function sh(box, args, opts = {}) {
  const r = spawnSync('git', args, {
    cwd: opts.cwd ?? box.ws,
    env: { ...box.env, ...(opts.env ?? {}) },
    input: opts.input,
    encoding: opts.encoding ?? 'utf8',
  });
  if (r.status !== 0 && !opts.allowFail) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r;
}

/** Run git against the shadow repository of the sandbox's workspace. */
export function shadowGit(box, args, encoding = 'utf8') {
  const gitDir = path.join(storeDir(box), 'git');
  const r = spawnSync('git', args, { cwd: box.base, env: { ...box.env, GIT_DIR: gitDir }, encoding, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`shadow git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

export function storeDir(box) {
  // The store root also keeps `backups/` (of agent configs hooks install rewrote), the daemon's folder and the log of hooks without a store.
  const dirs = readdirSync(box.store).filter((d) => d !== 'backups' && d !== 'daemon' && !d.startsWith('hook.log'));
  if (dirs.length !== 1) throw new Error(`expected one store, found ${dirs.join(', ')}`);
  return path.join(box.store, dirs[0]);
}

/**
 * After a session start in a new store: wait for its first snapshot, which runs in the background and
 * counts the hooks that come meanwhile without checkpoints, so a test's first turn records as the agent's would.
 */
export async function firstSnapshotTaken(box, limitMs = 60_000) {
  const read = (name) => {
    try {
      return readFileSync(path.join(storeDir(box), name), 'utf8');
    } catch (err) {
      return `(${err.code ?? err.message})`;
    }
  };
  /** The process baseline.json names, if it is still running (the claim a hook writes can land after its child ended). */
  const owner = () => {
    try {
      const { pid } = JSON.parse(read('baseline.json'));
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  };
  const done = () => {
    try {
      return statSync(path.join(storeDir(box), 'ledger.jsonl')).size > 0 && owner() === undefined;
    } catch {
      return false;
    }
  };
  if (await waitFor(done, limitMs)) return;
  // What the store holds, so a failure under load says which half never came.
  throw new Error(
    `the first snapshot did not finish in ${limitMs} ms: baseline.json ${read('baseline.json')} (its process ${owner() ? 'running' : 'gone'}); ledger ${read('ledger.jsonl').length} bytes; hook.log ${read('hook.log')}`,
  );
}

/** Hold a store's lock as a live process on this host would (a `sleep`); returns the release, also run at teardown. */
export function holdLock(t, store) {
  const sleeper = spawn('sleep', ['60']);
  const lock = path.join(store, 'lock');
  writeFileSync(lock, JSON.stringify({ pid: sleeper.pid, host: hostname(), time: Date.now() }));
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    sleeper.kill();
    rmSync(lock, { force: true });
  };
  t.teardown(release);
  return release;
}

/** Run a process in the sandbox; resolves with { code, stdout, stderr }. */
export function run(box, command, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? box.ws, env: { ...box.env, ...(opts.env ?? {}) } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', async (code) => {
      // With the daemon on, what it answered is recorded before the test looks (as `git ckpt log` waits).
      if (DAEMON_MODE) await flushDaemon(opts.env?.GIT_CKPT_HOME ?? box.env?.GIT_CKPT_HOME ?? box.store);
      resolve({ code, stdout, stderr });
    });
    // A process may exit without reading all of stdin (that is what some tests check).
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * GIT_CKPT_TEST_DAEMON=1 runs the suites with the daemon on: sandboxes allow it
 * (they turn it off otherwise), and every `git ckpt hook` a test runs goes
 * through the entry script agents run, to a daemon started for the sandbox.
 */
export const DAEMON_MODE = process.env.GIT_CKPT_TEST_DAEMON === '1';
export const HOOK_SCRIPT = path.join(ROOT, 'hooks', 'git-ckpt-hook');
const daemonsStarted = new Set();

/** Start the sandbox's daemon (once) and wait until it listens. */
export function startDaemonFor(box, env = {}) {
  const key = env.GIT_CKPT_HOME ?? box.store;
  if (daemonsStarted.has(key)) return;
  // A store root that cannot be written (a full disk) keeps no daemon: its hooks take the Node hook, as tested.
  spawnSync(process.execPath, [CLI, 'daemon', 'start'], { cwd: box.ws, env: { ...box.env, ...env }, encoding: 'utf8' });
  daemonsStarted.add(key);
}

/** Wait until the daemon of a store root has recorded every event it answered. */
export function flushDaemon(storeRoot) {
  return new Promise((resolve) => {
    const req = http.request({ socketPath: path.join(storeRoot, 'daemon', 'socket'), method: 'POST', path: '/flush' }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', resolve);
    req.end();
  });
}

/** flushDaemon for synchronous tests (through curl, as the entry script reaches the daemon). */
export function flushDaemonSync(storeRoot) {
  if (DAEMON_MODE)
    spawnSync('curl', ['-s', '-X', 'POST', '--unix-socket', path.join(storeRoot, 'daemon', 'socket'), 'http://daemon/flush']);
}

/** Run the CLI; resolves with { code, stdout, stderr }. */
export function ckpt(box, args, opts = {}) {
  if (DAEMON_MODE && args[0] === 'hook' && !args.some((a) => a.startsWith('-')) && !opts.noDaemon) {
    startDaemonFor(box, opts.env);
    return run(box, HOOK_SCRIPT, args.slice(1), opts);
  }
  return run(box, process.execPath, [CLI, ...args], opts);
}

/** The arguments with --json added, before a `--` if there is one. */
function withJson(args) {
  const dashes = args.indexOf('--');
  return dashes < 0 ? [...args, '--json'] : [...args.slice(0, dashes), '--json', ...args.slice(dashes)];
}

/** Run the CLI and parse its JSON output; fails the test on a non-zero exit. */
export async function ckptJson(box, args, opts) {
  const r = await ckpt(box, withJson(args), opts);
  if (r.code !== 0) throw new Error(`git-ckpt ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * Run the CLI with --json where it is expected to fail; resolves with { exit, code, message }: the exit
 * code and the error's `code` and `message` from the one JSON line on stderr (cli/app.ts's `fail`).
 * Throws when the command succeeded or stderr is not exactly that one line, so tests assert codes, not wording.
 * `runCli` runs the CLI (`ckpt`'s arguments): another way to start it, such as with capabilities dropped.
 */
export async function ckptError(box, args, opts, runCli = ckpt) {
  const r = await runCli(box, withJson(args), opts);
  if (r.code === 0) throw new Error(`git-ckpt ${args.join(' ')} succeeded; expected an error: ${r.stdout}`);
  const lines = r.stderr.split('\n').filter(Boolean);
  let error;
  try {
    error = lines.length === 1 ? JSON.parse(lines[0]).error : undefined;
  } catch {
    /* not JSON: reported below */
  }
  if (typeof error?.code !== 'string') throw new Error(`git-ckpt ${args.join(' ')}: stderr is not one JSON error line: ${r.stderr}`);
  return { exit: r.code, code: error.code, message: error.message };
}

export function write(box, rel, content, mode) {
  const file = path.join(box.ws, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content, mode === undefined ? undefined : { mode });
  return file;
}

/**
 * Every entry below dir (paths, types, modes, bytes, link targets) as one digest-able listing.
 * `mtime: false` compares content only; `skip` leaves out top-level names (such as .git).
 */
export function treeState(dir, { mtime = true, skip = [] } = {}) {
  const out = [];
  const walk = (rel) => {
    const full = path.join(dir, rel);
    const st = lstatSync(full);
    if (st.isSymbolicLink()) out.push(`L ${rel} -> ${readlinkSync(full)}`);
    else if (st.isDirectory()) {
      out.push(`D ${rel} ${(st.mode & 0o777).toString(8)}`);
      for (const name of readdirSync(full).sort()) {
        if (!rel && skip.includes(name)) continue;
        walk(rel ? `${rel}/${name}` : name);
      }
    } else {
      out.push(
        `F ${rel} ${(st.mode & 0o777).toString(8)} ${mtime ? st.mtimeMs : ''} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`,
      );
    }
  };
  walk('');
  return out.join('\n');
}

/** A tree's entries in the shadow repository: path -> { mode, type, oid }. */
export function lsTree(box, treeish) {
  const out = shadowGit(box, ['ls-tree', '-r', '-z', '--full-tree', treeish]);
  const entries = new Map();
  for (const line of out.split('\0')) {
    if (!line) continue;
    const tab = line.indexOf('\t');
    const [mode, type, oid] = line.slice(0, tab).split(' ');
    entries.set(line.slice(tab + 1), { mode, type, oid });
  }
  return entries;
}

/** The exact bytes stored for a path in a checkpoint. */
export function storedBytes(box, treeish, rel) {
  const gitDir = path.join(storeDir(box), 'git');
  const r = spawnSync('git', ['cat-file', 'blob', `${treeish}:${rel}`], { env: { ...box.env, GIT_DIR: gitDir } });
  if (r.status !== 0) throw new Error(`cat-file ${rel}: ${r.stderr}`);
  return r.stdout;
}

export function ledgerLines(box) {
  return readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** The workspace's content (no mtimes, no .git): what a restore must bring back byte for byte. */
export function workspaceState(box) {
  return treeState(box.ws, { mtime: false, skip: ['.git'] });
}

/** Start `git ckpt ui --no-open` in the workspace; resolves with { url, port, token, base, child } once it prints its URL. */
export async function startUi(t, box, args = []) {
  const child = spawn(process.execPath, [CLI, 'ui', '--no-open', ...args], { cwd: box.ws, env: box.env });
  t.teardown(() => child.kill());
  let out = '';
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`ui exited ${code}: ${out}`)));
  });
  const parsed = new URL(url);
  return { url, port: Number(parsed.port), token: parsed.searchParams.get('token'), base: `http://127.0.0.1:${parsed.port}`, child };
}

/** Whether a path exists as an entry (a lock is a symlink to nothing, which existsSync calls absent). */
export function entryExists(file) {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Start a git ckpt command in its own process group; `exited` resolves when it exits (or is killed). */
export function startCli(box, args) {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: box.ws,
    env: box.env,
    detached: true,
    stdio: 'ignore',
  });
  const run = { child, done: false };
  run.exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      run.done = true;
      resolve({ code, signal, at: Date.now() });
    }),
  );
  return run;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * SIGKILL one process by the id a file or an endpoint gave. Anything but a plain pid of another process is refused:
 * kill(0) or kill(-1) from a half-written file would take down this test runner's whole process group (CI with it).
 */
export function killProcess(pid, signal = 'SIGKILL') {
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) throw new Error(`refusing to signal pid ${pid}`);
  process.kill(pid, signal);
}

/**
 * SIGKILL a running command: every fifth kill at a random moment before its journal exists
 * (`windows.before` ms), the others at a random moment after (`windows.apply` ms). A run that
 * finished before its kill narrows the window it was aimed at (the machine got faster than when
 * it was measured), down to `windows.floor` for the apply window.
 */
export async function killDuring(run, kill, journal, windows, limitMs) {
  const started = Date.now();
  let journalAt = 0;
  if (kill % 5 === 4) await sleep(Math.random() * windows.before);
  else {
    await waitFor(() => existsSync(journal) || run.done, limitMs);
    journalAt = Date.now();
    await sleep(Math.random() * windows.apply);
  }
  try {
    process.kill(-run.child.pid, 'SIGKILL');
  } catch {
    /* already exited */
  }
  const end = await run.exited;
  if (end.signal === null) {
    if (journalAt) windows.apply = Math.max(windows.floor, Math.min(windows.apply, end.at - journalAt) * 0.8);
    else windows.before = Math.max(10, Math.min(windows.before, end.at - started) * 0.8);
  }
  return end;
}

export async function waitFor(predicate, limitMs) {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > limitMs) return false;
    await sleep(2);
  }
  return true;
}

/**
 * The built module of a lib/ file by its name ('restore-plan'), wherever its
 * layer's folder puts it under dist/lib/: tests name modules, not the layout.
 */
export function libPath(name) {
  const find = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        const found = find(full);
        if (found) return found;
      } else if (entry.name === `${name}.js`) return full;
    }
    return undefined;
  };
  const found = find(path.join(ROOT, 'dist', 'lib'));
  if (!found) throw new Error(`no built lib module ${name}.js (run npm run build)`);
  return found;
}

/** One hook event through the real entry script, as the agent runs it. */
export function hookEvent(box, agent, phase, payload) {
  return run(box, 'sh', [HOOK_SCRIPT, agent, phase], { input: JSON.stringify(payload) });
}

/** Claude Code's transcript: a prompt line per turn, an assistant line after each step. */
function claudeTranscript(file) {
  let n = 0;
  const line = (value) => appendFileSync(file, `${JSON.stringify(value)}\n`);
  return {
    prompt(promptId, parentUuid) {
      const uuid = `u${++n}`;
      line({ type: 'user', uuid, parentUuid, promptId, isSidechain: false, message: { role: 'user', content: `prompt ${promptId}` } });
      return uuid;
    },
    step(parentUuid, promptId) {
      const a = `a${++n}`;
      line({ type: 'assistant', uuid: a, parentUuid, message: { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}` }] } });
      const r = `r${++n}`;
      line({
        type: 'user',
        uuid: r,
        parentUuid: a,
        promptId,
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n - 1}` }] },
      });
      const end = `a${++n}`;
      line({ type: 'assistant', uuid: end, parentUuid: r, message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] } });
      return end;
    },
  };
}

/**
 * A Claude session of three turns (turn 1 Write one.txt; turn 2 Write two.txt, Bash shell2.txt;
 * turn 3 Bash shell3.txt), then turn 4's prompt continuing from turn 1's last line. Resolves with the
 * fourth turn's first pre hook's run (where the rewind shows).
 */
export async function claudeSession(box, { beforeTurn4 } = {}) {
  const transcript = path.join(box.base, 'claude-session.jsonl');
  const tx = claudeTranscript(transcript);
  const base = { session_id: 'cs1', cwd: box.ws, transcript_path: transcript };
  const turn = async (n, parent, calls) => {
    const promptId = `p${n}`;
    await hookEvent(box, 'claude', 'turn-start', {
      ...base,
      hook_event_name: 'UserPromptSubmit',
      prompt: `turn ${n}`,
      prompt_id: promptId,
    });
    let last = tx.prompt(promptId, parent);
    let first;
    for (const [i, [tool, file, text]] of calls.entries()) {
      const call = {
        ...base,
        prompt_id: promptId,
        tool_name: tool,
        tool_use_id: `c${n}${i}`,
        tool_input: tool === 'Bash' ? { command: `echo > ${file}` } : { file_path: path.join(box.ws, file) },
      };
      const pre = await hookEvent(box, 'claude', 'pre', { ...call, hook_event_name: 'PreToolUse' });
      first ??= pre;
      write(box, file, text);
      await hookEvent(box, 'claude', 'post', { ...call, hook_event_name: 'PostToolUse', tool_response: {} });
      last = tx.step(last, promptId);
    }
    await hookEvent(box, 'claude', 'turn-end', { ...base, hook_event_name: 'Stop', prompt_id: promptId });
    return { last, first };
  };
  await hookEvent(box, 'claude', 'session-start', { ...base, hook_event_name: 'SessionStart', source: 'startup' });
  await firstSnapshotTaken(box);
  const t1 = await turn(1, null, [['Write', 'one.txt', 'one\n']]);
  const t2 = await turn(2, t1.last, [
    ['Write', 'two.txt', 'two\n'],
    ['Bash', 'shell2.txt', 'shell2\n'],
  ]);
  await turn(3, t2.last, [['Bash', 'shell3.txt', 'shell3\n']]);
  await beforeTurn4?.();
  const t4 = await turn(4, t1.last, [['Bash', 'four.txt', 'four\n']]);
  return { pre: t4.first, transcript };
}

/**
 * Two snapshots of a.txt, then a change never captured and a restore of the first: the restore takes a guard
 * checkpoint of its own (kind guard). Resolves with the first snapshot and the restore's JSON report.
 */
export async function restoreWithOwnGuard(box) {
  write(box, 'a.txt', 'one\n');
  const first = await ckptJson(box, ['snapshot', '-m', 'one']);
  write(box, 'a.txt', 'two\n');
  await ckptJson(box, ['snapshot', '-m', 'two']);
  write(box, 'a.txt', 'three\n');
  const restore = await ckptJson(box, ['restore', first.id.slice(0, 8)]);
  return { first, restore };
}
