// `git ckpt ui`: the web timeline's API over real HTTP, against the built CLI
// on real workspaces: every endpoint and error status, the token, Host and
// Origin checks, the 64 KiB limit, dry runs that change nothing, apply and
// undo byte for byte, and hooks firing while the page is open.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { hostname } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { CLI, ckpt, ckptJson, claudeSession, sandbox, startUi, storeDir, treeState, workspaceState, write } from './helpers.mjs';

/** One raw request (any Host, Origin, body): resolves with { status, headers, body, json }. */
function request(ui, method, pathname, { headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: ui.port, method, path: pathname, headers: { host: `127.0.0.1:${ui.port}`, ...headers } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, headers: res.headers, body: text, json });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const authed = (ui, extra = {}) => ({ 'x-ckpt-token': ui.token, ...extra });
const get = (ui, pathname) => request(ui, 'GET', pathname, { headers: authed(ui) });
const post = (ui, pathname, value) =>
  request(ui, 'POST', pathname, {
    headers: authed(ui, { origin: ui.base, 'content-type': 'application/json' }),
    body: typeof value === 'string' ? value : JSON.stringify(value),
  });

async function history(box) {
  write(box, 'a.txt', 'one\n');
  const first = await ckptJson(box, ['snapshot', '-m', 'first']);
  write(box, 'a.txt', 'two\n');
  write(box, 'b.txt', 'new file\n');
  const second = await ckptJson(box, ['snapshot', '--session', 'sess-ui-1', '--turn', '1', '-m', 'second']);
  return { first, second };
}

test('the token: the printed URL sets an HttpOnly SameSite cookie once; without it nothing is served', async (t) => {
  const box = sandbox();
  await history(box);
  const ui = await startUi(t, box);
  t.is((await request(ui, 'GET', '/')).status, 403);
  t.is((await request(ui, 'GET', '/app.js')).status, 403);
  t.is((await request(ui, 'GET', '/api/summary')).json.ok, false);
  t.is((await request(ui, 'GET', '/?token=wrong')).status, 403);
  const login = await request(ui, 'GET', `/?token=${ui.token}`);
  t.is(login.status, 303);
  t.is(login.headers.location, '/');
  const cookie = login.headers['set-cookie'][0];
  t.true(cookie.startsWith(`ckpt_ui_${ui.port}=`), 'one cookie per server: another run on another port keeps its own');
  t.regex(cookie, /HttpOnly/);
  t.regex(cookie, /SameSite=Strict/);
  const page = await request(ui, 'GET', '/', { headers: { cookie: cookie.split(';')[0] } });
  t.is(page.status, 200);
  t.regex(page.body, /<title>git ckpt<\/title>/);
  t.regex(page.headers['content-security-policy'], /default-src 'none'; script-src 'self'/);
  t.is(page.headers['access-control-allow-origin'], undefined, 'no CORS');
  t.is(page.headers['x-content-type-options'], 'nosniff');
  t.is((await request(ui, 'GET', '/app.js', { headers: { cookie: cookie.split(';')[0] } })).status, 200);
  // Nothing else from the package or the workspace is served.
  for (const p of ['/index.html', '/../package.json', '/a.txt', '/dist/ui/app.js']) t.is((await get(ui, p)).status, 404, p);
});

test('DNS rebinding and cross-site writes are refused: the Host must be ours, writes need our Origin, JSON and the token', async (t) => {
  const box = sandbox();
  const { first } = await history(box);
  const ui = await startUi(t, box);
  const summary = await get(ui, '/api/summary');
  const ws = summary.json.current;
  t.is((await request(ui, 'GET', '/api/summary', { headers: authed(ui, { host: `evil.example:${ui.port}` }) })).status, 421);
  t.is((await request(ui, 'GET', '/api/summary', { headers: authed(ui, { host: `localhost:${ui.port}` }) })).status, 200);
  const body = JSON.stringify({ ws, target: first.id, apply: true });
  const noOrigin = await request(ui, 'POST', '/api/rollback', { headers: authed(ui, { 'content-type': 'application/json' }), body });
  t.is(noOrigin.status, 403);
  const otherOrigin = await request(ui, 'POST', '/api/rollback', {
    headers: authed(ui, { origin: 'http://evil.example', 'content-type': 'application/json' }),
    body,
  });
  t.is(otherOrigin.status, 403);
  const form = await request(ui, 'POST', '/api/rollback', {
    headers: authed(ui, { origin: ui.base, 'content-type': 'application/x-www-form-urlencoded' }),
    body,
  });
  t.is(form.status, 415);
  const noToken = await request(ui, 'POST', '/api/rollback', { headers: { origin: ui.base, 'content-type': 'application/json' }, body });
  t.is(noToken.status, 403);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'two\n', 'nothing was restored');
});

test('read endpoints: summary, timeline pages, a checkpoint and its files, a file diff, a comparison with the live workspace', async (t) => {
  const box = sandbox();
  const { first, second } = await history(box);
  const ui = await startUi(t, box);
  const summary = (await get(ui, '/api/summary')).json;
  t.true(summary.ok);
  t.is(summary.workspaces[0].current, true);
  t.is(summary.workspaces[0].path, box.ws);
  const ws = summary.current;
  const page = (await get(ui, `/api/timeline?ws=${ws}&limit=1`)).json;
  t.is(page.total, 2);
  t.is(page.records.length, 1);
  t.is(page.records[0].id, second.id);
  t.deepEqual(
    page.sessions.map((s) => [s.id, s.turns, s.checkpoints]),
    [['sess-ui-1', 1, 1]],
  );
  const next = (await get(ui, `/api/timeline?ws=${ws}&offset=1&limit=1`)).json;
  t.is(next.records[0].id, first.id);
  const cp = (await get(ui, `/api/checkpoint?ws=${ws}&id=${second.id.slice(0, 8)}`)).json;
  t.deepEqual(cp.files, [
    { status: 'M', path: 'a.txt' },
    { status: 'A', path: 'b.txt' },
  ]);
  const fileDiff = (await get(ui, `/api/file-diff?ws=${ws}&to=${second.id}&path=a.txt`)).json;
  t.regex(fileDiff.diff, /-one\n\+two/);
  t.notRegex(fileDiff.diff, /b\.txt/);
  write(box, 'a.txt', 'three\n');
  const live = (await get(ui, `/api/compare?ws=${ws}&from=${second.id}`)).json;
  t.deepEqual(live.files, [{ status: 'M', path: 'a.txt' }]);
  const liveDiff = (await get(ui, `/api/file-diff?ws=${ws}&from=${second.id}&path=a.txt`)).json;
  t.regex(liveDiff.diff, /-two\n\+three/);
});

test('a rewind inside the agent: the timeline tells it as status does; resume gives a turn’s dry run and the commands, read-only; bad turns are 400 and 404', async (t) => {
  const box = sandbox();
  await claudeSession(box);
  const ui = await startUi(t, box);
  const ws = (await get(ui, '/api/summary')).json.current;
  const page = (await get(ui, `/api/timeline?ws=${ws}&limit=50`)).json;
  t.like(page.rewinds, [
    { session: 'cs1', beforeTurn: 2, turns: 'turns 2–3', kind: 'conversation', pending: 3, shell: 2, address: 'turn:2~1@cs1' },
  ]);
  t.deepEqual([...new Set(page.records.filter((r) => r.session === 'cs1').map((r) => `${r.turn}=${r.turnLabel}`))].sort(), [
    '1=1',
    '2=2~1',
    '3=3~1',
    '4=2',
  ]);
  const before = workspaceState(box);
  const r = (await get(ui, `/api/resume?ws=${ws}&turn=${encodeURIComponent('turn:2~1')}`)).json;
  t.true(r.ok, r.error);
  t.like(r, {
    agent: 'claude',
    session: 'cs1',
    turn: 2,
    commandLine: 'claude --resume=cs1',
    resumeCommand: 'git ckpt resume turn:2~1@cs1',
  });
  // As restore does, resume deletes nothing unless asked (--delete-new): the files turn 2 did not have stay.
  t.deepEqual(r.restore.files, []);
  t.is(r.restore.leftovers.length, 4);
  t.is(workspaceState(box), before, 'nothing written');
  const bad = await get(ui, `/api/resume?ws=${ws}&turn=latest`);
  t.is(bad.status, 400);
  t.regex(bad.json.error, /resume goes back to a turn of an agent session/);
  const missing = await get(ui, `/api/resume?ws=${ws}&turn=${encodeURIComponent('turn:9')}`);
  t.is(missing.status, 404);
});

test('errors: 400 for bad JSON and fields, 404 for unknown checkpoints and endpoints, 413 over 64 KiB, 409 for a busy workspace; always {ok: false, error}', async (t) => {
  const box = sandbox();
  await history(box);
  // A short lock wait, so that the busy case answers quickly.
  appendFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\tlockTimeout = 1s\n');
  const ui = await startUi(t, box);
  const ws = (await get(ui, '/api/summary')).json.current;
  mkdirSync(path.join(box.base, 'planted'));
  writeFileSync(path.join(box.base, 'planted', 'workspace'), `${box.ws}\n`);
  const cases = [
    [await post(ui, '/api/preview-diff', '{not json'), 400, /not valid JSON/],
    [await post(ui, '/api/preview-diff', { ws, target: 'latest', extra: 1 }), 400, /body/],
    [await post(ui, '/api/preview-diff', { ws, target: 'latest', mode: 'sideways' }), 400, /mode/],
    [await post(ui, '/api/preview-diff', { ws, target: '--output=/tmp/x' }), 400, /not a checkpoint address/],
    [await post(ui, '/api/preview-diff', { ws, target: 'latest', paths: ['../outside'] }), 400, /outside the workspace/],
    [await post(ui, '/api/preview-diff', { ws, target: 'ffffffffff' }), 404, /unknown checkpoint/],
    [await post(ui, '/api/preview-diff', { ws: 'nope', target: 'latest' }), 404, /unknown workspace/],
    // A store id is a name under the store root, never a path: a folder outside it that looks like a store is unknown.
    [await post(ui, '/api/preview-diff', { ws: '../planted', target: 'latest' }), 404, /unknown workspace/],
    [await get(ui, `/api/timeline?ws=${encodeURIComponent(`${box.base}/planted`)}`), 404, /unknown workspace/],
    [await get(ui, `/api/checkpoint?ws=${ws}&id=latest~5`), 404, /only 2 checkpoints exist/],
    [await get(ui, `/api/file-diff?ws=${ws}&to=latest&path=/etc/passwd`), 400, /outside the workspace/],
    [await get(ui, `/api/timeline?ws=${ws}&limit=0`), 400, /limit/],
    // Validation errors read as sentences, not as the schema library's words.
    [await post(ui, '/api/preview-diff', { ws, target: null }), 400, /^body\.target is missing$/],
    [await post(ui, '/api/preview-diff', { ws, target: '' }), 400, /^body\.target must not be empty$/],
    [await post(ui, '/api/preview-diff', { ws, target: 7 }), 400, /^body\.target must be a string, not number 7$/],
    [await post(ui, '/api/preview-diff', { ws, target: 'latest', mode: 'sideways' }), 400, /^body\.mode must be one of "asof", "revert"$/],
    [await post(ui, '/api/preview-diff', { ws, target: 'latest', extra: 1 }), 400, /^body has a field it does not take: extra$/],
    [await get(ui, '/api/nothing-here'), 404, /no such endpoint/],
    [
      await post(ui, '/api/preview-diff', { ws, target: 'latest', paths: Array.from({ length: 40 }, () => 'x'.repeat(2000)) }),
      413,
      /64 KiB/,
    ],
  ];
  for (const [r, status, pattern] of cases) {
    t.is(r.status, status, r.body);
    t.is(r.json?.ok, false, r.body);
    t.regex(r.json?.error ?? '', pattern);
  }
  // Busy: another live process holds the workspace lock.
  const lock = path.join(storeDir(box), 'lock');
  writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), time: Date.now() }));
  const busy = await post(ui, '/api/rollback', { ws, target: 'latest~1', apply: true, planId: '0123456789abcdef' });
  t.is(busy.status, 409, busy.body);
  t.regex(busy.json.error, /workspace is busy/);
});

test('without ws, every endpoint works on the workspace git ckpt ui was started in', async (t) => {
  const box = sandbox();
  const { first } = await history(box);
  write(box, 'a.txt', 'work in progress\n');
  const ui = await startUi(t, box);
  const ws = (await get(ui, '/api/summary')).json.current;
  const named = (await get(ui, `/api/timeline?ws=${ws}`)).json;
  const bare = (await get(ui, '/api/timeline')).json;
  t.true(bare.ok, JSON.stringify(bare));
  t.deepEqual(bare.records, named.records);
  t.true((await get(ui, `/api/checkpoint?id=${first.id}`)).json.ok);
  t.regex((await get(ui, '/api/file-diff?path=a.txt')).json.diff, /\+work in progress/);
  const preview = (await post(ui, '/api/preview-diff', { target: first.id })).json;
  t.true(preview.dryRun);
  const applied = (await post(ui, '/api/rollback', { target: first.id, apply: true, planId: preview.planId })).json;
  t.false(applied.dryRun, JSON.stringify(applied));
  const undoPlan = (await post(ui, '/api/rollback-undo', { dryRun: true })).json;
  const undone = (await post(ui, '/api/rollback-undo', { planId: undoPlan.planId })).json;
  t.true(undone.ok);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'work in progress\n');
});

test('restore through the API: the preview changes nothing; apply and undo round-trip byte for byte; the user’s .git is untouched', async (t) => {
  const box = sandbox();
  const { first } = await history(box);
  write(box, 'a.txt', 'work in progress\n');
  const userGit = treeState(path.join(box.ws, '.git'));
  const ui = await startUi(t, box);
  const ws = (await get(ui, '/api/summary')).json.current;
  const before = `${treeState(box.ws, { skip: ['.git'] })}\n${treeState(storeDir(box), { skip: ['hook.log', 'probe.json'] })}`;
  const content = workspaceState(box);
  const preview = (await post(ui, '/api/preview-diff', { ws, target: first.id.slice(0, 8), deleteNew: true })).json;
  t.true(preview.dryRun);
  t.deepEqual(
    preview.files.map((f) => `${f.action} ${f.path}`),
    ['restore a.txt', 'delete b.txt'],
  );
  t.regex(preview.diff, /-work in progress\n\+one/);
  // The seed's contract: dryRun: true plans; without it the request applies, and only the plan previewed.
  const dry = (await post(ui, '/api/rollback', { ws, target: first.id.slice(0, 8), deleteNew: true, dryRun: true })).json;
  t.true(dry.dryRun);
  t.is(dry.planId, preview.planId, 'the same plan as preview-diff');
  const unconsented = await post(ui, '/api/rollback', { ws, target: first.id.slice(0, 8), deleteNew: true });
  t.is(unconsented.status, 400, 'an apply without the previewed plan id is refused');
  t.false(unconsented.json.ok);
  t.regex(unconsented.json.error, /planId/);
  const contradiction = await post(ui, '/api/rollback', { ws, target: first.id, dryRun: true, apply: true });
  t.is(contradiction.status, 400);
  t.is((await post(ui, '/api/preview-diff', { ws, target: first.id, dryRun: false })).status, 400, 'preview-diff never applies');
  const unknown = await post(ui, '/api/rollback', { ws, target: 'deadbeef', dryRun: true });
  t.is(unknown.status, 404, JSON.stringify(unknown.json));
  t.false(unknown.json.ok);
  t.is(`${treeState(box.ws, { skip: ['.git'] })}\n${treeState(storeDir(box), { skip: ['hook.log', 'probe.json'] })}`, before);

  const applied = (await post(ui, '/api/rollback', { ws, target: first.id.slice(0, 8), deleteNew: true, planId: preview.planId })).json;
  t.false(applied.dryRun);
  t.truthy(applied.guard);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'one\n');
  const undoPlan = (await post(ui, '/api/rollback-undo', { ws, dryRun: true })).json;
  t.true(undoPlan.dryRun);
  const undone = (await post(ui, '/api/rollback-undo', { ws, apply: true, planId: undoPlan.planId })).json;
  t.true(undone.ok);
  t.is(workspaceState(box), content);
  t.is(treeState(path.join(box.ws, '.git')), userGit);
});

test('live: a hook firing while the page is open shows as a ledger event and in the next timeline page', async (t) => {
  const box = sandbox();
  await history(box);
  const ui = await startUi(t, box);
  const ws = (await get(ui, '/api/summary')).json.current;
  const stream = http.get({
    host: '127.0.0.1',
    port: ui.port,
    path: `/api/events?ws=${ws}`,
    headers: authed(ui, { host: `127.0.0.1:${ui.port}` }),
  });
  t.teardown(() => stream.destroy());
  let text = '';
  let hello;
  const helloSeen = new Promise((resolve) => (hello = resolve));
  const seen = new Promise((resolve, reject) => {
    stream.on('error', reject);
    stream.on('response', (res) => {
      res.on('data', (d) => {
        text += d;
        // The server sends hello once it watches the ledger: a write after it is seen.
        if (text.includes('event: hello\n')) hello();
        if (text.includes('event: ledger\n')) resolve();
      });
    });
  });
  await helloSeen;
  write(box, 'by-agent.txt', 'written by a tool\n');
  // A hook and an API request at the same time: both go through the lock, both succeed.
  const hook = spawn(process.execPath, [CLI, 'hook', 'claude', 'post'], { cwd: box.ws, env: box.env });
  hook.stdin.end(
    JSON.stringify({
      session_id: 'sess-live',
      prompt_id: 'p1',
      cwd: box.ws,
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_use_id: 'toolu_1',
    }),
  );
  const [preview, code] = await Promise.all([
    post(ui, '/api/preview-diff', { ws, target: 'latest' }),
    new Promise((r) => hook.on('close', r)),
  ]);
  t.is(preview.status, 200, preview.body);
  t.is(code, 0);
  await seen;
  t.regex(text, /^event: hello\n.*event: ledger\n/s, 'hello, then the ledger event');
  const page = (await get(ui, `/api/timeline?ws=${ws}&limit=1`)).json;
  t.is(page.records[0].session, 'sess-live');
  t.deepEqual(page.records[0].paths, [{ status: 'A', path: 'by-agent.txt' }]);
});

test('twelve event streams at once: every one hears of a ledger change, and the server prints no listener warning', async (t) => {
  const box = sandbox();
  await history(box);
  const ui = await startUi(t, box);
  let stderr = '';
  ui.child.stderr.on('data', (d) => (stderr += d));
  const ws = (await get(ui, '/api/summary')).json.current;
  const streams = Array.from({ length: 12 }, () =>
    http.get({ host: '127.0.0.1', port: ui.port, path: `/api/events?ws=${ws}`, headers: authed(ui) }),
  );
  t.teardown(() => {
    for (const s of streams) s.destroy();
  });
  const texts = streams.map(() => '');
  for (const [i, s] of streams.entries()) s.on('response', (res) => res.on('data', (d) => (texts[i] += d)));
  const heard = async (pattern) => {
    while (!texts.every((text) => pattern.test(text))) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  await heard(/event: hello/);
  write(box, 'c.txt', 'new\n');
  await ckptJson(box, ['snapshot']);
  await heard(/event: ledger/);
  t.notRegex(stderr, /MaxListenersExceeded/);
  t.is(stderr, '');
});

test('ui --port outside 0-65535 is a usage error, and a port in use one line too', async (t) => {
  const box = sandbox();
  const r = await ckpt(box, ['ui', '--no-open', '--port', '99999']);
  t.is(r.code, 2);
  t.is(r.stderr, 'git-ckpt: --port takes a port from 0 to 65535 (0: a free one), not 99999\n');
  // A port another program holds: one line saying so, not Node's EADDRINUSE.
  const busy = http.createServer();
  await new Promise((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => busy.close());
  const port = busy.address().port;
  const taken = await ckpt(box, ['ui', '--no-open', '--port', String(port)]);
  t.is(taken.code, 1);
  t.is(taken.stderr, `git-ckpt: port ${port} on 127.0.0.1 is in use (choose another with --port, or leave it out for a free one)\n`);
});

test('checkpoints fetched from another machine: the timeline names their origin, and a restore to one applies through the API', async (t) => {
  const other = sandbox();
  const remote = path.join(other.base, 'remote.git');
  spawnSync('git', ['init', '-q', '--bare', remote], { env: other.env });
  write(other, 'far.txt', 'written on another machine\n');
  await ckptJson(other, ['snapshot', '--kind', 'post', '--session', 'far', '--turn', '1']);
  await ckptJson(other, ['share', 'init', '--remote', remote]);
  await ckptJson(other, ['push']);
  const box = sandbox();
  await history(box);
  await ckptJson(box, ['share', 'init', '--remote', remote]);
  await ckptJson(box, ['fetch']);
  const ui = await startUi(t, box);
  const ws = (await get(ui, '/api/summary')).json.current;
  const page = (await get(ui, `/api/timeline?ws=${ws}&limit=50`)).json;
  // Another store's session is named by its writer (it never joins one of this store's).
  const isFar = (r) => r.session?.startsWith('far@');
  const far = page.records.find(isFar);
  t.like(far.origin, { remote: 'ckpt' });
  t.true(page.records.filter((r) => !isFar(r)).every((r) => r.origin === null));
  const preview = (await post(ui, '/api/preview-diff', { ws, target: far.id })).json;
  t.true(preview.ok, preview.error);
  const applied = (await post(ui, '/api/rollback', { ws, target: far.id, apply: true, planId: preview.planId })).json;
  t.true(applied.ok, applied.error);
  t.is(readFileSync(path.join(box.ws, 'far.txt'), 'utf8'), 'written on another machine\n');
});
