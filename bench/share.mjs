// Checkpoints that travel: what a push and a bundle cost against git's own commands on the same
// commits, measured side by side in the same run. Writes bench/out/share.json.
// - a 200-checkpoint session on a 500-file workspace: `git ckpt push` into an empty bare remote and
//   `git ckpt bundle create`, in bytes against `git bundle create` of the session's own checkpoint
//   commits in the store (the goal: ≤ 1.1×), and in time against `git push` and `git bundle create`
//   of the same export ref;
// - a one-file session on a 20,000-file committed workspace, pushed to a remote that has the
//   project: parented on the user's commit (what git ckpt does) against parentless (a remote the
//   user's repository knows nothing of), in bytes received by the remote.
// BENCH_QUICK=1: one round and smaller sizes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist', 'bin', 'main.js');
const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 1 : 5;
const CHECKPOINTS = QUICK ? 50 : 200;
const LARGE = QUICK ? 5000 : 20000;

const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-bench-share-')));
const home = path.join(base, 'home');
mkdirSync(home);
writeFileSync(
  path.join(home, '.gitconfig'),
  '[user]\n\tname = B\n\temail = b@example.com\n[init]\n\tdefaultBranch = main\n[ckpt]\n\tdaemon = false\n',
);
const env = { ...process.env, HOME: home, GIT_CKPT_HOME: path.join(base, 'store'), GIT_CONFIG_NOSYSTEM: '1' };
for (const key of Object.keys(env)) if (key.startsWith('GIT_') && !['GIT_CONFIG_NOSYSTEM', 'GIT_CKPT_HOME'].includes(key)) delete env[key];

const run = (cmd, args, cwd, extra = {}) => {
  const r = spawnSync(cmd, args, { cwd, env: { ...env, ...extra }, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.slice(-400)}`);
  return r.stdout;
};
const ckpt = (ws, args, extra) => run(process.execPath, [CLI, ...args], ws, extra);
const timed = (fn) => {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Bytes of the packs a remote received (each bare remote keeps every push as a pack: receive.unpackLimit=1). */
const objectBytes = (dir) => {
  const packs = path.join(dir, 'objects', 'pack');
  return readdirSync(packs)
    .filter((f) => f.endsWith('.pack'))
    .reduce((n, f) => n + statSync(path.join(packs, f)).size, 0);
};
const bare = (name) => {
  const dir = path.join(base, name);
  rmSync(dir, { recursive: true, force: true });
  run('git', ['init', '-q', '--bare', dir], base);
  run('git', ['--git-dir', dir, 'config', 'receive.unpackLimit', '1'], base);
  return dir;
};

// 1. A 200-checkpoint session.
const ws = path.join(base, 'ws');
mkdirSync(ws);
run('git', ['init', '-q'], ws);
for (let i = 0; i < 500; i++) writeFileSync(path.join(ws, `f${i}.js`), `export const v${i} = ${i};\n${'// filler line\n'.repeat(40)}`);
ckpt(ws, ['snapshot']);
for (let i = 0; i < CHECKPOINTS; i++) {
  writeFileSync(path.join(ws, `f${i % 500}.js`), `export const v${i} = ${i * 7};\n${'// changed line\n'.repeat(40 + (i % 13))}`);
  ckpt(ws, ['snapshot', '--kind', 'post', '--session', 'bench', '--turn', String(i + 1)]);
}
const store = path.join(
  env.GIT_CKPT_HOME,
  readdirSync(env.GIT_CKPT_HOME).find((d) => d.startsWith('ws-')),
);
const shadow = path.join(store, 'git');
// One delta-search thread for git-ckpt and the references alike: with two, pack sizes vary run to run by 20%.
run('git', ['--git-dir', shadow, 'config', 'pack.threads', '1'], base);
const push = { ckpt: [], git: [] };
let pushBytes = 0;
let gitPushBytes = 0;
let ref = '';
for (let round = 0; round < ROUNDS; round++) {
  const remote = bare('remote.git');
  // A store that never shared: its first push makes the export and reads every blob once.
  rmSync(path.join(store, 'share.json'), { force: true });
  ckpt(ws, ['share', 'init', '--remote', remote]);
  let out = '';
  push.ckpt.push(timed(() => (out = ckpt(ws, ['push', '--json']))));
  pushBytes = objectBytes(remote);
  ref = JSON.parse(out).sessions[0].ref;
  const plain = bare('plain.git');
  push.git.push(timed(() => run('git', ['--git-dir', shadow, 'push', '-q', plain, `${ref}:${ref}`], base)));
  gitPushBytes = objectBytes(plain);
}
/**
 * The bytes' reference: the session's own checkpoints as the store holds them now (their chain from the
 * snapshot before it), bundled by git itself.
 */
function ownBundleBytes() {
  const [latest] = JSON.parse(ckpt(ws, ['log', '--session', 'bench', '-n', '1', '--json']));
  const file = path.join(base, 'own.bundle');
  rmSync(file, { force: true });
  // git bundles refs, not bare ids: a ref of the bench's own for the moment.
  run('git', ['--git-dir', shadow, 'update-ref', 'refs/bench/own', latest.id], base);
  run('git', ['--git-dir', shadow, 'bundle', 'create', '-q', file, 'refs/bench/own'], base);
  run('git', ['--git-dir', shadow, 'update-ref', '-d', 'refs/bench/own'], base);
  return statSync(file).size;
}
const ownAtPush = ownBundleBytes();
// The push after a turn: one new checkpoint on a session the remote has.
const next = { ckpt: [], git: [] };
for (let round = 0; round < ROUNDS; round++) {
  writeFileSync(path.join(ws, 'f1.js'), `export const next = ${round};\n`);
  ckpt(ws, ['snapshot', '--kind', 'post', '--session', 'bench', '--turn', String(CHECKPOINTS + round + 1)]);
  next.ckpt.push(timed(() => ckpt(ws, ['push'])));
  // The reference: git pushing a one-commit fast-forward of a ref the remote has.
  const plain = path.join(base, 'plain.git');
  const tip = run('git', ['--git-dir', shadow, 'rev-parse', ref], base).trim();
  next.git.push(timed(() => run('git', ['--git-dir', shadow, 'push', '-q', plain, `${tip}:${ref}`], base)));
}
const bundle = { ckpt: [], git: [] };
for (let round = 0; round < ROUNDS; round++) {
  const file = path.join(base, 'b.bundle');
  rmSync(file, { force: true });
  bundle.ckpt.push(timed(() => ckpt(ws, ['bundle', 'create', file, '--session', 'bench'])));
  const raw = path.join(base, 'raw.bundle');
  bundle.git.push(timed(() => run('git', ['--git-dir', shadow, 'bundle', 'create', '-q', raw, ref], base)));
}
const bundleBytes = statSync(path.join(base, 'b.bundle')).size;
const rawBundleBytes = statSync(path.join(base, 'raw.bundle')).size;
const ownAtBundle = ownBundleBytes();

// 2. A one-file session on a large committed workspace: parented on the remote's commit, or not.
const big = path.join(base, 'big');
mkdirSync(big);
run('git', ['init', '-q'], big);
for (let i = 0; i < LARGE; i++) {
  const dir = path.join(big, `pkg${i % 100}`);
  if (i < 100) mkdirSync(dir);
  writeFileSync(path.join(dir, `m${i}.ts`), `export const m${i} = ${i}; // ${'x'.repeat(60)}\n`);
}
run('git', ['add', '-A'], big);
run('git', ['commit', '-qm', 'project'], big);
const project = bare('project.git');
run('git', ['remote', 'add', 'ckpt', project], big);
run('git', ['push', '-q', 'ckpt', 'HEAD:refs/heads/main'], big);
run('git', ['fetch', '-q', 'ckpt'], big);
ckpt(big, ['snapshot']);
writeFileSync(path.join(big, 'pkg7', 'm7.ts'), 'export const m7 = "changed by the agent";\n');
ckpt(big, ['snapshot', '--kind', 'post', '--session', 'one-file', '--turn', '1']);
ckpt(big, ['share', 'init', '--remote', 'ckpt']);
const before = objectBytes(project);
ckpt(big, ['push']);
const parentedBytes = objectBytes(project) - before;
// Parentless: the same session to a remote the user's repository has no remote-tracking ref of.
const bigStore = path.join(
  env.GIT_CKPT_HOME,
  readdirSync(env.GIT_CKPT_HOME).find((d) => d.startsWith('big-')),
);
rmSync(path.join(bigStore, 'share.json'));
const elsewhere = bare('elsewhere.git');
run('git', ['--git-dir', path.join(big, '.git'), 'push', '-q', elsewhere, 'HEAD:refs/heads/main'], base);
const beforeElsewhere = objectBytes(elsewhere);
ckpt(big, ['share', 'init', '--remote', elsewhere]);
ckpt(big, ['push']);
const parentlessBytes = objectBytes(elsewhere) - beforeElsewhere;

const rows = [
  {
    what: `push of a ${CHECKPOINTS}-checkpoint session (500 files), first push, process`,
    ckptMs: median(push.ckpt),
    reference: 'git push of the same export ref',
    referenceMs: median(push.git),
  },
  {
    what: 'push after a turn: one new checkpoint on a session the remote has, process',
    ckptMs: median(next.ckpt),
    reference: 'git push of a one-commit fast-forward',
    referenceMs: median(next.git),
  },
  {
    what: `bundle create of the same session, process`,
    ckptMs: median(bundle.ckpt),
    reference: 'git bundle create of the same ref',
    referenceMs: median(bundle.git),
  },
];
const bytes = [
  {
    what: `bytes the remote received for the ${CHECKPOINTS}-checkpoint session`,
    ckpt: pushBytes,
    reference: "git bundle create of the session's own checkpoint commits",
    referenceBytes: ownAtPush,
    goal: 1.1,
  },
  {
    what: 'bundle bytes for the same session',
    ckpt: bundleBytes,
    reference: "git bundle create of the session's own checkpoint commits",
    referenceBytes: ownAtBundle,
    goal: 1.1,
  },
  {
    what: `bytes the remote received for the ${CHECKPOINTS}-checkpoint session`,
    ckpt: pushBytes,
    reference: 'git push of the same export ref',
    referenceBytes: gitPushBytes,
  },
  {
    what: 'bundle bytes for the same session',
    ckpt: bundleBytes,
    reference: 'git bundle create of the same export ref',
    referenceBytes: rawBundleBytes,
  },
  {
    what: `bytes the remote received for a one-file session on ${LARGE.toLocaleString('en')} committed files`,
    ckpt: parentedBytes,
    reference: 'the same session parentless (a remote the user repository has no tracking ref of)',
    referenceBytes: parentlessBytes,
  },
];
for (const r of rows)
  console.log(
    `${r.what}: ${r.ckptMs.toFixed(1)} ms; ${r.reference}: ${r.referenceMs.toFixed(1)} ms; ${(r.ckptMs / r.referenceMs).toFixed(2)}×`,
  );
for (const b of bytes)
  console.log(`${b.what}: ${b.ckpt} B; ${b.reference}: ${b.referenceBytes} B; ${(b.ckpt / b.referenceBytes).toFixed(3)}×`);
mkdirSync(path.join(ROOT, 'bench', 'out'), { recursive: true });
writeFileSync(
  path.join(ROOT, 'bench', 'out', 'share.json'),
  `${JSON.stringify({ date: new Date().toISOString(), rounds: ROUNDS, rows, bytes }, null, 2)}\n`,
);
rmSync(base, { recursive: true, force: true });
