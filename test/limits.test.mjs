import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, ROOT, ckpt, ckptJson, lsTree, sandbox, sh, storeDir, write, entryExists } from './helpers.mjs';

test('files over maxFileBytes are not stored, and the skip is reported and recorded', async (t) => {
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.maxFileBytes', '1k']);
  write(box, 'small.txt', 'x'.repeat(1024));
  write(box, 'big.bin', 'y'.repeat(1025));
  const r = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, r.id);
  t.true(entries.has('small.txt'));
  t.false(entries.has('big.bin'));
  t.deepEqual(r.skipped, [{ path: 'big.bin', reason: 'too-large', size: 1025 }]);
  const human = await ckpt(box, ['show', r.id]);
  t.regex(human.stdout, /not captured: big\.bin: too large \(1\.0 KiB\)/);
  // A captured file that grows past the limit leaves the checkpoint rather than keeping stale bytes.
  write(box, 'small.txt', 'x'.repeat(4096));
  const two = await ckptJson(box, ['snapshot']);
  t.true(two.created);
  t.false(lsTree(box, two.id).has('small.txt'));
  t.true(two.skipped.some((s) => s.path === 'small.txt' && s.reason === 'too-large'));
  // Said by the snapshot that first leaves a path out, not again by each one after (status lists them all).
  write(box, 'huge.bin', 'z'.repeat(2048));
  write(box, 'note.txt', 'n');
  const text = await ckpt(box, ['snapshot']);
  t.regex(text.stderr, /^git-ckpt: not captured: huge\.bin: too large \(2\.0 KiB\)\n$/);
  write(box, 'other.txt', 'o');
  const again = await ckpt(box, ['snapshot']);
  t.is(again.code, 0);
  t.is(again.stderr, '', 'nothing left out anew');
  const status = await ckpt(box, ['status']);
  for (const name of ['big.bin', 'small.txt', 'huge.bin'])
    t.regex(status.stdout, new RegExp(`not captured: ${name.replace('.', '\\.')}: too large`));
});

/** A workspace whose store says ckpt.maxFileBytes=8k over a global 1k, and mid.bin (2 KiB) not captured yet. */
async function storeOverGlobal() {
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.maxFileBytes', '1k']);
  write(box, 'a.txt', 'a');
  await ckptJson(box, ['snapshot']);
  sh(box, ['config', '--file', path.join(storeDir(box), 'config'), 'ckpt.maxFileBytes', '8k']);
  write(box, 'mid.bin', 'm'.repeat(2048));
  return box;
}

test("the store's own config overrides the global one", async (t) => {
  const box = await storeOverGlobal();
  const r = await ckptJson(box, ['snapshot']);
  t.true(lsTree(box, r.id).has('mid.bin'));
});

test("a setting given as `git -c` holds for that one command, over the store and global config, in both of git's spellings", async (t) => {
  const box = await storeOverGlobal();
  // `git -c ckpt.maxFileBytes=1k ckpt snapshot`, as git hands it over: GIT_CONFIG_PARAMETERS.
  const viaDashC = spawnSync('git', ['-c', 'ckpt.maxFileBytes=1k', 'ckpt', 'snapshot', '--json'], {
    cwd: box.ws,
    env: { ...box.env, PATH: `${gitCkptBin(box)}${path.delimiter}${box.env.PATH ?? process.env.PATH}` },
    encoding: 'utf8',
  });
  t.is(viaDashC.status, 0, viaDashC.stderr);
  t.deepEqual(JSON.parse(viaDashC.stdout).skipped, [{ path: 'mid.bin', reason: 'too-large', size: 2048 }]);
  // The next command without it: the store's 8k holds again (the settings cache is not fooled).
  write(box, 'b.txt', 'b');
  t.true(lsTree(box, (await ckptJson(box, ['snapshot'])).id).has('mid.bin'));
  // `git --config-env` and scripts: GIT_CONFIG_COUNT with KEY_n and VALUE_n.
  write(box, 'big.bin', 'b'.repeat(3000));
  const counted = await ckptJson(box, ['snapshot'], {
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'ckpt.maxFileBytes', GIT_CONFIG_VALUE_0: '2k' },
  });
  t.deepEqual(counted.skipped, [{ path: 'big.bin', reason: 'too-large', size: 3000 }]);
});

/** A folder with `git-ckpt` in it, for git to find as `git ckpt`. */
function gitCkptBin(box) {
  const bin = path.join(box.base, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(CLI, path.join(bin, 'git-ckpt'));
  return bin;
}

test('secret-named files are never stored', async (t) => {
  const box = sandbox();
  const secrets = [
    '.env',
    '.env.local',
    'config/.env.production',
    'certs/server.pem',
    'tls.key',
    'id_rsa',
    'home/.ssh/id_rsa.pub',
    'id_ed25519',
  ];
  for (const s of secrets) write(box, s, 'TOKEN=hunter2\n');
  write(box, 'environment.txt', 'fine\n');
  write(box, 'keys.md', 'fine\n');
  const r = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, r.id);
  t.deepEqual([...entries.keys()].sort(), ['environment.txt', 'keys.md']);
  t.deepEqual(r.skipped.map((s) => s.path).sort(), [...secrets].sort());
  t.true(r.skipped.every((s) => s.reason === 'secret'));
});

test('ckpt.secretPatterns adds to the default patterns, a !pattern drops one or lets files through, and status lists them', async (t) => {
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.secretPatterns', '*.token, !*.key']);
  for (const f of ['.env', '.env.local', '.env.example', 'api.token', 'tls.key', 'server.pem']) write(box, f, 'TOKEN=hunter2\n');
  await ckptJson(box, ['snapshot', '-m', 'first']);
  sh(box, ['config', '--file', path.join(storeDir(box), 'config'), 'ckpt.secretPatterns', '!.env.example']);
  write(box, 'a.txt', 'changed\n');
  const r = await ckptJson(box, ['snapshot']);
  t.deepEqual([...lsTree(box, r.id).keys()].sort(), ['.env.example', 'a.txt', 'tls.key']);
  t.deepEqual(r.skipped.map((s) => s.path).sort(), ['.env', '.env.local', 'api.token', 'server.pem']);
  const status = await ckptJson(box, ['status']);
  t.deepEqual(status.secretPatterns, ['.env', '.env.*', '*.pem', 'id_rsa*', 'id_ed25519*', '*.token', '!.env.example']);
  const text = await ckpt(box, ['status']);
  t.regex(text.stdout, /^secrets: +never stored: \.env \.env\.\* \*\.pem id_rsa\* id_ed25519\* \*\.token !\.env\.example$/m);
});

test('a directory that appears between snapshots with more than maxNewFiles files is not stored; the first snapshot is exempt', async (t) => {
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.maxNewFiles', '10']);
  for (let i = 0; i < 20; i++) write(box, `vendor/pkg${i}.js`, `${i}\n`);
  const first = await ckptJson(box, ['snapshot']);
  t.is([...lsTree(box, first.id).keys()].filter((p) => p.startsWith('vendor/')).length, 20);
  for (let i = 0; i < 30; i++) write(box, `node_modules/dep${i % 5}/f${i}.js`, `${i}\n`);
  for (let i = 0; i < 3; i++) write(box, `src/feature/f${i}.ts`, `${i}\n`);
  for (let i = 0; i < 12; i++) write(box, `zz-gen/out${i}.txt`, `${i}\n`);
  write(box, 'vendor/pkg-new.js', 'new\n');
  const two = await ckptJson(box, ['snapshot']);
  const keys = [...lsTree(box, two.id).keys()];
  t.false(keys.some((p) => p.startsWith('node_modules/')));
  t.false(keys.some((p) => p.startsWith('zz-gen/')));
  t.true(keys.includes('src/feature/f2.ts'));
  t.true(keys.includes('vendor/pkg-new.js'));
  const skippedDirs = two.skipped.filter((s) => s.reason === 'new-directory-too-many-files');
  t.deepEqual(skippedDirs.map((s) => s.path).sort(), ['node_modules/', 'zz-gen/']);
  t.true(skippedDirs.every((s) => s.size > 10));
  // Still reported on the next run, where nothing else changed.
  const three = await ckptJson(box, ['snapshot']);
  t.false(three.created);
  t.deepEqual(three.skipped.map((s) => s.path).sort(), ['node_modules/', 'zz-gen/']);
});

test('the time budget stops a snapshot cleanly, keeps its progress, and a large workspace converges', async (t) => {
  const box = sandbox();
  // The first snapshot has no budget (it is init's, below): these files come after it.
  write(box, 'seed.txt', 'seed\n');
  await ckptJson(box, ['snapshot']);
  const chunk = 'z'.repeat(20_000);
  for (let i = 0; i < 4000; i++) write(box, `d${i % 40}/f${i}.txt`, `${i}${chunk}${i}\n`);
  sh(box, ['config', '--global', 'ckpt.timeBudget', '250ms']);
  let failures = 0;
  let result;
  for (let attempt = 0; attempt < 40 && !result; attempt++) {
    const started = Date.now();
    const r = await ckpt(box, ['snapshot', '--json']);
    t.log(`run ${attempt + 1}: exit ${r.code} after ${Date.now() - started} ms${r.code ? `: ${JSON.parse(r.stderr).error.message}` : ''}`);
    if (r.code === 0) {
      result = JSON.parse(r.stdout);
      break;
    }
    failures++;
    t.is(r.code, 1);
    // Under --json the error is one JSON object on stderr.
    t.is(r.stderr.trim().split('\n').length, 1);
    const { error } = JSON.parse(r.stderr);
    t.is(error.code, 'budget');
    t.regex(error.message, /^snapshot stopped by its 0\.3s time budget after hashing \d+ of \d+ files; the work done is kept/);
    const dir = storeDir(box);
    t.false(entryExists(path.join(dir, 'lock')), 'no lock left');
    t.false(existsSync(path.join(dir, 'index.lock')), 'no index.lock left');
    const packDir = path.join(dir, 'git', 'objects', 'pack');
    if (existsSync(packDir))
      t.deepEqual(
        readdirSync(packDir).filter((n) => n.startsWith('tmp_')),
        [],
      );
  }
  t.truthy(result, 'converged');
  // 80 MB in 4000 files takes well over 250 ms to hash on any machine this runs on; the log above has the times.
  t.true(failures > 0, 'the budget was hit at least once');
  t.is(lsTree(box, result.id).size, 4001);
});

test('a budget smaller than the scan alone: every run still hashes a batch, so repeated runs converge', async (t) => {
  const box = sandbox();
  write(box, 'seed.txt', 'seed\n');
  await ckptJson(box, ['snapshot']);
  for (let i = 0; i < 1500; i++) write(box, `d${i % 15}/f${i}.txt`, `${i}\n`);
  sh(box, ['config', '--global', 'ckpt.timeBudget', '1ms']);
  const progress = [];
  let result;
  for (let attempt = 0; attempt < 20 && !result; attempt++) {
    const r = await ckpt(box, ['snapshot', '--json']);
    if (r.code === 0) result = JSON.parse(r.stdout);
    else {
      const m = /after hashing (\d+) of (\d+) files/.exec(r.stderr);
      t.truthy(m, r.stderr);
      progress.push([Number(m[1]), Number(m[2])]);
    }
  }
  t.truthy(result, `converged after ${progress.length} stopped runs`);
  t.true(progress.length > 0, 'the 1 ms budget stopped runs');
  for (const [hashed] of progress) t.true(hashed > 0, 'every stopped run hashed something');
  for (let i = 1; i < progress.length; i++) t.true(progress[i][1] < progress[i - 1][1], 'less is left after every run');
  t.is(lsTree(box, result.id).size, 1501);
});

test("the first snapshot is init's whatever command takes it: no time budget, so a large tree finishes in one run", async (t) => {
  const box = sandbox();
  for (let i = 0; i < 3000; i++) write(box, `d${i % 30}/f${i}.txt`, `${i}\n`);
  sh(box, ['config', '--global', 'ckpt.timeBudget', '1ms']);
  const r = await ckpt(box, ['snapshot', '--json']);
  t.is(r.code, 0, r.stderr);
  t.is(lsTree(box, JSON.parse(r.stdout).id).size, 3000);
  // The next one has its budget again.
  for (let i = 0; i < 3000; i++) write(box, `e${i % 30}/f${i}.txt`, `${i}\n`);
  const next = await ckpt(box, ['snapshot', '--json']);
  t.is(next.code, 1, 'a later snapshot is held to ckpt.timeBudget');
  t.is(JSON.parse(next.stderr).error.code, 'budget');
});

test('init takes the first snapshot with no time budget; into a pipe it shows no progress, as git does', async (t) => {
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.timeBudget', '1ms']);
  for (let i = 0; i < 300; i++) write(box, `f${i}.txt`, `${i}\n`);
  const r = await ckpt(box, ['init']);
  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, '', 'stderr is a pipe here: no progress at all');
  t.regex(r.stdout, /^checkpoint [0-9a-f]{8}/);
  // The reporter itself: on a terminal only, redrawn at most every 200 ms.
  const { progressReporter } = await import(path.join(ROOT, 'dist', 'cli', 'snapshot.js'));
  const run = (terminal, first, elapsedMs) => {
    let out = '';
    const report = progressReporter(terminal, (text) => {
      out += text;
    });
    for (const hashed of [1, 150, 300, 300]) report?.({ hashed, total: 300, elapsedMs, first });
    return out;
  };
  t.is(
    progressReporter(false, () => t.fail('written into a pipe')),
    undefined,
    'not a terminal: no reporter',
  );
  t.is(run(false, true, 5000), '');
  t.is(
    run(true, true, 0),
    'hashing files: 1/300\rhashing files: 300/300\n',
    'on a terminal: redrawn, at most every 200 ms, one final line',
  );
  t.is(run(true, false, 0), '', 'a quick later snapshot shows nothing');
  t.is(run(true, false, 5000), 'hashing files: 1/300\rhashing files: 300/300\n', 'a slow later snapshot shows it too');
});

test('files that appear under a folded directory pathspec after the scan are held to the same limits', async (t) => {
  // 1,000 staged files fold into directory pathspecs (`d3/`), and `git add d3/` also takes files
  // created after the scan. To create them at exactly that moment, a `git` on PATH in front of the
  // real one writes them just before the first `git add` runs (and keeps each add's pathspec list).
  const box = sandbox();
  sh(box, ['config', '--global', 'ckpt.maxFileBytes', '1k']);
  sh(box, ['config', '--global', 'ckpt.timeBudget', '10m']);
  for (let i = 0; i < 1000; i++) write(box, `d${i % 10}/f${i}.txt`, `${i}\n`);
  const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  const bin = path.join(box.base, 'bin');
  const spool = path.join(box.base, 'adds');
  mkdirSync(bin);
  mkdirSync(spool);
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh
case " $* " in
  *" add "*)
    n=$(ls "$CKPT_SPOOL" | wc -l | tr -d ' ')
    cat > "$CKPT_SPOOL/add-$n"
    if [ "$n" = 0 ]; then
      head -c 5000 /dev/zero > "$CKPT_WS/d3/late.bin"
      printf 'late\\n' > "$CKPT_WS/d3/late.txt"
      printf 'TOKEN=hunter2\\n' > "$CKPT_WS/d3/.env"
    fi
    exec "$CKPT_REAL_GIT" "$@" < "$CKPT_SPOOL/add-$n" ;;
esac
exec "$CKPT_REAL_GIT" "$@"
`,
    { mode: 0o755 },
  );
  const env = { PATH: `${bin}${path.delimiter}${box.env.PATH}`, CKPT_SPOOL: spool, CKPT_WS: box.ws, CKPT_REAL_GIT: realGit };
  const r = await ckptJson(box, ['snapshot'], { env });
  const adds = readdirSync(spool).map((f) => readFileSync(path.join(spool, f), 'utf8').split('\0'));
  t.true(adds.length > 0, 'the wrapper ran');
  t.true(
    adds.some((pathspecs) => pathspecs.includes('d3/')),
    'd3/ was staged as a directory pathspec (else this test proves nothing)',
  );
  const tree = lsTree(box, r.id);
  t.true(tree.has('d3/late.txt'), 'a late file within the limits is captured');
  t.false(tree.has('d3/late.bin'), 'a late file over maxFileBytes is not');
  t.false(tree.has('d3/.env'), 'a late secret is not');
  t.is(tree.size, 1001);
  t.deepEqual(
    r.skipped.filter((s) => s.path.startsWith('d3/')).sort((x, y) => (x.path < y.path ? -1 : 1)),
    [
      { path: 'd3/.env', reason: 'secret' },
      { path: 'd3/late.bin', reason: 'too-large', size: 5000 },
    ],
  );
  // The next snapshot, which sees them in its scan, agrees.
  const next = await ckptJson(box, ['snapshot']);
  t.false(next.created);
  t.deepEqual(next.skipped.map((s) => s.path).sort(), ['d3/.env', 'd3/late.bin']);
});
