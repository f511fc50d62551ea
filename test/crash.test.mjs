// A restore of about 5,000 files killed with SIGKILL at random moments, 20 times.
// After each kill, --abort must give back the exact pre-restore bytes and
// --continue the exact target bytes (they alternate), and a kill before the
// journal exists must leave the workspace untouched.
import test from 'ava';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ckpt, ckptJson, killDuring, sandbox, startCli, storeDir, treeState, waitFor, workspaceState, libPath } from './helpers.mjs';

const FILES = 5000;
const KILLS = 20;

function populate(box, variant) {
  for (let i = 0; i < FILES; i++) {
    // In B, 2% of A's files are gone and 2% are new (in new directories), the rest rewritten.
    if (variant === 'B' && i % 50 === 7) continue;
    const dir = path.join(box.ws, `d${i % 50}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `f${i}.txt`), `${variant} ${i} ${'x'.repeat(i % 300)}\n`, {
      mode: i % 97 === 0 && variant === 'B' ? 0o755 : 0o644,
    });
  }
  if (variant === 'B') {
    for (let i = 0; i < FILES / 50; i++) {
      mkdirSync(path.join(box.ws, `new${i % 5}`), { recursive: true });
      writeFileSync(path.join(box.ws, `new${i % 5}`, `n${i}.txt`), `new ${i}\n`);
    }
  }
}

/** Start a restore in its own process group; resolve when it exits (or is killed). */
function startRestore(box, target) {
  return startCli(box, ['restore', target, '--delete-new']);
}

test('SIGKILL at random moments: --abort gives back the pre-restore bytes, --continue the target bytes', async (t) => {
  t.timeout(15 * 60 * 1000);
  const box = sandbox();
  // 5,100 changed files under the suite's load took CI past the 15 s default budget (2026-12-02): this test is about kills, not budgets.
  appendFileSync(path.join(box.home, '.gitconfig'), '[ckpt]\n\ttimeBudget = 10m\n');
  populate(box, 'A');
  const a = (await ckptJson(box, ['snapshot', '-m', 'A'])).id;
  const states = { [a]: workspaceState(box) };
  for (let i = 0; i < 50; i++) rmSync(path.join(box.ws, `d${i}`), { recursive: true });
  populate(box, 'B');
  const b = (await ckptJson(box, ['snapshot', '-m', 'B'])).id;
  states[b] = workspaceState(box);
  const gitState = treeState(path.join(box.ws, '.git'));
  const journal = path.join(storeDir(box), 'journal.json');

  // One uninterrupted round trip to time the guard and apply phases. The kill windows start
  // from these measurements and shrink whenever a run finishes before its kill (the machine got
  // faster than when it was measured, e.g. another job on a loaded box ended), so the kills keep
  // landing inside the journaled phase on a fast laptop and on a loaded 2-core machine alike.
  const t0 = Date.now();
  const probe = startRestore(box, a);
  await waitFor(() => existsSync(journal) || probe.done, 60_000);
  const guardMs = Date.now() - t0;
  const t1 = Date.now();
  const done = await probe.exited;
  const applyMs = done.at - t1;
  t.is(done.code, 0);
  t.is(workspaceState(box), states[a]);
  t.log(`restore of ${FILES} files: guard ${guardMs} ms, journal to exit ${applyMs} ms`);
  const windows = { before: guardMs, apply: applyMs, floor: 10 };

  let current = a;
  const outcomes = { abort: 0, continue: 0, beforeJournal: 0, finished: 0 };
  for (let kill = 0; kill < KILLS; kill++) {
    const target = current === a ? b : a;
    await killDuring(startRestore(box, target), kill, journal, windows, 60_000);

    if (existsSync(journal)) {
      const status = await ckpt(box, ['status']);
      t.regex(status.stdout, /interrupted: a restore/);
      const action = kill % 2 === 0 ? 'abort' : 'continue';
      const r = await ckpt(box, ['restore', `--${action}`]);
      t.is(r.code, 0, `kill ${kill} ${action}: ${r.stderr}`);
      const expected = action === 'abort' ? current : target;
      t.is(
        workspaceState(box),
        states[expected],
        `kill ${kill}: --${action} gives the exact ${action === 'abort' ? 'pre-restore' : 'target'} bytes`,
      );
      outcomes[action]++;
      current = expected;
    } else {
      // Killed before the journal (nothing written) or after it closed (all done and recorded).
      const now = workspaceState(box);
      t.true(now === states[current] || now === states[target], `kill ${kill}: the workspace is one whole state`);
      if (now === states[target]) {
        outcomes.finished++;
        current = target;
      } else outcomes.beforeJournal++;
    }
    t.false(existsSync(journal));
  }
  t.log(JSON.stringify(outcomes), `final windows: guard ${Math.round(windows.before)} ms, apply ${Math.round(windows.apply)} ms`);
  t.true(outcomes.abort + outcomes.continue >= 8, 'most kills landed inside the journaled phase');
  t.is(treeState(path.join(box.ws, '.git')), gitState, "the user's .git is untouched");
  // The store still works: one more full restore from wherever we ended up.
  const last = await ckptJson(box, ['restore', current === a ? b : a, '--delete-new']);
  t.is(last.counts.failed, 0);
});

test('a range revert of 200 checkpoints killed with SIGKILL 20 times: each one recovers with --continue or --abort, byte for byte', async (t) => {
  t.timeout(15 * 60 * 1000);
  const box = sandbox();
  const { Workspace } = await import(libPath('index'));
  const file = (i) => path.join(box.ws, `d${i % 10}`, `f${i}.txt`);
  for (let i = 0; i < 200; i++) {
    mkdirSync(path.dirname(file(i)), { recursive: true });
    writeFileSync(file(i), `${Array.from({ length: 10 }, (_, l) => `file ${i} line ${l + 1}`).join('\n')}\n`);
  }
  const ws = Workspace.open(box.ws, { env: box.env });
  await ws.snapshot({ timeBudgetMs: 0 });
  const original = workspaceState(box);
  // One agent session of 200 tool calls, each editing line 1–3 of its own file (the library: 200 hook processes would take a minute).
  for (let i = 0; i < 200; i++) {
    const lines = readFileSync(file(i), 'utf8').split('\n');
    lines[i % 3] = `edited by the agent in call ${i}`;
    writeFileSync(file(i), lines.join('\n'));
    await ws.snapshot({ session: 'sess-long', turn: Math.floor(i / 20) + 1, step: (i % 20) + 1, tool: 'Edit', kind: 'post' });
  }
  // The user's own edits after the session, away from the agent's lines: every revert must keep them.
  for (let i = 0; i < 200; i += 7) {
    const lines = readFileSync(file(i), 'utf8').split('\n');
    lines[8] = 'the user’s line 9';
    writeFileSync(file(i), lines.join('\n'));
  }
  const before = workspaceState(box);
  const journal = path.join(storeDir(box), 'journal.json');

  // One uninterrupted revert: the reverted state, and the windows to aim the kills at.
  const t0 = Date.now();
  const probe = startCli(box, ['revert', '--session', 'sess-long']);
  await waitFor(() => existsSync(journal) || probe.done, 120_000);
  const planMs = Date.now() - t0;
  const t1 = Date.now();
  const done = await probe.exited;
  const applyMs = Math.max(10, done.at - t1);
  t.is(done.code, 0);
  const reverted = workspaceState(box);
  t.not(reverted, before);
  for (let i = 0; i < 200; i += 7) t.regex(readFileSync(file(i), 'utf8'), /the user’s line 9/);
  t.regex(readFileSync(file(1), 'utf8'), /^file 1 line 1\nfile 1 line 2\n/, 'the agent’s lines are back');
  t.log(`revert of 200 checkpoints: planning ${planMs} ms, journal to exit ${applyMs} ms`);
  const windows = { before: planMs, apply: applyMs, floor: 5 };
  await ckptJson(box, ['undo']);
  t.is(workspaceState(box), before);

  const outcomes = { abort: 0, continue: 0, beforeJournal: 0, finished: 0 };
  for (let kill = 0; kill < KILLS; kill++) {
    await killDuring(startCli(box, ['revert', '--session', 'sess-long']), kill, journal, windows, 120_000);
    let now;
    if (existsSync(journal)) {
      const action = kill % 2 === 0 ? 'abort' : 'continue';
      const r = await ckpt(box, ['restore', `--${action}`]);
      t.is(r.code, 0, `kill ${kill} ${action}: ${r.stderr}`);
      now = workspaceState(box);
      t.is(now, action === 'abort' ? before : reverted, `kill ${kill}: --${action} gives the exact bytes`);
      outcomes[action]++;
    } else {
      now = workspaceState(box);
      t.true(now === before || now === reverted, `kill ${kill}: the workspace is one whole state`);
      outcomes[now === reverted ? 'finished' : 'beforeJournal']++;
    }
    // Back to the state before the revert for the next round.
    if (now === reverted) {
      await ckptJson(box, ['undo']);
      t.is(workspaceState(box), before);
    }
    t.false(existsSync(journal));
  }
  t.log(JSON.stringify(outcomes), `final windows: plan ${Math.round(windows.before)} ms, apply ${Math.round(windows.apply)} ms`);
  t.true(outcomes.abort + outcomes.continue >= 8, 'most kills landed inside the journaled phase');
  t.not(original, before);
});
