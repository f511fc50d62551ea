// The daemon's endpoint as an attacker and a careless client use it (issue 32, principle 1, "an endpoint only
// records events"): no request, header, query or payload field chooses a file, a variable, a store root or a
// workspace the sender does not own; malformed input of any kind gets a 4xx and leaves the daemon running.
// Raw bytes go through the Unix socket and through TCP with the token; after every request the daemon still
// answers, and nothing outside the store root changed (the temp HOME, a canary folder, the workspace and its .git).
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { CLI, HOOK_SCRIPT, cannotRun, ckpt, ckptJson, ledgerLines, libPath, sandbox, sh, testIf, treeState, write } from './helpers.mjs';

const IS_ROOT = process.getuid?.() === 0;
/** The uid a folder is given to make it another user's (nobody). */
const OTHER_UID = 65534;

/** A sandbox whose config lets the daemon run; a workspace with a commit, a ~/.bashrc and a canary folder. */
function daemonBox() {
  const box = sandbox();
  writeFileSync(
    path.join(box.home, '.gitconfig'),
    '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\tdaemonIdle = 60s\n',
  );
  writeFileSync(path.join(box.home, '.bashrc'), '# the user’s shell start-up\n');
  write(box, 'README.md', 'hello\n');
  sh(box, ['add', '-A']);
  sh(box, ['commit', '-qm', 'init']);
  box.canary = path.join(box.base, 'canary');
  mkdirSync(box.canary);
  writeFileSync(path.join(box.canary, 'keep.txt'), 'untouched\n');
  return box;
}

const daemonDir = (box) => path.join(box.store, 'daemon');
const endpointOf = (box) => JSON.parse(readFileSync(path.join(daemonDir(box), 'endpoint.json'), 'utf8'));
const tokenOf = (box) => readFileSync(path.join(daemonDir(box), 'token'), 'utf8').trim();

async function startDaemon(t, box, env = {}) {
  const r = await ckpt(box, ['daemon', 'start', '--json'], { env });
  t.is(r.code, 0, r.stderr);
  t.teardown(() => ckpt(box, ['daemon', 'stop']));
  return JSON.parse(r.stdout);
}

/** Everything under the sandbox but the store root: what no request may change. */
const outside = (box) => treeState(box.base, { skip: ['store'] });

/** The workspace stores under the store root (named `<name>-<16 hex>`). */
const workspaceStores = (box) => readdirSync(box.store).filter((d) => /-[0-9a-f]{16}$/.test(d));

/** A JSON request through the socket (the CLI's own client path); resolves { status, body }. */
function socketRequest(box, method, urlPath, headers = {}, body = '') {
  return new Promise((resolve) => {
    const req = http.request({ socketPath: path.join(daemonDir(box), 'socket'), method, path: urlPath, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', (err) => resolve({ status: 0, body: String(err.code ?? err) }));
    req.end(body);
  });
}

/** An HTTP request to the TCP port, Host and token as Claude Code's HTTP hooks send them. */
function tcpRequest(box, method, urlPath, headers = {}, body = '') {
  const { port } = endpointOf(box);
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: urlPath, headers: { host: `127.0.0.1:${port}`, 'x-ckpt-token': tokenOf(box), ...headers } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      },
    );
    req.on('error', (err) => resolve({ status: 0, body: String(err.code ?? err) }));
    req.end(body);
  });
}

/** Raw bytes to the socket or the port; resolves every status line's code in the answer (none: []). */
function rawRequest(box, via, bytes, { waitMs = 8000 } = {}) {
  return new Promise((resolve) => {
    const conn =
      via === 'socket'
        ? net.connect({ path: path.join(daemonDir(box), 'socket') })
        : net.connect({ host: '127.0.0.1', port: endpointOf(box).port });
    const chunks = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      conn.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const statuses = [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
      const head = text.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head))?.[1] ?? 0);
      resolve({ statuses, body: head < 0 ? '' : text.slice(head + 4, head + 4 + length), text });
    };
    const timer = setTimeout(finish, waitMs);
    conn.on('data', (d) => chunks.push(d));
    conn.on('end', finish);
    conn.on('close', finish);
    conn.on('error', finish);
    conn.write(bytes);
  });
}

/**
 * One request's bytes: `Connection: close`, a Content-Length for the body unless the case writes its own
 * framing, and over TCP the Host and the token (unless the case says `noAuth`).
 */
function requestBytes(box, via, c) {
  const lines = [`${c.method ?? 'POST'} ${c.target} HTTP/1.1`];
  if (via === 'tcp' && !c.noAuth) {
    const { port } = endpointOf(box);
    lines.push(`Host: 127.0.0.1:${port}`, `X-Ckpt-Token: ${tokenOf(box)}`);
  } else if (via === 'socket') lines.push('Host: daemon');
  if (via === 'socket' && c.cwdHeader !== false) lines.push(`X-Ckpt-Cwd: ${c.cwdHeader ?? box.ws}`);
  for (const h of c.headers ?? []) lines.push(h);
  lines.push('Connection: close');
  const body = Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body ?? '', 'utf8');
  if (c.framing === chunked) lines.push('Transfer-Encoding: chunked');
  else if (!c.framing) lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), c.framing ? c.framing(body) : body]);
}

const chunked = (body) => {
  const parts = [];
  for (let i = 0; i < body.length; i += 8192) {
    const piece = body.subarray(i, i + 8192);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
};

/** The hostile folders of a box: another user's, a symlink to it, a folder of this user's in another user's repository. */
function hostileFolders(box) {
  const folders = {
    home: box.home,
    root: '/',
    relative: 'ws',
    dotdot: `${box.ws}/../canary`,
    option: '--help',
    linkToWs: path.join(box.base, 'link-ws'),
  };
  symlinkSync(box.ws, folders.linkToWs);
  // A folder of this user's that no request names as a workspace.
  folders.plain = path.join(box.base, 'plain');
  mkdirSync(folders.plain);
  if (IS_ROOT) {
    folders.foreign = path.join(box.base, 'foreign');
    mkdirSync(folders.foreign);
    chownSync(folders.foreign, OTHER_UID, OTHER_UID);
    folders.linkToForeign = path.join(box.base, 'link-foreign');
    symlinkSync(folders.foreign, folders.linkToForeign);
    // Someone else's repository with a folder of this user's inside (a shared checkout, a 1777 folder).
    folders.foreignRepo = path.join(box.base, 'foreign-repo');
    mkdirSync(path.join(folders.foreignRepo, 'mine'), { recursive: true });
    spawnSync('git', ['init', '-q', folders.foreignRepo]);
    spawnSync('chown', ['-R', `${OTHER_UID}:${OTHER_UID}`, folders.foreignRepo]);
    chownSync(path.join(folders.foreignRepo, 'mine'), 0, 0);
    folders.mineInForeign = path.join(folders.foreignRepo, 'mine');
  }
  return folders;
}

/** The table: every method, target, header and body shape; `via` limits a case to one transport. */
function fuzzCases(box, folders) {
  const event = (extra = {}) =>
    JSON.stringify({
      session_id: 'fz',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: 'c1',
      tool_input: { command: 'true' },
      cwd: box.ws,
      ...extra,
    });
  const hook = (target, extra = {}) => ({ target, body: event(), ...extra });
  const env = (name, value) => `X-Ckpt-Env-${name}: ${value}`;
  const bashrc = path.join(box.home, '.bashrc');
  const cases = [
    // Request targets.
    { name: 'GET //', method: 'GET', target: '//', expect: [400] },
    { name: 'GET http://[', method: 'GET', target: 'http://[', expect: [400] },
    { name: 'POST http://[/hook/claude/post', target: 'http://[/hook/claude/post', body: event(), expect: [400] },
    { name: 'GET ///status', method: 'GET', target: '///status' },
    { name: 'a target that is no path', method: 'GET', target: 'status' },
    { name: 'an absolute-form target', ...hook('http://evil.example/hook/claude/post') },
    { name: 'a percent-encoded ../', method: 'GET', target: '/%2e%2e/%2e%2e/etc/passwd', expect: [404] },
    { name: '.. through to /status', target: '/hook/../../status', body: '' },
    { name: 'a query naming a file', ...hook(`/hook/claude/post?trace=${encodeURIComponent(bashrc)}&root=/`) },
    { name: 'an agent in capitals', ...hook('/hook/Claude/post'), expect: [404] },
    { name: 'an unknown agent and phase', ...hook('/hook/nosuchagent/nosuchphase') },
    { name: 'a name of 40 letters', ...hook(`/hook/${'a'.repeat(40)}/post`), expect: [404] },
    // Methods on the wrong routes.
    { name: 'GET on a hook route', method: 'GET', target: '/hook/claude/pre', body: '', expect: [404] },
    { name: 'GET /watch', method: 'GET', target: '/watch', expect: [404] },
    { name: 'GET /flush', method: 'GET', target: '/flush', expect: [404] },
    { name: 'GET /stop', method: 'GET', target: '/stop', expect: [404] },
    { name: 'DELETE /status', method: 'DELETE', target: '/status', expect: [404] },
    { name: 'an unknown method', method: 'BREW', target: '/status', expect: [400] },
    // Bodies.
    { name: 'an empty body', ...hook('/hook/claude/pre', { body: '' }) },
    { name: 'invalid JSON', ...hook('/hook/claude/pre', { body: '{"cwd": "' }) },
    { name: 'a JSON array', ...hook('/hook/claude/pre', { body: '[1,2,3]' }) },
    { name: '60,000 open brackets', ...hook('/hook/claude/pre', { body: '['.repeat(60_000) }) },
    {
      name: 'tool_input nested 30,000 deep',
      ...hook('/hook/claude/post', {
        body: `{"session_id":"fz","cwd":${JSON.stringify(box.ws)},"tool_input":${'['.repeat(30_000)}${']'.repeat(30_000)}}`,
      }),
    },
    {
      name: 'bytes that are not UTF-8',
      ...hook('/hook/claude/post', {
        body: Buffer.concat([
          Buffer.from(`{"session_id":"fz\xff\xfe","cwd":"${box.ws}","tool_input":{"command":"`, 'latin1'),
          Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xf0, 0x28]),
          Buffer.from('"}}'),
        ]),
      }),
    },
    { name: 'a body of 100 KB', ...hook('/hook/claude/post', { body: 'x'.repeat(100_000) }), expect: [413, null] },
    {
      name: 'a chunked body of 100 KB',
      ...hook('/hook/claude/post', { body: 'x'.repeat(100_000), framing: chunked }),
      expect: [413, null],
    },
    { name: 'a chunked payload', ...hook('/hook/claude/post', { framing: chunked }) },
    {
      name: 'a Content-Length that is too long',
      ...hook('/hook/claude/post', { framing: (b) => b, headers: ['Content-Length: 9000'] }),
      mayHang: true,
    },
    { name: 'a Content-Length that is too short', ...hook('/hook/claude/post', { framing: (b) => b, headers: ['Content-Length: 10'] }) },
    {
      name: 'two Content-Lengths',
      ...hook('/hook/claude/post', { framing: (b) => b, headers: ['Content-Length: 2', 'Content-Length: 20000'] }),
      expect: [400],
    },
    {
      name: 'a Content-Length that is no number',
      ...hook('/hook/claude/post', { framing: (b) => b, headers: ['Content-Length: -1'] }),
      expect: [400],
    },
    // Headers.
    { name: 'a header of 20 KB', ...hook('/hook/claude/post', { headers: [`X-Ckpt-Cwd: ${'a'.repeat(20_000)}`] }), expect: [431] },
    { name: 'X-Ckpt-Cwd twice', ...hook('/hook/claude/post', { headers: [`X-Ckpt-Cwd: ${box.canary}`] }) },
    { name: 'the token twice', ...hook('/hook/claude/post', { headers: [`X-Ckpt-Token: ${'0'.repeat(48)}`] }), via: 'tcp', expect: [401] },
    { name: 'a second Host', ...hook('/hook/claude/post', { headers: ['Host: evil.example'] }), via: 'tcp' },
    { name: 'no Host, no token', ...hook('/hook/claude/post', { noAuth: true }), via: 'tcp', expect: [400, 403] },
    {
      name: 'a NUL through percent-encoding',
      ...hook('/hook/claude/post', { headers: [`X-Ckpt-Cwd-Uri: ${encodeURIComponent(box.ws)}%00`] }),
    },
    { name: 'a bad percent-encoding', ...hook('/hook/claude/post', { headers: ['X-Ckpt-Cwd-Uri: %E0%A4%A'] }) },
    { name: 'a control character in a header', ...hook('/hook/claude/post', { headers: [`${env('CLAUDE_PROJECT_DIR', box.ws)}\x01`] }) },
    // Every X-Ckpt-* header, hostile: files, variables, store roots.
    { name: 'GIT_CKPT_HOOK_TRACE at ~/.bashrc', ...hook('/hook/claude/post', { headers: [env('GIT_CKPT_HOOK_TRACE', bashrc)] }) },
    {
      name: 'GIT_CKPT_HOOK_TRACE in the canary',
      ...hook('/hook/claude/pre', { headers: [env('GIT_CKPT_HOOK_TRACE', path.join(box.canary, 'trace'))] }),
    },
    {
      name: 'GIT_CKPT_HOME in the canary',
      ...hook('/hook/claude/pre', { headers: [env('GIT_CKPT_HOME', box.canary), env('XDG_STATE_HOME', box.canary)] }),
    },
    {
      name: 'HOME, PATH, GIT_DIR, NODE_OPTIONS',
      ...hook('/hook/claude/pre', {
        headers: [
          env('HOME', box.canary),
          env('PATH', box.canary),
          env('GIT_DIR', box.canary),
          env('NODE_OPTIONS', `--require ${box.canary}/x.js`),
          env('GIT_CKPT_BIN', '/bin/sh'),
        ],
      }),
    },
    { name: 'CLAUDE_PROJECT_DIR: the canary', ...hook('/hook/claude/pre', { headers: [env('CLAUDE_PROJECT_DIR', box.canary)] }) },
    { name: 'CLAUDE_PROJECT_DIR: ..', ...hook('/hook/claude/pre', { headers: [env('CLAUDE_PROJECT_DIR', `${box.ws}/../..`)] }) },
    { name: 'CLAUDE_PROJECT_DIR: an option', ...hook('/hook/claude/pre', { headers: [env('CLAUDE_PROJECT_DIR', '--help')] }) },
    { name: 'CLAUDE_PROJECT_DIR: home', ...hook('/hook/claude/pre', { headers: [env('CLAUDE_PROJECT_DIR', box.home)] }) },
    {
      name: 'a session id that is an option',
      ...hook('/hook/claude/pre', { headers: [env('CLAUDE_CODE_SESSION_ID', '--dangerously-skip-permissions')] }),
    },
    {
      name: 'X-Ckpt-Root and quiet on a hook',
      ...hook('/hook/claude/pre', { headers: [`X-Ckpt-Root: ${box.canary}`, 'X-Ckpt-Quiet-Ms: 100'] }),
    },
    // The one file a payload names for reading, its transcript.
    ...[bashrc, '/dev/zero', path.join(box.canary, 'keep.txt'), '../../etc/passwd', '-'].map((transcript) => ({
      name: `transcript_path ${transcript}`,
      ...hook('/hook/claude/pre', {
        body: event({ hook_event_name: 'PreToolUse', transcript_path: transcript, session_id: `tr-${transcript}` }),
      }),
    })),
    // /watch and /flush with hostile roots (through the socket: 400 with the reason; HTTP does not serve them: 404).
    ...['home', 'root', 'relative', 'dotdot', 'option', 'linkToWs'].map((k) => ({
      name: `/watch of ${k}`,
      target: '/watch',
      headers: [`X-Ckpt-Root: ${folders[k]}`, 'X-Ckpt-Quiet-Ms: 100'],
      expect: [400, 404],
    })),
    {
      name: '/watch of a folder with no store',
      target: '/watch',
      headers: [`X-Ckpt-Root: ${folders.plain}`, 'X-Ckpt-Quiet-Ms: 100'],
      expect: [400, 404],
    },
    {
      name: '/watch of the workspace’s .git',
      target: '/watch',
      headers: [`X-Ckpt-Root: ${box.ws}/.git`, 'X-Ckpt-Quiet-Ms: 100'],
      expect: [400, 404],
    },
    {
      name: '/watch of a folder in the workspace',
      target: '/watch',
      headers: [`X-Ckpt-Root: ${box.ws}/sub`, 'X-Ckpt-Quiet-Ms: 100'],
      expect: [400, 404],
    },
    { name: '/watch with a quiet of -1', target: '/watch', headers: [`X-Ckpt-Root: ${box.ws}`, 'X-Ckpt-Quiet-Ms: -1'], expect: [400, 404] },
    { name: '/flush of ..', target: '/flush', headers: ['X-Ckpt-Root: ../../etc'] },
    // The folder an event names: in the payload (TCP) and the forwarded working directory (socket).
    ...Object.entries(folders)
      .filter(([k]) => k !== 'plain')
      .flatMap(([k, dir]) => [
        { name: `payload cwd ${k}`, ...hook('/hook/claude/pre', { body: event({ cwd: dir, session_id: `cwd-${k}` }) }) },
        { name: `forwarded cwd ${k}`, ...hook('/hook/claude/pre', { cwdHeader: dir, body: event({ cwd: undefined }) }), via: 'socket' },
        { name: `forwarded project dir ${k}`, ...hook('/hook/claude/pre', { headers: [env('CLAUDE_PROJECT_DIR', dir)] }), via: 'socket' },
      ]),
    // The CLI's routes over HTTP while the socket serves: not there.
    { name: 'GET /status over HTTP', method: 'GET', target: '/status', via: 'tcp', expect: [404] },
    { name: 'POST /flush over HTTP', target: '/flush', via: 'tcp', expect: [404] },
    {
      name: 'POST /watch over HTTP',
      target: '/watch',
      headers: [`X-Ckpt-Root: ${box.ws}`, 'X-Ckpt-Quiet-Ms: 100'],
      via: 'tcp',
      expect: [404],
    },
    // Garbage.
    { name: 'a request line of control bytes', raw: Buffer.from([0, 1, 2, 13, 10, 13, 10]), expect: [400] },
    { name: 'a request line without a version', raw: Buffer.from('GET /status\r\n\r\n') },
  ];
  return cases;
}

/** 2xx with the neutral answer of the route's agent (`{}` for Gemini, Cursor and Cline, else nothing), or 4xx. */
function acceptable(c, answer) {
  if (c.mayHang && answer.statuses.length === 0) return true;
  if (answer.statuses.length === 0) return (c.expect ?? []).includes(null);
  for (const status of answer.statuses) {
    if (c.expect && !c.expect.includes(status)) return false;
    if (!(status >= 200 && status < 300) && !(status >= 400 && status < 500)) return false;
  }
  const first = answer.statuses[0];
  const hookRoute = /^(?:https?:\/\/[^/]*)?\/hook\/([a-z][a-z0-9-]*)\//.exec(c.target ?? '');
  if (first >= 200 && first < 300 && hookRoute) return answer.body === (['gemini', 'cursor', 'cline'].includes(hookRoute[1]) ? '{}\n' : '');
  return true;
}

async function fuzz(t, box, cases) {
  const { pid } = endpointOf(box);
  const before = outside(box);
  for (const via of ['socket', 'tcp']) {
    for (const c of cases) {
      if (c.via && c.via !== via) continue;
      const label = `${via}: ${c.name}`;
      const bytes = c.raw ?? requestBytes(box, via, c);
      const answer = await rawRequest(box, via, bytes, c.mayHang ? { waitMs: 1500 } : {});
      t.true(acceptable(c, answer), `${label}: answered ${JSON.stringify(answer.statuses)} ${JSON.stringify(answer.text.slice(0, 300))}`);
      // What it queued is recorded before looking (a post is answered before its capture).
      const flushed = await socketRequest(box, 'POST', '/flush');
      t.is(flushed.status, 200, `${label}: the daemon still answers (${flushed.body})`);
      const status = await socketRequest(box, 'GET', '/status');
      t.is(status.status === 200 && JSON.parse(status.body).pid, pid, `${label}: the same daemon still runs`);
      const after = outside(box);
      if (after !== before) {
        const was = new Set(before.split('\n'));
        const now = new Set(after.split('\n'));
        const changed = [
          ...[...was].filter((l) => !now.has(l)).map((l) => `- ${l}`),
          ...[...now].filter((l) => !was.has(l)).map((l) => `+ ${l}`),
        ];
        t.fail(`${label}: something outside the store root changed:\n${changed.join('\n')}`);
        return;
      }
    }
  }
  // The events were recorded in the workspace (and nowhere this user does not own or git-ckpt would refuse).
  const stores = workspaceStores(box);
  t.true(
    stores.some((s) => s.startsWith('ws-')),
    stores.join(', '),
  );
  for (const refused of ['home', 'foreign', 'foreign-repo'])
    t.false(
      stores.some((s) => s.startsWith(`${refused}-`)),
      `no store for ${refused}: ${stores.join(', ')}`,
    );
}

test('the endpoint fuzzed: every method, target, header and body shape, through the socket and through TCP with the token; the daemon lives, answers 2xx neutral or 4xx, and nothing outside the store root changes', async (t) => {
  const box = daemonBox();
  await startDaemon(t, box);
  await ckpt(box, ['snapshot', '-m', 'before']);
  mkdirSync(path.join(box.ws, 'sub'));
  sh(box, ['add', '-A']);
  const folders = hostileFolders(box);
  await fuzz(t, box, fuzzCases(box, folders));
  // Nothing wrote the hostile trace files, and the log says what it refused, one line each.
  t.false(existsSync(path.join(box.canary, 'trace')));
  const log = readFileSync(path.join(box.store, 'hook.log'), 'utf8');
  t.regex(log, /refused "GET \/\/": malformed request target/);
  t.regex(log, /refused a watch: not a workspace git ckpt watch can name: refusing to use your home directory as a workspace/);
  t.false(log.includes('\n    at '), 'no stack in the log');
});
if (!IS_ROOT) cannotRun(test, 'the endpoint fuzzed with another user’s folders (chown)', 'making a folder another user’s needs root');

test('D7: no request makes the daemon write a file it names; the hook trace is the daemon’s own, from its environment at start', async (t) => {
  const box = daemonBox();
  const trace = path.join(box.base, 'own-trace.jsonl');
  await startDaemon(t, box, { GIT_CKPT_HOOK_TRACE: trace });
  // The workspace has a store (HTTP events make none).
  await ckpt(box, ['snapshot', '-m', 'before']);
  const bashrc = path.join(box.home, '.bashrc');
  const before = readFileSync(bashrc, 'utf8');
  const payload = (session) =>
    JSON.stringify({
      session_id: session,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_use_id: session,
      cwd: box.ws,
      x: '$(id > /tmp/owned)',
    });
  // As the fault report sent it: TCP with the token, the variable as a header.
  write(box, 'a.txt', 'a\n');
  const viaTcp = await tcpRequest(box, 'POST', '/hook/claude/pre', { 'x-ckpt-env-git_ckpt_hook_trace': bashrc }, payload('d7-tcp'));
  t.is(viaTcp.status, 200, viaTcp.body);
  // And through the socket, as the entry script did forward it.
  write(box, 'b.txt', 'b\n');
  const viaSocket = await socketRequest(
    box,
    'POST',
    '/hook/claude/pre',
    { 'x-ckpt-cwd': box.ws, 'x-ckpt-env-git_ckpt_hook_trace': bashrc, 'x-ckpt-env-git_ckpt_home': box.canary },
    payload('d7-socket'),
  );
  t.is(viaSocket.status, 200, viaSocket.body);
  t.is(readFileSync(bashrc, 'utf8'), before, '~/.bashrc is untouched');
  t.deepEqual(readdirSync(box.canary), ['keep.txt']);
  // Both were recorded, and traced where the daemon's own environment said.
  t.deepEqual(
    ledgerLines(box)
      .filter((r) => r.kind === 'pre')
      .map((r) => r.session),
    ['d7-tcp', 'd7-socket'],
  );
  const traced = readFileSync(trace, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.deepEqual(
    traced.map((l) => l.session),
    ['d7-tcp', 'd7-socket'],
  );
});

test('the entry script forwards exactly the variables attribution reads (one list with the daemon’s), and nothing of GIT_CKPT_*', async (t) => {
  const { AGENT_ENV } = await import(libPath('registry'));
  const script = readFileSync(HOOK_SCRIPT, 'utf8');
  const loop = /for name in ([A-Z0-9_ ]+); do/.exec(script);
  t.truthy(loop, 'the entry script has its forwarding loop');
  t.deepEqual(loop[1].trim().split(/\s+/), [...AGENT_ENV]);
  t.false(
    AGENT_ENV.some((name) => /^(GIT_|NODE_|XDG_)|^(HOME|PATH|SHELL)$|TRACE/.test(name)),
    AGENT_ENV.join(' '),
  );
  // The in-process plugins' client forwards none.
  t.false(/x-ckpt-env-/i.test(readFileSync(path.join(path.dirname(HOOK_SCRIPT), 'plugin-transport.js'), 'utf8')));
});

test('the daemon lends no agent variable of the hook that started it to other events, and takes none over HTTP', async (t) => {
  const box = daemonBox();
  // Another workspace, with a store, whose Claude session started the daemon (its hook's environment).
  const other = path.join(box.base, 'other');
  mkdirSync(other);
  sh(box, ['init', '-q'], { cwd: other });
  await ckpt(box, ['snapshot', '-m', 'other'], { cwd: other });
  await ckpt(box, ['snapshot', '-m', 'ws']);
  await startDaemon(t, box, { CLAUDE_PROJECT_DIR: other, CLAUDE_CODE_SESSION_ID: 'starter' });
  const event = (id) =>
    JSON.stringify({
      session_id: id,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_use_id: id,
      tool_input: { command: 'true' },
      cwd: box.ws,
    });
  // Claude Code's HTTP hook for this workspace: the payload names it.
  write(box, 'one.txt', '1\n');
  t.is((await tcpRequest(box, 'POST', '/hook/claude/pre', {}, event('http-1'))).status, 200);
  // The same with a forwarded project dir as a header: HTTP takes no variable.
  write(box, 'two.txt', '2\n');
  t.is((await tcpRequest(box, 'POST', '/hook/claude/pre', { 'x-ckpt-env-claude_project_dir': other }, event('http-2'))).status, 200);
  // A client of the socket that forwards nothing (an in-process plugin): its own working directory.
  write(box, 'three.txt', '3\n');
  const payload = JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: 'sock-3', cwd: box.ws });
  t.is((await socketRequest(box, 'POST', '/hook/claude/pre', { 'x-ckpt-cwd': box.ws }, payload)).status, 200);
  const here = (await ckptJson(box, ['log'])).filter((r) => r.kind === 'pre').reverse();
  t.deepEqual(
    here.map((r) => `${r.session} ${r.paths.map((p) => p.path).join(',')}`),
    ['http-1 one.txt', 'http-2 two.txt', 'null three.txt'],
  );
  const there = (await ckptJson(box, ['log'], { cwd: other })).filter((r) => r.kind === 'pre');
  t.deepEqual(there, [], 'nothing was recorded in the workspace of the hook that started the daemon');
});

testIf(
  test,
  IS_ROOT,
  'making a folder another user’s needs root',
)(
  'an event for a folder of this user’s inside another user’s repository is refused; through the socket with 403, so the caller’s own hook decides',
  async (t) => {
    const box = daemonBox();
    await startDaemon(t, box);
    const folders = hostileFolders(box);
    const payload = JSON.stringify({ session_id: 'm', hook_event_name: 'PreToolUse', cwd: folders.mineInForeign });
    const viaSocket = await socketRequest(box, 'POST', '/hook/claude/pre', { 'x-ckpt-cwd': folders.mineInForeign }, payload);
    t.is(viaSocket.status, 403, viaSocket.body);
    t.regex(viaSocket.body, /not this user's/);
    const viaTcp = await tcpRequest(box, 'POST', '/hook/claude/pre', {}, payload);
    t.is(viaTcp.status, 200);
    t.is(viaTcp.body, '');
    // A forwarded project dir of another user's: refused the same way.
    const project = await socketRequest(
      box,
      'POST',
      '/hook/claude/pre',
      { 'x-ckpt-cwd': box.ws, 'x-ckpt-env-claude_project_dir': folders.foreign },
      JSON.stringify({ session_id: 'm', cwd: box.ws }),
    );
    t.is(project.status, 403, project.body);
    t.deepEqual(workspaceStores(box), [], 'no store for either');
  },
);

testIf(
  test,
  IS_ROOT,
  'making a file another user’s needs root',
)(
  'the one file an event names for git-ckpt to read, its transcript, is taken only when it is this user’s (over HTTP, there already)',
  async (t) => {
    const box = daemonBox();
    await ckpt(box, ['snapshot', '-m', 'before']);
    await startDaemon(t, box);
    const own = path.join(box.base, 'own.jsonl');
    writeFileSync(own, '');
    const foreign = path.join(box.base, 'foreign.jsonl');
    writeFileSync(foreign, '');
    chownSync(foreign, OTHER_UID, OTHER_UID);
    symlinkSync(foreign, path.join(box.base, 'link.jsonl'));
    // Over HTTP and through the socket alike.
    const sent = [
      ['own', own, tcpRequest],
      ['foreign', foreign, tcpRequest],
      ['link', path.join(box.base, 'link.jsonl'), socketRequest],
      ['missing', path.join(box.canary, 'later.jsonl'), socketRequest],
      ['missing-http', path.join(box.canary, 'later.jsonl'), tcpRequest],
    ];
    for (const [id, transcript, send] of sent) {
      write(box, `${id}.txt`, `${id}\n`);
      const body = JSON.stringify({
        session_id: id,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_use_id: id,
        cwd: box.ws,
        transcript_path: transcript,
      });
      t.is((await send(box, 'POST', '/hook/claude/pre', { 'x-ckpt-cwd': box.ws }, body)).status, 200);
    }
    t.deepEqual(
      ledgerLines(box)
        .filter((r) => r.kind === 'pre')
        .map((r) => `${r.session} ${r.transcript ?? '-'}`),
      [`own ${own}`, 'foreign -', 'link -', `missing ${path.join(box.canary, 'later.jsonl')}`, 'missing-http -'],
    );
    // Another user's file is a finding; one not written yet (Claude's, at the session start) is none: the socket keeps
    // it as the caller's own Node hook would, HTTP leaves it out (its sender could make it later).
    const noted = readFileSync(path.join(box.store, 'hook.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('as its transcript'));
    t.is(noted.length, 2, noted.join('\n'));
  },
);

test('/watch takes only what git ckpt watch names: a workspace root of this user’s with a store; home, /, a folder inside, a .git are refused with the reason', async (t) => {
  const box = daemonBox();
  await startDaemon(t, box);
  const watch = (root) => socketRequest(box, 'POST', '/watch', { 'x-ckpt-root': root, 'x-ckpt-quiet-ms': '500' });
  mkdirSync(path.join(box.ws, 'src'));
  for (const [root, reason] of [
    [box.home, /not a workspace git ckpt watch can name: refusing to use your home directory as a workspace/],
    ['/', /not a workspace git ckpt watch can name: .*(filesystem root|not an absolute folder of this user's)/],
    [path.join(box.ws, 'src'), /is not a workspace's root \(its workspace is /],
    [path.join(box.ws, '.git'), /refusing to (run inside|use) a git directory/],
    [box.ws, /has no store \(git ckpt watch makes it first\)/],
  ]) {
    const r = await watch(root);
    t.is(r.status, 400, `${root}: ${r.body}`);
    t.regex(r.body, reason);
  }
  t.deepEqual((await ckptJson(box, ['daemon', 'status'])).workspaces, [], 'nothing is watched');
  // The command names the workspace after making its store: watched.
  const watched = await ckptJson(box, ['watch', '--quiet-ms', '500']);
  t.true(watched.watching);
  const off = await ckptJson(box, ['watch', '--stop']);
  t.false(off.watching);
});

test('D6: git ckpt daemon status and stop on an endpoint whose socket nobody serves: “not running” in one line, and its pid is never signalled', async (t) => {
  const box = daemonBox();
  const dir = daemonDir(box);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const socket = path.join(dir, 'socket');
  // A socket file left by a process killed while it listened (as a crashed daemon leaves it).
  spawnSync(process.execPath, [
    '-e',
    `require('net').createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ]);
  t.true(existsSync(socket));
  // Its pid alive: a zombie not yet reaped, or by now another process's.
  const { spawn } = await import('node:child_process');
  const other = spawn('sleep', ['60']);
  t.teardown(() => other.kill());
  writeFileSync(
    path.join(dir, 'endpoint.json'),
    JSON.stringify({ pid: other.pid, port: 1, socket, version: '0', startedAt: 0, binary: CLI }),
  );
  const status = await ckpt(box, ['daemon', 'status']);
  t.is(status.code, 0, status.stderr);
  t.is(status.stderr, '');
  t.regex(status.stdout, /^not running/);
  t.is(status.stdout.trim().split('\n').length, 1);
  t.deepEqual(await ckptJson(box, ['daemon', 'status']), { running: false });
  t.deepEqual(await ckptJson(box, ['daemon', 'stop']), { stopped: false });
  t.is(other.exitCode, null, 'the process the endpoint names was not signalled');
  t.is(other.signalCode, null);
});

test('a handler that throws (a bug) answers 500 with one log line, and the daemon goes on', async (t) => {
  const box = daemonBox();
  await startDaemon(t, box, { GIT_CKPT_TEST_CRASH: 'throw:endpoint' });
  const { pid } = endpointOf(box);
  for (const via of ['socket', 'tcp']) {
    const r = await (via === 'socket' ? socketRequest : tcpRequest)(box, 'POST', '/hook/claude/pre', { 'x-ckpt-cwd': box.ws }, '{}');
    t.is(r.status, 500, `${via}: ${r.body}`);
    t.is(r.body, 'internal error (see daemon.log)\n');
  }
  t.is(JSON.parse((await socketRequest(box, 'GET', '/status')).body).pid, pid);
  const failed = readFileSync(path.join(box.store, 'hook.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('failed on'));
  t.is(failed.length, 2);
  t.regex(failed[0], /failed on "POST \/hook\/claude\/pre": Error: test fault at endpoint/);
});

test('every log of the daemon stays under 2 MiB however many requests are refused (anyone on the machine can knock on the port)', async (t) => {
  const box = daemonBox();
  await startDaemon(t, box);
  const { pid } = endpointOf(box);
  // A request the endpoint refuses, into logs already at the rotation size.
  const daemonLog = path.join(daemonDir(box), 'daemon.log');
  const hookLog = path.join(box.store, 'hook.log');
  for (const file of [daemonLog, hookLog]) writeFileSync(file, `${'old line\n'.repeat(120_000)}`);
  const refused = await rawRequest(box, 'tcp', Buffer.from('GET /status HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'));
  t.deepEqual(refused.statuses, [403]);
  for (const file of [daemonLog, hookLog]) {
    t.true(existsSync(`${file}.1`), `${path.basename(file)} rotated`);
    t.true(readFileSync(file, 'utf8').length < 1000, `${path.basename(file)} starts again`);
  }
  t.is(JSON.parse((await socketRequest(box, 'GET', '/status')).body).pid, pid);
});

/** A throwaway second local user, removed at teardown; null where users cannot be made (not root, no useradd/runuser). */
function secondUser(t) {
  if (!IS_ROOT) return null;
  const name = `ckptfz${process.pid % 100000}`;
  const made = spawnSync('useradd', ['--no-create-home', '--shell', '/bin/sh', name], { encoding: 'utf8' });
  if (made.status !== 0) return null;
  t.teardown(() => spawnSync('userdel', [name]));
  return { name, run: (args) => spawnSync('runuser', ['-u', name, '--', ...args], { encoding: 'utf8', timeout: 20_000 }) };
}

const canMakeUsers = IS_ROOT && spawnSync('sh', ['-c', 'command -v useradd && command -v runuser && command -v curl']).status === 0;

testIf(
  test,
  canMakeUsers,
  'a second local user needs root, useradd, runuser and curl',
)(
  'from a second local user: the socket refuses the connection, TCP without the token (or with a wrong one) refuses with 401, nothing is written',
  async (t) => {
    const box = daemonBox();
    await startDaemon(t, box);
    // Only the daemon's own folder (0700) and socket (0600) protect it: the sandbox is made traversable.
    chmodSync(box.base, 0o755);
    chmodSync(box.store, 0o755);
    const user = secondUser(t);
    t.truthy(user, 'the user was made');
    const { pid, port } = endpointOf(box);
    const before = outside(box);
    const body = JSON.stringify({ session_id: 'x', hook_event_name: 'PreToolUse', cwd: box.ws });
    const viaSocket = user.run([
      'curl',
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '--unix-socket',
      path.join(daemonDir(box), 'socket'),
      '--data-binary',
      body,
      'http://daemon/hook/claude/pre',
    ]);
    t.not(viaSocket.status, 0, 'the socket refuses the connection');
    t.is(viaSocket.stdout, '000');
    const token = user.run(['cat', path.join(daemonDir(box), 'token')]);
    t.not(token.status, 0, 'the token cannot be read');
    for (const [headers, reason] of [
      [[], 'no token'],
      [['-H', `X-Ckpt-Token: ${'0'.repeat(48)}`], 'wrong token'],
    ]) {
      const r = user.run([
        'curl',
        '-s',
        '-w',
        '\n%{http_code}',
        '-H',
        `Host: 127.0.0.1:${port}`,
        ...headers,
        '--data-binary',
        body,
        `http://127.0.0.1:${port}/hook/claude/pre`,
      ]);
      t.deepEqual(r.stdout.split('\n').filter(Boolean), [reason, '401']);
    }
    t.is(JSON.parse((await socketRequest(box, 'GET', '/status')).body).pid, pid);
    t.is(outside(box), before);
    t.deepEqual(workspaceStores(box), []);
  },
);
