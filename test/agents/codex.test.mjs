// Codex CLI 0.171.0 end to end: the real native CLI (`codex exec`, then
// `codex exec resume --last`), offline against the scripted Responses server of
// ./codex.mjs, with git-ckpt's hooks installed by `git ckpt hooks install`.
//   A. project scope (.codex/hooks.json): the project trusted with `--trust`, the
//      hooks first untrusted (nothing runs), then trusted the way /hooks does it
//      (app server hooks/list + config/batchWrite); turn 1: apply_patch Add, a
//      shell `sed -i` + create + delete, two calls in one message, an apply_patch
//      adding .env and app.cfg; turn 2 resumed: apply_patch Update, a shell edit,
//      a failing shell command that creates a file first; restore turn:2 and undo
//      byte-exact; the user's .git untouched.
//   B. user scope (~/.codex/hooks.json): untrusted first, then trust written into
//      config.toml with the hash computed here (checked against hooks/list);
//      redaction of a command's KEY=value and of the prompt.
//   C. Codex itself: `async: true` handlers run detached, and
//      --dangerously-bypass-hook-trust runs untrusted hooks for one invocation.
import test from 'ava';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agentSuite, ckpt, ckptJson, git, gitDirFingerprint, ledgerRecords, storeText, testSandbox, workspaceFiles } from './harness.mjs';
import {
  EVENT_LABELS,
  codexTurn,
  configPath,
  describeRun,
  hookTrustEntries,
  listHooks,
  readTrace,
  startCodexServer,
  trustHooksInConfig,
  trustHooksLikeTui,
  writeCodexConfig,
} from './codex.mjs';

const SECRET = 'sk-test-1234567890abcdefghij';
/** The events git-ckpt must wire at least (the installer may add more, e.g. SubagentStop). */
const CORE_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SessionStart'];
const installedEvents = (hooksFile) => Object.keys(JSON.parse(readFileSync(hooksFile, 'utf8')).hooks ?? {});

const patch = (...lines) => `*** Begin Patch\n${lines.join('\n')}\n*** End Patch\n`;

/** "phase:tool:call" per trace entry, for compact sequence assertions. */
const seq = (trace) => trace.map((e) => [e.phase, e.tool, e.call].filter(Boolean).join(':'));

/** Within one turn's trace: session/turn start first, turn-end last, each call's pre before its post. */
function checkTurnTrace(t, trace, { session, calls, source, preOnly = [] }) {
  // Post hooks run detached (async): a post may come after the next event or the turn's end, and
  // `codex exec` aborts one still running when it exits (the next synchronous hook takes its change
  // as that call's). So every other event in order, and the posts that came, each after its pre.
  const all = seq(trace);
  const s = all.filter((e) => !e.startsWith('post:'));
  t.deepEqual(s.slice(0, 2), ['session-start', 'turn-start'], all.join(' '));
  t.is(s.at(-1), 'turn-end', all.join(' '));
  t.deepEqual(
    s.slice(2, -1).sort(),
    [...calls.map(([tool, call]) => `pre:${tool}:${call}`), ...preOnly.map(([tool, call]) => `pre:${tool}:${call}`)].sort(),
    all.join(' '),
  );
  const posts = all.filter((e) => e.startsWith('post:'));
  const wanted = calls.map(([tool, call]) => `post:${tool}:${call}`);
  t.true(
    posts.every((p) => wanted.includes(p)),
    all.join(' '),
  );
  for (const [tool, call] of calls) {
    const post = all.indexOf(`post:${tool}:${call}`);
    if (post >= 0) t.true(all.indexOf(`pre:${tool}:${call}`) < post, `${call}: pre before post`);
  }
  for (const e of trace) t.is(e.session, session, `${e.phase} carries the thread id as session_id`);
  // turn_id: on every turn-scoped event, never on SessionStart.
  t.is(trace[0].payload.turn_id, undefined, 'SessionStart has no turn_id');
  t.is(trace[0].payload.source, source);
  const turnId = trace[1].payload.turn_id;
  t.truthy(turnId);
  for (const e of trace.slice(1)) t.is(e.payload.turn_id, turnId, `${e.phase} carries the turn's turn_id`);
  return turnId;
}

/** Records git-ckpt made from hook events, by the tool-call id. */
const byCall = (records) => Object.fromEntries(records.filter((r) => r.call).map((r) => [r.call, r]));
const pathsOf = (r) => (r?.paths ?? []).map((p) => `${p.status} ${p.path}`).sort();

/**
 * Assertions on fields another engineer is adding right now (agentTurn, transcript, prompt,
 * failed/error, redaction, patch summaries): run after everything else, each on its own, so that
 * one not landed yet neither hides the others nor stops the restore and .git checks. A failure
 * still fails the test, and every failing one is named in the log.
 */
function pendingChecks(t) {
  const list = [];
  return {
    /** `actual`: what the record holds, named in the log when the check fails. */
    add: (name, fn, actual) => list.push([name, fn, actual]),
    run: () => {
      for (const [name, fn, actual] of list) {
        try {
          fn();
        } catch {
          t.log(`being added, fails now: ${name} (the record has ${JSON.stringify(actual)})`);
        }
      }
    },
  };
}

agentSuite(test, 'codex', 'codex: the real CLI', (agent) => {
  test.beforeEach((t) => {
    t.context.runs = [];
    t.context.boxes = [];
    t.context.servers = [];
  });
  test.afterEach.always(async (t) => {
    for (const s of t.context.servers) {
      if (s.unexpected.length) t.log(`unexpected requests: ${s.unexpected.join(', ')}`);
      await s.close();
    }
    if (!t.passed) {
      for (const [label, r] of t.context.runs) t.log(`${label}: ${describeRun(r)}`);
      for (const box of t.context.boxes) t.log(`hook trace of ${box.base}:\n${seq(readTrace(box)).join('\n')}`);
    }
  });

  const turn = async (t, label, box, prompt, opts) => {
    const r = await codexTurn(box, agent.bin, prompt, opts);
    t.context.runs.push([label, r]);
    t.is(r.code, 0, `${label}: codex exited ${r.code}`);
    return r;
  };

  test('codex: project scope, untrusted then trusted as /hooks does; turn 1 (apply_patch, sed/create/rm, parallel calls, .env), resumed turn 2 (edit, shell edit, failing command); restore turn:2 and undo', async (t) => {
    const box = testSandbox(t);
    t.context.boxes.push(box);
    const ws = box.ws;
    writeFileSync(path.join(ws, 'old.txt'), 'committed, removed by the shell\n');
    git(box, ['add', '-A']);
    git(box, ['commit', '-qm', 'old.txt']);
    const fingerprint = gitDirFingerprint(box);
    const later = pendingChecks(t);

    const server = await startCodexServer({
      hello: { steps: [], final: 'Hello.' },
      t1: {
        steps: [
          [{ patch: patch('*** Add File: notes.txt', '+alpha', '+beta') }],
          [{ shell: "sed -i 's/alpha/ALPHA/' notes.txt && printf 'made\\n' > shell_made.txt && rm old.txt" }],
          [{ shell: "printf 'p1\\n' > par1.txt" }, { patch: patch('*** Add File: par2.txt', '+p2') }],
          [{ patch: patch('*** Add File: .env', `+SERVICE_API_TOKEN=${SECRET}`, '*** Add File: app.cfg', '+debug=false') }],
        ],
        final: 'Turn 1 done.',
      },
      t2: {
        steps: [
          [{ patch: patch('*** Update File: notes.txt', '@@', ' ALPHA', '-beta', '+gamma') }],
          [{ shell: "printf 'two\\n' >> notes.txt && rm shell_made.txt" }],
          [{ shell: "printf 'partial\\n' > fail_made.txt; echo 'boom: it failed' >&2; exit 3" }],
        ],
        final: 'Turn 2 done.',
      },
    });
    t.context.servers.push(server);
    writeCodexConfig(box, server.url);

    const install = await ckpt(box, ['hooks', 'install', '--agent', 'codex', '--scope', 'project']);
    t.is(install.code, 0, install.stderr);
    const hooksFile = path.join(ws, '.codex', 'hooks.json');
    t.true(readFileSync(hooksFile, 'utf8').includes('git-ckpt-hook'));
    t.log(`hooks install: ${install.stdout.trim()}`);
    t.log(`hooks status: ${(await ckpt(box, ['hooks', 'status', '--agent', 'codex'])).stdout.trim()}`);

    // Gate 1 (project trust) given by `--trust`; gate 2 (hook trust) not yet: nothing runs.
    const r0 = await turn(t, 'untrusted hooks', box, '[[ckpt hello]] Say hello.', { flags: ['--trust'] });
    t.truthy(r0.thread);
    t.regex(
      readFileSync(configPath(box), 'utf8'),
      new RegExp(`\\[projects\\.${JSON.stringify(ws).replace(/[.[\]/\\]/g, '\\$&')}\\]\\s*trust_level = "trusted"`),
    );
    t.deepEqual(readTrace(box), [], 'untrusted hooks: Codex ran none of them');
    t.deepEqual(
      ledgerRecords(box).filter((r) => r.agent),
      [],
      'untrusted hooks: no checkpoint of theirs (only the first snapshot hooks install took)',
    );
    const verdict = async () => (await ckptJson(box, ['hooks', 'status', '--agent', 'codex', '--scope', 'project', '--json']))[0].verdict;
    const untrusted = await verdict();
    t.is(untrusted.runs, 'no', 'hooks status tells that Codex will not run the untrusted hooks');
    t.regex(untrusted.step, /\/hooks/);

    // Gate 2: what /hooks does. hooks/list shows every handler untrusted, keyed file:event:group:handler.
    const trust = await trustHooksLikeTui(box, agent.bin);
    const events = installedEvents(hooksFile);
    for (const e of CORE_EVENTS) t.true(events.includes(e), `hooks.json wires ${e}`);
    const expectedKeys = events.map((e) => `${hooksFile}:${EVENT_LABELS[e]}:0:0`).sort();
    t.deepEqual(trust.before.map((h) => h.key).sort(), expectedKeys);
    t.true(
      trust.before.every((h) => h.trustStatus === 'untrusted' && h.source === 'project' && h.enabled),
      JSON.stringify(trust.before),
    );
    const computed = Object.fromEntries(hookTrustEntries(hooksFile).map((e) => [e.key, e.hash]));
    for (const h of trust.before) t.is(computed[h.key], h.currentHash, `our trust hash of ${h.key} is Codex's`);
    t.true(
      trust.after.every((h) => h.trustStatus === 'trusted'),
      JSON.stringify(trust.after.map((h) => h.trustStatus)),
    );
    const config = readFileSync(configPath(box), 'utf8');
    for (const k of expectedKeys)
      t.true(
        config.includes(`[hooks.state.${JSON.stringify(k)}]\ntrusted_hash = ${JSON.stringify(computed[k])}`),
        `config.toml records trust of ${k}`,
      );
    t.log(`hooks status after trust: ${(await ckpt(box, ['hooks', 'status', '--agent', 'codex'])).stdout.trim()}`);
    t.is((await verdict()).runs, 'yes', "hooks status reads Codex's trust of every one of our hooks (our hash is Codex's)");

    // Turn 1.
    const prompt1 =
      '[[ckpt t1]] Create notes.txt, edit it with sed, make files in parallel, add .env and app.cfg\nSecond line of the prompt.';
    const r1 = await turn(t, 'turn 1', box, prompt1);
    const session = r1.thread;
    t.truthy(session);
    t.regex(r1.stdout, /Turn 1 done\./);
    const trace1 = readTrace(box);
    const turnId1 = checkTurnTrace(t, trace1, {
      session,
      source: 'startup',
      calls: [
        ['apply_patch', 'call_t1_s0_0'],
        ['Bash', 'call_t1_s1_0'],
        ['Bash', 'call_t1_s2_0'],
        ['apply_patch', 'call_t1_s2_1'],
        ['apply_patch', 'call_t1_s3_0'],
      ],
    });
    t.is(trace1[1].payload.prompt, prompt1, 'UserPromptSubmit carries the whole prompt');
    const transcript = trace1[0].payload.transcript_path;
    t.true(typeof transcript === 'string' && transcript.startsWith(path.join(box.home, '.codex', 'sessions')), transcript);
    const patchPre = trace1.find((e) => e.phase === 'pre' && e.call === 'call_t1_s3_0');
    t.true(patchPre.payload.tool_input.command.includes(SECRET), 'Codex sends the whole patch, secret included, in tool_input.command');
    // The last call's post runs detached and may be aborted when `codex exec` exits.
    const patchPost = trace1.find((e) => e.phase === 'post' && e.call === 'call_t1_s3_0');
    if (patchPost) t.regex(patchPost.payload.tool_response, /^Exit code: 0\n/);

    // The first snapshot, which hooks install took in the background, is not the agent's.
    const recs1 = ledgerRecords(box).filter((r) => r.agent);
    t.true(
      recs1.every((r) => r.session === session && r.agent === 'codex'),
      JSON.stringify(recs1.map((r) => [r.session, r.agent])),
    );
    const posts1 = recs1.filter((r) => r.kind === 'post');
    t.deepEqual(
      posts1.map((r) => r.call).sort(),
      ['call_t1_s0_0', 'call_t1_s1_0', 'call_t1_s2_0', 'call_t1_s2_1', 'call_t1_s3_0'],
      'one post checkpoint per mutating call',
    );
    t.deepEqual(
      recs1.filter((r) => r.kind === 'pre'),
      [],
      'nothing changed between calls: no pre checkpoint',
    );
    t.is(new Set(recs1.map((r) => r.tree)).size, recs1.length, 'no two checkpoints of the same content');
    const c1 = byCall(recs1);
    t.deepEqual(
      posts1.map((r) => r.turn),
      [1, 1, 1, 1, 1],
    );
    t.deepEqual(posts1.map((r) => r.step).sort(), [1, 2, 3, 4, 5]);
    t.is(c1.call_t1_s0_0.step, 1);
    t.is(c1.call_t1_s1_0.step, 2);
    t.is(c1.call_t1_s3_0.step, 5);
    t.is(c1.call_t1_s0_0.tool, 'apply_patch');
    t.is(c1.call_t1_s1_0.tool, 'Bash');
    later.add('input of a patch: A <path>', () => t.is(c1.call_t1_s0_0.input, 'A notes.txt'), c1.call_t1_s0_0.input);
    t.is(c1.call_t1_s1_0.input, "sed -i 's/alpha/ALPHA/' notes.txt && printf 'made\\n' > shell_made.txt && rm old.txt");
    t.deepEqual(pathsOf(c1.call_t1_s0_0), ['A notes.txt']);
    t.deepEqual(
      pathsOf(c1.call_t1_s1_0),
      ['A shell_made.txt', 'D old.txt', 'M notes.txt'],
      'the shell call’s own post holds its sed, create and rm',
    );
    t.deepEqual(pathsOf(c1.call_t1_s2_0), ['A par1.txt']);
    t.deepEqual(pathsOf(c1.call_t1_s2_1), ['A par2.txt']);
    // The secret-named file: never captured, named in the input without content.
    later.add('input of the .env patch', () => t.is(c1.call_t1_s3_0.input, 'A .env, A app.cfg'), c1.call_t1_s3_0.input);
    t.deepEqual(pathsOf(c1.call_t1_s3_0), ['A app.cfg']);
    t.true(
      (c1.call_t1_s3_0.skipped ?? []).some((s) => s.path === '.env'),
      JSON.stringify(c1.call_t1_s3_0.skipped),
    );
    t.false(storeText(box).includes(SECRET), 'the .env content is nowhere in the store');
    // Fields being added: the agent's turn id, the transcript, the turn's title, failed only on failures.
    for (const r of posts1) {
      later.add(`${r.call}: agentTurn = Codex turn_id`, () => t.is(r.agentTurn, turnId1), r.agentTurn);
      later.add(`${r.call}: transcript`, () => t.is(r.transcript, transcript), r.transcript);
      later.add(`${r.call}: not failed`, () => t.falsy(r.failed), r.failed);
    }
    const first1 = recs1.find((r) => r.turn === 1);
    later.add(
      'prompt: the first record of turn 1 carries the first line of the prompt',
      () => t.is(first1?.prompt, prompt1.split('\n')[0]),
      first1?.prompt,
    );

    const before2 = workspaceFiles(box);
    t.true('.env' in before2);

    // Turn 2, resumed.
    const prompt2 = '[[ckpt t2]] Change beta to gamma, append with the shell, then run a failing command.';
    const r2 = await turn(t, 'turn 2 (resume --last)', box, prompt2, { resume: 'last' });
    t.is(r2.thread, session, 'resume --last continues the same thread');
    t.regex(r2.stdout, /Turn 2 done\./);
    const trace2 = readTrace(box).slice(trace1.length);
    const turnId2 = checkTurnTrace(t, trace2, {
      session,
      source: 'resume',
      calls: [
        ['apply_patch', 'call_t2_s0_0'],
        ['Bash', 'call_t2_s1_0'],
        ['Bash', 'call_t2_s2_0'],
      ],
    });
    t.not(turnId2, turnId1);
    const failPost = trace2.find((e) => e.phase === 'post' && e.call === 'call_t2_s2_0');
    // Detached, the last post may be aborted when `codex exec` exits; the turn's end then takes it.
    if (failPost)
      t.is(
        failPost.payload.tool_response,
        'boom: it failed\n',
        'PostToolUse fires after a failing command; tool_response is its output only, no exit code',
      );

    const recs2 = ledgerRecords(box)
      .filter((r) => r.agent)
      .slice(recs1.length);
    const posts2 = recs2.filter((r) => r.kind === 'post');
    t.deepEqual(posts2.map((r) => r.call).sort(), ['call_t2_s0_0', 'call_t2_s1_0', 'call_t2_s2_0']);
    t.is(recs2.filter((r) => r.kind === 'pre').length, 0);
    const c2 = byCall(recs2);
    t.deepEqual(
      posts2.map((r) => [r.turn, r.step]),
      [
        [2, 1],
        [2, 2],
        [2, 3],
      ],
    );
    later.add('input of an update patch: M <path>', () => t.is(c2.call_t2_s0_0.input, 'M notes.txt'), c2.call_t2_s0_0.input);
    t.deepEqual(pathsOf(c2.call_t2_s0_0), ['M notes.txt']);
    t.deepEqual(pathsOf(c2.call_t2_s1_0), ['D shell_made.txt', 'M notes.txt']);
    t.deepEqual(pathsOf(c2.call_t2_s2_0), ['A fail_made.txt'], 'the failing command’s file is in its own post');
    for (const r of posts2) later.add(`${r.call}: agentTurn = Codex turn_id of turn 2`, () => t.is(r.agentTurn, turnId2), r.agentTurn);
    later.add(
      'prompt: the first record of turn 2 carries its title',
      () => t.is(recs2.find((r) => r.turn === 2)?.prompt, prompt2),
      recs2.find((r) => r.turn === 2)?.prompt,
    );
    later.add('successful calls of turn 2 are not failed', () => t.falsy(c2.call_t2_s0_0.failed || c2.call_t2_s1_0.failed), [
      c2.call_t2_s0_0.failed,
      c2.call_t2_s1_0.failed,
    ]);
    // Being added: failed + error on a failed call's post. Codex's PostToolUse payload has only the
    // command's output (no exit code); the transcript already holds the item's exit_code and status
    // "failed" when the hook runs.
    later.add('failed: true on the failing command’s post', () => t.is(c2.call_t2_s2_0.failed, true), c2.call_t2_s2_0.failed ?? null);
    later.add(
      'error: the first line of the failure',
      () => t.regex(c2.call_t2_s2_0.error ?? '', /^exit code 3(: boom: it failed)?$/),
      c2.call_t2_s2_0.error ?? null,
    );

    const log = await ckptJson(box, ['log', '--json', '--all']);
    t.true(Array.isArray(log) && log.length >= posts1.length + posts2.length);
    const shown = await ckptJson(box, ['show', c1.call_t1_s1_0.id, '--json']);
    t.truthy(shown);

    // Rewind to just before turn 2, then undo.
    const after2 = workspaceFiles(box);
    const restore = await ckpt(box, ['restore', 'turn:2', '--delete-new']);
    t.is(restore.code, 0, restore.stderr);
    t.deepEqual(workspaceFiles(box), before2, 'restore turn:2 is byte-exact');
    const undo = await ckpt(box, ['undo']);
    t.is(undo.code, 0, undo.stderr);
    t.deepEqual(workspaceFiles(box), after2, 'undo brings back the state after turn 2');

    t.false(storeText(box).includes(SECRET), 'no secret anywhere in the store');
    t.is(gitDirFingerprint(box), fingerprint, "the user's .git is byte-identical");
    later.run();
  });

  test('codex: user scope, untrusted then trust written as /hooks writes it (hash computed here); command and prompt redaction', async (t) => {
    const box = testSandbox(t);
    t.context.boxes.push(box);
    const fingerprint = gitDirFingerprint(box);
    const later = pendingChecks(t);
    const server = await startCodexServer({
      hello: { steps: [], final: 'Hello.' },
      u1: {
        steps: [
          [{ shell: `SERVICE_API_KEY=${SECRET} sh -c 'printf "ok\\n" > keyed.txt'` }],
          [{ patch: patch('*** Update File: README.md', '@@', '-# project', '+# project, edited') }],
          [{ patch: patch('*** Update File: missing.txt', '@@', '-x', '+y') }],
        ],
        final: 'User scope done.',
      },
    });
    t.context.servers.push(server);
    writeCodexConfig(box, server.url);

    const install = await ckpt(box, ['hooks', 'install', '--agent', 'codex', '--scope', 'user']);
    t.is(install.code, 0, install.stderr);
    const hooksFile = path.join(box.home, '.codex', 'hooks.json');
    t.true(readFileSync(hooksFile, 'utf8').includes('git-ckpt-hook'));
    t.false(existsSync(path.join(box.ws, '.codex')), 'user scope writes nothing in the workspace');

    const r0 = await turn(t, 'untrusted hooks', box, '[[ckpt hello]] Say hello.');
    t.truthy(r0.thread);
    t.deepEqual(readTrace(box), [], 'untrusted user hooks: Codex ran none of them');

    // Trust exactly as /hooks records it, computed without Codex; Codex agrees.
    const entries = hookTrustEntries(hooksFile);
    t.is(entries.length, installedEvents(hooksFile).length);
    trustHooksInConfig(box, entries);
    const listed = await listHooks(box, agent.bin);
    t.deepEqual(listed.map((h) => `${h.key} ${h.source} ${h.trustStatus}`).sort(), entries.map((e) => `${e.key} user trusted`).sort());
    for (const h of listed) t.is(h.currentHash, entries.find((e) => e.key === h.key).hash);

    const prompt = `[[ckpt u1]] Deploy with DEPLOY_TOKEN=${SECRET} and edit the README`;
    const r1 = await turn(t, 'turn 1', box, prompt);
    const session = r1.thread;
    const trace = readTrace(box);
    checkTurnTrace(t, trace, {
      session,
      source: 'startup',
      calls: [
        ['Bash', 'call_u1_s0_0'],
        ['apply_patch', 'call_u1_s1_0'],
      ],
      // An apply_patch that fails to apply gets a PreToolUse and no PostToolUse at all.
      preOnly: [['apply_patch', 'call_u1_s2_0']],
    });
    // The first snapshot, which the session start began in the background, is not the agent's.
    const recs = ledgerRecords(box).filter((r) => r.agent);
    const c = byCall(recs);
    t.deepEqual(
      recs.filter((r) => r.kind === 'post').map((r) => r.call),
      ['call_u1_s0_0', 'call_u1_s1_0'],
    );
    t.false(
      recs.some((r) => r.call === 'call_u1_s2_0'),
      'the patch that failed to apply changed nothing: no checkpoint',
    );
    t.deepEqual(pathsOf(c.call_u1_s0_0), ['A keyed.txt']);
    t.deepEqual(pathsOf(c.call_u1_s1_0), ['M README.md']);
    later.add('input of an update patch', () => t.is(c.call_u1_s1_0.input, 'M README.md'), c.call_u1_s1_0.input);
    t.deepEqual([c.call_u1_s0_0.turn, c.call_u1_s0_0.step, c.call_u1_s1_0.step], [1, 1, 2]);
    t.true(recs.every((r) => r.session === session && r.agent === 'codex'));
    // Being added: commands and prompts redacted.
    later.add(
      'command redacted (NAME=value with KEY in NAME)',
      () => {
        t.false(String(c.call_u1_s0_0.input).includes(SECRET), String(c.call_u1_s0_0.input));
        t.regex(String(c.call_u1_s0_0.input), /SERVICE_API_KEY=/);
      },
      c.call_u1_s0_0.input,
    );
    const first = recs.find((r) => r.turn === 1);
    later.add(
      'prompt: present on the first record of turn 1, token redacted',
      () => {
        t.truthy(first?.prompt);
        t.false(String(first?.prompt).includes(SECRET), String(first?.prompt));
        t.true(String(first?.prompt).startsWith('[[ckpt u1]] Deploy with DEPLOY_TOKEN='), String(first?.prompt));
      },
      first?.prompt,
    );
    t.false(storeText(box).includes(SECRET), 'no secret anywhere in the store');
    t.is(gitDirFingerprint(box), fingerprint, "the user's .git is byte-identical");
    later.run();
  });

  test('codex: async handlers run detached (not skipped); --dangerously-bypass-hook-trust runs untrusted hooks for one invocation', async (t) => {
    const box = testSandbox(t);
    t.context.boxes.push(box);
    const server = await startCodexServer({
      a: { steps: [[{ shell: 'printf x > a.txt' }], [{ shell: 'sleep 1' }]], final: 'Done.' },
    });
    t.context.servers.push(server);
    writeCodexConfig(box, server.url);
    const marks = path.join(box.base, 'marks.txt');
    const hooksFile = path.join(box.home, '.codex', 'hooks.json');
    writeFileSync(
      hooksFile,
      JSON.stringify({
        hooks: {
          PostToolUse: [
            {
              matcher: '^Bash$',
              hooks: [
                { type: 'command', command: `echo async >> '${marks}'`, async: true, timeout: 30 },
                { type: 'command', command: `echo sync >> '${marks}'`, timeout: 30 },
              ],
            },
          ],
          Stop: [{ hooks: [{ type: 'command', command: `echo stop >> '${marks}'`, timeout: 30 }] }],
        },
      }),
    );
    const read = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean).sort() : []);

    await turn(t, 'bypass', box, '[[ckpt a]] go', { flags: ['--dangerously-bypass-hook-trust'] });
    const got = read();
    t.deepEqual(
      got.filter((m) => m !== 'async'),
      ['stop', 'sync', 'sync'],
      'untrusted hooks run under the flag',
    );
    // The first call's async handler had a whole second to finish; one still running when the
    // session ends is aborted, so the second may be missing.
    t.true(got.includes('async'), `async handlers run (detached), not skipped: ${got.join(' ')}`);
    t.false(readFileSync(configPath(box), 'utf8').includes('hooks.state'), 'the flag records no trust');

    writeFileSync(marks, '');
    await turn(t, 'no flag', box, '[[ckpt a]] go');
    t.deepEqual(read(), [], 'without the flag or a recorded trust nothing runs');

    const listed = await listHooks(box, agent.bin);
    t.deepEqual(listed.map((h) => `${h.eventName} async=${h.async} ${h.trustStatus}`).sort(), [
      'postToolUse async=false untrusted',
      'postToolUse async=true untrusted',
      'stop async=false untrusted',
    ]);
  });
});
