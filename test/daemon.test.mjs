// The resident daemon: its lifecycle, its endpoint's refusals, and the proof that a capture
// narrowed by its watcher takes exactly what a full scan takes (the differential test).
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CLI,
  HOOK_SCRIPT,
  ckpt,
  ckptJson,
  ledgerLines,
  run,
  sandbox,
  sh,
  storeDir,
  testIf,
  waitFor,
  write,
  killProcess,
  libPath,
} from './helpers.mjs';

const pluginUrl = (file) => pathToFileURL(file).href;

/** A sandbox whose user config lets the daemon run, with test clocks. */
function daemonBox(extraConfig = '') {
  const box = sandbox();
  writeFileSync(
    path.join(box.home, '.gitconfig'),
    `[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\tdaemonIdle = 60s\n${extraConfig}`,
  );
  write(box, 'README.md', 'hello\n');
  sh(box, ['add', '-A']);
  sh(box, ['commit', '-qm', 'init']);
  box.env = { ...box.env, GIT_CKPT_TEST_DAEMON_TICK_MS: '200' };
  return box;
}

function daemonFiles(box) {
  const dir = path.join(box.store, 'daemon');
  return { dir, endpoint: path.join(dir, 'endpoint.json'), token: path.join(dir, 'token'), socket: path.join(dir, 'socket') };
}

function endpoint(box) {
  return JSON.parse(readFileSync(daemonFiles(box).endpoint, 'utf8'));
}

async function startDaemon(t, box, env = {}) {
  const r = await ckpt(box, ['daemon', 'start', '--json'], { env });
  t.is(r.code, 0, r.stderr);
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  return JSON.parse(r.stdout);
}

/** A hook event through the entry script the agents run (curl to the daemon's socket). */
function hook(box, phase, payload, env = {}) {
  return run(box, HOOK_SCRIPT, ['claude', phase], {
    input: JSON.stringify({ session_id: 'sess-d', cwd: box.ws, ...payload }),
    env: { CLAUDE_PROJECT_DIR: box.ws, ...env },
  });
}

function latestTree(box) {
  const lines = ledgerLines(box);
  return lines.length ? lines.at(-1).tree : null;
}

/** An HTTP request to the daemon's TCP endpoint with the given headers; resolves { status, body }. */
function httpRequest(box, { method = 'POST', urlPath = '/hook/claude/post', headers = {}, body = '' }) {
  const { port } = endpoint(box);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', (err) => resolve({ status: 0, body: String(err.code ?? err) }));
    req.on('timeout', () => reject(new Error('timeout')));
    req.end(body);
  });
}

test('daemon start, status and stop; a hook through the entry script is recorded by it and its workspace is watched', async (t) => {
  const box = daemonBox();
  const started = await startDaemon(t, box);
  t.true(started.started);
  t.true(existsSync(daemonFiles(box).socket));
  t.is(readFileSync(daemonFiles(box).token, 'utf8').length, 48);
  // The socket and the token are the user's alone.
  t.is(spawnSync('stat', ['-c', '%a', daemonFiles(box).socket], { encoding: 'utf8' }).stdout.trim(), '600');
  t.is(spawnSync('stat', ['-c', '%a', daemonFiles(box).dir], { encoding: 'utf8' }).stdout.trim(), '700');
  const again = await ckptJson(box, ['daemon', 'start']);
  t.false(again.started);
  t.is(again.pid, started.pid);

  write(box, 'a.txt', 'one\n');
  const pre = await hook(box, 'pre', {
    hook_event_name: 'PreToolUse',
    tool_name: 'Write',
    tool_use_id: 'c1',
    tool_input: { file_path: 'a.txt' },
  });
  t.is(pre.code, 0);
  t.is(pre.stdout, '');
  write(box, 'a.txt', 'two\n');
  await hook(box, 'post', { hook_event_name: 'PostToolUse', tool_name: 'Write', tool_use_id: 'c1', tool_input: { file_path: 'a.txt' } });
  // log waits for what the daemon answered before recording it.
  const log = await ckptJson(box, ['log']);
  t.true(
    log.some((c) => c.kind === 'post' && c.paths?.some((p) => p.path === 'a.txt')),
    JSON.stringify(log.slice(0, 2)),
  );
  const status = await ckptJson(box, ['daemon', 'status']);
  t.is(status.pid, started.pid);
  t.true(status.events >= 2);
  t.true(status.rssBytes > 0);
  t.deepEqual(
    status.workspaces.map((w) => w.root),
    [box.ws],
  );
  const text = await ckpt(box, ['daemon', 'status']);
  t.regex(text.stdout, /^running: pid \d+/);
  t.regex(text.stdout, /change event\(s\)/);

  const stopped = await ckptJson(box, ['daemon', 'stop']);
  t.true(stopped.stopped);
  t.false(existsSync(daemonFiles(box).socket));
  t.deepEqual(await ckptJson(box, ['daemon', 'status']), { running: false });
  // Without the daemon the entry script records the event itself.
  write(box, 'a.txt', 'three\n');
  const before = ledgerLines(box).length;
  await hook(box, 'post', { hook_event_name: 'PostToolUse', tool_name: 'Write', tool_use_id: 'c2', tool_input: { file_path: 'a.txt' } });
  t.is(ledgerLines(box).length, before + 1);
});

test('an OpenCode plugin reaches the daemon through its socket with no process; with no daemon it runs the entry script', async (t) => {
  const { pluginText } = await import(libPath('plugin-specs'));
  const box = daemonBox();
  await ckptJson(box, ['snapshot']);
  await startDaemon(t, box);
  // The entry script behind a recorder: any process the plugin starts leaves a line.
  const spawned = path.join(box.base, 'spawned.txt');
  const entry = path.join(box.base, 'entry.sh');
  writeFileSync(entry, `echo "$1 $2" >> ${JSON.stringify(spawned)}\nexec sh ${JSON.stringify(HOOK_SCRIPT)} "$@"\n`);
  const template = (name) => readFileSync(path.join(path.dirname(HOOK_SCRIPT), name), 'utf8');
  const plugin = path.join(box.base, 'git-ckpt.mjs');
  writeFileSync(plugin, pluginText(template('plugin-transport.js'), template('opencode-plugin.js'), 'opencode', entry));
  // One tool call as OpenCode makes it: the pre awaited, the file written, the post left to finish on its own.
  const driver = path.join(box.base, 'driver.mjs');
  writeFileSync(
    driver,
    `const { GitCkpt } = await import(${JSON.stringify(pluginUrl(plugin))});
const [ws, id, name] = process.argv.slice(2);
const hooks = await GitCkpt({ directory: ws, worktree: ws, client: { app: { log: async (m) => console.log(JSON.stringify(m)) } } });
const input = { tool: 'write', sessionID: 'ses_plugin', callID: id };
const output = { args: { filePath: ws + '/' + name } };
await hooks['tool.execute.before'](input, output);
(await import('node:fs')).writeFileSync(ws + '/' + name, id + '\\n');
await hooks['tool.execute.after'](input, { title: name, output: '', metadata: {} });
`,
  );
  const call = async (id, name, ws = box.ws) => {
    const r = await run(box, process.execPath, [driver, ws, id, name], { cwd: ws });
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, '', 'nothing in the agent log');
  };
  const events = (await ckptJson(box, ['daemon', 'status'])).events;
  await call('call_1', 'one.txt');
  const log = await ckptJson(box, ['log']);
  t.true(
    log.some((c) => c.kind === 'post' && c.paths?.some((p) => p.path === 'one.txt')),
    JSON.stringify(log.slice(0, 2)),
  );
  t.is((await ckptJson(box, ['daemon', 'status'])).events, events + 2, 'the daemon served the pre and the post');
  t.false(existsSync(spawned), 'no process was started for either event');
  // A workspace whose path is not ASCII reaches the daemon as it is (the path travels percent-encoded).
  const wide = path.join(box.base, 'wé 工作');
  mkdirSync(wide);
  spawnSync('git', ['init', '-q'], { cwd: wide, env: box.env });
  await ckptJson(box, ['snapshot'], { cwd: wide });
  await call('call_w', 'wide.txt', wide);
  const wideLog = await ckptJson(box, ['log'], { cwd: wide });
  t.true(
    wideLog.some((c) => c.kind === 'post' && c.paths?.some((p) => p.path === 'wide.txt')),
    JSON.stringify(wideLog.slice(0, 2)),
  );
  t.false(existsSync(spawned), 'no process was started there either');
  // No daemon: the same plugin runs the entry script, which records the events itself.
  await ckptJson(box, ['daemon', 'stop']);
  await call('call_2', 'two.txt');
  t.true(await waitFor(() => existsSync(spawned) && readFileSync(spawned, 'utf8').split('\n').length > 2, 20_000));
  t.deepEqual(readFileSync(spawned, 'utf8').trim().split('\n'), ['opencode pre', 'opencode post']);
  // The post, left running by the plugin, records on its own after the driver exited.
  let recorded = false;
  for (let i = 0; i < 60 && !recorded; i++) {
    recorded = (await ckptJson(box, ['log'])).some((c) => c.kind === 'post' && c.paths?.some((p) => p.path === 'two.txt'));
    if (!recorded) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  t.true(recorded, 'the post through the entry script was recorded');
});

test('a tampered endpoint naming pid 0, -1 or a word: stop and status say no daemon runs and signal nothing', async (t) => {
  const box = daemonBox();
  mkdirSync(daemonFiles(box).dir, { recursive: true, mode: 0o700 });
  for (const pid of [0, -1, '12', 1.5]) {
    writeFileSync(daemonFiles(box).endpoint, JSON.stringify({ pid, port: 1, socket: daemonFiles(box).socket }));
    for (const verb of ['stop', 'status']) {
      // In a process group of its own: signalling "pid 0" would end only that group, and this test would see it.
      const r = spawnSync(process.execPath, [CLI, 'daemon', verb, '--json'], {
        cwd: box.ws,
        env: box.env,
        encoding: 'utf8',
        detached: true,
      });
      t.is(r.signal, null, `${verb} with pid ${JSON.stringify(pid)}: not signalled`);
      t.is(r.status, 0, r.stderr);
      t.deepEqual(JSON.parse(r.stdout), verb === 'stop' ? { stopped: false } : { running: false });
    }
  }
});

test('two daemons started at once: one wins, the other exits cleanly', async (t) => {
  const box = daemonBox();
  // Each resolves with its exit code, or 'running' if it still runs after 10 s (the loser waits up to 2 s for
  // a holder still exiting, after a Node start a loaded machine makes slow).
  const spawnRun = () =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, 'daemon', 'run'], { cwd: box.ws, env: box.env, stdio: 'ignore' });
      child.on('exit', (code) => resolve({ pid: child.pid, code }));
      setTimeout(() => resolve({ pid: child.pid, code: 'running', child }), 10_000);
    });
  const [a, b] = await Promise.all([spawnRun(), spawnRun()]);
  const running = [a, b].filter((r) => r.code === 'running');
  const exited = [a, b].filter((r) => r.code !== 'running');
  t.is(running.length, 1);
  t.is(exited.length, 1);
  t.is(exited[0].code, 0);
  t.is(endpoint(box).pid, running[0].pid);
  t.teardown(() => running[0].child?.kill());
});

test('the endpoint refuses what it must, with one line in hook.log and nothing written', async (t) => {
  const box = daemonBox();
  await startDaemon(t, box);
  const { port } = endpoint(box);
  const token = readFileSync(daemonFiles(box).token, 'utf8');
  const host = `127.0.0.1:${port}`;
  const payload = JSON.stringify({ session_id: 's', hook_event_name: 'PostToolUse', tool_name: 'Write', cwd: box.ws });
  write(box, 'x.txt', 'x\n');
  const cases = [
    { name: 'no token', headers: { host }, status: 401 },
    { name: 'wrong token', headers: { host, 'x-ckpt-token': 'f'.repeat(48) }, status: 401 },
    { name: 'foreign Host', headers: { host: 'evil.example:80', 'x-ckpt-token': token }, status: 403 },
    { name: 'a 10 MB body', headers: { host, 'x-ckpt-token': token }, body: 'x'.repeat(10 * 1024 * 1024), status: 413 },
    { name: 'an unknown endpoint', headers: { host, 'x-ckpt-token': token }, urlPath: '/restore', status: 404 },
  ];
  for (const c of cases) {
    const r = await httpRequest(box, { headers: c.headers, body: c.body ?? payload, urlPath: c.urlPath });
    // A 10 MB body may be cut off before the answer is read (status 0): refused either way.
    if (c.status === 413) t.true([413, 0].includes(r.status), `${c.name}: ${r.status}`);
    else t.is(r.status, c.status, c.name);
  }
  const refusals = () =>
    readFileSync(path.join(box.store, 'hook.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('refused'));
  t.is(refusals().length, cases.length);
  t.false(existsSync(path.join(box.store, 'ledger.jsonl')) && ledgerLines(box).length > 0);

  // Accepted by the endpoint, refused by what it names: malformed JSON, a missing folder.
  const ok = { host, 'x-ckpt-token': token };
  const malformed = await httpRequest(box, { headers: ok, body: '{"cwd": "' });
  t.is(malformed.status, 200);
  const missing = await httpRequest(box, { headers: ok, body: JSON.stringify({ hook_event_name: 'PostToolUse', cwd: '/no/such/dir' }) });
  t.is(missing.status, 200);
  await ckpt(box, ['daemon', 'stop']);
  t.is(refusals().length, cases.length + 2);
  t.deepEqual(workspaceStores(box), [], 'nothing was recorded for any of them');
});

/** The workspace stores under the sandbox's store root (named `<name>-<16 hex>`). */
function workspaceStores(box) {
  return readdirSync(box.store).filter((d) => /-[0-9a-f]{16}$/.test(d));
}

testIf(
  test,
  process.getuid() === 0,
  'making a folder another user’s needs root',
)('the endpoint refuses an event for another user’s folder, with one line in hook.log and nothing written', async (t) => {
  const box = daemonBox();
  await startDaemon(t, box);
  const { port } = endpoint(box);
  const token = readFileSync(daemonFiles(box).token, 'utf8');
  const foreign = path.join(box.base, 'foreign');
  mkdirSync(foreign);
  chownSync(foreign, 65534, 65534);
  const r = await httpRequest(box, {
    headers: { host: `127.0.0.1:${port}`, 'x-ckpt-token': token },
    body: JSON.stringify({ hook_event_name: 'PostToolUse', cwd: foreign }),
  });
  t.is(r.status, 200);
  await ckpt(box, ['daemon', 'stop']);
  const lines = readFileSync(path.join(box.store, 'hook.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('refused'));
  t.is(lines.length, 1);
  t.regex(lines[0], /not this user's/);
  t.deepEqual(workspaceStores(box), []);
});

/** A seeded pseudo-random generator (mulberry32): the same script of edits on every run. */
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** One random edit of the workspace: create, modify, delete, rename, chmod, symlink, file↔folder, ignored, secret. */
function randomEdit(box, rand, counter) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const names = ['a', 'b', 'c', 'd', 'src/e', 'src/f', 'src/deep/g', 'lib/h', 'build/out', 'notes.log', '.env', 'sub/i'];
  const name = pick(names);
  const file = path.join(box.ws, name);
  const kind = pick(['create', 'modify', 'modify', 'delete', 'rename', 'chmod', 'symlink', 'file-to-dir', 'dir-to-file', 'ignore-rule']);
  const content = `v${counter.n++} ${rand()}\n`;
  const clear = (p) => rmSync(p, { recursive: true, force: true });
  try {
    switch (kind) {
      case 'create':
      case 'modify':
        if (existsSync(file) && !lstatIsFile(file)) clear(file);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, content);
        break;
      case 'delete':
        clear(file);
        break;
      case 'rename': {
        if (!existsSync(file)) break;
        const to = path.join(box.ws, pick(names));
        if (to === file) break;
        clear(to);
        mkdirSync(path.dirname(to), { recursive: true });
        renameSync(file, to);
        break;
      }
      case 'chmod':
        if (existsSync(file) && lstatIsFile(file)) chmodSync(file, rand() < 0.5 ? 0o755 : 0o644);
        break;
      case 'symlink':
        clear(file);
        mkdirSync(path.dirname(file), { recursive: true });
        symlinkSync(pick(['a', '../b', 'missing']), file);
        break;
      case 'file-to-dir':
        clear(file);
        mkdirSync(file, { recursive: true });
        writeFileSync(path.join(file, 'inner'), content);
        break;
      case 'dir-to-file': {
        const dir = path.join(box.ws, pick(['src', 'lib', 'sub']));
        clear(dir);
        writeFileSync(dir, content);
        break;
      }
      case 'ignore-rule':
        writeFileSync(
          path.join(box.ws, pick(['.gitignore', 'src/.gitignore'].filter((p) => existsSync(path.dirname(path.join(box.ws, p)))))),
          rand() < 0.5 ? '*.log\nbuild/\n' : '*.log\n',
        );
        break;
    }
  } catch (err) {
    // An edit the current shape of the tree does not allow (a parent that is a file): skipped.
    if (!['ENOTDIR', 'EEXIST', 'ENOENT', 'EISDIR'].includes(err.code)) throw err;
  }
}

function lstatIsFile(file) {
  try {
    return spawnSync('test', ['-f', file, '-a', '!', '-L', file]).status === 0;
  } catch {
    return false;
  }
}

/**
 * Apply `edits` seeded edits through hooks with the daemon (posts answered at once, so the next
 * edits land while their capture runs; each pre waits for its lane); after every pre, the
 * daemon's latest checkpoint tree must equal the tree a daemon-less full scan takes of the same state.
 */
async function differential(t, { edits, seed, watcherEnv = {} }) {
  const box = daemonBox();
  write(box, '.gitignore', '*.log\n');
  await startDaemon(t, box, watcherEnv);
  const reference = { ...box.env, GIT_CKPT_HOME: path.join(box.base, 'reference-store') };
  const rand = seeded(seed);
  const counter = { n: 0 };
  let done = 0;
  let call = 0;
  let compared = 0;
  while (done < edits) {
    call += 1;
    const before = 1 + Math.floor(rand() * 3);
    for (let i = 0; i < before && done < edits; i++, done++) randomEdit(box, rand, counter);
    const id = `call-${call}`;
    const post = await hook(box, 'post', {
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: id,
      tool_input: { command: 'edit' },
    });
    t.is(post.code, 0);
    // Edits while the post's capture runs.
    const during = Math.floor(rand() * 2);
    for (let i = 0; i < during && done < edits; i++, done++) randomEdit(box, rand, counter);
    const pre = await hook(box, 'pre', {
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_use_id: `${id}-next`,
      tool_input: { command: 'next' },
    });
    t.is(pre.code, 0);
    const full = spawnSync(process.execPath, [CLI, 'snapshot', '--json', '-m', 'reference'], {
      cwd: box.ws,
      env: reference,
      encoding: 'utf8',
    });
    t.is(full.status, 0, full.stderr);
    const referenceTree = JSON.parse(full.stdout).tree;
    const tree = latestTree(box);
    if (tree !== referenceTree) {
      t.fail(`after ${done} edits (call ${call}) the daemon's tree ${tree} differs from the full scan's ${referenceTree}`);
      return;
    }
    compared += 1;
  }
  const status = await ckptJson(box, ['daemon', 'status']);
  const watched = status.workspaces.find((w) => w.root === box.ws);
  t.truthy(watched);
  t.true(compared > edits / 4);
  return watched;
}

test.serial('differential: 300 seeded edits through the daemon take the trees a full scan takes', async (t) => {
  const watched = await differential(t, { edits: 300, seed: 20261201 });
  // Most captures were narrowed by the watcher; only the first (and the ignore-rule changes at the top) scanned everything.
  t.true(watched.captures > watched.fullScans * 2, JSON.stringify(watched));
});

test.serial('differential with a watcher that overflows: every lost batch falls back to a full scan, same trees', async (t) => {
  const watched = await differential(t, { edits: 60, seed: 7, watcherEnv: { GIT_CKPT_TEST_WATCHER: 'overflow:3' } });
  t.true(watched.fullScans > 3, JSON.stringify(watched));
  // status says why it last fell back: a lost batch (the sync's own, too), or a top-level ignore rule the edits changed.
  t.regex(
    watched.lastFullScanReason ?? '',
    /the watcher reported an error: events were dropped \(test overflow\)|the watcher did not report a change within 2000 ms|ignore/,
  );
});

test.serial('differential with a small watcher (gives up past 3 paths): same trees', async (t) => {
  const watched = await differential(t, { edits: 60, seed: 11, watcherEnv: { GIT_CKPT_TEST_WATCHER: 'max:3' } });
  t.true(watched.fullScans > 3, JSON.stringify(watched));
  t.regex(watched.lastFullScanReason ?? '', /more than 3 paths changed since the last capture|ignore/);
});

/** The names in the daemon's latest checkpoint. */
function latestNames(box) {
  return spawnSync('git', ['ls-tree', '-r', '--name-only', latestTree(box)], {
    env: { ...box.env, GIT_DIR: path.join(storeDir(box), 'git') },
    encoding: 'utf8',
  }).stdout.split('\n');
}

/** One Bash call's pre or post through the entry script. */
const call = (box, phase, id) =>
  hook(box, phase, {
    hook_event_name: phase === 'pre' ? 'PreToolUse' : 'PostToolUse',
    tool_name: 'Bash',
    tool_use_id: id,
    tool_input: { command: 'edit' },
  });

async function watchedWorkspace(box) {
  return (await ckptJson(box, ['daemon', 'status'])).workspaces.find((w) => w.root === box.ws);
}

// Serial (ava runs them alone, before the rest): they time the daemon's tick or burst 70 processes at once, and
// beside the file's other tests a loaded machine misses the 2 s sync cookie, which is a full scan of its own.
// The differentials, the SIGKILL run and the 32 parallel events are serial too: all at once on two cores they
// slowed the endpoint tests' answers past Node's 5 s client timeout.
test.serial(
  'verification finds a change the watcher missed without a word: status and hook.log say so, and the next capture scans everything',
  async (t) => {
    const box = daemonBox('\tdaemonVerify = 1s\n');
    await startDaemon(t, box, { GIT_CKPT_TEST_WATCHER: 'lose:lost.txt' });
    // The first snapshot, then one capture that scans everything (the daemon had not watched it): the account is known after.
    await call(box, 'pre', 'c1');
    await call(box, 'post', 'c1');
    await call(box, 'pre', 'c2');
    write(box, 'seen.txt', 'seen\n');
    write(box, 'lost.txt', 'lost\n');
    await call(box, 'post', 'c2');
    await call(box, 'pre', 'c3');
    const names = latestNames(box);
    t.true(names.includes('seen.txt'));
    t.false(names.includes('lost.txt'), 'the watcher said nothing of lost.txt: the narrowed capture did not see it');
    // After a second of activity the daemon's tick verifies the account against a full scan.
    let watched;
    for (const start = Date.now(); Date.now() - start < 20_000; await new Promise((resolve) => setTimeout(resolve, 250))) {
      watched = await watchedWorkspace(box);
      if (watched?.verification?.startsWith('missed')) break;
    }
    t.regex(watched?.verification ?? '', /^missed 1 change\(s\): lost\.txt; the next capture scans everything/, JSON.stringify(watched));
    t.regex(readFileSync(path.join(box.store, 'hook.log'), 'utf8'), /verification missed 1 change\(s\): lost\.txt/);
    await call(box, 'post', 'c3');
    await call(box, 'pre', 'c4');
    t.true(latestNames(box).includes('lost.txt'), 'the full scan took it');
    const after = await watchedWorkspace(box);
    t.is(after.fullScans, watched.fullScans + 1);
    t.regex(after.lastFullScanReason, /the verification found 1 change\(s\) the watcher missed/);
  },
);

test.serial(
  'a workspace folder replaced by another at the same path: the next capture scans everything, and the new folder is watched',
  async (t) => {
    const box = daemonBox();
    await startDaemon(t, box);
    await call(box, 'pre', 'r1');
    write(box, 'a.txt', 'a\n');
    await call(box, 'post', 'r1');
    await call(box, 'pre', 'r2');
    const before = await watchedWorkspace(box);
    // Swapped for a copy (a restore from a backup, a sync tool's rename): another folder at the same path, at once.
    const copy = path.join(box.base, 'copy');
    spawnSync('cp', ['-a', box.ws, copy]);
    writeFileSync(path.join(copy, 'b.txt'), 'b\n');
    renameSync(box.ws, path.join(box.base, 'moved'));
    renameSync(copy, box.ws);
    await call(box, 'post', 'r2');
    await call(box, 'pre', 'r3');
    const replaced = await watchedWorkspace(box);
    t.true(latestNames(box).includes('b.txt'));
    t.is(replaced.fullScans, before.fullScans + 1);
    t.regex(replaced.lastFullScanReason, /the workspace folder was replaced by another one at the same path/);
    // The new folder's own events come through: the next change is captured without another full scan.
    write(box, 'c.txt', 'c\n');
    await call(box, 'post', 'r3');
    await call(box, 'pre', 'r4');
    t.true(latestNames(box).includes('c.txt'));
    t.is((await watchedWorkspace(box)).fullScans, replaced.fullScans);
  },
);

test.serial(
  'a full lane: past 64 waiting events the daemon answers 503, the entry script falls back to the Node hook, every hook exits 0, and nothing is lost',
  async (t) => {
    const box = daemonBox();
    write(box, 'base.txt', 'base\n');
    await ckptJson(box, ['snapshot']);
    // The daemon's captures wait, files staged, until the test lets them go: its lane fills up.
    const until = path.join(box.base, 'go');
    await startDaemon(t, box, { GIT_CKPT_TEST_PAUSE: 'staged', GIT_CKPT_TEST_PAUSE_UNTIL: until });
    // The suite's run() waits for the daemon's lane after each process: these must not, the lane is held.
    const post = (id) =>
      new Promise((resolve) => {
        const child = spawn('sh', [HOOK_SCRIPT, 'claude', 'post'], { cwd: box.ws, env: { ...box.env, CLAUDE_PROJECT_DIR: box.ws } });
        child.on('close', (code) => resolve({ code }));
        child.stdin.end(
          JSON.stringify({
            session_id: 'sess-d',
            cwd: box.ws,
            hook_event_name: 'PostToolUse',
            tool_name: 'Bash',
            tool_use_id: id,
            tool_input: {},
          }),
        );
      });
    write(box, 'first.txt', 'first\n');
    const first = post('q0');
    t.true(await waitFor(() => existsSync(`${until}.waiting`), 10_000), 'the first capture holds the lane');
    const runs = [];
    for (let i = 1; i <= 70; i++) {
      write(box, `q${i}.txt`, `${i}\n`);
      runs.push(post(`q${i}`));
    }
    // Queued posts are answered at once; the ones past the bound wait for the workspace lock in their own Node
    // hook, within its budget, and give up (the lock is the paused capture's).
    const results = await Promise.all(runs);
    t.deepEqual(
      results.map((r) => r.code),
      Array(70).fill(0),
    );
    writeFileSync(until, '');
    t.is((await first).code, 0);
    const log = readFileSync(path.join(daemonFiles(box).dir, 'daemon.log'), 'utf8');
    t.regex(log, /refused a claude post event for .*: 64 events already waiting/);
    await call(box, 'pre', 'q-last');
    const names = latestNames(box);
    for (let i = 1; i <= 70; i++) t.true(names.includes(`q${i}.txt`), `q${i}.txt`);
    t.is((await ckpt(box, ['fsck'])).code, 0);
  },
);

test.serial('SIGKILL of the daemon during 50 hook events: nothing lost, fsck passes, the next hook restarts it', async (t) => {
  const box = daemonBox();
  const first = await startDaemon(t, box);
  const rand = seeded(50);
  const killedPids = new Set();
  for (let i = 0; i < 50; i++) {
    write(box, `f${i}.txt`, `event ${i}\n`);
    const phase = i % 2 ? 'post' : 'pre';
    const events = hook(box, phase, {
      hook_event_name: phase === 'pre' ? 'PreToolUse' : 'PostToolUse',
      tool_name: 'Write',
      tool_use_id: `k${i >> 1}`,
      tool_input: { file_path: `f${i}.txt` },
    });
    if (rand() < 0.12) {
      await new Promise((r) => setTimeout(r, rand() * 20));
      try {
        const { pid } = endpoint(box);
        killProcess(pid);
        killedPids.add(pid);
      } catch {
        /* between two daemons */
      }
    }
    t.is((await events).code, 0);
  }
  t.true(killedPids.size >= 2, `killed ${killedPids.size}`);
  // One more event (it restarts the daemon if the last kill came after every other), then a
  // synchronous one through the new daemon: its checkpoint holds every file every event wrote.
  await hook(box, 'post', { hook_event_name: 'PostToolUse', tool_name: 'Write', tool_use_id: 'k-last', tool_input: { file_path: 'z' } });
  // A hook after a kill started a new daemon.
  const restarted = await waitFor(() => {
    try {
      const { pid } = endpoint(box);
      process.kill(pid, 0);
      return !killedPids.has(pid) && pid !== first.pid;
    } catch {
      return false;
    }
  }, 10_000);
  const daemonLog = () => readFileSync(path.join(daemonFiles(box).dir, 'daemon.log'), 'utf8').slice(-1500);
  t.true(restarted, `killed ${[...killedPids].join(', ')}; the daemon's log ends:\n${daemonLog()}`);
  await hook(box, 'pre', { hook_event_name: 'PreToolUse', tool_name: 'Write', tool_use_id: 'last', tool_input: { file_path: 'z' } });
  const tree = latestTree(box);
  const listing = spawnSync('git', ['ls-tree', '-r', '--name-only', tree], {
    env: { ...box.env, GIT_DIR: path.join(storeDir(box), 'git') },
    encoding: 'utf8',
  }).stdout;
  for (let i = 0; i < 50; i++) t.true(listing.includes(`f${i}.txt\n`), `f${i}.txt`);
  const fsck = await ckpt(box, ['fsck']);
  t.is(fsck.code, 0, fsck.stdout + fsck.stderr);
  await ckpt(box, ['daemon', 'stop']);
});

test.serial('32 parallel hook events through the daemon while a gc and a restore run', async (t) => {
  const box = daemonBox();
  await startDaemon(t, box);
  write(box, 'base.txt', 'base\n');
  const base = await ckptJson(box, ['snapshot', '-m', 'base']);
  write(box, 'base.txt', 'changed\n');
  await ckpt(box, ['snapshot', '-m', 'changed']);
  const events = [];
  for (let i = 0; i < 32; i++) {
    write(box, `p${i}.txt`, `${i}\n`);
    events.push(
      hook(box, i % 2 ? 'post' : 'pre', {
        hook_event_name: i % 2 ? 'PostToolUse' : 'PreToolUse',
        tool_name: 'Write',
        tool_use_id: `p${i >> 1}`,
        tool_input: { file_path: `p${i}.txt` },
      }),
    );
  }
  const gc = ckpt(box, ['gc']);
  const restore = ckpt(box, ['restore', base.id, '--', 'base.txt']);
  const results = await Promise.all([...events, gc, restore]);
  for (const r of results) t.is(r.code, 0, r.stderr);
  t.is(readFileSync(path.join(box.ws, 'base.txt'), 'utf8'), 'base\n');
  await hook(box, 'pre', { hook_event_name: 'PreToolUse', tool_name: 'Write', tool_use_id: 'end', tool_input: { file_path: 'x' } });
  const listing = spawnSync('git', ['ls-tree', '-r', '--name-only', latestTree(box)], {
    env: { ...box.env, GIT_DIR: path.join(storeDir(box), 'git') },
    encoding: 'utf8',
  }).stdout;
  for (let i = 0; i < 32; i++) t.true(listing.includes(`p${i}.txt\n`));
  t.is((await ckpt(box, ['fsck'])).code, 0);
});

test('a workspace deleted while watched is dropped; the daemon goes on, exits when idle, on an upgrade, and with ckpt.daemon=false', async (t) => {
  const box = daemonBox();
  const binary = path.join(box.base, 'binary');
  writeFileSync(binary, 'v1');
  await startDaemon(t, box, { GIT_CKPT_TEST_DAEMON_BINARY: binary });
  write(box, 'a.txt', 'a\n');
  await hook(box, 'pre', { hook_event_name: 'PreToolUse', tool_name: 'Write', tool_use_id: 'd1', tool_input: { file_path: 'a.txt' } });
  await hook(box, 'pre', { hook_event_name: 'PreToolUse', tool_name: 'Write', tool_use_id: 'd2', tool_input: { file_path: 'a.txt' } });
  t.true(
    await waitFor(
      () =>
        spawnSync(process.execPath, [CLI, 'daemon', 'status', '--json'], { cwd: box.base, env: box.env, encoding: 'utf8' }).stdout.includes(
          box.ws,
        ),
      5000,
    ),
  );
  rmSync(box.ws, { recursive: true, force: true });
  const dropped = await waitFor(() => {
    const r = spawnSync(process.execPath, [CLI, 'daemon', 'status', '--json'], { cwd: box.base, env: box.env, encoding: 'utf8' });
    return r.status === 0 && JSON.parse(r.stdout).workspaces?.length === 0;
  }, 5000);
  t.true(dropped);
  t.regex(readFileSync(path.join(daemonFiles(box).dir, 'daemon.log'), 'utf8'), /the workspace is gone/);
  // An upgrade: the binary's file changes, and the daemon exits by itself.
  const { pid } = endpoint(box);
  writeFileSync(binary, 'v2');
  t.true(await waitFor(() => !alive(pid), 5000));
  t.regex(readFileSync(path.join(daemonFiles(box).dir, 'daemon.log'), 'utf8'), /exiting: upgraded/);

  // Idle: a short ckpt.daemonIdle.
  mkdirSync(box.ws);
  writeFileSync(path.join(box.home, '.gitconfig'), '[user]\n\tname = T\n\temail = t@e.com\n[ckpt]\n\tdaemonIdle = 500ms\n');
  // Its pid from start's own answer: it may be gone, idle, before the endpoint file is read.
  const idlePid = JSON.parse((await ckpt(box, ['daemon', 'start', '--json'], { cwd: box.base })).stdout).pid;
  t.true(await waitFor(() => !alive(idlePid), 5000));
  t.regex(readFileSync(path.join(daemonFiles(box).dir, 'daemon.log'), 'utf8'), /exiting: idle/);

  // ckpt.daemon=false: a running daemon exits; a hook does not start one.
  writeFileSync(path.join(box.home, '.gitconfig'), '[user]\n\tname = T\n\temail = t@e.com\n[ckpt]\n\tdaemonIdle = 60s\n');
  await ckpt(box, ['daemon', 'start'], { cwd: box.base });
  const offPid = endpoint(box).pid;
  writeFileSync(path.join(box.home, '.gitconfig'), '[user]\n\tname = T\n\temail = t@e.com\n[ckpt]\n\tdaemon = false\n');
  t.true(await waitFor(() => !alive(offPid), 5000));
  sh(box, ['init', '-q']);
  write(box, 'b.txt', 'b\n');
  await ckpt(box, ['hook', 'claude', 'pre'], {
    noDaemon: true,
    input: JSON.stringify({ session_id: 's', hook_event_name: 'PreToolUse', cwd: box.ws }),
  });
  await ckpt(box, ['hook', 'claude', 'pre'], {
    noDaemon: true,
    input: JSON.stringify({ session_id: 's', hook_event_name: 'PreToolUse', cwd: box.ws }),
  });
  await new Promise((r) => setTimeout(r, 300));
  t.deepEqual(await ckptJson(box, ['daemon', 'status']), { running: false });
});

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('with the daemon on, a hook run by the agent starts it when none runs, the first one in a new workspace too', async (t) => {
  const box = daemonBox();
  write(box, 'a.txt', 'a\n');
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  // No store yet: the session start begins the first snapshot, and the user's own config says whether a daemon runs.
  const input = JSON.stringify({ session_id: 's', hook_event_name: 'SessionStart', cwd: box.ws });
  await ckpt(box, ['hook', 'claude', 'session-start'], { noDaemon: true, input });
  t.true(await waitFor(() => existsSync(daemonFiles(box).socket), 5000));
  const first = await ckptJson(box, ['daemon', 'status']);
  t.true(first.pid > 0);
  await ckpt(box, ['daemon', 'stop']);
  t.false(existsSync(daemonFiles(box).socket));
  await ckpt(box, ['hook', 'claude', 'turn-start'], {
    noDaemon: true,
    input: JSON.stringify({ session_id: 's', hook_event_name: 'UserPromptSubmit', prompt: 'hi', cwd: box.ws }),
  });
  t.true(await waitFor(() => existsSync(daemonFiles(box).socket), 5000));
  const second = await ckptJson(box, ['daemon', 'status']);
  t.true(second.pid > 0 && second.pid !== first.pid);
});

test.serial(
  'hooks install --transport auto: HTTP hooks only for a Claude Code that has them (2.1.63 on) and a daemon that is on',
  async (t) => {
    /** A `claude` on PATH that says it is `version`. */
    const fakeClaude = (box, version) => {
      const bin = path.join(box.base, `bin-${version}`);
      mkdirSync(bin, { recursive: true });
      writeFileSync(path.join(bin, 'claude'), `#!/bin/sh\necho '${version} (Claude Code)'\n`, { mode: 0o755 });
      return { PATH: `${bin}${path.delimiter}${box.env.PATH}` };
    };
    const transportOf = async (box, env) => {
      const r = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--json'], { env });
      t.is(r.code, 0, r.stderr);
      const settings = JSON.parse(readFileSync(path.join(box.ws, '.claude', 'settings.json'), 'utf8'));
      await ckpt(box, ['hooks', 'uninstall', '--agent', 'claude'], { env });
      return settings.hooks.PreToolUse[0].hooks[0].type;
    };
    const box = daemonBox();
    t.teardown(() => ckpt(box, ['daemon', 'stop']));
    t.is(await transportOf(box, fakeClaude(box, '2.1.62')), 'command');
    t.is(await transportOf(box, fakeClaude(box, '2.1.63')), 'http');
    t.is(
      await transportOf(box, { PATH: path.dirname(process.execPath) + path.delimiter + '/usr/bin:/bin' }),
      'command',
      'no claude on PATH',
    );
    const off = daemonBox('\tdaemon = false\n');
    t.is(await transportOf(off, fakeClaude(off, '2.1.300')), 'command', 'ckpt.daemon=false');
  },
);

test('hooks install --transport http: Claude’s tool events as HTTP hooks to the daemon, the token in its env; an event posted as Claude posts it is recorded; uninstall gives it all back', async (t) => {
  const box = daemonBox();
  const settingsFile = path.join(box.ws, '.claude', 'settings.json');
  mkdirSync(path.dirname(settingsFile), { recursive: true });
  writeFileSync(settingsFile, JSON.stringify({ env: { KEEP: '1' }, model: 'x' }, null, 2));
  const install = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http', '--json']);
  t.is(install.code, 0, install.stderr);
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
  const { port } = endpoint(box);
  const token = readFileSync(daemonFiles(box).token, 'utf8').trim();
  t.deepEqual(settings.env, { KEEP: '1', GIT_CKPT_TOKEN: token });
  const pre = settings.hooks.PreToolUse[0].hooks[0];
  t.deepEqual(pre, {
    type: 'http',
    url: `http://127.0.0.1:${port}/hook/claude/pre`,
    headers: { 'X-Ckpt-Token': '$GIT_CKPT_TOKEN' },
    allowedEnvVars: ['GIT_CKPT_TOKEN'],
    timeout: 30,
  });
  t.is(settings.hooks.PostToolUseFailure[0].hooks[0].type, 'http');
  // A prompt and a session start stay commands: they start the daemon when it is down.
  t.is(settings.hooks.UserPromptSubmit[0].hooks[0].type, 'command');
  t.is(settings.hooks.SessionStart[0].hooks[0].type, 'command');
  const again = await ckptJson(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http']);
  t.false(again[0].changed, 'idempotent');
  const status = await ckptJson(box, ['hooks', 'status', '--agent', 'claude', '--scope', 'project']);
  t.is(status[0].transports.PreToolUse, 'http');
  t.is(status[0].transports.Stop, 'command');

  // As Claude Code sends it: the payload as the body, the header filled from its env.
  write(box, 'via-http.txt', 'posted\n');
  const body = JSON.stringify({
    session_id: 'http-s',
    hook_event_name: 'PreToolUse',
    tool_name: 'Write',
    tool_use_id: 'h1',
    tool_input: { file_path: 'via-http.txt' },
    cwd: box.ws,
  });
  const r = await httpRequest(box, {
    urlPath: '/hook/claude/pre',
    headers: { host: `127.0.0.1:${port}`, 'x-ckpt-token': token, 'content-type': 'application/json' },
    body,
  });
  t.is(r.status, 200);
  t.is(r.body, '');
  const records = ledgerLines(box);
  t.true(records.some((rec) => rec.session === 'http-s' && rec.kind === 'pre' && rec.paths.some((p) => p.path === 'via-http.txt')));

  // The port and the token survive a restart: the config stays right.
  await ckpt(box, ['daemon', 'stop']);
  await ckpt(box, ['daemon', 'start']);
  t.is(endpoint(box).port, port);
  t.is(readFileSync(daemonFiles(box).token, 'utf8').trim(), token);

  const removed = await ckpt(box, ['hooks', 'uninstall', '--agent', 'claude']);
  t.is(removed.code, 0, removed.stderr);
  t.deepEqual(JSON.parse(readFileSync(settingsFile, 'utf8')), { env: { KEEP: '1' }, model: 'x' });
});

test('git ckpt watch: a checkpoint of kind watch after each quiet period, shown in daemon status and log; --stop ends it', async (t) => {
  const box = daemonBox();
  await ckpt(box, ['snapshot', '-m', 'before the watch']);
  const started = await ckptJson(box, ['watch', '--quiet-ms', '300']);
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  t.true(started.watching);
  t.is(started.watch.quietMs, 300);
  const watchRecords = () => {
    try {
      return ledgerLines(box).filter((r) => r.kind === 'watch');
    } catch {
      return []; // no ledger yet
    }
  };
  // Its first capture scans in full (the watcher just started): a burst of edits, then quiet.
  write(box, 'a.txt', 'one\n');
  write(box, 'src/b.txt', 'two\n');
  t.true(await waitFor(() => watchRecords().length === 1, 5000), 'one checkpoint after the quiet period');
  t.deepEqual(
    watchRecords()[0]
      .paths.map((p) => p.path)
      .sort(),
    ['a.txt', 'src/b.txt'],
  );
  // Edits closer together than the quiet period are taken together (the machine may be slow: at most two).
  const quietWatch = await ckptJson(box, ['watch', '--quiet-ms', '1500']);
  t.is(quietWatch.watch.quietMs, 1500);
  for (let i = 0; i < 4; i++) {
    write(box, 'a.txt', `edit ${i}\n`);
    await new Promise((r) => setTimeout(r, 50));
  }
  t.true(await waitFor(() => watchRecords().length >= 2, 8000));
  await new Promise((r) => setTimeout(r, 2000));
  const taken = watchRecords().length;
  t.true(taken === 2 || taken === 3, `${taken} watch checkpoints`);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'edit 3\n');
  t.true(
    ledgerLines(box)
      .at(-1)
      .paths.some((p) => p.path === 'a.txt'),
  );
  const log = await ckptJson(box, ['log']);
  t.is(log[0].kind, 'watch');
  const status = await ckptJson(box, ['daemon', 'status']);
  t.is(status.workspaces.find((w) => w.root === box.ws).watch.checkpoints, taken);
  const stopped = await ckptJson(box, ['watch', '--stop']);
  t.false(stopped.watching);
  write(box, 'a.txt', 'after stop\n');
  await new Promise((r) => setTimeout(r, 800));
  t.is(watchRecords().length, taken, 'no checkpoint after --stop');
  const bad = await ckpt(box, ['watch', '--quiet-ms', 'soon']);
  t.is(bad.code, 2);
});
