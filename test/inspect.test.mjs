import test from 'ava';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ckpt, ckptJson, holdLock, sandbox, storeDir, write } from './helpers.mjs';

async function history() {
  const box = sandbox();
  write(box, 'a.txt', 'a1\n');
  write(box, 'b.txt', 'b1\n');
  const ids = [(await ckptJson(box, ['snapshot', '-m', 'start'])).id];
  for (let i = 2; i <= 5; i++) {
    write(box, 'a.txt', `a${i}\n`);
    write(box, `new${i}.txt`, `${i}\n`);
    ids.push(
      (
        await ckptJson(box, [
          'snapshot',
          '--session',
          i % 2 ? 'odd' : 'even',
          '--turn',
          String(i),
          '--step',
          '1',
          '--tool',
          'Edit',
          '--kind',
          'post',
        ])
      ).id,
    );
  }
  return { box, ids };
}

test('log: newest first, short ids, attribution, stats, paths, and "N older" when -n cuts', async (t) => {
  const { box, ids } = await history();
  const r = await ckpt(box, ['log', '-n', '2']);
  t.is(r.code, 0);
  const all = r.stdout.trim().split('\n');
  // Session checkpoints are grouped under a header per session and turn.
  t.deepEqual(
    all.filter((l) => l.startsWith('──')),
    ['── session odd · turn 5 (before it: turn:5@odd) ──', '── session even · turn 4 (before it: turn:4@even) ──'],
  );
  const lines = all.filter((l) => !l.startsWith('──'));
  t.is(lines.length, 3);
  t.true(lines[0].startsWith(ids[4].slice(0, 8)));
  t.regex(lines[0], /just now/);
  t.regex(lines[0], /s:odd t5 #1 Edit post/);
  t.regex(lines[0], /\+1 ~1 -0/);
  t.regex(lines[0], /a\.txt, new5\.txt/);
  t.true(lines[1].startsWith(ids[3].slice(0, 8)));
  t.is(lines[2], '3 older checkpoints');
  t.notRegex(r.stdout, /\x1b\[/, 'no colour when not a TTY');
  const oneline = await ckpt(box, ['log', '--oneline']);
  t.is(oneline.stdout.trim().split('\n').length, 5);
  const stat = await ckpt(box, ['log', '-n', '1', '--stat']);
  t.regex(stat.stdout, /^ {4}A new5\.txt$/m);
  t.regex(stat.stdout, /^ {4}M a\.txt$/m);
});

test('log --json: records with the documented fields; --session filters', async (t) => {
  const { box, ids } = await history();
  const all = await ckptJson(box, ['log']);
  t.deepEqual(
    all.map((r) => r.id),
    [...ids].reverse(),
  );
  for (const r of all) {
    for (const key of ['id', 'parent', 'time', 'session', 'tool', 'kind', 'stats', 'degraded']) t.true(key in r, key);
    t.false(r.degraded);
  }
  t.deepEqual(all[0].stats, { added: 1, modified: 1, deleted: 0 });
  t.is(all.at(-1).parent, null);
  const odd = await ckptJson(box, ['log', '--session', 'odd']);
  t.deepEqual(
    odd.map((r) => r.id),
    [ids[4], ids[2]],
  );
  const limited = await ckptJson(box, ['log', '-n', '1', '--all']);
  t.is(limited.length, 1);
  const conflict = await ckpt(box, ['log', '--session', 'odd', '--all']);
  t.is(conflict.code, 2);
});

test('show: header and git diff from the parent, in every format', async (t) => {
  const { box, ids } = await history();
  const full = await ckpt(box, ['show', ids[1].slice(0, 7)]);
  t.is(full.code, 0);
  t.regex(full.stdout, new RegExp(`^checkpoint ${ids[1]}\nParent:  ${ids[0]}\n`));
  t.regex(full.stdout, /^Kind: {4}post {2}Tool: Edit {2}s:even t2 #1$/m);
  t.regex(full.stdout, /^-a1$/m);
  t.regex(full.stdout, /^\+a2$/m);
  t.regex(full.stdout, / 2 files changed/);
  const ns = await ckpt(box, ['show', ids[1], '--name-status']);
  t.regex(ns.stdout, /^M\ta\.txt$/m);
  t.regex(ns.stdout, /^A\tnew2\.txt$/m);
  t.notRegex(ns.stdout, /^\+a2$/m);
  const stat = await ckpt(box, ['show', ids[1], '--stat']);
  t.regex(stat.stdout, /a\.txt +\| 2 \+-/);
  t.notRegex(stat.stdout, /^\+a2$/m);
  const root = await ckpt(box, ['show', ids[0], '--name-status']);
  t.regex(root.stdout, /^A\ta\.txt$/m);
  const json = await ckptJson(box, ['show', 'latest', '--patch']);
  t.is(json.id, ids[4]);
  t.regex(json.diff, /^\+a5$/m);
});

test('diff: latest against the live workspace (new files included), two checkpoints, and paths', async (t) => {
  const { box, ids } = await history();
  write(box, 'a.txt', 'live\n');
  write(box, 'fresh.txt', 'fresh\n');
  rmSync(path.join(box.ws, 'b.txt'));
  const live = await ckpt(box, ['diff', '--name-status']);
  t.is(live.code, 0, live.stderr);
  t.deepEqual(live.stdout.trim().split('\n').sort(), ['A\tfresh.txt', 'D\tb.txt', 'M\ta.txt']);
  const patch = await ckpt(box, ['diff']);
  t.regex(patch.stdout, /^\+live$/m);
  const between = await ckpt(box, ['diff', ids[0], ids[2], '--stat']);
  t.regex(between.stdout, /3 files changed/);
  const onlyA = await ckpt(box, ['diff', ids[0], ids[2], '--name-status', '--', 'a.txt']);
  t.is(onlyA.stdout.trim(), 'M\ta.txt');
  // Paths are relative to the current directory, like git's.
  write(box, 'sub/x.txt', 'x\n');
  const fromSub = await ckpt(box, ['diff', '--name-status', '--', 'x.txt'], { cwd: path.join(box.ws, 'sub') });
  t.is(fromSub.stdout.trim(), 'A\tsub/x.txt');
  // A diff creates no checkpoint.
  t.is((await ckptJson(box, ['log'])).length, ids.length);
  const snap = await ckptJson(box, ['snapshot']);
  t.true(snap.created, 'the next snapshot still sees the change the diff looked at');
});

test('status: workspace, store, counts, sessions, disk use, latest and whether the workspace changed', async (t) => {
  const { box, ids } = await history();
  const clean = await ckptJson(box, ['status']);
  t.is(clean.workspace, box.ws);
  t.true(clean.store.startsWith(box.store));
  t.is(clean.checkpoints, 5);
  t.deepEqual(clean.sessions.sort(), ['even', 'odd']);
  t.true(clean.bytesOnDisk > 0);
  t.is(clean.latest, ids[4]);
  t.false(clean.dirty);
  write(box, 'a.txt', 'changed\n');
  t.true((await ckptJson(box, ['status'])).dirty);
  const human = await ckpt(box, ['status']);
  t.regex(human.stdout, /checkpoints: 5 in 2 sessions/);
  t.regex(human.stdout, /^dirty: +changed since the latest checkpoint$/m);
  t.is(human.stdout.match(/^workspace:/gm).length, 1, 'one line is labelled workspace: (the path)');
  const empty = sandbox();
  const none = await ckptJson(empty, ['status']);
  t.is(none.checkpoints, 0);
  t.is(none.latest, null);
  t.is(none.dirty, null);
});

test('status says "not compared" while the first snapshot runs or a restore is interrupted, and never claims a change it did not check', async (t) => {
  const { box } = await history();
  const store = storeDir(box);
  // A first snapshot running in the background (its heartbeat is fresh, its process alive).
  const release = holdLock(t, store);
  const lock = JSON.parse(readFileSync(path.join(store, 'lock'), 'utf8'));
  const beat = { pid: lock.pid, host: lock.host, started: Date.now(), hashed: 1, total: 9, updated: Date.now() };
  writeFileSync(path.join(store, 'baseline.json'), JSON.stringify(beat));
  const during = await ckptJson(box, ['status']);
  t.is(during.dirty, null);
  t.is(during.notCompared, 'the first snapshot is still being taken in the background');
  t.regex((await ckpt(box, ['status'])).stdout, /^dirty: +not compared with the latest checkpoint \(the first snapshot/m);
  release();
  rmSync(path.join(store, 'baseline.json'));
  // A journal left by an interrupted restore (here an unreadable one).
  writeFileSync(path.join(store, 'journal.json'), '{"torn');
  const interrupted = await ckptJson(box, ['status']);
  t.like(interrupted, { dirty: null, notCompared: 'a restore, revert or undo was interrupted' });
  rmSync(path.join(store, 'journal.json'));
  t.like(await ckptJson(box, ['status']), { dirty: false, notCompared: null });
});

test('status reads the ledger under the lock it captures with: a checkpoint made while it waited is the one it compares', async (t) => {
  const { box } = await history();
  const store = storeDir(box);
  const ledger = path.join(store, 'ledger.jsonl');
  const older = readFileSync(ledger, 'utf8');
  write(box, 'a.txt', 'newest\n');
  const newest = await ckptJson(box, ['snapshot']);
  const full = readFileSync(ledger, 'utf8');
  // The ledger as it was before the newest checkpoint, while another process holds the lock and writes it.
  writeFileSync(ledger, older);
  const release = holdLock(t, store);
  const status = ckptJson(box, ['status']);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  writeFileSync(ledger, full);
  release();
  t.like(await status, { latest: newest.id, dirty: false });
});
