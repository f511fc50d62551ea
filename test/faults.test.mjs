// Faults a backup tool must survive without losing a byte: an unreadable folder
// under a restored path, an edit made between a crash and its recovery, gc while a
// journal is pending, restore's permission bits, counts that say what was written.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CLI,
  ckpt,
  ckptError,
  ckptJson,
  entryExists,
  ledgerLines,
  run,
  sandbox,
  sh,
  storeDir,
  storedBytes,
  treeState,
  workspaceState,
  testIf,
  write,
} from './helpers.mjs';

/**
 * How to run the CLI so that file modes bind: as root, with the capabilities that
 * override them dropped (setpriv, util-linux); as any other user, directly.
 */
const DAC_CAPS = '-dac_override,-dac_read_search,-fowner';
const asRoot = process.getuid?.() === 0;
const hasSetpriv = asRoot && spawnSync('setpriv', ['--version']).status === 0;
const modesBind = !asRoot || hasSetpriv;
const modeTest = testIf(test, modesBind, 'as root without setpriv, a folder cannot be made unreadable');

function ckptBound(box, args, opts = {}) {
  if (!asRoot) return ckpt(box, args, opts);
  return run(box, 'setpriv', [`--inh-caps=${DAC_CAPS}`, `--bounding-set=${DAC_CAPS}`, '--', process.execPath, CLI, ...args], opts);
}

async function jsonOf(promise) {
  const r = await promise;
  try {
    return { ...r, json: JSON.parse(r.stdout) };
  } catch {
    throw new Error(`not JSON (exit ${r.code}): ${r.stdout}${r.stderr}`);
  }
}

const journalOf = (box) => path.join(storeDir(box), 'journal.json');

modeTest(
  'an unreadable folder under a restored path: left alone, the rest restored, no journal left, and never overwritten later',
  async (t) => {
    const box = sandbox();
    write(box, 'priv/x.txt', 'v1\n');
    write(box, 'a', 'a1\n');
    const a = (await ckptJson(box, ['snapshot'])).id;
    write(box, 'priv/x.txt', 'v2\n');
    write(box, 'a', 'a2\n');
    await ckptJson(box, ['snapshot']);
    write(box, 'priv/x.txt', 'v3 never captured\n');
    write(box, 'a', 'c\n');
    chmodSync(path.join(box.ws, 'priv'), 0o000);
    t.teardown(() => chmodSync(path.join(box.ws, 'priv'), 0o755));

    const r = await jsonOf(ckptBound(box, ['restore', a, '--json']));
    t.is(r.code, 0, r.stderr);
    const priv = r.json.files.find((f) => f.path === 'priv/x.txt');
    t.is(priv?.action, 'skip');
    t.regex(priv.reason, /not captured now \(unreadable\)/);
    t.is(r.json.counts.restore, 1, 'a was restored');
    t.false(existsSync(journalOf(box)), 'no journal is left');
    t.is(readFileSync(path.join(box.ws, 'a'), 'utf8'), 'a1\n');

    chmodSync(path.join(box.ws, 'priv'), 0o755);
    t.is(readFileSync(path.join(box.ws, 'priv/x.txt'), 'utf8'), 'v3 never captured\n', 'the folder was never written');
    // Readable again, the next operation captures v3 before anything can touch it.
    const undo = await ckptJson(box, ['undo']);
    t.truthy(undo.record);
    t.is(storedBytes(box, undo.guard, 'priv/x.txt').toString(), 'v3 never captured\n', 'the guard of the next operation holds v3');
  },
);

modeTest('an unreadable folder does not wedge recovery: --continue finishes, and the folder is never written', async (t) => {
  const box = sandbox();
  for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, `A ${i}\n`);
  write(box, 'priv/x.txt', 'v1\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, `B ${i}\n`);
  write(box, 'priv/x.txt', 'v2\n');
  await ckptJson(box, ['snapshot']);
  // Interrupted after its first write, with priv/x.txt journaled.
  const crashed = await ckpt(box, ['restore', a], { env: { GIT_CKPT_TEST_CRASH: 'write:1' } });
  t.is(crashed.code, null, 'killed at the crash point');
  t.true(existsSync(journalOf(box)));
  write(box, 'priv/x.txt', 'v3 never captured\n');
  chmodSync(path.join(box.ws, 'priv'), 0o000);
  t.teardown(() => chmodSync(path.join(box.ws, 'priv'), 0o755));

  const r = await jsonOf(ckptBound(box, ['restore', '--continue', '--json']));
  t.is(r.code, 0, r.stderr);
  t.deepEqual(
    r.json.leftAlone.map((l) => l.path),
    ['priv/x.txt'],
  );
  t.false(existsSync(journalOf(box)));
  for (let i = 0; i < 3; i++) t.is(readFileSync(path.join(box.ws, `f${i}.txt`), 'utf8'), `A ${i}\n`);
  chmodSync(path.join(box.ws, 'priv'), 0o755);
  t.is(readFileSync(path.join(box.ws, 'priv/x.txt'), 'utf8'), 'v3 never captured\n');
});

for (const action of ['continue', 'abort']) {
  test(`an edit made between a crash and --${action} is left as it is, kept in a guard, and the pass completes`, async (t) => {
    const box = sandbox();
    for (let i = 0; i < 6; i++) write(box, `f${i}.txt`, `A ${i}\n`);
    const a = (await ckptJson(box, ['snapshot'])).id;
    for (let i = 0; i < 6; i++) write(box, `f${i}.txt`, `B ${i}\n`);
    const b = (await ckptJson(box, ['snapshot'])).id;
    const gitState = treeState(path.join(box.ws, '.git'));

    const crashed = await ckpt(box, ['restore', a], { env: { GIT_CKPT_TEST_CRASH: 'write:2' } });
    t.is(crashed.code, null);
    t.true(existsSync(journalOf(box)));
    // One path the pass had written, one it had not: both edited by hand, no hook runs.
    write(box, 'f0.txt', 'edit after the crash 0\n');
    write(box, 'f5.txt', 'edit after the crash 5\n');

    // The killed process's lock is broken by the next command; git freshens the mtime of objects it is asked to write again.
    const storeBytes = () => treeState(storeDir(box), { mtime: false, skip: ['probe.json', 'settings.cache', 'lock'] });
    const store = storeBytes();
    const workspace = workspaceState(box);
    const dry = await ckptJson(box, ['restore', `--${action}`, '--dry-run']);
    t.true(dry.dryRun);
    t.deepEqual(dry.leftAlone.map((l) => l.path).sort(), ['f0.txt', 'f5.txt'], 'the dry run names what it would leave alone');
    t.is(storeBytes(), store, 'a dry run leaves the store as it was');
    t.is(workspaceState(box), workspace);
    const r = await ckptJson(box, ['restore', `--${action}`]);
    t.deepEqual(r.leftAlone.map((l) => l.path).sort(), ['f0.txt', 'f5.txt']);
    t.is(readFileSync(path.join(box.ws, 'f0.txt'), 'utf8'), 'edit after the crash 0\n');
    t.is(readFileSync(path.join(box.ws, 'f5.txt'), 'utf8'), 'edit after the crash 5\n');
    const side = action === 'continue' ? 'A' : 'B';
    for (let i = 1; i < 5; i++) t.is(readFileSync(path.join(box.ws, `f${i}.txt`), 'utf8'), `${side} ${i}\n`);
    t.false(existsSync(journalOf(box)));
    // The recovery guard holds both edits.
    t.is(storedBytes(box, r.recoveryGuard, 'f5.txt').toString(), 'edit after the crash 5\n');
    t.truthy(r.record, 'the pass is recorded, so undo can reverse it');
    const record = ledgerLines(box).find((l) => l.id === r.record);
    // The restore's own guard is B (nothing had changed since it); an abort's guard is the state recovery found.
    t.is(record.op.guard, action === 'continue' ? b : r.recoveryGuard);
    if (action === 'abort') {
      t.true(record.op.aborted);
      t.is(record.op.target, b, 'an abort restores the journal guard');
      // undo of the abort: back to the state recovery found, the pass's writes included.
      await ckptJson(box, ['undo']);
      t.is(readFileSync(path.join(box.ws, 'f0.txt'), 'utf8'), 'edit after the crash 0\n');
      t.is(readFileSync(path.join(box.ws, 'f1.txt'), 'utf8'), 'A 1\n', 'the interrupted pass had written f1');
    } else {
      t.true(record.op.continued);
      t.deepEqual(record.op.leftAlone.sort(), ['f0.txt', 'f5.txt']);
      // undo of the continued restore: everything back to B but the two edits, which were never its change.
      const undo = await ckptJson(box, ['undo']);
      t.true(undo.files.some((f) => f.path === 'f5.txt' && f.action === 'skip'));
      t.is(readFileSync(path.join(box.ws, 'f5.txt'), 'utf8'), 'edit after the crash 5\n');
      t.is(readFileSync(path.join(box.ws, 'f0.txt'), 'utf8'), 'edit after the crash 0\n');
      t.is(readFileSync(path.join(box.ws, 'f1.txt'), 'utf8'), 'B 1\n');
    }
    t.is(treeState(path.join(box.ws, '.git')), gitState, "the user's .git is untouched");
  });
}

test('a crash before the first write (journal only): --continue finishes it byte for byte', async (t) => {
  const box = sandbox();
  write(box, 'x.txt', 'A\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  write(box, 'x.txt', 'B\n');
  await ckptJson(box, ['snapshot']);
  const crashed = await ckpt(box, ['restore', a], { env: { GIT_CKPT_TEST_CRASH: 'journal' } });
  t.is(crashed.code, null);
  t.is(readFileSync(path.join(box.ws, 'x.txt'), 'utf8'), 'B\n');
  const r = await ckptJson(box, ['restore', '--continue']);
  t.deepEqual(r.leftAlone, []);
  t.is(readFileSync(path.join(box.ws, 'x.txt'), 'utf8'), 'A\n');
});

test('restore keeps the permission bits git does not record; new files get the umask', async (t) => {
  const box = sandbox();
  write(box, 'credentials.json', '{"token":"v1"}\n', 0o600);
  write(box, 'readonly.txt', 'r1\n', 0o444);
  write(box, 'tool.sh', 'echo 1\n', 0o750);
  write(box, 'gone.txt', 'g1\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  chmodSync(path.join(box.ws, 'readonly.txt'), 0o644);
  write(box, 'credentials.json', '{"token":"v2"}\n');
  write(box, 'readonly.txt', 'r2\n');
  chmodSync(path.join(box.ws, 'readonly.txt'), 0o444);
  write(box, 'tool.sh', 'echo 2\n');
  spawnSync('rm', [path.join(box.ws, 'gone.txt')]);
  await ckptJson(box, ['snapshot']);
  const r = await run(box, 'sh', ['-c', `umask 077; exec "${process.execPath}" "${CLI}" restore ${a}`]);
  t.is(r.code, 0, r.stderr);
  const mode = (rel) => (statSync(path.join(box.ws, rel)).mode & 0o7777).toString(8);
  t.is(readFileSync(path.join(box.ws, 'credentials.json'), 'utf8'), '{"token":"v1"}\n');
  t.is(mode('credentials.json'), '600', 'a private file stays private');
  t.is(readFileSync(path.join(box.ws, 'readonly.txt'), 'utf8'), 'r1\n');
  t.is(mode('readonly.txt'), '444', 'a read-only file stays read-only');
  t.is(mode('tool.sh'), '750', 'an executable keeps its group bits');
  t.is(mode('gone.txt'), '600', "a recreated file gets the user's umask");
});

modeTest('a partial restore counts what was written: failed paths are not counted as restored', async (t) => {
  const box = sandbox();
  for (let i = 0; i < 3; i++) write(box, `ok/f${i}.txt`, `A ${i}\n`);
  for (let i = 0; i < 2; i++) write(box, `ro/f${i}.txt`, `A ${i}\n`);
  const a = (await ckptJson(box, ['snapshot'])).id;
  for (let i = 0; i < 3; i++) write(box, `ok/f${i}.txt`, `B ${i}\n`);
  for (let i = 0; i < 2; i++) write(box, `ro/f${i}.txt`, `B ${i}\n`);
  await ckptJson(box, ['snapshot']);
  chmodSync(path.join(box.ws, 'ro'), 0o555); // readable, not writable: captured, but nothing can be created there
  t.teardown(() => chmodSync(path.join(box.ws, 'ro'), 0o755));
  const r = await jsonOf(ckptBound(box, ['restore', a, '--json']));
  t.is(r.code, 1);
  t.is(r.json.counts.failed, 2);
  t.is(r.json.counts.restore, 3, 'only what was written counts as restored');
  const human = await ckptBound(box, ['restore', a]);
  t.regex(human.stdout, /0 restored.*2 failed/);
});

test('a captured file grown too large is never overwritten; the skip is not "already matched", and is listed once', async (t) => {
  const box = sandbox();
  spawnSync('git', ['config', '--global', 'ckpt.maxFileBytes', '1k'], { cwd: box.ws, env: box.env });
  write(box, 'big.bin', 'small\n');
  write(box, 'a.txt', 'a\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  const grown = `${'x'.repeat(4096)}\n`;
  write(box, 'big.bin', grown);
  const snap = await ckptJson(box, ['snapshot']);
  t.deepEqual(
    snap.skipped.map((s) => s.reason),
    ['too-large'],
  );
  const r = await ckpt(box, ['restore', a]);
  t.is(r.code, 0, r.stderr);
  t.notRegex(r.stdout, /already matched/);
  t.is(r.stdout.split('big.bin').length - 1, 1, r.stdout);
  t.is(readFileSync(path.join(box.ws, 'big.bin'), 'utf8'), grown, 'the uncaptured bytes are still there');
});

test('gc while a revert is interrupted keeps the merged blobs its journal needs: --continue then finishes byte for byte', async (t) => {
  const box = sandbox();
  const lines = (first, last) => `${first}\n${Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n')}\n${last}\n`;
  for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, lines('top', 'bottom'));
  await ckptJson(box, ['snapshot', '-m', 'base']);
  for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, lines('TOP by the agent', 'bottom'));
  await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 'sess-a', '--turn', '1', '--step', '1']);
  for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, lines('TOP by the agent', 'BOTTOM by the user'));
  await ckptJson(box, ['snapshot', '-m', 'user']);

  const crashed = await ckpt(box, ['revert', '--session', 'sess-a'], { env: { GIT_CKPT_TEST_CRASH: 'journal' } });
  t.is(crashed.code, null);
  t.true(existsSync(journalOf(box)));
  const gc = await ckpt(box, ['gc']);
  t.is(gc.code, 0, gc.stderr);
  const r = await ckptJson(box, ['restore', '--continue']);
  t.deepEqual(r.failures, []);
  for (let i = 0; i < 3; i++) t.is(readFileSync(path.join(box.ws, `f${i}.txt`), 'utf8'), lines('top', 'BOTTOM by the user'));
  const fsck = await ckpt(box, ['fsck']);
  t.is(fsck.code, 0, fsck.stdout + fsck.stderr);
});

test('gc keeps the parent of every kept post, so revert and turn:N still work on a trimmed session', async (t) => {
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.keep', '2']);
  for (let turn = 1; turn <= 5; turn++) {
    write(box, `t${turn}.txt`, `turn ${turn}\n`);
    await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 'sess-b', '--turn', String(turn), '--step', '1']);
  }
  const gc = await ckptJson(box, ['gc']);
  t.true(
    gc.protected.some((p) => /parent of a kept post/.test(p.why)),
    JSON.stringify(gc.protected),
  );
  const before = await ckpt(box, ['show', 'turn:4@sess-b']);
  t.is(before.code, 0, before.stderr);
  const r = await ckpt(box, ['revert', '--session', 'sess-b', '--turn', '4']);
  t.is(r.code, 0, r.stderr);
  t.false(existsSync(path.join(box.ws, 't4.txt')));
  t.true(existsSync(path.join(box.ws, 't5.txt')));
  await ckptJson(box, ['undo']);
  // Every kept post reverts, the oldest too: its dropped parent's tree was kept as its base. What that parent
  // lacked is not known to be absent (its record, with its ignore rules and skips, is gone): a file the oldest
  // kept post added is left alone, and said so (principle 4); its other changes revert.
  const kept = ledgerLines(box)
    .filter((l) => l.kind === 'post')
    .map((l) => l.turn);
  const oldest = Math.min(...kept);
  const whole = await ckpt(box, ['revert', '--session', 'sess-b', '--json']);
  t.is(whole.code, 0, whole.stderr);
  t.regex(
    JSON.parse(whole.stdout).files.find((f) => f.path === `t${oldest}.txt`).reason,
    /what the checkpoint before [0-9a-f]{8} saw is not known \(gc dropped its record\)/,
  );
  for (let turn = 1; turn <= 5; turn++)
    t.is(
      existsSync(path.join(box.ws, `t${turn}.txt`)),
      turn === oldest || !kept.includes(turn),
      `t${turn}.txt after reverting the kept posts ${kept}`,
    );
  t.is(readFileSync(path.join(box.ws, `t${oldest}.txt`), 'utf8'), `turn ${oldest}\n`);
  t.is((await ckpt(box, ['fsck'])).code, 0);
});

/** A small tmpfs of our own (root only), unmounted at teardown; undefined where the machine does not allow it. */
function smallDisk(dir, size) {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  return r.status === 0 ? () => spawnSync('umount', ['-l', dir]) : undefined;
}
/** A sandbox whose store root lies on a small tmpfs of its own, unmounted at teardown. */
function sandboxOnSmallDisk(t, size) {
  const box = sandbox();
  const disk = path.join(box.base, 'disk');
  t.teardown(smallDisk(disk, size));
  box.store = path.join(disk, 'store');
  box.env.GIT_CKPT_HOME = box.store;
  return { box, disk };
}
const probeDir = mkdtempSync(path.join(tmpdir(), 'ckpt-mount-probe-'));
const probeUnmount = asRoot ? smallDisk(probeDir, '1m') : undefined;
probeUnmount?.();
const diskTest = testIf(test, probeUnmount !== undefined, 'no small tmpfs can be mounted here (needs root)');

diskTest(
  'a full store disk: the snapshot fails in one line, hooks exit 0, status, fsck and dry runs work, and once space is back everything does',
  async (t) => {
    const { box } = sandboxOnSmallDisk(t, '8m');
    for (let i = 0; i < 20; i++) write(box, `f${i}.txt`, `small ${i}\n`);
    const first = (await ckptJson(box, ['snapshot'])).id;
    for (let i = 0; i < 12; i++) write(box, `big${i}.bin`, randomBytes(1 << 20));
    const full = await ckpt(box, ['snapshot']);
    t.is(full.code, 1);
    t.is(full.stderr.trim().split('\n').length, 1, full.stderr);
    t.regex(full.stderr, /No space left on device|ENOSPC/);
    const lock = path.join(storeDir(box), 'lock');
    t.false(entryExists(lock), 'no lock is left');
    const hookInput = JSON.stringify({
      session_id: 's1',
      cwd: box.ws,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 't1',
    });
    const hook = await ckpt(box, ['hook', 'claude', 'pre'], { input: hookInput });
    t.is(hook.code, 0);
    // While it is full, every read still answers.
    for (const args of [['status'], ['fsck'], ['restore', first, '--dry-run'], ['gc', '--dry-run'], ['log']]) {
      const r = await ckpt(box, args);
      t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    }
    t.false(entryExists(lock));

    for (let i = 0; i < 12; i++) rmSync(path.join(box.ws, `big${i}.bin`));
    for (const args of [['snapshot'], ['status'], ['fsck'], ['gc']]) {
      const r = await ckpt(box, args);
      t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    }
    write(box, 'f0.txt', 'changed\n');
    const after = await ckptJson(box, ['snapshot']);
    t.true(after.created);
  },
);

/** A workspace with checkpoints of a.txt at "one" (`a`) and "two", and "three" on disk, not captured. */
async function twoCheckpointsAndAnEdit() {
  const box = sandbox();
  write(box, 'a.txt', 'one\n');
  const a = (await ckptJson(box, ['snapshot'])).id;
  write(box, 'a.txt', 'two\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'a.txt', 'three\n');
  return { box, a };
}

modeTest('a read-only store: log, show, status, diff, fsck and every dry run still work, and a write is one clear line', async (t) => {
  const { box, a } = await twoCheckpointsAndAnEdit();
  await ckptJson(box, ['restore', a, '--dry-run']);
  const store = storeDir(box);
  spawnSync('chmod', ['-R', 'a-w', store]);
  const before = treeState(store);
  t.teardown(() => spawnSync('chmod', ['-R', 'u+w', store]));
  for (const args of [
    ['log'],
    ['show', 'latest'],
    ['status'],
    ['diff'],
    ['fsck'],
    ['restore', a, '--dry-run'],
    ['undo', '--dry-run'],
    ['gc', '--dry-run'],
    ['forget', a, '--dry-run'],
  ]) {
    const r = await ckptBound(box, args);
    t.true(r.code === 0 || (args[0] === 'undo' && r.code !== 3), `${args.join(' ')}: ${r.code} ${r.stderr}`);
  }
  const status = await ckptBound(box, ['status']);
  t.regex(status.stdout, /changed since the latest checkpoint/);
  const snap = await ckptBound(box, ['snapshot']);
  t.not(snap.code, 0);
  t.is(snap.stderr.trim().split('\n').length, 1, snap.stderr);
  t.is(treeState(store), before, 'nothing in the store changed');
});

modeTest('EACCES on the store (its folder, then its ledger, unwritable): snapshot and restore fail with the io code, exit 1', async (t) => {
  const { box, a } = await twoCheckpointsAndAnEdit();
  const store = storeDir(box);
  const ledger = path.join(store, 'ledger.jsonl');
  const mode = statSync(store).mode & 0o7777;
  const ledgerMode = statSync(ledger).mode & 0o7777;
  t.teardown(() => {
    chmodSync(store, mode);
    chmodSync(ledger, ledgerMode);
  });

  // The store's own folder: no lock can be made in it (its git objects stay writable).
  chmodSync(store, 0o555);
  const before = treeState(store);
  for (const args of [['snapshot'], ['restore', a]]) {
    const r = await ckptError(box, args, {}, ckptBound);
    t.like(r, { exit: 1, code: 'io' }, `${args.join(' ')}: ${r.message}`);
    t.regex(r.message, /permission denied/i, args.join(' '));
  }
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'three\n', 'the workspace is as it was');
  t.is(treeState(store), before, 'nothing in the store changed');
  chmodSync(store, mode);

  // The ledger alone: the lock is taken, and the system's own EACCES on the append is the io error.
  chmodSync(ledger, 0o444);
  const records = ledgerLines(box).length;
  const r = await ckptError(box, ['snapshot'], {}, ckptBound);
  t.like(r, { exit: 1, code: 'io' }, r.message);
  t.regex(r.message, /EACCES/);
  t.is(ledgerLines(box).length, records, 'nothing recorded');
  t.false(entryExists(path.join(store, 'lock')), 'no lock is left');
  chmodSync(ledger, ledgerMode);
  t.true((await ckptJson(box, ['snapshot'])).created, 'writable again, the snapshot is taken');
});

diskTest(
  'a full disk while a revert is interrupted: the failed snapshot frees space but keeps what the journal needs, and --continue finishes',
  async (t) => {
    const { box, disk } = sandboxOnSmallDisk(t, '8m');
    const lines = (first, last) => `${first}\n${Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n')}\n${last}\n`;
    for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, lines('top', 'bottom'));
    await ckptJson(box, ['snapshot']);
    for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, lines('TOP by the agent', 'bottom'));
    await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 'sess-a', '--turn', '1', '--step', '1']);
    for (let i = 0; i < 3; i++) write(box, `f${i}.txt`, lines('TOP by the agent', 'BOTTOM by the user'));
    await ckptJson(box, ['snapshot']);
    const crashed = await ckpt(box, ['revert', '--session', 'sess-a'], { env: { GIT_CKPT_TEST_CRASH: 'journal' } });
    t.is(crashed.code, null);
    // The disk fills; a snapshot (a hook's) fails on it and cleans up after itself.
    spawnSync('dd', ['if=/dev/zero', `of=${path.join(disk, 'filler')}`, 'bs=64k'], { stdio: 'ignore' });
    write(box, 'big.bin', randomBytes(1 << 20));
    const full = await ckpt(box, ['snapshot']);
    t.is(full.code, 1);
    rmSync(path.join(disk, 'filler'));
    rmSync(path.join(box.ws, 'big.bin'));
    const r = await ckptJson(box, ['restore', '--continue']);
    t.deepEqual(r.failures, []);
    for (let i = 0; i < 3; i++) t.is(readFileSync(path.join(box.ws, `f${i}.txt`), 'utf8'), lines('top', 'BOTTOM by the user'));
    t.is((await ckpt(box, ['fsck'])).code, 0);
  },
);

diskTest(
  'a full disk while the journal is written (ENOSPC): restore fails with the io code and exit 1 before any file is written',
  async (t) => {
    const { box, disk } = sandboxOnSmallDisk(t, '8m');
    // The setup's 2000-file snapshots are not what this test is about: a slow machine must not stop them.
    appendFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\ttimeBudget = 10m\n');
    // 2000 paths with long names: a journal of some 400 KB, far more than the space left below.
    const name = (i) => `dir-${i % 20}/a-file-whose-long-name-makes-the-journal-large-${String(i).padStart(4, '0')}.txt`;
    const N = 2000;
    for (let i = 0; i < N; i++) write(box, name(i), 'v1\n');
    const first = (await ckptJson(box, ['snapshot'])).id;
    for (let i = 0; i < N; i++) write(box, name(i), 'v2\n');
    await ckptJson(box, ['snapshot']);
    // Nothing changed since: the guard is the latest checkpoint and writes nothing, so the journal is the first write.
    t.false((await ckptJson(box, ['snapshot'])).created);
    const state = workspaceState(box);
    const dir = storeDir(box);
    const records = ledgerLines(box).length;
    const { bavail, bsize } = statfsSync(disk);
    const filler = path.join(disk, 'filler');
    writeFileSync(filler, Buffer.alloc(bavail * bsize - (64 << 10)));
    t.teardown(() => rmSync(filler, { force: true }));

    // Killed right after the journal is written: had the journal been written, there would be no error line.
    const r = await ckptError(box, ['restore', first], { env: { GIT_CKPT_TEST_CRASH: 'journal' } });
    t.like(r, { exit: 1, code: 'io' }, r.message);
    t.regex(r.message, /ENOSPC|no space left/i);
    t.deepEqual(workspaceState(box), state, 'no file was written');
    t.false(existsSync(journalOf(box)), 'no journal is left');
    t.deepEqual(
      readdirSync(dir).filter((n) => n.includes('.tmp-')),
      [],
      'no half-written journal takes the space',
    );
    t.false(entryExists(path.join(dir, 'lock')), 'no lock is left');
    t.is(ledgerLines(box).length, records, 'nothing recorded');

    rmSync(filler);
    const done = await ckptJson(box, ['restore', first]);
    t.is(done.counts.restore, N);
    t.is(readFileSync(path.join(box.ws, name(7)), 'utf8'), 'v1\n');
  },
);
