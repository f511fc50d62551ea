// The processes git-ckpt starts and talks to. A resident one holds nothing of the process that started it
// (issue 32, principle 10): started by a hook whose caller has a pipe open on another descriptor (bash's
// process substitution uses 63; a `3>&1`), the daemon and the first snapshot in the background leave that
// pipe alone, so the caller's read of it ends when the hook ends. An agent that exits at once while
// git-ckpt writes to it gets one line, not an EPIPE stack (principle 7).
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HOOK_SCRIPT, ROOT, ckpt, sandbox, sh, waitFor, write } from './helpers.mjs';

/** A sandbox whose config lets the daemon run (or not), with a committed file. */
function box({ daemon }) {
  const b = sandbox();
  writeFileSync(
    path.join(b.home, '.gitconfig'),
    `[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\t${daemon ? 'daemonIdle = 60s' : 'daemon = false'}\n`,
  );
  write(b, 'README.md', 'hello\n');
  sh(b, ['add', '-A']);
  sh(b, ['commit', '-qm', 'init']);
  return b;
}

/**
 * Run one hook through the entry script as a caller that holds a FIFO open for writing on descriptors 3 and
 * 63 (as `exec 3>fifo 63>fifo` leaves them: inherited, not close-on-exec). Resolves once the hook's caller
 * exited, with `ended`: a promise of the FIFO's end of file (every writer gone), or of 'open' after `limitMs`.
 */
async function hookHoldingPipe(b, phase, payload, { env = {}, prelude = '', limitMs = 20_000 } = {}) {
  const fifo = path.join(b.base, 'caller.fifo');
  spawnSync('mkfifo', [fifo]);
  const payloadFile = path.join(b.base, `${phase}.json`);
  writeFileSync(payloadFile, JSON.stringify(payload));
  // The reader first: opening a FIFO for writing waits for one.
  const reader = createReadStream(fifo);
  reader.resume();
  const ended = new Promise((resolve) => {
    reader.on('end', () => resolve('ended'));
    reader.on('error', (err) => resolve(`error ${err.code}`));
  });
  const caller = spawn(
    'bash',
    ['-c', `${prelude} exec 3>"$1" 63>"$1"; sh "$2" claude "$3" < "$4" > /dev/null 2>&1`, 'caller', fifo, HOOK_SCRIPT, phase, payloadFile],
    { cwd: b.ws, env: { ...b.env, ...env }, stdio: 'ignore' },
  );
  const code = await new Promise((resolve) => caller.on('exit', resolve));
  return {
    code,
    fifo,
    ended: Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve('open'), limitMs))]),
    close: () => reader.destroy(),
  };
}

/** On Linux (test-only): the descriptors of a process that still name the FIFO. */
function descriptorsNaming(pid, file) {
  const dir = `/proc/${pid}/fd`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((fd) => {
    try {
      return readlinkSync(path.join(dir, fd)) === file;
    } catch {
      return false;
    }
  });
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('a hook that starts the daemon leaves it none of its caller’s descriptors: the caller’s pipe on 3 and 63 ends when the hook ends', async (t) => {
  const b = box({ daemon: true });
  t.teardown(() => ckpt(b, ['daemon', 'stop']));
  const endpointFile = path.join(b.store, 'daemon', 'endpoint.json');
  t.false(existsSync(endpointFile), 'no daemon runs yet');
  write(b, 'a.txt', 'a\n');
  // As Claude runs its hooks: its project and session in the environment.
  const run = await hookHoldingPipe(
    b,
    'turn-start',
    { session_id: 'fd', hook_event_name: 'UserPromptSubmit', prompt: 'go', cwd: b.ws },
    { env: { CLAUDE_PROJECT_DIR: b.ws, CLAUDE_CODE_SESSION_ID: 'fd' } },
  );
  t.is(run.code, 0);
  // The hook started the daemon (the Node hook does when none runs), which lives on after it.
  t.true(await waitFor(() => existsSync(endpointFile), 10_000), 'the hook started the daemon');
  const { pid } = JSON.parse(readFileSync(endpointFile, 'utf8'));
  const result = await run.ended;
  run.close();
  t.is(result, 'ended', 'the caller read an end of file while the daemon runs');
  t.true(alive(pid), 'the daemon still runs');
  t.deepEqual(descriptorsNaming(pid, run.fifo), [], 'no descriptor of the daemon names the pipe');
  // Nor does it hold the folder of the hook that started it, or its agent's variables.
  if (existsSync(`/proc/${pid}/cwd`)) t.is(readlinkSync(`/proc/${pid}/cwd`), '/');
  if (existsSync(`/proc/${pid}/environ`)) {
    const names = readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .map((v) => v.split('=')[0]);
    t.true(names.includes('HOME'));
    t.deepEqual(
      names.filter((n) => n.startsWith('CLAUDE_')),
      [],
    );
  }
});

test('a caller with a descriptor above its open-file limit still gets its daemon; the descriptors below it are covered', async (t) => {
  const b = box({ daemon: true });
  t.teardown(() => ckpt(b, ['daemon', 'stop']));
  const endpointFile = path.join(b.store, 'daemon', 'endpoint.json');
  // Opened, then the limit lowered under it: no child can be given that number.
  const run = await hookHoldingPipe(
    b,
    'turn-start',
    { session_id: 'fd', hook_event_name: 'UserPromptSubmit', prompt: 'go', cwd: b.ws },
    { prelude: 'exec 250>/dev/null; ulimit -n 200 && ulimit -Hn 200;' },
  );
  t.is(run.code, 0);
  t.true(await waitFor(() => existsSync(endpointFile), 10_000), 'the hook started the daemon');
  const result = await run.ended;
  run.close();
  t.is(result, 'ended');
  t.true(alive(JSON.parse(readFileSync(endpointFile, 'utf8')).pid));
});

test('the first snapshot in the background holds none of its caller’s descriptors either: the caller’s read ends while it still runs', async (t) => {
  const b = box({ daemon: false });
  // The background snapshot waits once its files are staged, until this file exists.
  const until = path.join(b.base, 'release');
  const env = { GIT_CKPT_TEST_PAUSE: 'staged', GIT_CKPT_TEST_PAUSE_UNTIL: until };
  t.teardown(() => writeFileSync(until, ''));
  const run = await hookHoldingPipe(b, 'session-start', { session_id: 'fd', hook_event_name: 'SessionStart', cwd: b.ws }, { env });
  t.is(run.code, 0);
  t.true(await waitFor(() => existsSync(`${until}.waiting`), 20_000), 'the first snapshot started and waits');
  const pid = Number(readFileSync(`${until}.waiting`, 'utf8'));
  const result = await run.ended;
  run.close();
  t.is(result, 'ended', 'the caller read an end of file while the snapshot runs');
  t.true(alive(pid));
  t.deepEqual(descriptorsNaming(pid, run.fifo), []);
  writeFileSync(until, '');
  t.true(await waitFor(() => !alive(pid), 20_000), 'the snapshot finished once released');
});

test('every process lib/ starts in the background goes through background.ts, which gives it none of this process’s descriptors', (t) => {
  const lib = path.join(ROOT, 'lib');
  const files = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
  const detached = files(lib)
    .filter((f) => /\bdetached:/.test(readFileSync(f, 'utf8')))
    .map((f) => path.relative(lib, f));
  t.deepEqual(detached, ['store/background.ts']);
});

test('resume: a codex app-server that closes its input at once gets one line, no EPIPE stack, and the command goes on', async (t) => {
  const b = box({ daemon: false });
  // A Codex session of two turns, as its hooks record it (turn ids from the payload).
  const base = { session_id: 'cx-epipe', transcript_path: null, cwd: b.ws };
  for (const [n, file] of [
    [1, 'one.txt'],
    [2, 'two.txt'],
  ]) {
    const turn = { ...base, turn_id: `turn-${n}` };
    await ckpt(b, ['hook', 'codex', 'turn-start'], {
      input: JSON.stringify({ ...turn, hook_event_name: 'UserPromptSubmit', prompt: `turn ${n}` }),
    });
    const call = { ...turn, tool_name: 'Bash', tool_use_id: `c${n}`, tool_input: { command: `echo > ${file}` } };
    await ckpt(b, ['hook', 'codex', 'pre'], { input: JSON.stringify({ ...call, hook_event_name: 'PreToolUse' }) });
    write(b, file, `${n}\n`);
    await ckpt(b, ['hook', 'codex', 'post'], { input: JSON.stringify({ ...call, hook_event_name: 'PostToolUse', tool_response: 'ok' }) });
  }
  // A `codex` whose app-server closes its input, then answers the first request: the next writes hit a closed pipe.
  const bin = path.join(b.base, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'codex'), '#!/bin/sh\nexec 0<&-\necho \'{"id":1,"result":{}}\'\nsleep 2\n', { mode: 0o755 });
  const r = await ckpt(b, ['resume', 'turn:2'], { env: { PATH: `${bin}${path.delimiter}${b.env.PATH}` } });
  t.is(r.code, 0, r.stderr);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.regex(
    lines[0],
    /^git-ckpt: codex app-server (closed its input \(EPIPE\)|exited \(\d+\)) before it forked the session; open the conversation and step back by hand$/,
  );
  t.false(r.stderr.includes('    at '), 'no stack');
  t.regex(r.stdout, /now open the conversation with: codex resume -- cx-epipe/);
  // Back to before turn 2; a file made since is left and named (resume deletes only with --delete-new, as restore).
  t.regex(r.stdout, /^leftovers: 1 .*\n {2}two\.txt$/m);
  t.true(existsSync(path.join(b.ws, 'two.txt')));
});
