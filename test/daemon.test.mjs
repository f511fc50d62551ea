// The resident daemon: its lifecycle, its endpoint's refusals, and the proof that a capture
// narrowed by its watcher takes exactly what a full scan takes (the differential test).
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import os from 'node:os';
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
  storedBytes,
  lsTree,
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
  // `status` says of the daemon what `daemon status` says of this workspace, in the same words.
  const watchLine = text.stdout.split('\n')[text.stdout.split('\n').indexOf(box.ws) + 1].trim();
  t.regex(watchLine, /^watching: \d+ path\(s\) seen changing since its last capture$/);
  t.true((await ckpt(box, ['status'])).stdout.includes(`daemon:      ${watchLine}\n`));

  const stopped = await ckptJson(box, ['daemon', 'stop']);
  t.true(stopped.stopped);
  t.false(existsSync(daemonFiles(box).socket));
  t.deepEqual(await ckptJson(box, ['daemon', 'status']), { running: false });
  t.regex((await ckpt(box, ['status'])).stdout, /^daemon: {6}not running: hooks record each event themselves/m);
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
  writeFileSync(plugin, pluginText(template('plugin-transport.js'), template('bus-plugin.js'), 'opencode', entry));
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

/** The paths whose mode or content differ between the daemon's tree and a reference store's (each read from its own store). */
function treeDifference(box, got, expected, referenceRoot) {
  const entries = (gitDir, tree) =>
    new Map(
      spawnSync('git', ['ls-tree', '-r', '--full-tree', tree], { env: { ...box.env, GIT_DIR: gitDir }, encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .map((line) => [line.slice(line.indexOf('\t') + 1), line.slice(0, line.indexOf('\t'))]),
    );
  const mine = entries(path.join(storeDir(box), 'git'), got);
  const theirs = entries(path.join(referenceRoot, path.basename(storeDir(box)), 'git'), expected);
  return [...new Set([...mine.keys(), ...theirs.keys()])]
    .filter((p) => mine.get(p) !== theirs.get(p))
    .map((p) => `${p} (daemon: ${mine.get(p)?.split(' ')[0] ?? 'absent'}, full scan: ${theirs.get(p)?.split(' ')[0] ?? 'absent'})`);
}

/** A seeded pseudo-random generator (mulberry32): the same script of edits on every run. */
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One random edit of the workspace: create, modify, delete, rename, chmod, symlink, file↔folder, ignored, secret,
 * and the folder trees a watcher must follow: a tree renamed, a tree moved in from outside, a `mkdir -p`.
 */
function randomEdit(box, rand, counter) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const names = [
    'a',
    'b',
    'c',
    'd',
    'src/e',
    'src/f',
    'src/deep/g',
    'lib/h',
    'build/out',
    'notes.log',
    '.env',
    'sub/i',
    'moved/deep/j',
    'pkg/lib/sub/k',
  ];
  const trees = ['src', 'lib', 'sub', 'moved', 'pkg', 'src/deep', 'pkg/lib'];
  const name = pick(names);
  const file = path.join(box.ws, name);
  const kind = pick([
    'create',
    'modify',
    'modify',
    'delete',
    'rename',
    'chmod',
    'symlink',
    'file-to-dir',
    'dir-to-file',
    'ignore-rule',
    'rename-tree',
    'move-in',
    'mkdir-p',
  ]);
  const content = `v${counter.n++} ${rand()}\n`;
  counter.log = [...(counter.log ?? []).slice(-11), `${kind} ${name}`];
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
        counter.log[counter.log.length - 1] += ` -> ${path.relative(box.ws, to)}`;
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
      case 'rename-tree': {
        const from = path.join(box.ws, pick(trees));
        const to = path.join(box.ws, pick(trees));
        if (from === to || to.startsWith(`${from}/`) || !existsSync(from) || lstatIsFile(from)) break;
        clear(to);
        mkdirSync(path.dirname(to), { recursive: true });
        renameSync(from, to);
        counter.log[counter.log.length - 1] += ` ${path.relative(box.ws, from)} -> ${path.relative(box.ws, to)}`;
        break;
      }
      case 'move-in': {
        const outside = path.join(box.base, `outside-${counter.n}`);
        for (const rel of ['deep/j', 'lib/sub/k', 'lib/sub/deeper/l']) {
          mkdirSync(path.dirname(path.join(outside, rel)), { recursive: true });
          writeFileSync(path.join(outside, rel), content);
        }
        const to = path.join(box.ws, pick(['moved', 'pkg', 'src/deep']));
        clear(to);
        mkdirSync(path.dirname(to), { recursive: true });
        renameSync(outside, to);
        counter.log[counter.log.length - 1] += ` -> ${path.relative(box.ws, to)}`;
        break;
      }
      case 'mkdir-p': {
        const dir = path.join(box.ws, pick(['moved/deep', 'pkg/lib/sub', 'src/deep/x/y']));
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'made.txt'), content);
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
      const differ = treeDifference(box, tree, referenceTree, path.join(box.base, 'reference-store'));
      t.fail(
        `after ${done} edits (call ${call}) the daemon's tree ${tree} differs from the full scan's ${referenceTree} at ${differ.join(', ')}; the last edits: ${counter.log.join('; ')}`,
      );
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

test.serial(
  'differential, another seed: folder trees renamed, moved in and removed until the watcher must start over; same trees',
  async (t) => {
    // Seed 4 renames and removes trees until parcel holds a stale subscription of a folder made again at its path.
    const watched = await differential(t, { edits: 300, seed: 4 });
    t.true(watched.captures > watched.fullScans * 2, JSON.stringify(watched));
  },
);

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
    // At least one: a loaded machine may also stall the watcher (D3), which is a full scan of its own.
    t.true(replaced.fullScans > before.fullScans, JSON.stringify({ before, replaced }));
    t.regex(replaced.lastFullScanReason, /the workspace folder was replaced by another one at the same path/);
    // The new folder's own events come through: the next change is captured without another full scan.
    write(box, 'c.txt', 'c\n');
    await call(box, 'post', 'r3');
    await call(box, 'pre', 'r4');
    t.true(latestNames(box).includes('c.txt'));
    t.is((await watchedWorkspace(box)).fullScans, replaced.fullScans);
  },
);

/**
 * A Claude post through the entry script, resolved with its exit code when the hook returns: unlike the suite's
 * run(), it does not then wait for the daemon's lane, which these tests hold.
 */
function heldLanePost(box, id, toolInput) {
  return new Promise((resolve) => {
    const child = spawn('sh', [HOOK_SCRIPT, 'claude', 'post'], { cwd: box.ws, env: { ...box.env, CLAUDE_PROJECT_DIR: box.ws } });
    child.on('close', (code) => resolve({ code }));
    child.stdin.end(
      JSON.stringify({
        session_id: 'sess-d',
        cwd: box.ws,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_use_id: id,
        tool_input: toolInput,
      }),
    );
  });
}

test.serial(
  'a full lane: past 64 waiting events the daemon answers 503, the entry script falls back to the Node hook, every hook exits 0, and nothing is lost',
  async (t) => {
    const box = daemonBox();
    write(box, 'base.txt', 'base\n');
    await ckptJson(box, ['snapshot']);
    // The daemon's captures wait, files staged, until the test lets them go: its lane fills up.
    const until = path.join(box.base, 'go');
    await startDaemon(t, box, { GIT_CKPT_TEST_PAUSE: 'staged', GIT_CKPT_TEST_PAUSE_UNTIL: until });
    write(box, 'first.txt', 'first\n');
    // The suite's run() waits for the daemon's lane after each process: these must not, the lane is held.
    const first = heldLanePost(box, 'q0', {});
    t.true(await waitFor(() => existsSync(`${until}.waiting`), 10_000), 'the first capture holds the lane');
    const runs = [];
    for (let i = 1; i <= 70; i++) {
      write(box, `q${i}.txt`, `${i}\n`);
      runs.push(heldLanePost(box, `q${i}`, {}));
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

test('a hook run with `git -c` settings in its environment honours them: ckpt.daemon=false starts no daemon, and a running daemon does not record the event without them', async (t) => {
  const box = daemonBox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  const pre = (env) =>
    run(box, 'sh', [HOOK_SCRIPT, 'claude', 'pre'], {
      env,
      input: JSON.stringify({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'Bash', cwd: box.ws }),
    });
  // No daemon runs, and `git -c ckpt.daemon=false` (GIT_CONFIG_PARAMETERS) says none should: the hook starts none.
  await pre({ GIT_CONFIG_PARAMETERS: "'ckpt.daemon'='false'" });
  await pre({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'ckpt.daemon', GIT_CONFIG_VALUE_0: 'false' });
  await new Promise((r) => setTimeout(r, 500));
  t.deepEqual(await ckptJson(box, ['daemon', 'status']), { running: false });
  // Without it the same hook starts one (so the check above can fail).
  await pre({});
  t.true(await waitFor(() => existsSync(daemonFiles(box).socket), 5000));
  // A daemon runs, but was not given this event's `git -c ckpt.maxFileBytes=4`: the hook records the event itself.
  write(box, 'big.txt', 'more than four bytes\n');
  const post = await run(box, 'sh', [HOOK_SCRIPT, 'claude', 'post'], {
    env: { GIT_CONFIG_PARAMETERS: "'ckpt.maxfilebytes'='4'" },
    input: JSON.stringify({ session_id: 's', hook_event_name: 'PostToolUse', tool_name: 'Bash', cwd: box.ws }),
  });
  t.is(post.code, 0);
  const [latest] = await ckptJson(box, ['log', '-n', '1']);
  t.false(lsTree(box, latest.id).has('big.txt'), 'the event was recorded with the setting it was given');
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
      const settings = JSON.parse(readFileSync(path.join(box.ws, '.claude', 'settings.local.json'), 'utf8'));
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

test('hooks install --transport http: Claude’s tool events as HTTP hooks to the daemon, the token in the user’s settings; an event posted as Claude posts it is recorded; uninstall gives it all back', async (t) => {
  const box = daemonBox();
  // The project's own settings of the user's (Claude's settings.local.json); the token goes into their user settings.
  const settingsFile = path.join(box.ws, '.claude', 'settings.local.json');
  const userSettings = path.join(box.home, '.claude', 'settings.json');
  mkdirSync(path.dirname(settingsFile), { recursive: true });
  writeFileSync(settingsFile, JSON.stringify({ env: { KEEP: '1' }, model: 'x' }, null, 2));
  const install = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--transport', 'http', '--json']);
  t.is(install.code, 0, install.stderr);
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
  const { port } = endpoint(box);
  const token = readFileSync(daemonFiles(box).token, 'utf8').trim();
  t.deepEqual(settings.env, { KEEP: '1' });
  t.deepEqual(JSON.parse(readFileSync(userSettings, 'utf8')).env, { GIT_CKPT_TOKEN: token });
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
  t.false(existsSync(userSettings), 'the token went with the last HTTP hook that read it');
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

/** The tree a daemon-less full scan takes of the workspace as it is now (a second store root, no watcher). */
function fullScanTree(t, box) {
  const full = spawnSync(process.execPath, [CLI, 'snapshot', '--json', '-m', 'reference'], {
    cwd: box.ws,
    env: { ...box.env, GIT_CKPT_HOME: path.join(box.base, 'reference-store') },
    encoding: 'utf8',
  });
  t.is(full.status, 0, full.stderr);
  return JSON.parse(full.stdout).tree;
}

/**
 * Each step is one tool call: a pre, the step's edits, a post. After every pre the daemon's latest checkpoint
 * must hold what a full scan takes (the differential test's check, on scripted steps). Returns the watched workspace.
 */
async function stepsMatchFullScan(t, box, steps) {
  const compare = (label) => {
    const expected = fullScanTree(t, box);
    const got = latestTree(box);
    if (got === expected) return true;
    const differ = treeDifference(box, got, expected, path.join(box.base, 'reference-store'));
    t.fail(`${label}: the daemon's checkpoint differs from a full scan at ${differ.length} path(s): ${differ.slice(0, 8).join(', ')}`);
    return false;
  };
  let n = 0;
  for (const [label, step] of steps) {
    n += 1;
    t.is((await call(box, 'pre', `step-${n}`)).code, 0);
    if (!compare(`before ${label}`)) return undefined;
    await step();
    t.is((await call(box, 'post', `step-${n}`)).code, 0);
  }
  t.is((await call(box, 'pre', 'end')).code, 0);
  if (!compare('after the last step')) return undefined;
  return watchedWorkspace(box);
}

/** A daemon box with a captured base and a known account: the first captures scan in full, the later ones are narrowed. */
async function watchedBox(t, files = {}, env = {}, phases = ['pre', 'post']) {
  const box = daemonBox();
  for (const [rel, text] of Object.entries(files)) write(box, rel, text);
  await startDaemon(t, box, env);
  for (const id of ['warm-1', 'warm-2']) for (const phase of phases) await call(box, phase, id);
  return box;
}

const deepTree = {
  'src/components/forms/Login.tsx': 'v1 login\n',
  'src/components/forms/inner/deep/field.ts': 'v1 field\n',
  'src/components/nav/Bar.tsx': 'v1 bar\n',
};

test.serial(
  'D1: a folder tree renamed inside the workspace is watched below its top: later edits deep in it are in the next checkpoint',
  async (t) => {
    const box = await watchedBox(t, deepTree);
    const watched = await stepsMatchFullScan(t, box, [
      ['the rename', () => renameSync(path.join(box.ws, 'src/components'), path.join(box.ws, 'src/ui'))],
      [
        'edits below the renamed folder',
        () => {
          write(box, 'src/ui/forms/Login.tsx', 'v2, my fix\n');
          write(box, 'src/ui/forms/inner/deep/field.ts', 'v2 field\n');
          write(box, 'src/ui/forms/inner/deep/new.ts', 'new\n');
        },
      ],
      ['a deletion there', () => rmSync(path.join(box.ws, 'src/ui/nav/Bar.tsx'))],
      // parcel keeps the renamed folders' old paths; a folder made again at one of them, then the renamed tree
      // removed: parcel drops every subscription with the path it reports going, the new folder's included.
      ['a folder made again at the old path', () => write(box, 'src/components/forms/inner/again.ts', 'again\n')],
      ['the renamed tree removed', () => rmSync(path.join(box.ws, 'src/ui'), { recursive: true })],
      ['an edit in the folder made again', () => write(box, 'src/components/forms/inner/again.ts', 'edited again\n')],
    ]);
    t.truthy(watched);
  },
);

test.serial('D1: a tree moved in from outside, a cp -a and a tar x are watched below their tops', async (t) => {
  const box = await watchedBox(t, deepTree);
  const outside = path.join(box.base, 'outside');
  for (const rel of ['pkg/lib/sub/a.txt', 'pkg/lib/other/b.txt', 'pkg/c.txt']) {
    mkdirSync(path.dirname(path.join(outside, rel)), { recursive: true });
    writeFileSync(path.join(outside, rel), `${rel}\n`);
  }
  const tarball = path.join(box.base, 'tree.tar');
  t.is(spawnSync('tar', ['cf', tarball, '-C', outside, 'pkg']).status, 0);
  const watched = await stepsMatchFullScan(t, box, [
    ['the move in', () => renameSync(path.join(outside, 'pkg'), path.join(box.ws, 'pkg'))],
    ['edits below the moved-in folder', () => write(box, 'pkg/lib/sub/a.txt', 'edited\n') && write(box, 'pkg/lib/other/new.txt', 'new\n')],
    ['cp -a', () => t.is(spawnSync('cp', ['-a', path.join(box.ws, 'src/components'), path.join(box.ws, 'copy')]).status, 0)],
    ['edits below the copy', () => write(box, 'copy/forms/inner/deep/field.ts', 'copy edit\n') && write(box, 'copy/nav/x.ts', 'x\n')],
    ['tar x', () => t.is(spawnSync('tar', ['xf', tarball, '-C', path.join(box.ws, 'src')]).status, 0)],
    [
      'edits below the unpacked tree',
      () => write(box, 'src/pkg/lib/sub/a.txt', 'untarred edit\n') && write(box, 'src/pkg/lib/other/z.txt', 'z\n'),
    ],
  ]);
  t.truthy(watched);
});

test.serial(
  'D1: a git checkout of a branch with 40 new folders, and a burst of mkdir -p: later edits in them are in the next checkpoint',
  async (t) => {
    const box = await watchedBox(t, { 'base.txt': 'base\n' });
    sh(box, ['add', '-A']);
    sh(box, ['commit', '-qm', 'base']);
    sh(box, ['checkout', '-qb', 'feature']);
    for (let i = 0; i < 40; i++) write(box, `p${i}/src/lib/f.txt`, `feature ${i}\n`);
    sh(box, ['add', '-A']);
    sh(box, ['commit', '-qm', 'feature folders']);
    sh(box, ['checkout', '-q', 'main']);
    const watched = await stepsMatchFullScan(t, box, [
      ['git checkout feature', () => sh(box, ['checkout', '-q', 'feature'])],
      ['edits in the new folders', () => Array.from({ length: 40 }, (_, i) => write(box, `p${i}/src/lib/f.txt`, `edited ${i}\n`))],
      ['mkdir -p ×30', () => Array.from({ length: 30 }, (_, i) => mkdirSync(path.join(box.ws, `d${i}/a/b/c`), { recursive: true }))],
      ['a file in each', () => Array.from({ length: 30 }, (_, i) => write(box, `d${i}/a/b/c/f.txt`, `${i}\n`))],
      [
        'mkdir -p ×400 (past the cap of folders watched one by one)',
        () => Array.from({ length: 400 }, (_, i) => mkdirSync(path.join(box.ws, `m${i}/a/b`), { recursive: true })),
      ],
      ['a file in each of those', () => Array.from({ length: 400 }, (_, i) => write(box, `m${i}/a/b/f.txt`, `${i}\n`))],
      ['one more edit deep in one', () => write(box, 'm399/a/b/f.txt', 'again\n')],
    ]);
    t.truthy(watched);
  },
);

/** Whether an unprivileged user namespace may set its own inotify watch limit here (the real kernel limit, for this test only). */
const canLimitWatches =
  process.platform === 'linux' &&
  spawnSync('unshare', ['-U', '-r', 'sh', '-c', 'echo 64 > /proc/sys/user/max_inotify_watches'], { stdio: 'ignore' }).status === 0;

/** Start the daemon inside a user namespace whose inotify watch limit is `limit`; resolves with its pid. */
async function startDaemonWithWatchLimit(t, box, limit) {
  const child = spawn(
    'unshare',
    [
      '-U',
      '-r',
      'sh',
      '-c',
      `echo ${limit} > /proc/sys/user/max_inotify_watches && exec "$0" "$@"`,
      process.execPath,
      CLI,
      'daemon',
      'run',
    ],
    { cwd: box.ws, env: box.env, detached: true, stdio: 'ignore' },
  );
  child.unref();
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  t.true(await waitFor(() => existsSync(daemonFiles(box).endpoint) && endpoint(box).pid === child.pid, 10_000), 'the daemon listens');
  return child.pid;
}

/** Set the watch limit of the daemon's user namespace (as its owner). */
function setWatchLimit(pid, limit) {
  return spawnSync('nsenter', ['-U', '-t', String(pid), 'sh', '-c', `echo ${limit} > /proc/sys/user/max_inotify_watches`], {
    encoding: 'utf8',
  });
}

testIf(
  test.serial,
  canLimitWatches,
  'no user namespace may set its inotify watch limit here (unshare -U -r)',
)(
  'D2: past the inotify watch limit the workspace is unknown while it is not fully watched, daemon status and status say why and how to fix it; raised, it is watched again',
  async (t) => {
    const box = daemonBox();
    for (const dir of ['a', 'b', 'c']) write(box, `${dir}/f.txt`, `${dir}\n`);
    const pid = await startDaemonWithWatchLimit(t, box, 40);
    for (const id of ['warm-1', 'warm-2']) for (const phase of ['pre', 'post']) await call(box, phase, id);
    const watched = await stepsMatchFullScan(t, box, [
      ['60 new folders with a file each', () => Array.from({ length: 60 }, (_, i) => write(box, `n${i}/f.txt`, `${i}\n`))],
      ['each of those files edited', () => Array.from({ length: 60 }, (_, i) => write(box, `n${i}/f.txt`, `edited ${i}\n`))],
    ]);
    t.truthy(watched);
    t.regex(watched?.unknown ?? '', /inotify watch limit/, JSON.stringify(watched));
    t.regex(watched?.unwatched ?? '', /inotify watch limit/);
    t.regex(watched?.fix ?? '', /sudo sysctl fs\.inotify\.max_user_watches=524288/);
    const text = (await ckpt(box, ['daemon', 'status'])).stdout;
    t.regex(text, /not fully watched: .*inotify watch limit/);
    t.regex(text, /fix: .*max_user_watches/);
    const status = await ckpt(box, ['status']);
    t.regex(status.stdout, /daemon: +not fully watched: .*inotify watch limit.*\n.*fix: .*max_user_watches/);
    const json = await ckptJson(box, ['status']);
    t.regex(json.watcher?.unwatched ?? '', /inotify watch limit/);
    // Still unknown at the next capture: sticky while the limit stands.
    await call(box, 'post', 'still');
    await call(box, 'pre', 'still');
    t.regex((await watchedWorkspace(box)).lastFullScanReason ?? '', /inotify watch limit/);

    // Raised: the next sync watches the whole workspace again, and captures are narrowed once more.
    t.is(setWatchLimit(pid, 100_000).status, 0);
    const again = await stepsMatchFullScan(t, box, [
      ['an edit once the limit is raised', () => write(box, 'n1/f.txt', 'after the raise\n')],
      ['another one', () => write(box, 'n59/f.txt', 'narrowed\n')],
    ]);
    t.is(again?.unwatched, null, JSON.stringify(again));
    t.is(again?.unknown, null);
    const before = again.fullScans;
    await call(box, 'post', 'narrow');
    write(box, 'n2/f.txt', 'one more\n');
    await call(box, 'pre', 'narrow');
    t.is((await watchedWorkspace(box)).fullScans, before, 'narrowed, not a full scan');
    t.is(storedBytes(box, latestTree(box), 'n2/f.txt').toString(), 'one more\n');
    t.regex((await ckpt(box, ['status'])).stdout, /daemon: +watching/);
  },
);

testIf(
  test.serial,
  process.platform === 'linux' && existsSync('/proc/sys/fs/inotify/max_queued_events'),
  'the kernel queue overflow reproduced here is inotify’s',
)(
  'D3: a daemon stopped while more events than the kernel queue holds arrive: every watched workspace is unknown, and the next capture holds the edit the queue dropped',
  async (t) => {
    const box = await watchedBox(t, { 'important.txt': 'v1\n', 'db.sqlite': '', 'db.sqlite-journal': '' });
    await call(box, 'pre', 'p1');
    const queue = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
    const { pid } = endpoint(box);
    killProcess(pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    try {
      // Two files written in turn: the kernel merges only repeated events on one file, so each append is one event.
      for (let i = 0; i < queue * 1.5; i++) appendFileSync(path.join(box.ws, i % 2 ? 'db.sqlite' : 'db.sqlite-journal'), 'x');
      write(box, 'important.txt', 'v2, after the overflow\n');
      // As long as a suspended laptop or a starved process would be.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 2500 - (Date.now() - stoppedAt))));
    } finally {
      killProcess(pid, 'SIGCONT');
    }
    await call(box, 'post', 'p1');
    await call(box, 'pre', 'p2');
    t.is(storedBytes(box, latestTree(box), 'important.txt').toString(), 'v2, after the overflow\n');
    t.regex((await watchedWorkspace(box)).lastFullScanReason ?? '', /the daemon was paused \d+ s; events may have been dropped/);
  },
);

test.serial(
  'D4: the global excludes file and .git/info/exclude change what a capture takes; no event tells, their stat does',
  async (t) => {
    const box = daemonBox();
    const globalIgnore = path.join(box.home, '.config', 'git', 'ignore');
    mkdirSync(path.dirname(globalIgnore), { recursive: true });
    writeFileSync(globalIgnore, '*.draft\n');
    writeFileSync(path.join(box.ws, '.git', 'info', 'exclude'), '*.tmp\n');
    write(box, 'notes.draft', 'notes\n');
    write(box, 'scratch.tmp', 'scratch\n');
    await startDaemon(t, box);
    for (const id of ['warm-1', 'warm-2']) for (const phase of ['pre', 'post']) await call(box, phase, id);
    t.false(latestNames(box).includes('notes.draft'));
    const watched = await stepsMatchFullScan(t, box, [
      ['the global excludes file emptied', () => writeFileSync(globalIgnore, '')],
      ['.git/info/exclude emptied', () => writeFileSync(path.join(box.ws, '.git', 'info', 'exclude'), '')],
      ['the global excludes file removed, a new rule in a new one', () => rmSync(globalIgnore) || write(box, 'later.draft', 'x\n')],
    ]);
    t.truthy(watched);
    t.true(latestNames(box).includes('notes.draft'));
    t.true(latestNames(box).includes('scratch.tmp'));
  },
);

test.serial('D4: a linked worktree, whose info/exclude lives in the main repository’s .git outside the watched folder', async (t) => {
  const main = daemonBox();
  const linked = path.join(main.base, 'linked');
  sh(main, ['worktree', 'add', '-q', linked]);
  const box = { ...main, ws: linked };
  const exclude = path.join(main.ws, '.git', 'info', 'exclude');
  writeFileSync(exclude, '*.draft\n');
  write(box, 'notes.draft', 'notes\n');
  await startDaemon(t, box);
  for (const id of ['warm-1', 'warm-2']) for (const phase of ['pre', 'post']) await call(box, phase, id);
  t.false(latestNames(box).includes('notes.draft'));
  const watched = await stepsMatchFullScan(t, box, [['the main repository’s info/exclude emptied', () => writeFileSync(exclude, '')]]);
  t.truthy(watched);
  t.true(latestNames(box).includes('notes.draft'));
});

test.serial(
  'principle 8: a change made after a post was answered goes to the next checkpoint; one the capture cannot separate is said',
  async (t) => {
    const until = path.join(os.tmpdir(), `ckpt-post-lane-${process.pid}-${Date.now()}`);
    t.teardown(() => rmSync(until, { force: true }));
    const box = await watchedBox(t, { 'base.txt': 'base\n' }, { GIT_CKPT_TEST_PAUSE: 'post-lane', GIT_CKPT_TEST_PAUSE_UNTIL: until }, [
      'pre',
    ]);
    const heldThenReleased = async () => {
      t.true(await waitFor(() => existsSync(`${until}.waiting`), 10_000), 'the post’s capture is held');
      writeFileSync(until, '');
    };
    const recordOf = (id, kind) => ledgerLines(box).find((r) => r.call === id && r.kind === kind);

    await call(box, 'pre', 'c1');
    write(box, 'tool.txt', 'by the tool\n');
    // The daemon answers the post before its capture runs (held here).
    t.is((await heldLanePost(box, 'c1', { command: 'edit' })).code, 0);
    write(box, 'late.txt', 'made after the post was answered\n');
    await heldThenReleased();
    await call(box, 'pre', 'c2');
    const post1 = recordOf('c1', 'post');
    t.deepEqual(
      post1.paths.map((p) => p.path),
      ['tool.txt'],
    );
    t.is(post1.mayIncludeLater, undefined);
    t.true(
      recordOf('c2', 'pre').paths.some((p) => p.path === 'late.txt'),
      'the next checkpoint holds it',
    );

    // The same file changed by the call and again after its post: the capture takes it as it is then, and says so.
    rmSync(until);
    write(box, 'shared.txt', 'v1 by the tool\n');
    t.is((await heldLanePost(box, 'c2', { command: 'edit' })).code, 0);
    write(box, 'shared.txt', 'v2 after the post was answered\n');
    await heldThenReleased();
    await call(box, 'pre', 'c3');
    const post2 = recordOf('c2', 'post');
    t.true(post2.mayIncludeLater, JSON.stringify(post2));
    t.is(storedBytes(box, post2.tree, 'shared.txt').toString(), 'v2 after the post was answered\n');
    const shown = await ckpt(box, ['show', post2.id, '--stat']);
    t.regex(shown.stdout, /may include changes made after the post was answered/);
    const log = await ckptJson(box, ['log']);
    t.true(log.find((c) => c.id === post2.id).mayIncludeLater);
  },
);

testIf(
  test.serial,
  process.platform === 'linux',
  'on macOS the cookie is the folder’s mtime (FSEvents’ backend drops a change that leaves it)',
)('the sync cookie leaves the workspace folder’s modification time as it was (to within a microsecond)', async (t) => {
  const box = await watchedBox(t, { 'a.txt': 'a\n' });
  const mtime = () => statSync(box.ws, { bigint: true }).mtimeNs;
  const before = mtime();
  for (const id of ['m1', 'm2']) {
    await call(box, 'pre', id);
    await call(box, 'post', id);
  }
  const after = mtime();
  t.true(after - before <= 1000n && before - after <= 1000n, `mtime moved by ${after - before} ns`);
  t.true((await watchedWorkspace(box)).captures >= 4, 'the captures synced with the watcher');
});
