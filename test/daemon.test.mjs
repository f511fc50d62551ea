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
import { CLI, HOOK_SCRIPT, ckpt, ckptJson, ledgerLines, run, sandbox, sh, storeDir, testIf, waitFor, write } from './helpers.mjs';

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

test('two daemons started at once: one wins, the other exits cleanly', async (t) => {
  const box = daemonBox();
  // Each resolves with its exit code, or 'running' if it still runs after 3 s.
  const spawnRun = () =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, 'daemon', 'run'], { cwd: box.ws, env: box.env, stdio: 'ignore' });
      child.on('exit', (code) => resolve({ pid: child.pid, code }));
      setTimeout(() => resolve({ pid: child.pid, code: 'running', child }), 3000);
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

test('differential: 300 seeded edits through the daemon take the trees a full scan takes', async (t) => {
  const watched = await differential(t, { edits: 300, seed: 20261201 });
  // Most captures were narrowed by the watcher; only the first (and the ignore-rule changes at the top) scanned everything.
  t.true(watched.captures > watched.fullScans * 2, JSON.stringify(watched));
});

test('differential with a watcher that overflows: every lost batch falls back to a full scan, same trees', async (t) => {
  const watched = await differential(t, { edits: 60, seed: 7, watcherEnv: { GIT_CKPT_TEST_WATCHER: 'overflow:3' } });
  t.true(watched.fullScans > 3, JSON.stringify(watched));
});

test('differential with a small watcher (gives up past 3 paths): same trees', async (t) => {
  const watched = await differential(t, { edits: 60, seed: 11, watcherEnv: { GIT_CKPT_TEST_WATCHER: 'max:3' } });
  t.true(watched.fullScans > 3, JSON.stringify(watched));
});

test('SIGKILL of the daemon during 50 hook events: nothing lost, fsck passes, the next hook restarts it', async (t) => {
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
        process.kill(pid, 'SIGKILL');
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

test('32 parallel hook events through the daemon while a gc and a restore run', async (t) => {
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

test('with the daemon on, a hook run by the agent starts it when none runs', async (t) => {
  const box = daemonBox();
  write(box, 'a.txt', 'a\n');
  const input = JSON.stringify({ session_id: 's', hook_event_name: 'SessionStart', cwd: box.ws });
  await ckpt(box, ['hook', 'claude', 'session-start'], { noDaemon: true, input });
  await ckpt(box, ['hook', 'claude', 'turn-start'], {
    noDaemon: true,
    input: JSON.stringify({ session_id: 's', hook_event_name: 'UserPromptSubmit', prompt: 'hi', cwd: box.ws }),
  });
  t.true(await waitFor(() => existsSync(daemonFiles(box).socket), 5000));
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  const status = await ckptJson(box, ['daemon', 'status']);
  t.true(status.pid > 0);
});

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
