// What a checkpoint did not see is unknown, never absent (issue 32, principle 4): no recovery command
// (restore --delete-new, undo, redo, revert, resume, --continue, --abort, followRewind=auto) deletes or
// overwrites a path its target did not capture: ignored then (.gitignore, .ckptignore, .git/info/exclude,
// in each direction), listed as not captured (too large, secret), or inside a nested repository.
import test from 'ava';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ckpt, ckptJson, hookEvent, ledgerLines, libPath, sandbox, sh, shadowGit, write } from './helpers.mjs';

const BIG = 'x'.repeat(3000);

/** Set a [ckpt] setting in the user's global git config (the sandbox's). */
const setting = (box, key, value) => sh(box, ['config', '--global', `ckpt.${key}`, value]);

/**
 * Each case: the state before turn 2 (`before`, where X is not captured in direction "unseen then", or
 * captured in "ignored since"), what turn 2's shell call changes of the rules (`during`), and what the
 * user does after (`after`: X's own bytes, never captured). X must hold `precious` after every command.
 */
const CASES = {
  '.gitignore, X ignored at the target and captured since': {
    before: (box) => write(box, '.gitignore', 'build/\n') && write(box, 'build/out.bin', 'precious\n'),
    during: (box) => write(box, '.gitignore', '# nothing ignored\n'),
    x: 'build/out.bin',
  },
  '.gitignore, X captured at the target and ignored since (its bytes never captured)': {
    before: (box) => write(box, '.gitignore', '# nothing ignored\n') && write(box, 'build/out.bin', 'v1, captured\n'),
    during: (box) => write(box, '.gitignore', 'build/\n') && rmSync(path.join(box.ws, 'build/out.bin')),
    after: (box) => write(box, 'build/out.bin', 'precious\n'),
    x: 'build/out.bin',
  },
  '.ckptignore, X ignored at the target and captured since': {
    before: (box) => write(box, '.ckptignore', '*.log\n') && write(box, 'run.log', 'precious\n'),
    during: (box) => write(box, '.ckptignore', '# nothing\n'),
    x: 'run.log',
  },
  '.ckptignore, X captured at the target and ignored since': {
    before: (box) => write(box, '.ckptignore', '# nothing\n') && write(box, 'run.log', 'v1, captured\n'),
    during: (box) => write(box, '.ckptignore', '*.log\n') && rmSync(path.join(box.ws, 'run.log')),
    after: (box) => write(box, 'run.log', 'precious\n'),
    x: 'run.log',
  },
  '.git/info/exclude, X ignored at the target and captured since': {
    before: (box) => write(box, '.git/info/exclude', 'cache/\n') && write(box, 'cache/data.db', 'precious\n'),
    during: (box) => write(box, '.git/info/exclude', '# nothing\n'),
    x: 'cache/data.db',
  },
  '.git/info/exclude, X captured at the target and ignored since': {
    before: (box) => write(box, '.git/info/exclude', '# nothing\n') && write(box, 'cache/data.db', 'v1, captured\n'),
    during: (box) => write(box, '.git/info/exclude', 'cache/\n') && rmSync(path.join(box.ws, 'cache/data.db')),
    after: (box) => write(box, 'cache/data.db', 'precious\n'),
    x: 'cache/data.db',
  },
  'too large at the target, captured since': {
    config: { maxFileBytes: '1k' },
    before: (box) => write(box, 'big.bin', BIG),
    during: (box) => write(box, 'big.bin', 'precious\n'),
    x: 'big.bin',
  },
  'captured at the target, too large since': {
    config: { maxFileBytes: '1k' },
    before: (box) => write(box, 'big.bin', 'v1, captured\n'),
    during: (box) => rmSync(path.join(box.ws, 'big.bin')),
    after: (box) => write(box, 'big.bin', `precious\n${BIG}`),
    x: 'big.bin',
    precious: `precious\n${BIG}`,
  },
  'secret at the target, captured since': {
    before: (box) => write(box, 'server.pem', 'precious\n'),
    during: (box) => setting(box, 'secretPatterns', '!*.pem'),
    x: 'server.pem',
  },
  'captured at the target, secret since': {
    before: (box) => write(box, 'creds.txt', 'v1, captured\n'),
    during: (box) => setting(box, 'secretPatterns', 'creds.txt') && rmSync(path.join(box.ws, 'creds.txt')),
    after: (box) => write(box, 'creds.txt', 'precious\n'),
    x: 'creds.txt',
  },
};

/**
 * A Codex session (its rollout holds what a rewind needs): turn 1 makes one.txt; turn 2 patches app.js (a
 * file tool), then runs a shell call that changes the rules (`during`) and makes new.txt. Returns turn 2's
 * first checkpoint (the state before it), the shell call's post, and the rewind that abandons turn 2.
 */
async function history(box, c) {
  for (const [key, value] of Object.entries(c.config ?? {})) setting(box, key, value);
  write(box, 'app.js', 'v1\n');
  c.before(box);
  await ckptJson(box, ['snapshot', '-m', 'base']);
  const rollout = path.join(box.base, 'rollout.jsonl');
  writeFileSync(rollout, `${JSON.stringify({ type: 'session_meta', payload: { id: 'su' } })}\n`);
  const base = { session_id: 'su', cwd: box.ws, transcript_path: rollout };
  const call = async (turn, id, tool, input, act) => {
    const payload = { ...base, turn_id: `tu${turn}`, tool_name: tool, tool_use_id: id, tool_input: input };
    await hookEvent(box, 'codex', 'pre', { ...payload, hook_event_name: 'PreToolUse' });
    await act();
    await hookEvent(box, 'codex', 'post', { ...payload, hook_event_name: 'PostToolUse', tool_response: '' });
  };
  const turnStart = (turn) =>
    hookEvent(box, 'codex', 'turn-start', { ...base, turn_id: `tu${turn}`, hook_event_name: 'UserPromptSubmit', prompt: `turn ${turn}` });
  const turnEnd = (turn) => hookEvent(box, 'codex', 'turn-end', { ...base, turn_id: `tu${turn}`, hook_event_name: 'Stop' });
  await turnStart(1);
  await call(1, 'c1', 'Bash', { command: 'echo one > one.txt' }, () => write(box, 'one.txt', 'one\n'));
  await turnEnd(1);
  await turnStart(2);
  const patch = '*** Begin Patch\n*** Update File: app.js\n-v1\n+v2\n*** End Patch\n';
  await call(2, 'c2', 'apply_patch', { command: patch }, () => write(box, 'app.js', 'v2\n'));
  await call(2, 'c3', 'Bash', { command: 'make' }, () => {
    c.during(box);
    write(box, 'new.txt', 'made by turn 2\n');
  });
  await turnEnd(2);
  c.after?.(box);
  const records = ledgerLines(box);
  return {
    before: (await ckptJson(box, ['show', 'turn:2@su'])).id,
    post: records.findLast((r) => r.kind === 'post').id,
    /** Codex backtracks to before turn 2 and takes back its patch; the next prompt follows that rewind. */
    rewind: async () => {
      appendFileSync(rollout, `${JSON.stringify({ type: 'event_msg', payload: { type: 'thread_rolled_back', num_turns: 1 } })}\n`);
      write(box, 'app.js', 'v1\n');
      return turnStart(3);
    },
  };
}

/** Whether the store holds these bytes as a blob (some checkpoint captured them). */
const stored = (box, text) => {
  const oid = sh(box, ['hash-object', '--stdin'], { input: text }).stdout.trim();
  try {
    shadowGit(box, ['cat-file', '-e', oid]);
    return true;
  } catch {
    return false;
  }
};

const read = (box, rel) => {
  try {
    return readFileSync(path.join(box.ws, rel), 'utf8');
  } catch {
    return null;
  }
};

for (const [name, c] of Object.entries(CASES)) {
  test(`principle 4, ${name}: restore, undo, redo, revert, resume, --continue and --abort never delete or overwrite it`, async (t) => {
    const box = sandbox();
    const made = await history(box, c);
    const precious = c.precious ?? 'precious\n';
    t.is(read(box, c.x), precious);
    /**
     * X is never deleted. While no checkpoint holds its bytes it is never overwritten either; once an operation's
     * record took them (an ignore file it wrote no longer ignored X), a restore of the target may write the
     * target's X over them, as over any captured file: undo brings them back.
     */
    const xStays = (label) => {
      const now = read(box, c.x);
      t.not(now, null, `${label}: ${c.x} is never deleted`);
      if (now !== precious) t.true(stored(box, precious), `${label}: ${c.x} is never overwritten while its bytes are in no checkpoint`);
    };
    /** After each command: X as above; the captured files as the command makes them (`back`: before turn 2). */
    const check = (label, r, back) => {
      // A revert whose only conflict is X (its uncaptured bytes were captured by an operation since) exits 1, as git revert does.
      const onlyX = r.code === 1 && r.stdout.includes(`skipped: ${c.x} (conflict`) && r.stdout.match(/\(conflict/g).length === 1;
      t.true(r.code === 0 || onlyX, `${label}: exit ${r.code}: ${r.stderr}${r.stdout}`);
      xStays(label);
      t.is(read(box, 'app.js'), back === true ? 'v1\n' : 'v2\n', `${label}: app.js`);
      t.is(read(box, 'new.txt'), back ? null : 'made by turn 2\n', `${label}: new.txt, which turn 2 made, ${back ? 'goes' : 'is back'}`);
    };
    const dry = await ckptJson(box, ['restore', made.before, '--delete-new', '--dry-run']);
    const planned = dry.files.find((f) => f.path === c.x);
    if (planned) t.is(planned.action, 'skip', `${c.x} is planned as left alone: ${JSON.stringify(planned)}`);
    check('restore turn:2 --delete-new', await ckpt(box, ['restore', 'turn:2@su', '--delete-new']), true);
    t.is(ledgerLines(box).at(-1).op.target, made.before, 'turn:2 is the state before turn 2');
    check('undo', await ckpt(box, ['undo']), false);
    check('redo (undo again)', await ckpt(box, ['undo']), true);
    check('undo of the redo', await ckpt(box, ['undo']), false);
    check('revert of turn 2', await ckpt(box, ['revert', '--session', 'su', '--turn', '2']), true);
    check('undo of the revert', await ckpt(box, ['undo']), false);
    check('revert of its post', await ckpt(box, ['revert', made.post]), 'new.txt');
    check('undo of that revert', await ckpt(box, ['undo']), false);
    check('resume turn:2 --delete-new', await ckpt(box, ['resume', 'turn:2@su', '--delete-new']), true);
    check('undo of the resume', await ckpt(box, ['undo']), false);
    // Killed after its first write: --continue finishes it, --abort rolls it back; undo reverses each.
    const crash = { env: { GIT_CKPT_TEST_CRASH: 'write:1' } };
    t.is((await ckpt(box, ['restore', made.before, '--delete-new'], crash)).code, null);
    check('restore --continue', await ckpt(box, ['restore', '--continue']), true);
    check('undo of the continued restore', await ckpt(box, ['undo']), false);
    t.is((await ckpt(box, ['restore', made.before, '--delete-new'], crash)).code, null);
    check('restore --abort', await ckpt(box, ['restore', '--abort']), false);
    const afterAbort = await ckpt(box, ['undo']);
    t.is(afterAbort.code, 0, afterAbort.stderr);
    xStays('undo of the abort');

    // A rewind inside the agent: Codex backtracks to before turn 2 and takes back its patch; followRewind=auto
    // restores the rest it can put down to turn 2, never X; undo brings turn 2 back whole, and redoes.
    const agentBox = sandbox();
    writeFileSync(
      path.join(agentBox.home, '.gitconfig'),
      `${readFileSync(path.join(agentBox.home, '.gitconfig'), 'utf8')}[ckpt]\n\tfollowRewind = auto\n`,
    );
    const rewound = await history(agentBox, c);
    const followed = await rewound.rewind();
    t.regex(JSON.parse(followed.stdout).systemMessage ?? '', /restored \d+ files? of turn 2/);
    const inAgentBox = (label, r, back) => {
      t.is(r.code, 0, `${label}: ${r.stderr}`);
      t.is(read(agentBox, c.x), precious, `${label}: ${c.x} is never deleted or overwritten`);
      t.is(read(agentBox, 'app.js'), back ? 'v1\n' : 'v2\n', `${label}: app.js`);
      t.is(read(agentBox, 'new.txt'), back ? null : 'made by turn 2\n', `${label}: new.txt`);
    };
    inAgentBox('followRewind=auto', followed, true);
    inAgentBox('undo of the followed rewind', await ckpt(agentBox, ['undo']), false);
    inAgentBox('redo', await ckpt(agentBox, ['undo']), true);
  });
}

test('principle 4: a path inside what was a nested repository at the target is never deleted (outside its scan)', async (t) => {
  const box = sandbox();
  write(box, 'app.js', 'v1\n');
  write(box, 'vendor/lib/lib.c', 'int lib;\n');
  const lib = path.join(box.ws, 'vendor/lib');
  sh(box, ['init', '-q'], { cwd: lib });
  sh(box, ['add', '.'], { cwd: lib });
  sh(box, ['commit', '-qm', 'own'], { cwd: lib });
  const target = await ckptJson(box, ['snapshot']);
  // Its .git removed (a vendored copy): its files are captured as the workspace's own now.
  rmSync(path.join(lib, '.git'), { recursive: true, force: true });
  write(box, 'app.js', 'v2\n');
  const vendored = await ckptJson(box, ['snapshot']);
  const r = await ckptJson(box, ['restore', target.id, '--delete-new']);
  t.like(
    r.files.find((f) => f.path === 'vendor/lib/lib.c'),
    {
      action: 'skip',
      reason: `inside a nested repository at ${target.id.slice(0, 8)}, which is never looked into: its absence there says nothing; left alone`,
    },
  );
  t.is(read(box, 'vendor/lib/lib.c'), 'int lib;\n');
  t.is(read(box, 'app.js'), 'v1\n');
  // The same through a revert of the checkpoint that took its files (its parent read from the tree objects).
  t.is((await ckpt(box, ['undo'])).code, 0);
  const reverted = await ckptJson(box, ['revert', vendored.id]);
  t.regex(reverted.files.find((f) => f.path === 'vendor/lib/lib.c').reason, /^inside a nested repository at [0-9a-f]{8}/);
  t.is(read(box, 'vendor/lib/lib.c'), 'int lib;\n');
  t.is(read(box, 'app.js'), 'v1\n');
});

test('§2.2: undo after a restore that rewrote .gitignore leaves what the guard never saw; the restore counts what its record holds', async (t) => {
  const box = sandbox();
  write(box, '.gitignore', 'node_modules/\n');
  write(box, 'app.js', 'v1\n');
  await ckptJson(box, ['snapshot', '-m', 'base']);
  write(box, '.gitignore', 'node_modules/\nbuild/\n');
  write(box, 'build/out.bin', 'precious\n');
  write(box, 'app.js', 'v2\n');
  await ckptJson(box, ['snapshot', '-m', 'step']);
  const restored = await ckpt(box, ['restore', 'latest~1']);
  t.is(restored.code, 0, restored.stderr);
  // Its record holds build/out.bin (no longer ignored): the summary says so, with the record's own counts.
  t.regex(restored.stdout, /recorded as [0-9a-f]{8} \(\+1 ~2 -0\)/);
  t.regex(restored.stdout, /its record also holds 1 path the restore did not write .*: build\/out\.bin/);
  const json = await ckptJson(box, ['show', 'latest']);
  t.deepEqual(json.stats, { added: 1, modified: 2, deleted: 0 });
  const dry = await ckptJson(box, ['undo', '--dry-run']);
  t.like(
    dry.files.find((f) => f.path === 'build/out.bin'),
    { action: 'skip' },
  );
  t.regex(dry.files.find((f) => f.path === 'build/out.bin').reason, /^ignored at [0-9a-f]{8}: its absence there says nothing; left alone$/);
  const undo = await ckpt(box, ['undo']);
  t.is(undo.code, 0, undo.stderr);
  t.is(read(box, 'build/out.bin'), 'precious\n', 'no checkpoint before the restore had it: undo leaves it');
  t.is(read(box, '.gitignore'), 'node_modules/\nbuild/\n');
  t.is(read(box, 'app.js'), 'v2\n');
});

test('principle 4, the pure rule: absent from a checkpoint means absent only where its scan could have seen the path', async (t) => {
  const { unseenReasons } = await import(libPath('restore-plan'));
  const sight = {
    label: 'abcd1234',
    ignored: new Set(['build/a.o']),
    unreadRules: ['docs'],
    skipped: [
      { path: 'big.bin', reason: 'too-large' },
      { path: 'locked/', reason: 'unreadable' },
    ],
    skipsCut: false,
    gitlinks: ['vendor/lib'],
  };
  const reasons = unseenReasons(['build/a.o', 'docs/x.md', 'big.bin', 'locked/k', 'vendor/lib/c.c', 'vendor/libx', 'src/new.js'], sight);
  t.deepEqual(Object.fromEntries([...reasons].map(([p, why]) => [p, why.replace(': its absence there says nothing; left alone', '')])), {
    'build/a.o': 'ignored at abcd1234',
    'docs/x.md': 'a .gitignore above it was not captured at abcd1234, so its rules are not known',
    'big.bin': 'not captured at abcd1234 (too large)',
    'locked/k': 'not captured at abcd1234 (unreadable)',
    'vendor/lib/c.c': 'inside a nested repository at abcd1234, which is never looked into',
  });
  t.deepEqual([...unseenReasons(['a'], { ...sight, skipsCut: true }).keys()], ['a'], 'a cut list of skips: any path may be in it');
  t.deepEqual([...unseenReasons(['a'], { ...sight, rulesUnknown: true }).keys()], ['a'], 'rules not known (a fetched checkpoint)');
  t.deepEqual([...unseenReasons(['a'], { ...sight, none: true }).keys()], ['a'], 'no checkpoint before');
  t.regex(unseenReasons(['a'], { ...sight, foreign: true }).get('a'), /came from another store, which never saw this workspace/);
});

test('undo returns to the state before the operation where its record cannot show it: a file a restore recreated that a rule ignores now goes again, and a redo brings it back', async (t) => {
  const box = sandbox();
  write(box, 'app.txt', 'one\n');
  write(box, 'tmp/scratch.txt', 'captured\n');
  const target = await ckptJson(box, ['snapshot']);
  // Since then: tmp/ is excluded, and the file is gone.
  write(box, '.git/info/exclude', 'tmp/\n');
  rmSync(path.join(box.ws, 'tmp'), { recursive: true });
  write(box, 'app.txt', 'two\n');
  await ckptJson(box, ['snapshot']);
  const restored = await ckptJson(box, ['restore', target.id]);
  t.is(readFileSync(path.join(box.ws, 'tmp/scratch.txt'), 'utf8'), 'captured\n', 'the restore wrote what the target holds');
  const record = ledgerLines(box).find((r) => r.id === restored.record);
  t.deepEqual(
    record.op.unrecorded.map(([p, before, after]) => [p, before, after?.mode]),
    [['tmp/scratch.txt', null, '100644']],
    'its record keeps the write its tree cannot show',
  );
  t.is((await ckpt(box, ['undo'])).code, 0);
  t.throws(() => readFileSync(path.join(box.ws, 'tmp/scratch.txt')), undefined, 'undo took back what the restore created');
  t.is(readFileSync(path.join(box.ws, 'app.txt'), 'utf8'), 'two\n');
  t.is((await ckpt(box, ['undo'])).code, 0, 'redo');
  t.is(readFileSync(path.join(box.ws, 'tmp/scratch.txt'), 'utf8'), 'captured\n', 'and the redo wrote it again');
  // Changed since by the user: undo refuses to take it back, and says which.
  write(box, 'tmp/scratch.txt', 'mine now\n');
  const refused = await ckpt(box, ['undo']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /undo refused: 1 file the undo wrote changed since \(tmp\/scratch\.txt\)/);
  t.is(readFileSync(path.join(box.ws, 'tmp/scratch.txt'), 'utf8'), 'mine now\n');
});
