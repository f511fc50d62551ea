// Print means print (issue 32, principle 7): every --dry-run and --print writes nothing (the workspace,
// the user's .git, the whole store root, a share remote) and starts no agent, whatever it would do for real.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, ckpt, ckptJson, claudeSession, hookEvent, sandbox, sh, testIf, treeState, write } from './helpers.mjs';

/** Agents on PATH that only note each start (argv, one JSON line) in `started.jsonl`: a start is a failure here. */
function stubAgents(box) {
  const bin = path.join(box.base, 'bin');
  mkdirSync(bin, { recursive: true });
  const log = path.join(box.base, 'started.jsonl');
  for (const agent of ['claude', 'codex', 'gemini', 'copilot']) {
    const file = path.join(bin, agent);
    writeFileSync(
      file,
      `#!${process.execPath}\nrequire('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify([${JSON.stringify(agent)}, ...process.argv.slice(2)]) + '\\n');\n`,
    );
    chmodSync(file, 0o755);
  }
  return {
    env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` },
    started: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [],
  };
}

/**
 * Everything a command could write: the workspace, the user's .git, the store root, the share remote; every
 * file's bytes and mtime (a rewrite of the same bytes is a write too), but for the mtimes of git's own objects:
 * git freshens an object it would write and already has, also in the store a dry run's scratch folder reads
 * as an alternate. That keeps the store's bytes as they were.
 */
function everything(box, remote) {
  // The daemon's own folder (its socket, its log) is the resident process's, not a store's (GIT_CKPT_TEST_DAEMON=1).
  return [box.ws, box.store, remote]
    .map((dir) =>
      treeState(dir, { skip: dir === box.store ? ['daemon'] : [] })
        .split('\n')
        .map((line) => (/^F \S*\/objects\/(?:[0-9a-f]{2}|pack)\//.test(line) ? line.replace(/^(F \S+ \d+) \S+ /, '$1 ') : line))
        .join('\n'),
    )
    .join('\n--\n');
}

/** A Codex session of three turns (a turn id each), so that `resume turn:2` would fork its thread through `codex app-server`. */
async function codexSession(box) {
  const base = { session_id: 'cx-print', cwd: box.ws, model: 'gpt-5.5' };
  for (const n of [1, 2, 3]) {
    await hookEvent(box, 'codex', 'turn-start', { ...base, turn_id: `tu${n}`, hook_event_name: 'UserPromptSubmit', prompt: `turn ${n}` });
    const call = { ...base, turn_id: `tu${n}`, tool_name: 'Bash', tool_use_id: `cx${n}`, tool_input: { command: `echo > cx${n}.txt` } };
    await hookEvent(box, 'codex', 'pre', { ...call, hook_event_name: 'PreToolUse' });
    write(box, `cx${n}.txt`, `${n}\n`);
    await hookEvent(box, 'codex', 'post', { ...call, hook_event_name: 'PostToolUse', tool_response: '' });
    await hookEvent(box, 'codex', 'turn-end', { ...base, turn_id: `tu${n}`, hook_event_name: 'Stop' });
  }
}

/** A session whose id is an option of every agent (as a fetched record may name it). */
async function hostileSession(box, session = '--dangerously-skip-permissions') {
  for (const n of [1, 2]) {
    const base = { session_id: session, cwd: box.ws, prompt_id: `hp${n}` };
    await hookEvent(box, 'claude', 'turn-start', { ...base, hook_event_name: 'UserPromptSubmit', prompt: `hostile ${n}` });
    const call = { ...base, tool_name: 'Bash', tool_use_id: `h${n}`, tool_input: { command: 'true' } };
    await hookEvent(box, 'claude', 'pre', { ...call, hook_event_name: 'PreToolUse' });
    write(box, `hostile${n}.txt`, `${n}\n`);
    await hookEvent(box, 'claude', 'post', { ...call, hook_event_name: 'PostToolUse', tool_response: {} });
    await hookEvent(box, 'claude', 'turn-end', { ...base, hook_event_name: 'Stop' });
  }
}

/** Sessions of three agents, an operation to undo, a share remote, and a store whose workspace is gone. */
async function richStore(t) {
  const box = sandbox();
  write(box, 'README.md', 'hello\n');
  sh(box, ['add', '-A']);
  sh(box, ['commit', '-qm', 'first']);
  await claudeSession(box);
  await codexSession(box);
  const restored = await ckpt(box, ['restore', 'turn:2~1@cs1', '--delete-new']);
  t.is(restored.code, 0, restored.stderr);
  write(box, 'later.txt', 'after the restore\n');
  write(box, 'secret.txt', 'forget me\n');
  await ckptJson(box, ['snapshot', '-m', 'later']);
  const remote = path.join(box.base, 'remote.git');
  sh(box, ['init', '-q', '--bare', remote], { cwd: box.base });
  t.is((await ckpt(box, ['share', 'init', '--remote', `file://${remote}`])).code, 0);
  // A second workspace's store whose workspace is gone: `stores --prune-missing` would remove it.
  const gone = path.join(box.base, 'gone');
  mkdirSync(gone);
  sh(box, ['init', '-q'], { cwd: gone });
  writeFileSync(path.join(gone, 'g.txt'), 'g\n');
  t.is((await ckpt(box, ['snapshot'], { cwd: gone })).code, 0);
  spawnSync('rm', ['-rf', gone]);
  return { box, remote };
}

test('print means print: every --dry-run and --print writes nothing anywhere and starts no agent', async (t) => {
  const { box, remote } = await richStore(t);
  const agents = stubAgents(box);
  const rows = [
    ['restore', 'latest~3', '--dry-run'],
    ['restore', 'latest~3', '--dry-run', '--delete-new', '--json'],
    ['restore', 'latest~3', '--dry-run', '--', 'one.txt'],
    ['revert', 'latest', '--dry-run'],
    ['revert', '--session', 'cs1', '--dry-run'],
    ['revert', 'turn:1..turn:2@cx-print', '--dry-run', '--conflict=markers'],
    ['undo', '--dry-run'],
    ['undo', '--dry-run', '--force', '--json'],
    ['resume', 'turn:2@cs1', '--dry-run'],
    ['resume', 'turn:2@cs1', '--print'],
    ['resume', 'turn:2~1@cs1', '--print', '--delete-new', '--json'],
    ['resume', 'turn:2@cx-print', '--print'],
    ['resume', 'turn:3@cx-print', '--dry-run', '--json'],
    ['forget', 'latest~1', '--dry-run'],
    ['forget', '--path', 'secret.txt', '--dry-run'],
    ['forget', '--session', 'cs1', '--dry-run'],
    ['gc', '--dry-run'],
    ['push', '--dry-run'],
    ['push', '--dry-run', '--all'],
    ['fetch', '--list'],
    ['stores', '--prune-missing', '--dry-run'],
  ];
  for (const args of rows) {
    const before = everything(box, remote);
    const r = await ckpt(box, args, { env: agents.env });
    t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    t.is(everything(box, remote), before, `git ckpt ${args.join(' ')} wrote nothing`);
  }
  // The rows above ran for real too (a control: the table is not empty of effect).
  t.regex((await ckpt(box, ['resume', 'turn:2@cs1', '--print'], { env: agents.env })).stdout, /then open the conversation with/);
  t.regex((await ckpt(box, ['stores', '--prune-missing', '--dry-run'])).stdout, /gone/);
  // An interrupted restore: --continue and --abort previewed, nothing written.
  const crashed = await ckpt(box, ['restore', 'latest~3'], { env: { GIT_CKPT_TEST_CRASH: 'journal' } });
  t.is(crashed.code, null, 'killed at its crash point');
  // The killed process left its lock: the next command that takes the lock breaks it, a dry run too (it reads
  // under the lock). That is the dead process's debris, not what the rows below are about.
  t.is((await ckpt(box, ['gc', '--dry-run'])).code, 0);
  for (const args of [
    ['restore', '--continue', '--dry-run'],
    ['restore', '--abort', '--dry-run', '--json'],
    ['gc', '--dry-run'],
    ['push', '--dry-run'],
  ]) {
    const before = everything(box, remote);
    const r = await ckpt(box, args, { env: agents.env });
    t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    t.is(everything(box, remote), before, `git ckpt ${args.join(' ')} wrote nothing`);
  }
  t.deepEqual(agents.started(), [], 'no agent was started, not even codex app-server for a fork');
});

const hasScript = spawnSync('script', ['-qec', 'true', '/dev/null']).status === 0;
const onTerminal = testIf(test, hasScript, "util-linux `script` (a pseudo-terminal for the agent's start) is not installed");

/** Run git ckpt on a pseudo-terminal (stdin and stdout a TTY, where resume starts the agent). */
function inTerminal(box, args, env) {
  const line = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return spawnSync('script', ['-qec', line, '/dev/null'], { cwd: box.ws, env: { ...box.env, ...env, TERM: 'dumb' }, encoding: 'utf8' });
}

onTerminal(
  'print means print on a terminal: --print and --dry-run start nothing; a real resume starts the agent with the session id as --resume=<id>, never as an option (S4)',
  async (t) => {
    const box = sandbox();
    await claudeSession(box);
    await hostileSession(box);
    const agents = stubAgents(box);
    const remote = path.join(box.base, 'none');
    mkdirSync(remote);
    for (const args of [
      ['resume', 'turn:2', '--print'],
      ['resume', 'turn:2', '--dry-run'],
      ['resume', 'turn:2@cs1', '--print', '--delete-new'],
    ]) {
      const before = everything(box, remote);
      const r = inTerminal(box, args, agents.env);
      t.is(r.status, 0, `${args.join(' ')}: ${r.stdout}`);
      t.is(everything(box, remote), before, `${args.join(' ')} wrote nothing`);
    }
    t.deepEqual(agents.started(), [], '--print and --dry-run start no agent, even on a terminal');
    // For real, on a terminal: the files first, then the agent, its id one word after `=`.
    const printed = inTerminal(box, ['resume', 'turn:2'], agents.env);
    t.is(printed.status, 0, printed.stdout);
    t.regex(printed.stdout, /now open the conversation with: claude --resume=--dangerously-skip-permissions\r?\n/);
    t.deepEqual(agents.started(), [['claude', '--resume=--dangerously-skip-permissions']]);
    t.true(existsSync(path.join(box.ws, 'hostile2.txt')), 'resume deleted nothing without --delete-new');
  },
);

test('an agent that exits at once: a codex app-server that closes its input gets one line from resume, not an EPIPE stack', async (t) => {
  const box = sandbox();
  await codexSession(box);
  // It answers `initialize` after closing its input: git-ckpt's next message meets a closed pipe.
  const bin = path.join(box.base, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'codex'), `#!/bin/sh\nexec 0<&-\nprintf '{"id":1,"result":{}}\\n'\nsleep 2\n`);
  chmodSync(path.join(bin, 'codex'), 0o755);
  const r = await ckpt(box, ['resume', 'turn:2@cx-print'], { env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } });
  t.is(r.code, 0, r.stderr);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.regex(lines[0], /^git-ckpt: codex app-server .*; open the conversation and step back by hand$/);
  t.regex(r.stdout, /press Esc twice and step back to prompt 2/);
});
