import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, ckpt, ckptJson, holdLock, hookEvent, restoreWithOwnGuard, sandbox, storeDir, testIf, write } from './helpers.mjs';

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

test('log: newest first, a header per session and turn, rows without them, stats, paths, and "N older" when -n cuts', async (t) => {
  const { box, ids } = await history();
  const r = await ckpt(box, ['log', '-n', '2']);
  t.is(r.code, 0);
  t.is(
    r.stdout.replace(/(just now|\d+ seconds? ago) */g, 'AGE  '),
    [
      '── session odd ──',
      'turn 5 (before it: turn:5@odd)',
      `  ${ids[4].slice(0, 8)}  AGE  #1 Edit  +1 ~1 -0  a.txt, new5.txt`,
      '── session even ──',
      'turn 4 (before it: turn:4@even)',
      `  ${ids[3].slice(0, 8)}  AGE  #1 Edit  +1 ~1 -0  a.txt, new4.txt`,
      '3 older checkpoints',
      '',
    ].join('\n'),
  );
  t.notRegex(r.stdout, /\x1b\[/, 'no colour when not a TTY');
  // --oneline stays one line per checkpoint that says whose it is, for scripts and grep.
  const oneline = await ckpt(box, ['log', '--oneline']);
  t.is(oneline.stdout.trim().split('\n').length, 5);
  t.regex(oneline.stdout, new RegExp(`^${ids[4].slice(0, 8)} s:odd t5 #1 Edit post \\+1 ~1 -0 a\\.txt, new5\\.txt$`, 'm'));
  const stat = await ckpt(box, ['log', '-n', '1', '--stat']);
  t.regex(stat.stdout, /^ {4}A new5\.txt$/m);
  t.regex(stat.stdout, /^ {4}M a\.txt$/m);
});

/** A Claude session of two turns through the real hook: an Edit and a long shell command, then a Bash that fails. */
async function agentSession(box) {
  write(box, 'README.md', '# my project\n');
  await ckptJson(box, ['snapshot', '-m', 'initial snapshot']);
  const base = { session_id: '8e0f2c4a-demo-session', cwd: box.ws, transcript_path: path.join(box.base, 't.jsonl') };
  const call = async (prompt, id, tool, input, change, failed = false) => {
    await hookEvent(box, 'claude', 'pre', {
      ...base,
      prompt_id: prompt,
      hook_event_name: 'PreToolUse',
      tool_name: tool,
      tool_input: input,
      tool_use_id: id,
    });
    change();
    await hookEvent(box, 'claude', 'post', {
      ...base,
      prompt_id: prompt,
      hook_event_name: failed ? 'PostToolUseFailure' : 'PostToolUse',
      tool_name: tool,
      tool_input: input,
      tool_use_id: id,
      ...(failed ? { error: 'exit code 1' } : {}),
    });
  };
  await hookEvent(box, 'claude', 'turn-start', {
    ...base,
    prompt_id: 'p1',
    hook_event_name: 'UserPromptSubmit',
    prompt: 'make the greeting friendlier',
  });
  await call('p1', 'toolu_1', 'Edit', { file_path: path.join(box.ws, 'greet.js') }, () => write(box, 'greet.js', 'hi there\n'));
  // Long enough for any terminal line, short enough to be recorded whole (a hook keeps the first 200 characters).
  const long = `sed -i.bak s/my/our/ README.md && rm README.md.bak && ${'echo padding && '.repeat(6)}true`;
  await call('p1', 'toolu_2', 'Bash', { command: long }, () => write(box, 'README.md', '# our project\n'));
  await hookEvent(box, 'claude', 'turn-end', { ...base, prompt_id: 'p1', hook_event_name: 'Stop' });
  await hookEvent(box, 'claude', 'turn-start', { ...base, prompt_id: 'p2', hook_event_name: 'UserPromptSubmit', prompt: 'run the tests' });
  await call('p2', 'toolu_3', 'Bash', { command: 'npm test' }, () => write(box, 'out.log', 'fail\n'), true);
  await hookEvent(box, 'claude', 'turn-end', { ...base, prompt_id: 'p2', hook_event_name: 'Stop' });
  return { long };
}

test('log of an agent session: the session and each turn once, as headings; rows repeat neither them nor the agent, the phase or the tool', async (t) => {
  const box = sandbox();
  const { long } = await agentSession(box);
  const log = await ckpt(box, ['log']);
  t.is(log.code, 0, log.stderr);
  const lines = log.stdout.trimEnd().split('\n');
  t.is(lines.filter((l) => l === '── session 8e0f2c4a-demo… (claude) ──').length, 1, log.stdout);
  t.is(lines.filter((l) => l.startsWith('── session')).length, 1);
  t.is(lines.filter((l) => l === 'turn 2 “run the tests” (before it: turn:2@8e0f2c4a-demo)').length, 1, log.stdout);
  t.is(lines.filter((l) => l === 'turn 1 “make the greeting friendlier” (before it: turn:1@8e0f2c4a-demo)').length, 1);
  const rows = lines.filter((l) => /^ {2}[0-9a-f]{8} /.test(l));
  t.true(rows.length >= 3, log.stdout);
  for (const row of rows) {
    t.notRegex(
      row,
      /s:8e0f|\bt[12]\b|claude|\bpost\b|\bpre\b|Bash:|Edit:/,
      `a row says its session, turn, agent, phase or tool twice: ${row}`,
    );
  }
  // `#2 Bash`, the stats, the path, then the command itself, whole into a pipe.
  t.true(
    rows.some((row) =>
      new RegExp(
        `^ {2}[0-9a-f]{8} {2}(?:just now|\\d+ seconds? ago) +#2 Bash +\\+0 ~1 -0 {2}README\\.md {2}${long.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
      ).test(row),
    ),
    log.stdout,
  );
  t.true(
    rows.some((row) => /#1 Bash ✗ failed +\+1 ~0 -0 {2}out\.log {2}npm test · exit code 1$/.test(row)),
    log.stdout,
  );
  t.true(
    rows.some((row) => /#1 Edit +\+1 ~0 -0 {2}greet\.js {2}.*greet\.js$/.test(row)),
    log.stdout,
  );
  // --session keeps the shape.
  const only = await ckpt(box, ['log', '--session', '8e0f']);
  t.is(only.stdout.split('\n').filter((l) => l.startsWith('── session')).length, 1);
  t.notRegex(only.stdout, /outside any agent session/);
});

test('log folds an operation and its guard into one row: restore to X · guard G, undo of R; --json keeps every record', async (t) => {
  const box = sandbox();
  const { first, restore } = await restoreWithOwnGuard(box);
  t.truthy(restore.guard);
  const records = await ckptJson(box, ['log']);
  t.deepEqual(
    records.map((r) => r.kind),
    ['restore', 'guard', 'manual', 'manual'],
    '--json lists both records',
  );
  const log = await ckpt(box, ['log']);
  const rows = log.stdout.trimEnd().split('\n');
  t.is(rows.length, 3, log.stdout);
  t.regex(
    rows[0],
    new RegExp(
      `^${restore.record.slice(0, 8)} {2}(?:just now|\\d+ seconds? ago) +restore to ${first.id.slice(0, 8)} · guard ${restore.guard.slice(0, 8)} \\(\\+0 ~1 -0\\) {2}\\+0 ~1 -0 {2}a\\.txt$`,
    ),
  );
  t.false(
    rows.some((row) => row.startsWith(restore.guard.slice(0, 8))),
    'the guard has no row of its own',
  );
  // -n counts rows: the restore with its guard is one, and the older count leaves both out.
  const one = await ckpt(box, ['log', '-n', '1']);
  t.deepEqual(one.stdout.trimEnd().split('\n').slice(1), ['2 older checkpoints']);
  // An undo's guard is the record it undoes: said once.
  const undo = await ckptJson(box, ['undo']);
  const after = await ckpt(box, ['log', '-n', '1']);
  t.regex(
    after.stdout,
    new RegExp(
      `^${undo.record.slice(0, 8)} {2}(?:just now|\\d+ seconds? ago) +undo of ${restore.record.slice(0, 8)} +\\+0 ~1 -0 {2}a\\.txt\\n`,
    ),
  );
  t.notRegex(after.stdout, /guard/);
});

const hasScript = spawnSync('script', ['-qec', 'true', '/dev/null']).status === 0;
const onTerminal = testIf(test, hasScript, 'util-linux `script` (a pseudo-terminal) is not installed');

/** git ckpt log on a pseudo-terminal `columns` wide (util-linux `script`: stdout is a TTY there). */
function logOnTerminal(box, columns, env = {}, args = []) {
  // COLUMNS is set on the command itself: the shell `script` starts resets it after stty (bash's checkwinsize).
  const assigned = env.COLUMNS ? `COLUMNS=${env.COLUMNS} ` : '';
  const line = `stty cols ${columns} rows 50; ${assigned}'${process.execPath}' '${CLI}' log ${args.join(' ')}`;
  const r = spawnSync('script', ['-qec', line, '/dev/null'], { cwd: box.ws, env: { ...box.env, TERM: 'xterm', ...env }, encoding: 'utf8' });
  return { ...r, lines: r.stdout.split(/\r?\n/).filter(Boolean) };
}

const plain = (text) => text.replace(/\x1b\[[0-9;?]*[A-Za-z=>]/g, '').replace(/\x1b[=>]/g, '');

onTerminal(
  'log fits the terminal: each line cut to its width with …, colours kept; COLUMNS wins there; through the pager too; never into a pipe',
  async (t) => {
    const box = sandbox();
    const { long } = await agentSession(box);
    const widest = (lines) => Math.max(...lines.map((l) => [...plain(l)].length));
    // A terminal 60 columns wide, no pager: no line wider, the long ones end with …
    const narrow = logOnTerminal(box, 60, { GIT_PAGER: 'cat', NO_COLOR: '1' });
    t.is(narrow.status, 0, narrow.stdout);
    t.true(widest(narrow.lines) <= 60, narrow.stdout);
    t.is(widest(narrow.lines), 60, 'a cut line fills the width');
    t.true(
      narrow.lines.some((l) => /^ {2}[0-9a-f]{8} .*#2 Bash .*…$/.test(l) && [...l].length === 60),
      narrow.stdout,
    );
    t.true(narrow.lines.some((l) => l.startsWith('── session 8e0f2c4a-demo… (claude) ──')));
    // Colour on: the codes take no column, and the colour ends after the cut.
    const colored = logOnTerminal(box, 50, { GIT_PAGER: 'cat' }, ['--color=always']);
    t.regex(colored.stdout, /\x1b\[/);
    t.true(widest(colored.lines) <= 50, colored.stdout);
    t.true(
      colored.lines.some((l) => l.endsWith('…\x1b[0m')),
      colored.stdout,
    );
    // COLUMNS, as git reads it, wins over the terminal's own width.
    const columns = logOnTerminal(box, 120, { GIT_PAGER: 'cat', NO_COLOR: '1', COLUMNS: '40' });
    t.true(widest(columns.lines) <= 40, columns.stdout);
    // Through a pager our stdout is a pipe, but the lines end on the same terminal: cut to it too.
    const paged = logOnTerminal(box, 70, { GIT_PAGER: 'cat -u', NO_COLOR: '1' });
    t.true(widest(paged.lines) <= 70, paged.stdout);
    t.true(paged.lines.some((l) => l.endsWith('…')));
    // Into a pipe nothing is cut, whatever COLUMNS says (as git): grep sees whole lines.
    const piped = await ckpt(box, ['log'], { env: { ...box.env, COLUMNS: '40' } });
    t.true(
      piped.stdout.split('\n').some((l) => l.endsWith(long)),
      piped.stdout,
    );
    t.false(piped.stdout.includes('…\n'));
  },
);

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
  rmSync(path.join(box.ws, 'new5.txt'));
  write(box, 'added.txt', 'new\n');
  const dirty = await ckptJson(box, ['status']);
  t.true(dirty.dirty);
  t.is(dirty.changedCount, 3);
  t.deepEqual(dirty.changed, [
    { path: 'a.txt', status: 'M' },
    { path: 'added.txt', status: 'A' },
    { path: 'new5.txt', status: 'D' },
  ]);
  const human = await ckpt(box, ['status']);
  t.regex(human.stdout, /checkpoints: 5 in 2 sessions/);
  t.regex(human.stdout, /^dirty: +3 paths changed since the latest checkpoint:\n +M a\.txt\n +A added\.txt\n +D new5\.txt$/m);
  for (let i = 0; i < 12; i++) write(box, `many/f${i}.txt`, `${i}\n`);
  t.regex(
    (await ckpt(box, ['status'])).stdout,
    /^dirty: +15 paths changed since the latest checkpoint \(git ckpt diff --stat lists them\)$/m,
  );
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
  // Its heartbeat, renewed as the real one is: one older than 5 s is a dead snapshot's (a status under CI's load took longer).
  const started = Date.now();
  const heartbeat = () =>
    writeFileSync(
      path.join(store, 'baseline.json'),
      JSON.stringify({ pid: lock.pid, host: lock.host, started, hashed: 1, total: 9, updated: Date.now() }),
    );
  heartbeat();
  const beating = setInterval(heartbeat, 500);
  t.teardown(() => clearInterval(beating));
  const during = await ckptJson(box, ['status']);
  t.is(during.dirty, null);
  t.is(during.notCompared, 'the first snapshot is still being taken in the background');
  t.regex((await ckpt(box, ['status'])).stdout, /^dirty: +not compared with the latest checkpoint \(the first snapshot/m);
  clearInterval(beating);
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

test('binary content: show and diff print one line with both sizes, as git does, and the whole binary patch with --binary', async (t) => {
  const box = sandbox();
  write(box, 'notes.txt', 'text\n');
  await ckptJson(box, ['snapshot']);
  const png = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n\0\0', 'latin1'), Buffer.alloc(30_000 - 10, 7)]);
  writeFileSync(path.join(box.ws, 'logo.png'), png);
  await ckptJson(box, ['snapshot']);
  const shown = await ckpt(box, ['show', 'latest']);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /^Binary files \/dev\/null and b\/logo\.png differ \(0 -> 30000 bytes\)$/m);
  t.regex(shown.stdout, /logo\.png \| Bin 0 -> 30000 bytes/, 'the stat counts bytes too');
  t.false(shown.stdout.includes('GIT binary patch'));
  t.true(shown.stdout.split('\n').length < 20, `a few lines, not a base85 dump: ${shown.stdout.split('\n').length}`);
  const patch = await ckpt(box, ['show', 'latest', '--binary']);
  t.regex(patch.stdout, /GIT binary patch\nliteral 30000/);

  writeFileSync(path.join(box.ws, 'logo.png'), png.subarray(0, 1234));
  const live = await ckpt(box, ['diff']);
  t.regex(live.stdout, /^Binary files a\/logo\.png and b\/logo\.png differ \(30000 -> 1234 bytes\)$/m, live.stdout);
  rmSync(path.join(box.ws, 'logo.png'));
  const gone = await ckpt(box, ['diff', '--', 'logo.png']);
  t.regex(gone.stdout, /^Binary files a\/logo\.png and \/dev\/null differ \(30000 -> 0 bytes\)$/m, gone.stdout);
  t.regex((await ckpt(box, ['diff', '--binary'])).stdout, /GIT binary patch/);
  const json = await ckptJson(box, ['show', 'latest']);
  t.regex(json.diff, /differ \(0 -> 30000 bytes\)/, '--json carries the same diff');
});
