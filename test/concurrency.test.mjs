import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CLI, ckptJson, ledgerLines, lsTree, sandbox, storeDir, write, entryExists, libPath } from './helpers.mjs';

const { Workspace } = await import(libPath('index'));

function run(box, script) {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', script], { cwd: box.ws, env: box.env });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

test('16 concurrent snapshot processes all succeed and leave one linear chain holding every file', async (t) => {
  const box = sandbox();
  write(box, 'base.txt', 'base\n');
  await ckptJson(box, ['snapshot']);
  const results = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      run(box, `printf '%s\\n' ${i} > agent-${i}.txt && "${process.execPath}" "${CLI}" snapshot --session p${i} --json >/dev/null`),
    ),
  );
  for (const [i, r] of results.entries()) t.is(r.code, 0, `process ${i}: ${r.stderr}`);
  const records = ledgerLines(box);
  for (let i = 1; i < records.length; i++) t.is(records[i].parent, records[i - 1].id, `record ${i} chains to its predecessor`);
  t.true(records.length >= 2 && records.length <= 17);
  const latest = lsTree(box, records.at(-1).id);
  for (let i = 0; i < 16; i++) t.true(latest.has(`agent-${i}.txt`), `agent-${i}.txt`);
  const dir = storeDir(box);
  t.false(existsSync(path.join(dir, 'index.lock')));
  t.false(entryExists(path.join(dir, 'lock')));
  t.deepEqual(
    readdirSync(dir).filter((n) => n.includes('.tmp-') || n.includes('stale')),
    [],
  );
});

test('in one process, concurrent snapshots of a workspace are serialized', async (t) => {
  const box = sandbox();
  const ws = Workspace.open(box.ws, { env: box.env });
  const results = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      writeFileSync(path.join(box.ws, `f${i}.txt`), `${i}\n`);
      return ws.snapshot({ kind: 'post', tool: `t${i}` });
    }),
  );
  t.true(results.some((r) => r.created));
  const records = ledgerLines(box);
  for (let i = 1; i < records.length; i++) t.is(records[i].parent, records[i - 1].id);
  t.is(lsTree(box, records.at(-1).id).size, 8);
});

test('a stale lock left by a dead process is broken; a live one is waited for', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  const lock = path.join(storeDir(box), 'lock');
  // A pid that cannot be alive (beyond any pid_max), killed mid-write: it left git debris too.
  writeFileSync(lock, JSON.stringify({ pid: 2 ** 30, host: (await import('node:os')).hostname(), time: Date.now() }));
  const debris = [path.join(storeDir(box), 'index.lock'), path.join(storeDir(box), 'git', 'objects', 'pack', 'tmp_pack_abc123')];
  mkdirSync(path.dirname(debris[1]), { recursive: true });
  for (const f of debris) writeFileSync(f, 'partial');
  write(box, 'a.txt', 'b\n');
  const r = await ckptJson(box, ['snapshot']);
  t.true(r.created);
  t.false(entryExists(lock));
  for (const f of debris) t.false(existsSync(f), f);
  // A live owner (this test process) holds it: the snapshot waits, then gives a clear error.
  writeFileSync(lock, JSON.stringify({ pid: process.pid, host: (await import('node:os')).hostname(), time: Date.now() }));
  const { ckpt, sh } = await import('./helpers.mjs');
  sh(box, ['config', '--global', 'ckpt.lockTimeout', '300ms']);
  const busy = await ckpt(box, ['snapshot']);
  t.is(busy.code, 1);
  t.regex(busy.stderr, /^git-ckpt: workspace is busy: lock .* held by pid \d+/);
});

test('in-process serialization: overlapping calls run one at a time, in arrival order, and errors do not jam the lane', async (t) => {
  const { serialize } = await import(libPath('lock'));
  const events = [];
  let active = 0;
  const task =
    (i, ms, fail = false) =>
    async () => {
      active++;
      t.is(active, 1, `task ${i} ran alone`);
      events.push(`start ${i}`);
      await new Promise((r) => setTimeout(r, ms));
      events.push(`end ${i}`);
      active--;
      if (fail) throw new Error(`task ${i} failed`);
      return i;
    };
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => serialize('lane', task(i, 20 - i * 4, i === 1))));
  t.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'],
  );
  t.deepEqual(
    events,
    [0, 1, 2, 3, 4].flatMap((i) => [`start ${i}`, `end ${i}`]),
  );
  // Later, uncontended calls still run, and other keys never wait for this one.
  t.is(await serialize('lane', task(5, 1)), 5);
  t.is(await serialize('other', async () => 'x'), 'x');
});

test('a stale lock and twelve contenders at once: no two processes ever hold the lock together, and none is left', async (t) => {
  const box = sandbox();
  const lock = path.join(box.base, 'lock');
  const log = path.join(box.base, 'holders.log');
  const lockModule = libPath('lock');
  // A dead owner's lock on this host, as a killed process leaves it (the host as the lock names it: a short hash).
  const { hostname } = await import('node:os');
  const { createHash } = await import('node:crypto');
  const host = createHash('sha1').update(hostname()).digest('hex').slice(0, 12);
  symlinkSync(`git-ckpt:${2 ** 30}:${host}:${Date.now()}`, lock);
  const script = `
    const { withLock } = await import(${JSON.stringify(lockModule)});
    const { appendFileSync } = await import('node:fs');
    for (let i = 0; i < 3; i++)
      await withLock(${JSON.stringify(lock)}, 30000, async () => {
        appendFileSync(${JSON.stringify(log)}, 'enter ' + process.pid + '\\n');
        await new Promise((r) => setTimeout(r, 5));
        appendFileSync(${JSON.stringify(log)}, 'leave ' + process.pid + '\\n');
      });`;
  const results = await Promise.all(
    Array.from({ length: 12 }, () => run(box, `"${process.execPath}" --input-type=module -e '${script.replaceAll("'", "'\\''")}'`)),
  );
  for (const r of results) t.is(r.code, 0, r.stderr);
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  t.is(lines.length, 12 * 3 * 2);
  let holder = null;
  for (const line of lines) {
    const [what, pid] = line.split(' ');
    if (what === 'enter') {
      t.is(holder, null, `pid ${pid} entered while ${holder} held the lock`);
      holder = pid;
    } else {
      t.is(holder, pid);
      holder = null;
    }
  }
  t.false(entryExists(lock));
});

test('a process removes the lock only while it still names that process', async (t) => {
  const box = sandbox();
  const lock = path.join(box.base, 'lock');
  const { withLock } = await import(libPath('lock'));
  await withLock(lock, 1000, async () => {
    // Broken by mistake and taken by another process meanwhile (a suspended laptop, say).
    const { rmSync } = await import('node:fs');
    rmSync(lock);
    symlinkSync(`git-ckpt:${process.pid + 1}:abcdefabcdef:${Date.now()}`, lock);
  });
  t.true(entryExists(lock), "the other process's lock stands");
});
