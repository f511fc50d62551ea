// The pure restore planner (lib/restore/restore-plan.ts), tested as pure: no disk, no git.
// One table row per rule of `reconcile` (its deletion pass and every return of the
// `decideWrite` ladder), each with the exact sentence the user reads; then
// `restoreWants`, `revertWants` and `staleUndoPaths`.
import test from 'ava';
import { libPath } from './helpers.mjs';

const plan = await import(libPath('restore-plan'));
const { sameEntry } = await import(libPath('tree'));

const oid = (c) => c.repeat(40);
const F = (c) => ({ mode: '100644', oid: oid(c) }); // a regular file
const X = (c) => ({ mode: '100755', oid: oid(c) }); // an executable
const L = (c) => ({ mode: '120000', oid: oid(c) }); // a symlink
const G = (c) => ({ mode: '160000', oid: oid(c) }); // a gitlink (nested repository)

const UNCAPTURED_DEL = 'never captured (ignored, too large or secret); left alone';
const UNCAPTURED_WRITE = 'something that was never captured (ignored, too large or secret) is there; left alone';

/**
 * Each row: a path and what is wanted for it, what the guard captured (`live`),
 * the disk fact, and `replaceCaptured` (--delete-new; true for revert and undo).
 * `others` adds more wanted paths (with their own live/disk) that the row's rule
 * depends on: deletions that clear the way. `expect` is the PlannedFile for `path`.
 */
const rows = [
  // --- the deletion pass (want === null) ---
  {
    rule: 'delete: an unsafe path is refused',
    path: '.git/config',
    want: null,
    live: F('1'),
    disk: { kind: 'file' },
    expect: { action: 'skip', reason: 'unsafe path refused: ".git" segment' },
  },
  {
    rule: 'delete: a ".." path is refused',
    path: 'a/../b',
    want: null,
    live: F('1'),
    disk: { kind: 'file' },
    expect: { action: 'skip', reason: 'unsafe path refused: ".." segment' },
  },
  { rule: 'delete: already gone', path: 'a.txt', want: null, live: F('1'), disk: { kind: 'missing' }, expect: { action: 'unchanged' } },
  {
    rule: 'delete: absent from the disk facts counts as gone',
    path: 'a.txt',
    want: null,
    live: F('1'),
    disk: undefined,
    expect: { action: 'unchanged' },
  },
  {
    rule: 'delete: never captured content is never deleted',
    path: 'ignored.log',
    want: null,
    live: undefined,
    disk: { kind: 'file' },
    expect: { action: 'skip', reason: UNCAPTURED_DEL },
  },
  {
    rule: 'delete: a nested repository is never entered',
    path: 'vendor/lib',
    want: null,
    live: G('2'),
    disk: { kind: 'dir' },
    expect: { action: 'skip', reason: 'a nested repository; its content is not captured' },
  },
  {
    rule: 'delete: a symlink in the path',
    path: 'a/b.txt',
    want: null,
    live: F('1'),
    disk: { kind: 'file', blocker: { path: 'a', kind: 'symlink' } },
    expect: { action: 'skip', reason: 'symlink in the path: a' },
  },
  {
    rule: 'delete: a directory stands there now',
    path: 'a.txt',
    want: null,
    live: F('1'),
    disk: { kind: 'dir' },
    expect: { action: 'skip', reason: 'a directory is there now; left alone' },
  },
  {
    rule: 'delete: a special file stands there now',
    path: 'a.txt',
    want: null,
    live: F('1'),
    disk: { kind: 'other' },
    expect: { action: 'skip', reason: 'a special file is there now; left alone' },
  },
  {
    rule: 'delete: a captured file is deleted, and undo knows what it was',
    path: 'a.txt',
    want: null,
    live: F('1'),
    disk: { kind: 'file' },
    expect: { action: 'delete', from: F('1') },
  },
  {
    rule: 'delete: a captured symlink is deleted',
    path: 'link',
    want: null,
    live: L('1'),
    disk: { kind: 'symlink' },
    expect: { action: 'delete', from: L('1') },
  },

  // --- the write ladder (decideWrite) ---
  {
    rule: 'write: an unsafe path is refused (and keeps what the guard had)',
    path: 'sub/.GIT/hooks/post-checkout',
    want: X('2'),
    live: F('1'),
    disk: { kind: 'file' },
    expect: { action: 'skip', reason: 'unsafe path refused: ".git" segment', from: F('1') },
  },
  {
    rule: 'write: an absolute path is refused',
    path: '/etc/passwd',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing' },
    expect: { action: 'skip', reason: 'unsafe path refused: absolute path' },
  },
  {
    rule: 'write: the guard already holds the wanted entry',
    path: 'a.txt',
    want: F('1'),
    live: F('1'),
    disk: { kind: 'file' },
    expect: { action: 'unchanged' },
  },
  {
    rule: 'write: an ignored file that already holds the wanted bytes',
    path: 'build/out.js',
    want: F('2'),
    live: undefined,
    disk: { kind: 'file', entry: F('2') },
    expect: { action: 'unchanged' },
  },
  {
    rule: 'write: an ignored file with other bytes is left alone',
    path: 'build/out.js',
    want: F('2'),
    live: undefined,
    disk: { kind: 'file', entry: F('3') },
    expect: { action: 'skip', reason: UNCAPTURED_WRITE },
  },
  {
    rule: 'write: same bytes but another mode is not the same entry',
    path: 'run.sh',
    want: X('2'),
    live: F('2'),
    disk: { kind: 'file' },
    expect: { action: 'restore', want: X('2'), from: F('2') },
  },
  {
    rule: 'write: a wanted gitlink (submodule) is never written',
    path: 'vendor/lib',
    want: G('2'),
    live: undefined,
    disk: { kind: 'missing' },
    expect: { action: 'skip', reason: 'a nested repository (submodule); its content is not captured, so it is left alone' },
  },
  {
    rule: 'write: a wanted gitlink over another commit of it is left alone too',
    path: 'vendor/lib',
    want: G('2'),
    live: G('3'),
    disk: { kind: 'dir' },
    expect: { action: 'skip', reason: 'a nested repository (submodule); its content is not captured, so it is left alone', from: G('3') },
  },
  {
    rule: 'write: nothing is written through a symlink',
    path: 'a/b.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing', blocker: { path: 'a', kind: 'symlink' } },
    expect: { action: 'skip', reason: 'symlink in the path: a; nothing is written through a symlink' },
  },
  {
    rule: 'write: a symlink in the path even when --delete-new deletes other things',
    path: 'a/b.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing', blocker: { path: 'a', kind: 'symlink' } },
    replaceCaptured: true,
    expect: { action: 'skip', reason: 'symlink in the path: a; nothing is written through a symlink' },
  },
  {
    rule: 'write: a file in the way (restore without --delete-new says how to clear it)',
    path: 'a/b.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing', blocker: { path: 'a', kind: 'file' } },
    expect: { action: 'skip', reason: 'a file is in the way: a (--delete-new removes it if it was captured)' },
  },
  {
    rule: 'write: a file in the way that this plan does not delete (with --delete-new)',
    path: 'a/b.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing', blocker: { path: 'a', kind: 'file' } },
    replaceCaptured: true,
    expect: { action: 'skip', reason: 'a file is in the way: a' },
  },
  {
    rule: 'write: a special file in the way',
    path: 'fifo/b.txt',
    want: F('2'),
    live: F('1'),
    disk: { kind: 'missing', blocker: { path: 'fifo', kind: 'other' } },
    replaceCaptured: true,
    expect: { action: 'skip', reason: 'a special file is in the way: fifo', from: F('1') },
  },
  {
    rule: 'write: a blocker being deleted clears the way (leftover file `a`, target has `a/b.txt`)',
    path: 'a/b.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing', blocker: { path: 'a', kind: 'file' } },
    others: [{ path: 'a', want: null, live: F('9'), disk: { kind: 'file' } }],
    replaceCaptured: true,
    expect: { action: 'recreate', want: F('2') },
  },
  {
    rule: 'write: a blocker whose deletion is refused does not clear the way',
    path: 'a/b.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing', blocker: { path: 'a', kind: 'file' } },
    // `a` is wanted absent but was never captured: the deletion pass skips it, so it still blocks.
    others: [{ path: 'a', want: null, live: undefined, disk: { kind: 'file' } }],
    replaceCaptured: true,
    expect: { action: 'skip', reason: 'a file is in the way: a' },
  },
  {
    rule: 'write: only a deletion clears the way; a blocker that is itself being rewritten still blocks',
    path: 'a/b.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing', blocker: { path: 'a', kind: 'file' } },
    others: [{ path: 'a', want: F('8'), live: F('9'), disk: { kind: 'file' } }],
    replaceCaptured: true,
    expect: { action: 'skip', reason: 'a file is in the way: a' },
  },
  {
    rule: 'write: a nested repository stands where a file is wanted',
    path: 'vendor/lib',
    want: F('2'),
    live: G('3'),
    disk: { kind: 'dir' },
    replaceCaptured: true,
    expect: { action: 'skip', reason: 'a nested repository is in the way; its content is not captured', from: G('3') },
  },
  {
    rule: 'write: a new file where nothing is',
    path: 'new.txt',
    want: F('2'),
    live: undefined,
    disk: { kind: 'missing' },
    expect: { action: 'recreate', want: F('2') },
  },
  {
    rule: 'write: an empty directory where a file is wanted',
    path: 'a',
    want: F('2'),
    live: undefined,
    disk: { kind: 'dir', dirFiles: [] },
    expect: { action: 'recreate', want: F('2') },
  },
  {
    rule: 'write: a directory whose files this plan deletes (target has a file `a`, disk has `a/x`)',
    path: 'a',
    want: F('2'),
    live: undefined,
    disk: { kind: 'dir', dirFiles: ['a/x'] },
    others: [{ path: 'a/x', want: null, live: F('9'), disk: { kind: 'file' } }],
    replaceCaptured: true,
    expect: { action: 'recreate', want: F('2') },
  },
  {
    rule: 'write: a directory holding one file that stays',
    path: 'a',
    want: F('2'),
    live: undefined,
    disk: { kind: 'dir', dirFiles: ['a/x'] },
    expect: { action: 'skip', reason: 'a directory is in the way and holds 1 file this restore does not delete (a/x)' },
  },
  {
    rule: 'write: a directory holding several files that stay (only those not being deleted count)',
    path: 'a',
    want: F('2'),
    live: undefined,
    disk: { kind: 'dir', dirFiles: ['a/gone', 'a/x', 'a/y'] },
    others: [{ path: 'a/gone', want: null, live: F('9'), disk: { kind: 'file' } }],
    replaceCaptured: true,
    expect: { action: 'skip', reason: 'a directory is in the way and holds 2 files this restore does not delete (a/x, …)' },
  },
  {
    rule: 'write: an uncaptured file stands there (no entry known)',
    path: 'secret.pem',
    want: F('2'),
    live: undefined,
    disk: { kind: 'file' },
    expect: { action: 'skip', reason: UNCAPTURED_WRITE },
  },
  {
    rule: 'write: an uncaptured special file stands there',
    path: 'pipe',
    want: F('2'),
    live: undefined,
    disk: { kind: 'other' },
    expect: { action: 'skip', reason: UNCAPTURED_WRITE },
  },
  {
    rule: 'write: a captured symlink where the checkpoint has a file, without --delete-new',
    path: 'conf',
    want: F('2'),
    live: L('1'),
    disk: { kind: 'symlink' },
    expect: { action: 'skip', reason: 'a symlink is there now and the checkpoint has a file (--delete-new replaces it)', from: L('1') },
  },
  {
    rule: 'write: a captured symlink where the checkpoint has a file, with --delete-new',
    path: 'conf',
    want: F('2'),
    live: L('1'),
    disk: { kind: 'symlink' },
    replaceCaptured: true,
    expect: { action: 'restore', want: F('2'), from: L('1') },
  },
  {
    rule: 'write: a symlink replaced by another symlink needs no --delete-new',
    path: 'conf',
    want: L('2'),
    live: L('1'),
    disk: { kind: 'symlink' },
    expect: { action: 'restore', want: L('2'), from: L('1') },
  },
  {
    rule: 'write: a directory is there now (captured path, changed since the guard)',
    path: 'a.txt',
    want: F('2'),
    live: F('1'),
    disk: { kind: 'dir' },
    expect: { action: 'skip', reason: 'a directory is there now; left alone', from: F('1') },
  },
  {
    rule: 'write: a special file is there now',
    path: 'a.txt',
    want: F('2'),
    live: F('1'),
    disk: { kind: 'other' },
    expect: { action: 'skip', reason: 'a special file is there now; left alone', from: F('1') },
  },
  {
    rule: 'write: a captured file vanished since the guard: recreated',
    path: 'a.txt',
    want: F('2'),
    live: F('1'),
    disk: { kind: 'missing' },
    expect: { action: 'recreate', want: F('2'), from: F('1') },
  },
  {
    rule: 'write: a captured file with other content: restored',
    path: 'a.txt',
    want: F('2'),
    live: F('1'),
    disk: { kind: 'file' },
    expect: { action: 'restore', want: F('2'), from: F('1') },
  },
];

function inputOf(row) {
  const want = new Map();
  const live = new Map();
  const disk = new Map();
  for (const r of [row, ...(row.others ?? [])]) {
    want.set(r.path, r.want);
    if (r.live) live.set(r.path, r.live);
    if (r.disk) disk.set(r.path, r.disk);
  }
  return { want, live, disk, replaceCaptured: row.replaceCaptured ?? false };
}

for (const row of rows) {
  test(`reconcile: ${row.rule}`, (t) => {
    const result = plan.reconcile(inputOf(row));
    const file = result.files.find((f) => f.path === row.path);
    t.deepEqual(file, { path: row.path, ...row.expect });
    // The counts are the actions, and reconcile never fills leftovers (restoreWants does).
    const counts = { restore: 0, recreate: 0, delete: 0, unchanged: 0, skip: 0 };
    for (const f of result.files) counts[f.action]++;
    t.deepEqual(result.counts, counts);
    t.deepEqual(result.leftovers, []);
  });
}

test('reconcile: one plan mixing every action is sorted, counted, and decides deletions first', (t) => {
  const input = {
    want: new Map([
      ['z.txt', F('2')], // restore
      ['a/b.txt', F('3')], // recreate, because `a` (a leftover file) is deleted
      ['a', null], // delete
      ['m.txt', F('4')], // unchanged
      ['ignored.log', null], // skip: never captured
    ]),
    live: new Map([
      ['z.txt', F('1')],
      ['a', F('9')],
      ['m.txt', F('4')],
    ]),
    disk: new Map([
      ['z.txt', { kind: 'file' }],
      ['a/b.txt', { kind: 'missing', blocker: { path: 'a', kind: 'file' } }],
      ['a', { kind: 'file' }],
      ['m.txt', { kind: 'file' }],
      ['ignored.log', { kind: 'file' }],
    ]),
    replaceCaptured: true,
  };
  const result = plan.reconcile(input);
  t.deepEqual(
    result.files.map((f) => [f.path, f.action]),
    [
      ['a', 'delete'],
      ['a/b.txt', 'recreate'],
      ['ignored.log', 'skip'],
      ['m.txt', 'unchanged'],
      ['z.txt', 'restore'],
    ],
  );
  t.deepEqual(result.counts, { restore: 1, recreate: 1, delete: 1, unchanged: 1, skip: 1 });
  t.is(plan.actionable(result), 3);
});

test('sameEntry: mode and oid both count; two absences are the same, one is not', (t) => {
  t.true(sameEntry(F('1'), F('1')));
  t.false(sameEntry(F('1'), X('1')));
  t.false(sameEntry(F('1'), F('2')));
  t.true(sameEntry(null, undefined));
  t.false(sameEntry(null, F('1')));
  t.false(sameEntry(F('1'), undefined));
});

test('restoreWants: selected target paths are wanted; paths only present now are leftovers, or deletions with --delete-new', (t) => {
  const target = new Map([
    ['src/a.js', F('1')],
    ['src/b.js', F('2')],
    ['docs/x.md', F('3')],
  ]);
  const live = new Map([
    ['src/a.js', F('9')],
    ['src/z-new.js', F('8')],
    ['src/c-new.js', F('7')],
    ['docs/new.md', F('6')],
  ]);
  const all = () => true;
  const onlySrc = (p) => p.startsWith('src/');

  const plain = plan.restoreWants(target, live, all, false);
  t.deepEqual(
    [...plain.want],
    [
      ['src/a.js', F('1')],
      ['src/b.js', F('2')],
      ['docs/x.md', F('3')],
    ],
  );
  t.deepEqual(plain.leftovers, ['docs/new.md', 'src/c-new.js', 'src/z-new.js'], 'sorted');

  const deleting = plan.restoreWants(target, live, all, true);
  t.deepEqual(
    [...deleting.want],
    [
      ['src/a.js', F('1')],
      ['src/b.js', F('2')],
      ['docs/x.md', F('3')],
      ['src/z-new.js', null],
      ['src/c-new.js', null],
      ['docs/new.md', null],
    ],
  );
  t.deepEqual(deleting.leftovers, []);

  const selected = plan.restoreWants(target, live, onlySrc, true);
  t.deepEqual([...selected.want.keys()].sort(), ['src/a.js', 'src/b.js', 'src/c-new.js', 'src/z-new.js']);
  t.is(selected.want.get('src/z-new.js'), null);
  t.deepEqual(selected.leftovers, []);
  t.deepEqual(plan.restoreWants(target, live, onlySrc, false).leftovers, ['src/c-new.js', 'src/z-new.js']);
});

test('revertWants: back to the parent where the checkpoint still stands, a conflict where it changed since, unchanged where already back', (t) => {
  const changes = [
    { path: 'edited.txt', before: F('1'), after: F('2') }, // still the checkpoint's: back to 1
    { path: 'added.txt', before: null, after: F('3') }, // added by the checkpoint, still there: deleted
    { path: 'removed.txt', before: F('4'), after: null }, // deleted by the checkpoint, still gone: recreated
    { path: 'changed-since.txt', before: F('5'), after: F('6') }, // now 7: a conflict
    { path: 'gone-since.txt', before: F('5'), after: F('6') }, // now absent: a conflict
    { path: 'back-already.txt', before: F('8'), after: F('9') }, // now 8: unchanged
    { path: 'added-then-removed.txt', before: null, after: F('a') }, // now absent = before: unchanged
    { path: 'mode.sh', before: F('b'), after: X('b') }, // now X: back to the plain mode
  ];
  const live = new Map([
    ['edited.txt', F('2')],
    ['added.txt', F('3')],
    ['changed-since.txt', F('7')],
    ['back-already.txt', F('8')],
    ['mode.sh', X('b')],
  ]);
  const r = plan.revertWants(changes, live);
  t.deepEqual(
    [...r.want],
    [
      ['edited.txt', F('1')],
      ['added.txt', null],
      ['removed.txt', F('4')],
      ['mode.sh', F('b')],
    ],
  );
  const conflict = 'conflict: changed since that checkpoint; left as it is';
  t.deepEqual(r.conflicts, [
    { path: 'changed-since.txt', action: 'skip', reason: conflict },
    { path: 'gone-since.txt', action: 'skip', reason: conflict },
  ]);
  t.deepEqual(r.unchanged, ['back-already.txt', 'added-then-removed.txt']);
});

test('staleUndoPaths: every path that no longer holds the operation result, and only those', (t) => {
  const changes = [
    { path: 'same.txt', before: F('1'), after: F('2') },
    { path: 'edited.txt', before: F('1'), after: F('2') },
    { path: 'deleted-by-op.txt', before: F('3'), after: null },
    { path: 'recreated-since.txt', before: F('3'), after: null },
    { path: 'added-by-op.txt', before: null, after: F('4') },
    { path: 'removed-since.txt', before: null, after: F('4') },
    { path: 'chmod-since.sh', before: F('5'), after: F('6') },
  ];
  const live = new Map([
    ['same.txt', F('2')],
    ['edited.txt', F('7')],
    ['recreated-since.txt', F('3')],
    ['added-by-op.txt', F('4')],
    ['chmod-since.sh', X('6')],
  ]);
  t.deepEqual(plan.staleUndoPaths(changes, live), ['edited.txt', 'recreated-since.txt', 'removed-since.txt', 'chmod-since.sh']);
  t.deepEqual(plan.staleUndoPaths(changes.slice(0, 1), live), []);
});

test('withExtraFiles: conflicts and already-reverted paths join the plan, sorted and recounted', (t) => {
  const base = plan.reconcile({
    want: new Map([['b.txt', F('2')]]),
    live: new Map([['b.txt', F('1')]]),
    disk: new Map([['b.txt', { kind: 'file' }]]),
    replaceCaptured: true,
  });
  const merged = plan.withExtraFiles(
    base,
    [
      { path: 'c.txt', action: 'skip', reason: 'conflict: changed since that checkpoint; left as it is' },
      { path: 'a.txt', action: 'unchanged' },
    ],
    ['z'],
  );
  t.deepEqual(
    merged.files.map((f) => f.path),
    ['a.txt', 'b.txt', 'c.txt'],
  );
  t.deepEqual(merged.counts, { restore: 1, recreate: 0, delete: 0, unchanged: 1, skip: 1 });
  t.deepEqual(merged.leftovers, ['z']);
  t.deepEqual(base.files.length, 1, 'the input plan is not mutated');
});
