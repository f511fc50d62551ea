// The daemon's change log, pure: what a watcher event stands for in a scan, and what a capture settles.
import test from 'ava';
import { libPath } from './helpers.mjs';

const { newChangeLog, recordChanges, viewOf, settle, markUnknown, pathForScan, coveredBy } = await import(libPath('change-log'));

test('what an event stands for: the path, its folder, or unknown', (t) => {
  t.deepEqual(pathForScan('src/a.ts'), { path: 'src/a.ts' });
  t.deepEqual(pathForScan('.git/index'), { ignore: true });
  t.deepEqual(pathForScan('.git'), { ignore: true });
  t.true('unknown' in pathForScan('.git/info/exclude'));
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
  t.deepEqual(viewOf(log), { full: false, paths: ['late.txt'], upTo: log.seq });
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
