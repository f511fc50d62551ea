// The daemon's change log, pure: what a watcher event stands for in a scan, and what a capture settles.
import test from 'ava';
import { libPath } from './helpers.mjs';

const { newChangeLog, recordChanges, viewOf, settle, markUnknown, pathForScan, coveredBy, placeLate } = await import(libPath('change-log'));

test('what an event stands for: the path, its folder, or unknown', (t) => {
  t.deepEqual(pathForScan('src/a.ts'), { path: 'src/a.ts' });
  t.deepEqual(pathForScan('.git/index'), { ignore: true });
  t.deepEqual(pathForScan('.git'), { ignore: true });
  t.true('unknown' in pathForScan('.git/info/exclude'));
  // A submodule's commit moves through its repository in the workspace's .git: the event cannot name its folder.
  t.regex(
    pathForScan('.git/modules/vendor/lib/refs/heads/main').unknown,
    /a submodule's commit moved \(\.git\/modules\/vendor\/lib\/refs\/heads\)/,
  );
  t.true('unknown' in pathForScan('.git/modules/lib/HEAD'));
  t.true('unknown' in pathForScan('.git/modules/lib/packed-refs'));
  t.deepEqual(pathForScan('.git/modules/lib/index'), { ignore: true });
  t.deepEqual(pathForScan('.git/modules/lib/objects/ab/cdef'), { ignore: true });
  t.true('unknown' in pathForScan('.gitignore'));
  t.true('unknown' in pathForScan('.ckptignore'));
  t.true('unknown' in pathForScan(''));
  // A .gitignore below the top changes what is ignored below its folder only.
  t.deepEqual(pathForScan('src/.gitignore'), { path: 'src' });
  // Inside a nested repository: the folder that holds its .git (a gitlink).
  t.deepEqual(pathForScan('vendor/lib/.git/HEAD'), { path: 'vendor/lib' });
  // A name the watcher could not decode: its folder, where git lists the real bytes.
  t.deepEqual(pathForScan('src/caf\uFFFD/x'), { path: 'src' });
  t.true('unknown' in pathForScan('caf\uFFFD'));
});

test('a new log is unknown; a full capture settles it; changes during a capture stay', (t) => {
  const log = newChangeLog('fresh');
  const first = viewOf(log);
  t.true(first.full);
  recordChanges(log, [{ path: 'late.txt', type: 'create' }]);
  settle(log, first, []);
  t.is(log.unknown, null);
  // Recorded after the view was taken: still pending.
  t.deepEqual(viewOf(log), { full: false, paths: ['late.txt'], upTo: log.seq, later: false });
});

test('a view up to an earlier sequence number (a post at its arrival) leaves later changes for the next capture', (t) => {
  const log = newChangeLog('fresh');
  settle(log, viewOf(log), []);
  recordChanges(log, [
    { path: 'tool.txt', type: 'create' },
    { path: 'made', type: 'create' },
    { path: 'both.txt', type: 'update' },
  ]);
  const arrival = log.seq;
  recordChanges(log, [{ path: 'after.txt', type: 'create' }]);
  t.deepEqual(viewOf(log, arrival), { full: false, paths: ['both.txt', 'made', 'tool.txt'], upTo: arrival, later: false });
  // Changed again after the arrival: the capture takes its state now, and says so.
  recordChanges(log, [{ path: 'both.txt', type: 'update' }]);
  t.true(viewOf(log, arrival).later);
  const view = viewOf(log, arrival);
  settle(log, view, []);
  // What came after the arrival stays: the next capture (a pre, up to now) takes it.
  t.deepEqual(viewOf(log), { full: false, paths: ['after.txt', 'both.txt'], upTo: log.seq, later: false });
  // Nothing of what stays changed before the next arrival point: a view up to it scans nothing.
  t.deepEqual(viewOf(log, view.upTo).paths, []);
});

test('a file made after the arrival inside a folder the capture scans, or a full scan with later changes: it may take them', (t) => {
  const log = newChangeLog('fresh');
  settle(log, viewOf(log), []);
  recordChanges(log, [{ path: 'dir', type: 'create' }]);
  const arrival = log.seq;
  recordChanges(log, [{ path: 'dir/late.txt', type: 'create' }]);
  t.deepEqual(viewOf(log, arrival), { full: false, paths: ['dir'], upTo: arrival, later: true });
  recordChanges(log, [{ path: 'elsewhere.txt', type: 'create' }]);
  markUnknown(log, 'overflow');
  const full = viewOf(log, arrival);
  t.true(full.full);
  t.true(full.later, 'the log became unknown after the arrival');
  settle(log, full, []);
  t.is(log.unknown, 'overflow', 'unknown since after the arrival: the next capture scans everything too');
  const log2 = newChangeLog('fresh');
  const at = log2.seq;
  t.false(viewOf(log2, at).later);
  recordChanges(log2, [{ path: 'x', type: 'create' }]);
  t.true(viewOf(log2, at).later, 'a full scan takes x too');
});

test('a view covers folders once; settle keeps what the capture could not take', (t) => {
  const log = newChangeLog('fresh');
  settle(log, viewOf(log), []);
  recordChanges(log, [
    { path: 'a/b/c', type: 'update' },
    { path: 'a', type: 'create' },
    { path: 'big.bin', type: 'update' },
    { path: 'z', type: 'delete' },
  ]);
  const view = viewOf(log);
  t.deepEqual(view.paths, ['a', 'big.bin', 'z']);
  settle(log, view, ['big.bin']);
  t.deepEqual(viewOf(log).paths, ['big.bin']);
  t.true(coveredBy('a/b/c', new Set(['a'])));
  t.false(coveredBy('ab', new Set(['a'])));
});

test('unknown wins until a full capture that started after it', (t) => {
  const log = newChangeLog('fresh');
  const stale = viewOf(log);
  markUnknown(log, 'overflow');
  settle(log, stale, []);
  t.is(log.unknown, 'overflow');
  settle(log, viewOf(log), []);
  t.is(log.unknown, null);
  // Too many paths at once: a full scan is cheaper, and it is what an unreported overflow looks like.
  recordChanges(
    log,
    Array.from({ length: 5 }, (_, i) => ({ path: `f${i}`, type: 'create' })),
    3,
  );
  t.regex(log.unknown, /more than 3 paths/);
});

test('changes recorded between a cookie and its event, placed by when they were made; those recorded after its event came after it', (t) => {
  const log = newChangeLog('fresh');
  settle(log, viewOf(log), []);
  recordChanges(log, [{ path: 'early.txt', type: 'create' }]);
  const arrival = log.seq;
  // The cookie's batch: the tool's last write (its event late), the user's new file, one gone either way, one touched before and after.
  recordChanges(log, [
    { path: 'tool.txt', type: 'update' },
    { path: 'user.txt', type: 'create' },
    { path: 'gone.txt', type: 'delete' },
    { path: 'early.txt', type: 'update' },
  ]);
  const seen = log.seq;
  // A later batch: made after the cookie, whatever the disk says.
  recordChanges(log, [
    { path: 'after.txt', type: 'update' },
    { path: 'tool.txt', type: 'update' },
  ]);
  const when = { 'tool.txt': 'before', 'user.txt': 'after', 'gone.txt': 'both', 'early.txt': 'before', 'after.txt': 'before' };
  placeLate(log, arrival, seen, (p) => when[p]);
  const view = viewOf(log, arrival);
  t.deepEqual(view.paths, ['early.txt', 'gone.txt', 'tool.txt']);
  t.true(view.later, 'gone.txt may have gone after the arrival, tool.txt changed again after it');
  settle(log, view, []);
  t.deepEqual(viewOf(log).paths, ['after.txt', 'gone.txt', 'tool.txt', 'user.txt']);
});
