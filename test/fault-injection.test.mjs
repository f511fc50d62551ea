// Fault injection: every mutating command and a hook, each under every fault that
// can strike it (a full store disk, a read-only store, an unreadable folder, a
// SIGKILL of git-ckpt at a named point, a SIGKILL of one of its git children before
// or after it did its work, gc run while a journal is pending). After each fault is
// lifted and any interrupted operation recovered: fsck is clean, every checkpoint
// restores byte for byte, and the state that was present when the fault struck is
// the workspace or one of the checkpoints. Nothing captured or present is lost.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CLI,
  cannotRun,
  ckpt,
  ckptJson,
  entryExists,
  ledgerLines,
  run,
  sandbox,
  storeDir,
  treeState,
  write,
  workspaceState,
} from './helpers.mjs';

const asRoot = process.getuid?.() === 0;
const DAC_CAPS = '-dac_override,-dac_read_search,-fowner';
const modesBind = !asRoot || spawnSync('setpriv', ['--version']).status === 0;

function mountTmpfs(dir, size) {
  mkdirSync(dir, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0;
}
const canMount = (() => {
  if (!asRoot) return false;
  const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-fi-probe-'));
  const ok = mountTmpfs(dir, '1m');
  if (ok) spawnSync('umount', ['-l', dir]);
  return ok;
})();

/**
 * A `git` first on PATH that kills itself with SIGKILL when it runs the verb named in
 * CKPT_TEST_KILL_GIT (`verb:before` or `verb:after`): before doing anything, or after the
 * real git did all its work but before it could report it. The runner drops GIT_* variables,
 * hence the name.
 */
function gitKiller(base) {
  const dir = path.join(base, 'killer-bin');
  mkdirSync(dir, { recursive: true });
  const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  writeFileSync(
    path.join(dir, 'git'),
    `#!/bin/sh
verb=\${CKPT_TEST_KILL_GIT%%:*}; when=\${CKPT_TEST_KILL_GIT#*:}; hit=
for a in "$@"; do [ "$a" = "$verb" ] && hit=1 && break; done
[ -n "$hit" ] && [ "$when" = before ] && kill -9 $$
"${realGit}" "$@"; rc=$?
[ -n "$hit" ] && [ "$when" = after ] && kill -9 $$
exit $rc
`,
    { mode: 0o755 },
  );
  return dir;
}

/** A workspace state's files and symlinks, one line each (path, mode, content hash); a killed restore's temporary files are its debris, not content. */
function fileLines(state) {
  return state.split('\n').filter((line) => (line.startsWith('F ') || line.startsWith('L ')) && !line.includes('/.git-ckpt-tmp-'));
}

/** Two checkpoints (A, B) of a workspace with a folder and an executable, then a present state P not yet captured. */
async function scene(box) {
  write(box, 'src/a.txt', 'A a\n');
  write(box, 'src/deep/b.txt', 'A b\n');
  write(box, 'run.sh', '#!/bin/sh\necho A\n', 0o755);
  for (let i = 0; i < 20; i++) write(box, `many/f${i}.txt`, `A ${i}\n`);
  const a = (await ckptJson(box, ['snapshot', '-m', 'A'])).id;
  const states = new Map([[a, workspaceState(box)]]);
  write(box, 'src/a.txt', 'B a\n');
  rmSync(path.join(box.ws, 'src/deep'), { recursive: true });
  write(box, 'new/c.txt', 'B c\n');
  for (let i = 0; i < 20; i++) write(box, `many/f${i}.txt`, `B ${i}\n`);
  const b = (await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 'fi', '--turn', '1', '--step', '1'])).id;
  states.set(b, workspaceState(box));
  write(box, 'src/a.txt', 'P a\n');
  write(box, 'many/f3.txt', 'P 3\n');
  return { a, b, states, present: workspaceState(box) };
}

const hookPayload = (box) =>
  JSON.stringify({
    session_id: 'fi',
    cwd: box.ws,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'true' },
    tool_use_id: 'call-1',
  });

/** The commands under test: each gets the scene and returns the CLI arguments (and stdin). */
const COMMANDS = {
  snapshot: () => ({ args: ['snapshot'] }),
  hook: (box) => ({ args: ['hook', 'claude', 'post'], input: hookPayload(box), alwaysZero: true }),
  restore: (_box, s) => ({ args: ['restore', s.a, '--delete-new'] }),
  revert: (_box, s) => ({ args: ['revert', s.b] }),
  undo: () => ({ args: ['undo', '--force'], before: ['restore', 'latest~1'] }),
  gc: () => ({ args: ['gc'] }),
};

const OPERATIONS = ['restore', 'revert', 'undo'];
/** Every command that captures the workspace (a snapshot, or an operation's guard). */
const CAPTURING = ['snapshot', 'hook', ...OPERATIONS];

/** Each fault: whether it can be set up here, how to set it up around a run, and how to lift it. */
const FAULTS = {
  'full store disk': {
    can: canMount,
    async box() {
      const box = sandbox();
      box.store = path.join(box.base, 'disk', 'store');
      box.env.GIT_CKPT_HOME = box.store;
      if (!mountTmpfs(path.dirname(box.store), '6m')) throw new Error('mount failed');
      return box;
    },
    arm(box) {
      // Fill the disk to the last few KiB with a file that is not the store's.
      spawnSync('dd', ['if=/dev/zero', `of=${path.join(path.dirname(box.store), 'filler')}`, 'bs=64k'], { stdio: 'ignore' });
    },
    lift(box) {
      rmSync(path.join(path.dirname(box.store), 'filler'), { force: true });
    },
    teardown(box) {
      spawnSync('umount', ['-l', path.dirname(box.store)]);
    },
  },
  'read-only store': {
    can: modesBind,
    bound: true,
    arm: (box) => spawnSync('chmod', ['-R', 'a-w', storeDir(box)]),
    lift: (box) => spawnSync('chmod', ['-R', 'u+w', storeDir(box)]),
  },
  'unreadable folder': {
    can: modesBind,
    bound: true,
    arm: (box) => chmodSync(path.join(box.ws, 'src'), 0o000),
    lift: (box) => chmodSync(path.join(box.ws, 'src'), 0o755),
  },
  'SIGKILL after the journal': { can: true, env: { GIT_CKPT_TEST_CRASH: 'journal' }, only: OPERATIONS },
  'SIGKILL after the first write': { can: true, env: { GIT_CKPT_TEST_CRASH: 'write:1' }, only: OPERATIONS },
  'SIGKILL after the new gc pack': { can: true, env: { GIT_CKPT_TEST_CRASH: 'gc-pack' }, only: ['gc'] },
  'git add killed before it runs': { can: true, killGit: 'add:before', only: CAPTURING },
  'git add killed after its work': { can: true, killGit: 'add:after', only: CAPTURING },
  'git cat-file killed after its work': { can: true, killGit: 'cat-file:after', only: ['restore', 'revert', 'undo'] },
  'git merge-tree killed before it runs': { can: true, killGit: 'merge-tree:before', only: ['revert'] },
  'git pack-objects killed after its work': { can: true, killGit: 'pack-objects:after', only: ['gc'] },
  'gc in between': { can: true, env: { GIT_CKPT_TEST_CRASH: 'write:1' }, gcAfter: true, only: ['restore', 'revert', 'undo'] },
};

function runCli(box, cmd, fault) {
  const env = { ...(fault.env ?? {}) };
  if (fault.killGit) {
    env.PATH = `${gitKiller(box.base)}${path.delimiter}${process.env.PATH}`;
    env.CKPT_TEST_KILL_GIT = fault.killGit;
  }
  const opts = { env, input: cmd.input };
  if (fault.bound && asRoot)
    return run(box, 'setpriv', [`--inh-caps=${DAC_CAPS}`, `--bounding-set=${DAC_CAPS}`, '--', process.execPath, CLI, ...cmd.args], opts);
  return ckpt(box, cmd.args, opts);
}

for (const [faultName, fault] of Object.entries(FAULTS)) {
  for (const [commandName, command] of Object.entries(COMMANDS)) {
    if (fault.only && !fault.only.includes(commandName)) continue;
    const title = `${commandName} under "${faultName}": fsck is clean and nothing captured or present is lost`;
    if (!fault.can) {
      cannotRun(test, title, `the fault cannot be set up here: ${asRoot ? 'no mount or setpriv' : 'needs root'}`);
      continue;
    }
    test(title, async (t) => {
      const box = fault.box ? await fault.box() : sandbox();
      if (fault.teardown) t.teardown(() => fault.teardown(box));
      const s = await scene(box);
      const cmd = command(box, s);
      const wanted = new Map([
        ['A', s.states.get(s.a)],
        ['B', s.states.get(s.b)],
        ['present', s.present],
      ]);
      if (cmd.before) {
        const r = await ckpt(box, cmd.before);
        t.is(r.code, 0, r.stderr);
        wanted.set('after the earlier operation', workspaceState(box));
      }
      const userGit = treeState(path.join(box.ws, '.git'));
      fault.arm?.(box);
      let result;
      try {
        result = await runCli(box, cmd, fault);
      } finally {
        fault.lift?.(box);
      }
      t.log(`${commandName}: exit ${result.code}${result.stderr ? `, ${result.stderr.trim().split('\n')[0]}` : ''}`);
      if (cmd.alwaysZero) t.is(result.code, 0, 'a hook always exits 0');
      // An error is one line (a kill prints nothing).
      if (result.code !== 0 && result.code !== null && !cmd.alwaysZero) t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
      // A killed process cannot remove its lock (the next one breaks it); any other run leaves none.
      if (result.code !== null) t.false(entryExists(path.join(storeDir(box), 'lock')), 'no lock is left behind');

      if (fault.gcAfter) {
        const gc = await ckpt(box, ['gc']);
        t.is(gc.code, 0, gc.stderr);
      }
      wanted.set('after the fault', workspaceState(box));
      if (existsSync(path.join(storeDir(box), 'journal.json'))) {
        const recovered = await ckpt(box, ['restore', '--continue']);
        t.is(recovered.code, 0, recovered.stderr);
      }
      const fsck = await ckpt(box, ['fsck']);
      t.is(fsck.code, 0, `fsck: ${fsck.stdout}${fsck.stderr}`);

      // Every file of every state that existed (A, B, what was present when the fault struck and
      // after it) is in the workspace or comes back from a checkpoint, byte for byte and with its mode.
      const missing = new Set([...wanted.values()].flatMap(fileLines));
      const seen = () => {
        for (const line of fileLines(workspaceState(box))) missing.delete(line);
      };
      seen();
      for (const record of ledgerLines(box)) {
        if (missing.size === 0) break;
        const r = await ckpt(box, ['restore', record.id, '--delete-new']);
        t.is(r.code, 0, `restore ${record.id}: ${r.stderr}`);
        seen();
      }
      t.deepEqual([...missing], [], 'every captured or present file comes back');
      t.is(treeState(path.join(box.ws, '.git')), userGit, "the user's repository is untouched");
    });
  }
}
