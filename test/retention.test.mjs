import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import {
  CLI,
  ckpt,
  ckptJson,
  ledgerLines,
  sandbox,
  sh,
  shadowGit,
  storeDir,
  storedBytes,
  treeState,
  workspaceState,
  write,
  entryExists,
  libPath,
} from './helpers.mjs';

const { planRetention, retentionPolicy } = await import(libPath('retention'));
const { DEFAULT_SETTINGS } = await import(libPath('settings'));
const { orderRecords } = await import(libPath('fsck'));
const { recordFromCommit } = await import(libPath('trailers'));

const DAY = 86_400_000;
const rec = (id, session, time, extra = {}) => ({ id, session, time, bytes: 100, parent: null, tree: 't', kind: 'post', ...extra });

test('plan: each rule drops what it should and says so; the floors hold', (t) => {
  const now = 100 * DAY;
  const records = [
    rec('a1', 'A', now - 40 * DAY),
    rec('a2', 'A', now - 35 * DAY),
    rec('b1', 'B', now - 31 * DAY),
    rec('a3', 'A', now - 3 * DAY),
    rec('a4', 'A', now - 2 * DAY),
    rec('a5', 'A', now - DAY),
    rec('n1', null, now - 60 * DAY),
  ];
  const plan = planRetention({ records, now, policy: { keep: 2, maxAgeMs: 30 * DAY, maxBytes: 1e12 }, storeBytes: 1000 });
  const rules = Object.fromEntries(plan.drop.map((d) => [d.record.id, d.rule]));
  t.deepEqual(rules, { a1: 'keep', a2: 'keep', a3: 'keep' });
  // b1 is old, and n1 older still, but each is the newest of its session: floors.
  t.deepEqual(
    plan.keep.map((r) => r.id),
    ['b1', 'a4', 'a5', 'n1'],
  );
  t.true(plan.protected.some((p) => p.id === 'b1' && /newest of session B/.test(p.why)));

  const aged = planRetention({ records, now, policy: { keep: 500, maxAgeMs: 30 * DAY, maxBytes: 1e12 }, storeBytes: 1000 });
  t.deepEqual(Object.fromEntries(aged.drop.map((d) => [d.record.id, d.rule])), { a1: 'maxAge', a2: 'maxAge' });

  // Over the quota: the oldest go first, by the byte rule, but never the floors.
  const big = planRetention({ records, now, policy: { keep: 500, maxAgeMs: 365 * DAY, maxBytes: 500 }, storeBytes: 1400 });
  // 700 content bytes stand for 1400 on disk: each drop frees ~200, and the floors stop it at a4.
  t.deepEqual(
    big.drop.map((d) => [d.record.id, d.rule]),
    [
      ['a1', 'maxBytes'],
      ['a2', 'maxBytes'],
      ['a3', 'maxBytes'],
      ['a4', 'maxBytes'],
    ],
  );
  t.is(big.bytesAfterEstimate, 600);
  const starved = planRetention({ records, now, policy: { keep: 1, maxAgeMs: 1, maxBytes: 0 }, storeBytes: 1e9 });
  t.deepEqual(starved.keep.map((r) => r.id).sort(), ['a5', 'b1', 'n1'], 'a store over its quota never prunes itself into nothing');
});

test('plan: the last operation and its guard (the undo target) and an open journal are never dropped', (t) => {
  const now = 100 * DAY;
  const records = [
    rec('g1', 'A', now - 50 * DAY, { kind: 'guard' }),
    rec('r1', 'A', now - 49 * DAY, { kind: 'restore', op: { target: 'x', guard: 'g1' } }),
    rec('j1', 'A', now - 48 * DAY),
    rec('a9', 'A', now - 47 * DAY),
    rec('a10', 'A', now),
  ];
  const plan = planRetention({
    records,
    now,
    policy: { ...retentionPolicy(DEFAULT_SETTINGS), keep: 1 },
    storeBytes: 10,
    journalIds: ['j1'],
  });
  t.deepEqual(
    plan.drop.map((d) => d.record.id),
    ['a9'],
  );
  t.deepEqual(
    plan.keep.map((r) => r.id),
    ['g1', 'r1', 'j1', 'a10'],
  );
});

/** A workspace with `count` checkpoints, each rewriting a 200 KB file; returns ids and each checkpoint's workspace state. */
async function history(box, count) {
  const states = new Map();
  const ids = [];
  for (let i = 0; i < count; i++) {
    write(box, 'big.bin', Buffer.from(Array.from({ length: 200_000 }, (_, j) => (j * 31 + i * 97) % 251)));
    write(box, `notes/${i}.txt`, `note ${i}\n`);
    const r = await ckptJson(box, ['snapshot', '-m', `c${i}`]);
    ids.push(r.id);
    states.set(r.id, workspaceState(box));
  }
  return { ids, states };
}

test('gc drops what the policy lets go, reclaims the space, and every kept checkpoint restores byte for byte', async (t) => {
  const box = sandbox();
  const { ids, states } = await history(box, 8);
  sh(box, ['config', '--global', 'ckpt.keep', '3']);
  const store = storeDir(box);
  const dry = await ckptJson(box, ['gc', '--dry-run']);
  t.true(dry.dryRun);
  t.is(dry.dropped.length, 5);
  t.true(dry.dropped.every((d) => d.rule === 'keep'));
  t.is(ledgerLines(box).length, 8, 'the dry run changed nothing');
  const report = await ckptJson(box, ['gc']);
  t.is(report.kept, 3);
  t.true(report.bytesAfter < report.bytesBefore / 2, `${report.bytesBefore} → ${report.bytesAfter}`);
  t.deepEqual(
    ledgerLines(box).map((r) => r.id),
    ids.slice(5),
  );
  const packs = readdirSync(path.join(store, 'git/objects/pack'));
  t.is(packs.filter((f) => f.endsWith('.pack')).length, 1);
  t.is(packs.filter((f) => f.endsWith('.keep')).length, 1);
  const fsck = await ckptJson(box, ['fsck']);
  t.deepEqual(fsck.degraded, []);
  t.is(fsck.orphans, 0);
  for (const id of ids.slice(5)) {
    const r = await ckptJson(box, ['restore', id, '--delete-new']);
    t.is(r.counts.failed, 0);
    t.is(workspaceState(box), states.get(id), `checkpoint ${id.slice(0, 8)} restores byte for byte`);
  }
  // The oldest kept checkpoint's parent is gone: show diffs from nothing older and says so.
  const show = await ckptJson(box, ['show', ids[5]]);
  t.regex(show.base.reason, /was dropped by gc/);
  // A dropped checkpoint is simply unknown now.
  t.regex((await ckpt(box, ['show', ids[0]])).stderr, /unknown checkpoint/);
});

test("gc removes leftovers of killed processes: temporary packs and objects, old temporary files, a dead owner's lock", async (t) => {
  const box = sandbox();
  await history(box, 2);
  const store = storeDir(box);
  const debris = [
    path.join(store, 'git/objects/pack/tmp_pack_abc123'),
    path.join(store, 'git/objects/pack/tmp_idx_abc123'),
    path.join(store, 'git/objects/12/tmp_obj_xyz'),
    path.join(store, 'ledger.jsonl.tmp-4242'),
  ];
  for (const f of debris) {
    mkdirSync(path.dirname(f), { recursive: true });
    writeFileSync(f, 'junk');
  }
  const old = new Date(Date.now() - 3600_000);
  utimesSync(path.join(store, 'ledger.jsonl.tmp-4242'), old, old);
  const dry = await ckptJson(box, ['gc', '--dry-run']);
  t.is(dry.debris.length, 4);
  for (const f of debris) t.true(existsSync(f), `dry run keeps ${f}`);
  const report = await ckptJson(box, ['gc']);
  t.deepEqual(report.debris.sort(), [...debris].sort());
  for (const f of debris) t.false(existsSync(f), f);
  // A lock whose owner died is broken, and the debris its git children may have left goes with it.
  writeFileSync(path.join(store, 'lock'), JSON.stringify({ pid: 999_999, host: hostname(), time: Date.now() - 3600_000 }));
  writeFileSync(path.join(store, 'git/objects/pack/tmp_pack_dead'), 'junk');
  await ckptJson(box, ['gc']);
  t.false(entryExists(path.join(store, 'lock')));
  t.false(existsSync(path.join(store, 'git/objects/pack/tmp_pack_dead')));
  t.is(ledgerLines(box).length, 2);
});

test('a git gc run by hand in the shadow repository (default, aggressive, repack -a -d) prunes no checkpoint', async (t) => {
  const box = sandbox();
  const { ids, states } = await history(box, 4);
  // Loose objects too: a small change after the packed ones.
  write(box, 'small.txt', 'loose\n');
  const loose = await ckptJson(box, ['snapshot']);
  states.set(loose.id, workspaceState(box));
  ids.push(loose.id);
  for (const args of [['gc'], ['gc', '--aggressive'], ['repack', '-a', '-d'], ['gc', '--prune']]) shadowGit(box, args);
  const fsck = await ckptJson(box, ['fsck']);
  t.deepEqual(fsck.degraded, []);
  for (const id of ids) {
    await ckptJson(box, ['restore', id, '--delete-new']);
    t.is(workspaceState(box), states.get(id));
  }
});

test('deleted objects: log marks degraded checkpoints, latest skips them, naming one is an error that says what is missing', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  const first = await ckptJson(box, ['snapshot']);
  write(box, 'a.txt', '2\n');
  const second = await ckptJson(box, ['snapshot']);
  const store = storeDir(box);
  // Both are loose: delete the second's commit, and the first's root tree.
  rmSync(path.join(store, 'git/objects', second.id.slice(0, 2), second.id.slice(2)));
  const firstTree = ledgerLines(box)[0].tree;
  rmSync(path.join(store, 'git/objects', firstTree.slice(0, 2), firstTree.slice(2)));
  const log = await ckpt(box, ['log']);
  t.is(log.stdout.match(/⚠ degraded/g).length, 2);
  t.regex(log.stdout, /2 checkpoint\(s\) degraded/);
  const json = await ckptJson(box, ['log']);
  t.deepEqual(
    json.map((r) => r.degraded),
    [true, true],
  );
  for (const args of [
    ['show', second.id],
    ['diff', second.id],
    ['restore', second.id],
    ['revert', second.id],
  ]) {
    const r = await ckpt(box, args);
    t.is(r.code, 1, args.join(' '));
    t.regex(r.stderr, new RegExp(`^git-ckpt: checkpoint ${second.id.slice(0, 8)} is degraded: its commit object is missing`));
  }
  t.regex((await ckpt(box, ['show', first.id])).stderr, /is degraded: its tree object is missing/);
  t.regex((await ckpt(box, ['show', 'latest'])).stderr, /no checkpoints yet|only 0 checkpoints/);
  const fsck = await ckpt(box, ['fsck', '--json']);
  t.deepEqual(JSON.parse(fsck.stdout).degraded, [first.id, second.id]);
  // Snapshots go on: a new checkpoint chains to the newest whole one (none here).
  write(box, 'a.txt', '3\n');
  const third = await ckptJson(box, ['snapshot']);
  t.true(third.created);
  t.is((await ckptJson(box, ['show', 'latest'])).id, third.id);
  t.deepEqual(
    (await ckptJson(box, ['log'])).map((r) => r.degraded),
    [false, true, true],
  );
});

test('a latest checkpoint that lost its commit object: the next one chains to the newest whole checkpoint, not to nothing', async (t) => {
  const box = sandbox();
  const ids = [];
  for (const v of ['1', '2', '3']) {
    write(box, 'a.txt', `${v}\n`);
    ids.push((await ckptJson(box, ['snapshot'])).id);
  }
  const store = storeDir(box);
  const loose = path.join(store, 'git/objects', ids[2].slice(0, 2), ids[2].slice(2));
  t.true(existsSync(loose), 'the latest commit is a loose object');
  rmSync(loose);
  t.deepEqual(
    (await ckptJson(box, ['log'])).map((r) => r.degraded),
    [true, false, false],
  );
  write(box, 'a.txt', '4\n');
  const next = await ckptJson(box, ['snapshot']);
  t.true(next.created);
  t.is(next.parent, ids[1], 'the parent is the newest checkpoint whose commit still exists');
  t.is(ledgerLines(box).at(-1).parent, ids[1]);
  // The commit itself says so too, and the chain from it is whole.
  t.is(shadowGit(box, ['rev-parse', `${next.id}^`]).trim(), ids[1]);
  t.deepEqual(shadowGit(box, ['rev-list', next.id]).trim().split('\n'), [next.id, ids[1], ids[0]]);
  t.is(storedBytes(box, next.id, 'a.txt').toString(), '4\n');
});

test('fsck --rebuild-ledger recovers the records from the commits themselves', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', '1\n');
  await ckptJson(box, ['snapshot', '-m', 'first', '--session', 's1', '--turn', '1', '--tool', 'Edit', '--kind', 'post']);
  write(box, 'a.txt', '2\n');
  write(box, 'b.txt', 'b\n');
  await ckptJson(box, ['snapshot', '-m', 'second']);
  const r = await ckptJson(box, ['restore', 'latest~1']);
  t.is(r.counts.failed, 0);
  const before = ledgerLines(box);
  writeFileSync(path.join(storeDir(box), 'ledger.jsonl'), 'garbage\n{"v":1}\n');
  const broken = await ckpt(box, ['fsck']);
  t.is(broken.code, 1);
  t.regex(broken.stdout, /2 ledger line\(s\) could not be read/);
  const rebuilt = await ckptJson(box, ['fsck', '--rebuild-ledger']);
  t.is(rebuilt.recovered, before.length);
  const after = ledgerLines(box);
  const pick = (x) => ({
    id: x.id,
    parent: x.parent,
    tree: x.tree,
    kind: x.kind,
    session: x.session,
    turn: x.turn,
    tool: x.tool,
    message: x.message,
    stats: x.stats,
    target: x.op?.target,
    guard: x.op?.guard,
  });
  t.deepEqual(after.map(pick), before.map(pick));
  t.true(existsSync(rebuilt.backup));
  // Undo still finds the restore and its guard.
  t.is((await ckptJson(box, ['undo', '--dry-run'])).op, 'undo');
});

test('rebuild helpers: only our own commits are read, and parents come before children', (t) => {
  const ours =
    'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor git-ckpt <git-ckpt@localhost.invalid> 1 +0000\ncommitter git-ckpt <git-ckpt@localhost.invalid> 1 +0000\n\nmsg\n\nCkpt-Kind: manual\nCkpt-Time: 5\nCkpt-Stats: +1 ~0 -0\n';
  const id = 'a'.repeat(40);
  t.is(recordFromCommit(id, ours).time, 5);
  t.is(recordFromCommit(id, ours.replace(/git-ckpt@localhost.invalid/g, 'me@example.com')), undefined);
  t.is(recordFromCommit(id, ours.replace('Ckpt-Kind: manual', 'Ckpt-Kind: restore')), undefined, 'an operation without its ids is refused');
  const a = { id: 'a', parent: null, time: 10 };
  const b = { id: 'b', parent: 'a', time: 10 };
  const c = { id: 'c', parent: 'b', time: 9 };
  t.deepEqual(
    orderRecords([c, b, a]).map((r) => r.id),
    ['a', 'b', 'c'],
  );
});

test('gc killed with SIGKILL at random moments, 20 times: every kept checkpoint stays intact', async (t) => {
  t.timeout(10 * 60 * 1000);
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.keep', '4']);
  const states = new Map();
  const snap = async (i) => {
    write(box, 'data.bin', Buffer.from(Array.from({ length: 120_000 }, (_, j) => (j * 7 + i * 13) % 253)));
    write(box, `f/${i % 40}.txt`, `${i}\n`);
    const r = await ckptJson(box, ['snapshot']);
    states.set(r.id, workspaceState(box));
  };
  for (let i = 0; i < 12; i++) await snap(i);
  // The kill window: one complete gc of this store, process start-up included. It shrinks to the
  // duration of any later gc that finished before its kill (the later stores are smaller, and the
  // machine's load changes), so random kills keep landing while gc runs, fast machine or loaded.
  const start = Date.now();
  await ckptJson(box, ['gc']);
  let window = Math.max(50, Date.now() - start);
  const aimLimit = window * 5;
  let midRun = 0;
  let afterLedger = 0;
  for (let kill = 0; kill < 20; kill++) {
    for (let i = 0; i < 3; i++) await snap(100 + kill * 3 + i);
    const before = ledgerLines(box).map((r) => r.id);
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, 'gc'], { cwd: box.ws, env: box.env, detached: true, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve({ signal, at: Date.now() })));
    if (kill % 2 === 0) await new Promise((r) => setTimeout(r, Math.random() * window));
    else {
      // Aim at the last phase: right after the ledger is replaced, while old packs and loose objects go.
      const ledger = path.join(storeDir(box), 'ledger.jsonl');
      const inode = statSync(ledger).ino;
      const until = Date.now() + aimLimit;
      while (Date.now() < until && statSync(ledger).ino === inode) await new Promise((r) => setImmediate(r));
    }
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* done already */
    }
    const end = await exited;
    const killed = end.signal === 'SIGKILL';
    if (killed) midRun++;
    else if (kill % 2 === 0) window = Math.max(50, Math.min(window, end.at - started) * 0.8);
    const after = ledgerLines(box).map((r) => r.id);
    if (killed && after.length < before.length) afterLedger++;
    t.true(
      after.every((id) => before.includes(id)),
      `kill ${kill}: the ledger holds only earlier checkpoints`,
    );
    t.true(after.length === before.length || after.length === 4, `kill ${kill}: the old ledger or the kept set`);
    const fsck = await ckptJson(box, ['fsck']);
    t.deepEqual(fsck.degraded, [], `kill ${kill}: no checkpoint in the ledger lost an object`);
  }
  t.log(
    `${midRun} of 20 kills landed while gc ran, ${afterLedger} of them after the ledger was rewritten (while old objects were being removed); final window ${Math.round(window)} ms`,
  );
  t.true(midRun >= 3, 'most kills should land while gc runs');
  // And every one left restores byte for byte after a final, complete gc.
  await ckptJson(box, ['gc']);
  for (const id of ledgerLines(box).map((r) => r.id)) {
    await ckptJson(box, ['restore', id, '--delete-new']);
    t.is(workspaceState(box), states.get(id));
  }
});

test('stores lists every store with size and last use, flags missing workspaces, and prunes them after a dry run', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  const other = path.join(box.base, 'other');
  mkdirSync(other);
  writeFileSync(path.join(other, 'b.txt'), 'b\n');
  await ckptJson(box, ['snapshot', '-C', other]);
  rmSync(other, { recursive: true });
  const list = await ckptJson(box, ['stores']);
  t.is(list.length, 2);
  t.deepEqual(list.map((s) => s.missing).sort(), [false, true]);
  t.true(list.every((s) => s.bytes > 0 && s.lastUsed > 0 && s.checkpoints === 1));
  const human = await ckpt(box, ['stores']);
  t.regex(human.stdout, /\(workspace missing\)/);
  // A header names the columns (newcomer report: "stores has no column header").
  t.regex(human.stdout, /^ +size {2}last used +checkpoints {2}workspace\n/);
  t.regex(human.stdout, new RegExp(`\\n +[\\d.]+ \\w*B {2}.+ {10}1 {2}${box.ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
  const dry = await ckptJson(box, ['stores', '--prune-missing', '--dry-run']);
  t.is(dry.removed.length, 1);
  t.is(readdirSync(box.store).length, 2, 'the dry run removed nothing');
  const done = await ckptJson(box, ['stores', '--prune-missing']);
  t.is(done.removed.length, 1);
  t.is(readdirSync(box.store).length, 1);
  t.is((await ckptJson(box, ['log'])).length, 1, 'the live workspace keeps its store');
});

test('status shows the quota in use', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  sh(box, ['config', '--global', 'ckpt.maxBytes', '1m']);
  const r = await ckpt(box, ['status']);
  t.regex(r.stdout, /disk: +[\d.]+ KiB of a 1\.0 MiB quota \(\d+%\)/);
  t.is((await ckptJson(box, ['status'])).maxBytes, 1024 * 1024);
});

test("gc, fsck and stores leave the user's .git alone", async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  sh(box, ['add', '.']);
  sh(box, ['commit', '-qm', 'x']);
  const head = readFileSync(path.join(box.ws, '.git', 'HEAD'));
  const commit = sh(box, ['rev-parse', 'HEAD']).stdout;
  const { ids } = await history(box, 3);
  sh(box, ['config', '--global', 'ckpt.keep', '2']);
  const before = treeState(path.join(box.ws, '.git'));
  // Each command must have run (exit 0) for the unchanged .git to mean anything; gc really drops one.
  for (const [args, check] of [
    [
      ['gc', '--dry-run'],
      (out) =>
        t.deepEqual(
          JSON.parse(out).dropped.map((d) => d.id),
          [ids[0]],
        ),
    ],
    [['gc'], (out) => t.is(JSON.parse(out).kept, 2)],
    [['fsck'], (out) => t.deepEqual(JSON.parse(out).degraded, [])],
    [['fsck', '--rebuild-ledger'], (out) => t.is(JSON.parse(out).recovered, 2)],
    [['stores'], (out) => t.is(JSON.parse(out)[0].checkpoints, 2)],
    [['stores', '--prune-missing', '--dry-run'], (out) => t.deepEqual(JSON.parse(out).removed, [])],
    [['status'], (out) => t.is(JSON.parse(out).checkpoints, 2)],
  ]) {
    const r = await ckpt(box, [...args, '--json']);
    t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    check(r.stdout);
    t.is(treeState(path.join(box.ws, '.git')), before, args.join(' '));
  }
  t.deepEqual(readFileSync(path.join(box.ws, '.git', 'HEAD')), head);
  t.is(sh(box, ['rev-parse', 'HEAD']).stdout, commit);
  t.deepEqual(
    ledgerLines(box).map((r) => r.id),
    ids.slice(1),
  );
});

test('every 200 checkpoints a snapshot starts gc in the background when the policy has something to drop', async (t) => {
  t.timeout(5 * 60 * 1000);
  const { Workspace } = await import(libPath('index'));
  const box = sandbox();
  write(box, 'a.txt', '0\n');
  const ws = Workspace.open(box.ws, { env: box.env });
  await ws.snapshot();
  writeFileSync(path.join(storeDir(box), 'config'), '[ckpt]\n\tkeep = 5\n');
  for (let i = 1; i < 200; i++) {
    write(box, 'a.txt', `${i}\n`);
    const r = await Workspace.open(box.ws, { env: box.env }).snapshot();
    t.true(r.created);
  }
  // The 200th checkpoint started `git ckpt gc --auto`; it waits for no one and trims to the newest 5.
  const deadline = Date.now() + 60_000;
  while (ledgerLines(box).length > 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  t.is(ledgerLines(box).length, 5);
  t.deepEqual((await ckptJson(box, ['fsck'])).degraded, []);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), '199\n');
});
