// Capture faults from the red-team report of 2026-12 (X1, X4–X8): each case loses nothing silently.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ckpt,
  ckptJson,
  flushDaemon,
  hookEvent,
  testIf,
  ledgerLines,
  lsTree,
  sandbox,
  sh,
  storedBytes,
  treeState,
  write,
  libPath,
} from './helpers.mjs';

/** Where each ignore source puts a rule, given the sandbox. */
const IGNORE_SOURCES = {
  '.gitignore (nested)': (box) => write(box, 'sub/.gitignore', 'build/\n'),
  '.git/info/exclude': (box) => write(box, '.git/info/exclude', 'build/\n'),
  'core.excludesFile (the default ~/.config/git/ignore)': (box) => {
    mkdirSync(path.join(box.home, '.config', 'git'), { recursive: true });
    writeFileSync(path.join(box.home, '.config', 'git', 'ignore'), 'build/\n');
  },
  '.ckptignore': (box) => write(box, '.ckptignore', 'build/\n'),
};

for (const [source, addRule] of Object.entries(IGNORE_SOURCES)) {
  test(`X1: a captured file whose folder becomes ignored (${source}) stays captured, and capture never stops`, async (t) => {
    const box = sandbox();
    write(box, 'sub/build/out.js', 'v1\n');
    write(box, 'a.txt', 'a1\n');
    await ckptJson(box, ['snapshot']);
    addRule(box);
    await ckptJson(box, ['snapshot']);
    write(box, 'sub/build/out.js', 'v2\n');
    write(box, 'a.txt', 'a2\n');
    write(box, 'sub/build/new.js', 'ignored\n');
    const r = await ckpt(box, ['snapshot', '--json']);
    t.is(r.code, 0, r.stderr);
    const two = JSON.parse(r.stdout);
    t.true(two.created);
    t.deepEqual(two.skipped, []);
    t.is(storedBytes(box, two.id, 'sub/build/out.js').toString(), 'v2\n', 'the tracked file keeps being captured');
    t.is(storedBytes(box, two.id, 'a.txt').toString(), 'a2\n', 'and so is everything else in the same checkpoint');
    t.false(lsTree(box, two.id).has('sub/build/new.js'), 'a new file there is ignored');
    const status = await ckptJson(box, ['status']);
    t.false(status.dirty);
    // Its deletion is a change like any other.
    rmSync(path.join(box.ws, 'sub/build/out.js'));
    const three = await ckptJson(box, ['snapshot']);
    t.deepEqual(three.stats, { added: 0, modified: 0, deleted: 1 });
  });
}

test('X1: a rebuild of many captured files under a folder that became ignored (directory pathspecs) is captured whole', async (t) => {
  const box = sandbox();
  const files = [];
  for (let d = 0; d < 3; d++) for (let i = 0; i < 400; i++) files.push(`build/x${d}/f${i}.js`);
  for (const f of files) write(box, f, 'v1\n');
  await ckptJson(box, ['snapshot']);
  write(box, '.gitignore', 'build/\n');
  await ckptJson(box, ['snapshot']);
  for (const f of files) write(box, f, 'v2\n');
  const r = await ckpt(box, ['snapshot', '--json']);
  t.is(r.code, 0, r.stderr);
  const two = JSON.parse(r.stdout);
  t.is(two.stats.modified, files.length);
  t.is(storedBytes(box, two.id, files.at(-1)).toString(), 'v2\n');
});

test("X1: git add's messages: the ignored-paths advice explains exit 1, a path git could not read is one skip, anything else stays a failure", async (t) => {
  const { pathMessages } = await import(libPath('git-messages'));
  const advice = [
    'The following paths are ignored by one of your .gitignore files:',
    'build',
    'sub/build',
    'hint: Use -f if you really want to add them.',
    'hint: Turn this message off by running',
    'hint: "git config advice.addIgnoredFile false"',
  ];
  t.deepEqual(pathMessages(`${advice.join('\n')}\n`), { skipped: [], other: [], ignoredAdvice: true });
  const unreadable = [
    'error: open("secret.txt"): Permission denied',
    "error: unable to index file 'secret.txt'",
    'fatal: adding files failed',
  ];
  t.deepEqual(pathMessages(unreadable.join('\n')), {
    skipped: [{ path: 'secret.txt', reason: 'unreadable' }],
    other: ['fatal: adding files failed'],
    ignoredAdvice: false,
  });
  // A full store is not an unreadable file: it must fail the snapshot, not become a skip.
  const full = pathMessages('error: unable to create temporary file: No space left on device\n');
  t.deepEqual(full, { skipped: [], other: ['error: unable to create temporary file: No space left on device'], ignoredAdvice: false });
});

/** A sandbox whose hooks go through a daemon of its own (started here, stopped at teardown), or none. */
async function hookBox(t, daemon) {
  const box = sandbox();
  if (daemon) {
    writeFileSync(
      path.join(box.home, '.gitconfig'),
      '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\tdaemonIdle = 60s\n',
    );
    const started = await ckpt(box, ['daemon', 'start']);
    t.is(started.code, 0, started.stderr);
    t.teardown(() => ckpt(box, ['daemon', 'stop']));
  } else {
    writeFileSync(
      path.join(box.home, '.gitconfig'),
      '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\tdaemon = false\n',
    );
  }
  return box;
}

for (const daemon of [false, true]) {
  test(`§2.6: rm -rf of a folder during a tool call is a deletion, never "not captured: unreadable" (daemon ${daemon ? 'on' : 'off'})`, async (t) => {
    const box = await hookBox(t, daemon);
    write(box, 'top.txt', 'top\n');
    for (let round = 0; round < 4; round++) {
      write(box, `lib/mw${round}/a.js`, 'a\n');
      write(box, `lib/mw${round}/deep/b.js`, 'b\n');
    }
    await ckptJson(box, ['snapshot']);
    for (let round = 0; round < 4; round++) {
      const call = {
        session_id: 's26',
        cwd: box.ws,
        tool_name: 'Bash',
        tool_use_id: `t${round}`,
        tool_input: { command: `rm -rf lib/mw${round}` },
      };
      await hookEvent(box, 'claude', 'pre', { ...call, hook_event_name: 'PreToolUse' });
      rmSync(path.join(box.ws, `lib/mw${round}`), { recursive: true });
      await hookEvent(box, 'claude', 'post', { ...call, hook_event_name: 'PostToolUse', tool_response: {} });
      if (daemon) await flushDaemon(box.store);
      const post = ledgerLines(box).at(-1);
      t.like(post, { kind: 'post', stats: { added: 0, modified: 0, deleted: 2 } }, `round ${round}`);
      t.deepEqual(post.skipped, [], `round ${round}: no skip note for a folder that was deleted`);
      const shown = await ckpt(box, ['show', post.id, '--name-status']);
      t.notRegex(shown.stdout, /not captured/);
    }
  });
}

test('§2.6: git naming a path that vanished (no such file, not a directory) says nothing was skipped', async (t) => {
  const { pathMessages } = await import(libPath('git-messages'));
  const vanished = [
    "warning: could not open directory 'lib/mw/': No such file or directory",
    "warning: could not open directory 'lib/x/': Not a directory",
    'error: open("gone.txt"): No such file or directory',
    "error: unable to index file 'gone.txt'",
  ];
  t.deepEqual(pathMessages(vanished.join('\n')), { skipped: [], other: [], ignoredAdvice: false });
  // A folder that cannot be read is still one.
  t.deepEqual(pathMessages("warning: could not open directory 'locked/': Permission denied\n").skipped, [
    { path: 'locked/', reason: 'unreadable' },
  ]);
});

/** Make `rel` (a chain of folders past PATH_MAX) and a file in it: one level at a time, as no absolute path reaches it. */
function writeDeep(box, dirs, file, content) {
  const script = `const fs = require('node:fs');
    process.chdir(${JSON.stringify(box.ws)});
    for (const d of ${JSON.stringify(dirs)}) { fs.mkdirSync(d, { recursive: true }); process.chdir(d); }
    fs.writeFileSync(${JSON.stringify(file)}, ${JSON.stringify(content)});`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return [...dirs, file].join('/');
}

test('X8: a file or folder past PATH_MAX is listed as not captured (path too long), never dropped silently', async (t) => {
  const box = sandbox();
  const level = (c) => c.repeat(200);
  write(box, 'a.txt', 'a\n');
  // A folder chain longer than PATH_MAX (git cannot open it), and a file whose own path is (its folder is not).
  const deepDir = writeDeep(
    box,
    Array.from({ length: 22 }, () => level('d')),
    'deep.txt',
    'deep\n',
  );
  const longFile = writeDeep(
    box,
    Array.from({ length: 20 }, () => level('e')),
    `${level('f')}.txt`,
    'long\n',
  );
  const covered = (skipped, p) => skipped.some((s) => s.reason === 'path-too-long' && (p === s.path || p.startsWith(s.path)));
  const one = await ckptJson(box, ['snapshot']);
  t.true(one.created);
  t.true(lsTree(box, one.id).has('a.txt'));
  t.true(covered(one.skipped, deepDir), JSON.stringify(one.skipped).slice(0, 300));
  t.true(covered(one.skipped, longFile), JSON.stringify(one.skipped).slice(0, 300));
  const human = await ckpt(box, ['status']);
  t.regex(human.stdout, /not captured: d{200}\/.*: path too long/);
  // One that appears later, inside a new folder, is reported the same way.
  const later = writeDeep(box, ['new', ...Array.from({ length: 22 }, () => level('g'))], 'x.txt', 'x\n');
  write(box, 'new/ok.txt', 'ok\n');
  const two = await ckptJson(box, ['snapshot']);
  t.true(lsTree(box, two.id).has('new/ok.txt'));
  t.true(covered(two.skipped, later), JSON.stringify(two.skipped).slice(0, 300));
  const status = await ckptJson(box, ['status']);
  for (const p of [deepDir, longFile, later]) t.true(covered(status.uncaptured, p));
});

test('X7: a file or a symlink replaced by a folder: the same checkpoint holds the folder’s files', async (t) => {
  const box = sandbox();
  write(box, 'thing', 'f\n');
  symlinkSync('thing', path.join(box.ws, 'link'));
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  rmSync(path.join(box.ws, 'thing'));
  rmSync(path.join(box.ws, 'link'));
  write(box, 'thing/child.txt', 'c\n');
  write(box, 'thing/deeper/grandchild.txt', 'g\n');
  write(box, 'link/inside.txt', 'i\n');
  const two = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, two.id);
  t.deepEqual([...entries.keys()].sort(), ['a.txt', 'link/inside.txt', 'thing/child.txt', 'thing/deeper/grandchild.txt']);
  t.deepEqual(two.stats, { added: 3, modified: 0, deleted: 2 });
  t.false((await ckptJson(box, ['status'])).dirty);
  t.false((await ckptJson(box, ['snapshot'])).created);
});

test('X6: a vendored clone (its .git removed) becomes ordinary files in the next checkpoint', async (t) => {
  const upstream = sandbox({ name: 'upstream' });
  write(upstream, 'lib.c', 'int lib;\n');
  sh(upstream, ['add', '.']);
  sh(upstream, ['commit', '-qm', 'lib']);
  const box = sandbox();
  write(box, 'top.txt', 'top\n');
  write(box, 'vendor/README', 'vendored code\n');
  sh(box, ['clone', '-q', upstream.ws, 'vendor/lib']);
  const one = await ckptJson(box, ['snapshot']);
  t.is(lsTree(box, one.id).get('vendor/lib').mode, '160000');
  // The next snapshots read the list of gitlinks from its cache: that must see the change too.
  t.false((await ckptJson(box, ['snapshot'])).created);
  rmSync(path.join(box.ws, 'vendor/lib/.git'), { recursive: true, force: true });
  write(box, 'vendor/lib/lib.c', 'int lib; /* my patch */\n');
  write(box, 'vendor/lib/new.c', 'int added;\n');
  const two = await ckptJson(box, ['snapshot']);
  t.true(two.created);
  const entries = lsTree(box, two.id);
  t.false(entries.has('vendor/lib'), 'no gitlink any more');
  t.is(storedBytes(box, two.id, 'vendor/lib/lib.c').toString(), 'int lib; /* my patch */\n');
  t.is(storedBytes(box, two.id, 'vendor/lib/new.c').toString(), 'int added;\n');
  t.false((await ckptJson(box, ['status'])).dirty);
  // What it captured can be brought back.
  rmSync(path.join(box.ws, 'vendor'), { recursive: true, force: true });
  await ckptJson(box, ['snapshot']);
  const back = await ckptJson(box, ['restore', 'latest~1']);
  t.is(back.counts.failed, 0);
  t.is(readFileSync(path.join(box.ws, 'vendor/lib/new.c'), 'utf8'), 'int added;\n');
});

test('a captured folder that becomes a repository of its own is a gitlink in the same checkpoint', async (t) => {
  const box = sandbox();
  write(box, 'top.txt', 'top\n');
  write(box, 'vendor/lib/lib.c', 'int lib;\n');
  await ckptJson(box, ['snapshot']);
  const lib = path.join(box.ws, 'vendor/lib');
  sh(box, ['init', '-q'], { cwd: lib });
  write(box, 'vendor/lib/lib.c', 'changed, then committed there\n');
  sh(box, ['add', '.'], { cwd: lib });
  sh(box, ['commit', '-qm', 'own history'], { cwd: lib });
  const head = sh(box, ['rev-parse', 'HEAD'], { cwd: lib }).stdout.trim();
  const two = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, two.id);
  t.deepEqual(entries.get('vendor/lib'), { mode: '160000', type: 'commit', oid: head });
  t.false(entries.has('vendor/lib/lib.c'));
  t.false((await ckptJson(box, ['snapshot'])).created);
});

for (const daemon of [false, true]) {
  test(`C1: a commit inside a nested repository records it as modified (its new commit), never deleted then added (daemon ${daemon ? 'on' : 'off'})`, async (t) => {
    const box = await hookBox(t, daemon);
    write(box, 'top.txt', 'top\n');
    const lib = path.join(box.ws, 'vendor/lib');
    write(box, 'vendor/lib/lib.c', 'v1\n');
    sh(box, ['init', '-q'], { cwd: lib });
    sh(box, ['add', '.'], { cwd: lib });
    sh(box, ['commit', '-qm', 'one'], { cwd: lib });
    await ckptJson(box, ['snapshot']);
    for (const round of [1, 2]) {
      const call = {
        session_id: 'c1',
        cwd: box.ws,
        tool_name: 'Bash',
        tool_use_id: `t${round}`,
        tool_input: { command: 'git -C vendor/lib commit -am next' },
      };
      await hookEvent(box, 'claude', 'pre', { ...call, hook_event_name: 'PreToolUse' });
      write(box, 'vendor/lib/lib.c', `v${round + 1}\n`);
      sh(box, ['commit', '-qam', `commit ${round}`], { cwd: lib });
      const head = sh(box, ['rev-parse', 'HEAD'], { cwd: lib }).stdout.trim();
      await hookEvent(box, 'claude', 'post', { ...call, hook_event_name: 'PostToolUse', tool_response: {} });
      if (daemon) await flushDaemon(box.store);
      const post = ledgerLines(box).at(-1);
      t.like(post, { kind: 'post', stats: { added: 0, modified: 1, deleted: 0 } }, `round ${round}`);
      t.deepEqual(post.paths, [{ path: 'vendor/lib', status: 'M' }]);
      t.deepEqual(lsTree(box, post.id).get('vendor/lib'), { mode: '160000', type: 'commit', oid: head });
      // The next capture finds nothing new: no "added" the checkpoint after.
      const again = await ckptJson(box, ['snapshot']);
      t.false(again.created, `round ${round}: nothing changed since`);
    }
  });
}

/** Write a file whose name holds raw bytes (`\xff` …); false where the filesystem refuses names that are not UTF-8 (APFS). */
function writeRaw(box, relBytes, content) {
  try {
    writeFileSync(Buffer.concat([Buffer.from(`${box.ws}/`), relBytes]), content);
    return true;
  } catch (err) {
    if (err.code === 'EILSEQ') return false;
    throw err;
  }
}

/** Whether the temporary folder's filesystem takes a name that is not UTF-8 (APFS refuses one: EILSEQ). */
const takesRawNames = (() => {
  const probe = sandbox({ git: false });
  return writeRaw(probe, Buffer.from([0x62, 0xff]), 'probe\n');
})();
const rawNameTest = testIf(test, takesRawNames, 'the filesystem of the temporary folder refuses names that are not UTF-8');

rawNameTest(
  'X5: names that are not UTF-8 are listed as not captured, each one apart, and restore --delete-new never deletes them',
  async (t) => {
    const box = sandbox();
    const raw = (...parts) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    write(box, 'a.txt', 'a\n');
    t.true(writeRaw(box, raw('bad', [0xff], '.txt'), 'ff\n'));
    writeRaw(box, raw('bad', [0xfe], '.txt'), 'fe\n');
    const one = await ckpt(box, ['snapshot', '--json']);
    t.is(one.code, 0, one.stderr);
    const first = JSON.parse(one.stdout);
    // In JSON each byte that is not UTF-8 is a lone surrogate U+DC80–U+DCFF (Python's surrogateescape).
    t.deepEqual(first.skipped.map((s) => [s.path, s.reason]).sort(), [
      ['bad\udcfe.txt', 'name-not-utf8'],
      ['bad\udcff.txt', 'name-not-utf8'],
    ]);
    t.deepEqual([...lsTree(box, first.id).keys()], ['a.txt']);
    // People read them with the bytes spelled out.
    const human = await ckpt(box, ['status']);
    t.regex(human.stdout, /not captured: bad\\xfe\.txt: name is not valid UTF-8/);
    t.regex(human.stdout, /not captured: bad\\xff\.txt: name is not valid UTF-8/);
    const status = await ckptJson(box, ['status']);
    t.deepEqual(status.uncaptured.map((s) => s.path).sort(), ['bad\udcfe.txt', 'bad\udcff.txt']);
    t.deepEqual(
      ledgerLines(box)[0]
        .skipped.map((s) => s.path)
        .sort(),
      ['bad\udcfe.txt', 'bad\udcff.txt'],
    );
    // Later: a new folder holding one, and a folder whose own name is not UTF-8.
    write(box, 'd/ok.txt', 'ok\n');
    writeRaw(box, raw('d/x', [0xc3, 0x28]), 'bad pair\n');
    mkdirSync(Buffer.concat([Buffer.from(`${box.ws}/`), raw('e', [0x80])]));
    writeRaw(box, raw('e', [0x80], '/inside.txt'), 'inside\n');
    const two = await ckptJson(box, ['snapshot']);
    t.deepEqual([...lsTree(box, two.id).keys()].sort(), ['a.txt', 'd/ok.txt']);
    t.deepEqual(two.skipped.map((s) => s.path).sort(), ['bad\udcfe.txt', 'bad\udcff.txt', 'd/x\udcc3(', 'e\udc80/']);
    // Back to the first checkpoint, deleting what it lacks: only what was captured goes.
    const back = await ckptJson(box, ['restore', first.id, '--delete-new']);
    t.is(back.counts.delete, 1);
    t.false(existsSync(path.join(box.ws, 'd/ok.txt')));
    for (const [name, content] of [
      [raw('bad', [0xff], '.txt'), 'ff\n'],
      [raw('bad', [0xfe], '.txt'), 'fe\n'],
      [raw('d/x', [0xc3, 0x28]), 'bad pair\n'],
      [raw('e', [0x80], '/inside.txt'), 'inside\n'],
    ])
      t.is(readFileSync(Buffer.concat([Buffer.from(`${box.ws}/`), name]), 'utf8'), content);
  },
);

test('X5: the name codec keeps every byte, leaves valid names as they are, and spells the rest for people', async (t) => {
  const { decodePathBytes, pathBytes, isUtf8Path, displayPath } = await import(libPath('paths'));
  const decode = (buf) => decodePathBytes(buf, 0, buf.length);
  for (const valid of ['plain.txt', 'ünïcødé/名前.md', 'emoji 💩.txt', 'real \uFFFD replacement', 'ë\ud83d\udca9']) {
    t.is(decode(Buffer.from(valid)), valid);
    t.true(isUtf8Path(valid));
  }
  const samples = [
    [0xff],
    [0x62, 0xc3, 0x28],
    [0xed, 0xa0, 0x80],
    [0xf0, 0x9f, 0x92],
    [0xe2, 0x82, 0xac, 0x80],
    [0xf0, 0x9f, 0x92, 0xa9, 0xfe],
  ];
  // And random bytes: the decoded string always gives the same bytes back.
  let seed = 7;
  for (let n = 0; n < 200; n++)
    samples.push(Array.from({ length: 1 + (n % 9) }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256));
  const seen = new Set();
  for (const bytes of samples) {
    const buf = Buffer.from(bytes);
    const name = decode(buf);
    t.deepEqual(pathBytes(name), buf, JSON.stringify(bytes));
    t.is(isUtf8Path(name), Buffer.from(buf.toString('utf8')).equals(buf), JSON.stringify(bytes));
    seen.add(name);
  }
  t.is(seen.size, new Set(samples.map((b) => Buffer.from(b).toString('hex'))).size, 'no two byte strings share a name');
  t.is(displayPath(decode(Buffer.from([0x62, 0xff, 0x2e, 0xf0, 0x9f, 0x92, 0xa9]))), 'b\\xff.💩');
});

test('X4: a store reached through a symlink into its own workspace is refused with one line, and nothing is written there', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  mkdirSync(path.join(box.ws, 'state'));
  const link = path.join(box.base, 'storelink');
  symlinkSync(path.join(box.ws, 'state'), link);
  for (const env of [{ GIT_CKPT_HOME: link }, { GIT_CKPT_HOME: '', XDG_STATE_HOME: path.join(box.ws, 'xdg') }]) {
    for (const args of [['snapshot'], ['log'], ['status'], ['restore', 'latest']]) {
      const r = await ckpt(box, args, { env });
      t.is(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      t.regex(r.stderr, /^git-ckpt: refusing a store inside its own workspace: .*; set GIT_CKPT_HOME to a folder outside .*\n$/);
    }
  }
  t.deepEqual(readdirSync(path.join(box.ws, 'state')), []);
  t.false(existsSync(path.join(box.ws, 'xdg')));
  const hook = await ckpt(box, ['hook', 'claude', 'post'], {
    env: { GIT_CKPT_HOME: link },
    input: JSON.stringify({
      session_id: 's1',
      cwd: box.ws,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 't1',
    }),
  });
  t.is(hook.code, 0);
  t.regex(readFileSync(path.join(link, 'hook.log'), 'utf8'), /no checkpoint: refusing a store inside its own workspace/);
});

test('X4: another store root inside the workspace (through a symlink too) is never captured, and a restore never writes there', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a1\n');
  // Another workspace keeps its stores in XDG_STATE_HOME, reached through a symlink into this one.
  mkdirSync(path.join(box.ws, 'xdg'));
  const xdgLink = path.join(box.base, 'xdglink');
  symlinkSync(path.join(box.ws, 'xdg'), xdgLink);
  const other = path.join(box.base, 'other');
  mkdirSync(other);
  writeFileSync(path.join(other, 'o.txt'), 'o\n');
  const otherEnv = { GIT_CKPT_HOME: '', XDG_STATE_HOME: xdgLink };
  await ckptJson(box, ['snapshot'], { cwd: other, env: otherEnv });
  const otherStore = path.join(
    box.ws,
    'xdg',
    'git-ckpt',
    readdirSync(path.join(box.ws, 'xdg', 'git-ckpt')).find((d) => d.startsWith('other-')),
  );
  // Taken where that root is unknown (no XDG_STATE_HOME): the other store is captured, as it was before.
  const before = await ckptJson(box, ['snapshot']);
  t.true([...lsTree(box, before.id).keys()].some((p) => p.startsWith('xdg/git-ckpt/')));
  // Where it is known, it leaves the checkpoint and stays out.
  const env = { XDG_STATE_HOME: xdgLink };
  write(box, 'a.txt', 'a2\n');
  const two = await ckptJson(box, ['snapshot'], { env });
  t.deepEqual([...lsTree(box, two.id).keys()], ['a.txt']);
  writeFileSync(path.join(other, 'o.txt'), 'o2\n');
  await ckptJson(box, ['snapshot'], { cwd: other, env: otherEnv });
  t.false((await ckptJson(box, ['snapshot'], { env })).created, 'its changes are no changes here');
  // A restore to the checkpoint that holds it writes and deletes nothing there.
  rmSync(path.join(otherStore, 'pack-state.json'));
  const stateBefore = treeState(otherStore);
  const back = await ckptJson(box, ['restore', before.id, '--delete-new'], { env });
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'a1\n');
  t.true(back.files.some((f) => f.path.startsWith('xdg/') && f.action === 'skip' && /git-ckpt's stores/.test(f.reason)));
  t.false(back.files.some((f) => f.path.startsWith('xdg/') && f.action !== 'skip' && f.action !== 'unchanged'));
  t.is(treeState(otherStore), stateBefore);
  t.is((await ckptJson(box, ['log'], { cwd: other, env: otherEnv })).length, 2, 'the other workspace keeps its checkpoints');
});
