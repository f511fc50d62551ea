// GitHub Copilot CLI 1.0.102, for real, offline, against a scripted model server:
// git-ckpt's hooks installed by `git ckpt hooks install`, the checkpoints and their
// attribution, restore/undo byte-exact, the user's .git untouched, no secret in the store,
// and Copilot's folder-trust gate on project hooks.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  addresses,
  agentSuite,
  ckpt,
  ckptJson,
  git,
  gitDirFingerprint,
  ledgerRecords,
  removeSandbox,
  run,
  sandbox,
  storeText,
  testSandbox,
  workspaceFiles,
} from './harness.mjs';
import {
  copilotEnv,
  copilotTurn,
  linkRuntimeCache,
  readTrace,
  startCopilotModel,
  startProxyCatcher,
  traceEvents,
  trustFolder,
} from './copilot.mjs';

const SECRET = 'ckpt-SECRET-7d1e4b9a';
// Copilot's tool names; the same calls reach Claude-format hooks as Write / Edit / Bash.
const TOOL = { Write: 'create', Edit: 'edit', Bash: 'bash' };
const norm = (tool) => TOOL[tool] ?? tool;

/** CLI output per test, printed by afterEach when the test failed. */
const outputs = new Map();
function keep(t, label, r) {
  const list = outputs.get(t.title) ?? [];
  list.push(
    `--- ${label}: exit ${r.code}${r.signal ? ` (${r.signal})` : ''} in ${r.ms} ms\n$ copilot ${r.args?.join(' ') ?? ''}\nstdout:\n${r.stdout.slice(-4000)}\nstderr:\n${r.stderr.slice(-4000)}`,
  );
  outputs.set(t.title, list);
}
test.afterEach.always((t) => {
  // In a hook, t.title is "afterEach.always hook for <test title>".
  if (t.passed) return;
  for (const [title, lines] of outputs) if (t.title.endsWith(title)) for (const line of lines) t.log(line);
});

function bash(command, description) {
  return { name: 'bash', args: { command, description, mode: 'sync', initial_wait: 30 } };
}

/** The scripted session: turn 1 (new session) and turn 2 (resumed). Paths are absolute, as Copilot's tools take them. */
function mainScript(ws) {
  const f = (name) => path.join(ws, name);
  return {
    t1: [
      [{ name: 'create', args: { path: f('notes.txt'), file_text: 'alpha\nbeta\n' } }],
      [
        bash(
          "sed -i 's/alpha/ALPHA/' notes.txt && echo made > shell_made.txt && rm doomed.txt",
          'Edit notes.txt with sed, add a file, remove one',
        ),
      ],
      // Two tool calls in one model message.
      [{ name: 'create', args: { path: f('par_a.txt'), file_text: 'a\n' } }, bash('echo b > par_b.txt', 'Write par_b.txt')],
      [{ name: 'create', args: { path: f('.env'), file_text: `API_TOKEN=${SECRET}\n` } }],
      [bash('echo side > failed_side.txt; exit 3', 'Write a file, then fail')],
      [{ name: 'edit', args: { path: f('notes.txt'), old_str: 'not-in-the-file', new_str: 'x' } }],
      'Turn 1 done.',
    ],
    t2: [
      [{ name: 'edit', args: { path: f('notes.txt'), old_str: 'beta', new_str: 'gamma' } }],
      [bash(`API_TOKEN=${SECRET} sh -c 'sed -i s/ALPHA/omega/ notes.txt'`, 'Edit notes.txt from the shell')],
      'Turn 2 done.',
    ],
  };
}

const PROMPT1 = 'Turn one: files, shell and failures [[ckpt t1]]\nCreate notes.txt, run the shell commands, then try the failing ones.';
const PROMPT2 = 'Turn two: edit notes.txt again [[ckpt t2]]';

/**
 * Run the two-turn scenario with git-ckpt's hooks installed by `installArgs`.
 * Returns what the assertions need.
 */
async function scenario(t, { installArgs, trusted, afterInstall }) {
  const box = testSandbox(t);
  linkRuntimeCache(box, agent.version);
  writeFileSync(path.join(box.ws, 'doomed.txt'), 'to be removed by the shell\n');
  git(box, ['add', '-A']);
  git(box, ['commit', '-qm', 'doomed.txt']);
  const model = await startCopilotModel(mainScript(box.ws));
  const proxy = await startProxyCatcher();
  t.teardown(() => model.close());
  t.teardown(() => proxy.close());
  const traceFile = path.join(box.base, 'trace.jsonl');
  const env = copilotEnv(box, { model, proxy, trace: traceFile });

  const fingerprint = gitDirFingerprint(box);
  const inst = await ckpt(box, ['hooks', 'install', ...installArgs]);
  t.is(inst.code, 0, inst.stderr);
  if (trusted) trustFolder(box);
  afterInstall?.(box);

  const sessionId = randomUUID();
  const turn1 = await copilotTurn(agent, box, PROMPT1, { env, session: { id: sessionId } });
  keep(t, 'turn 1', turn1);
  t.is(turn1.code, 0, 'turn 1 exits 0');
  t.is(turn1.sessionId, sessionId, 'the CLI prints the session id it was given');
  const traceAfter1 = readTrace(traceFile).length;
  const before2 = workspaceFiles(box);

  const turn2 = await copilotTurn(agent, box, PROMPT2, { env, session: { resume: sessionId } });
  keep(t, 'turn 2', turn2);
  t.is(turn2.code, 0, 'turn 2 exits 0');
  t.is(turn2.sessionId, sessionId);
  const after2 = workspaceFiles(box);

  const trace = readTrace(traceFile);
  const records = ledgerRecords(box);
  t.log(`copilot turns: ${turn1.ms} ms, ${turn2.ms} ms; ${trace.length} hook events, ${records.length} records`);
  t.deepEqual(model.unexpected, [], 'every model request was scripted');
  t.deepEqual(proxy.caught, [], 'nothing tried to reach the network');
  t.deepEqual(
    model.answered.filter((a) => a.name === 't1').map((a) => a.index),
    [0, 1, 2, 3, 4, 5, 6],
    'turn 1 went through the whole script, one request per model message',
  );
  t.deepEqual(
    model.answered.filter((a) => a.name === 't2').map((a) => a.index),
    [0, 1, 2],
  );
  return { box, trace, traceAfter1, records, sessionId, before2, after2, fingerprint };
}

/** Copilot's own events, in order; the two parallel calls' four events sorted (their order is the CLI's). */
function copilotSequence(trace) {
  const seq = traceEvents(trace.filter((e) => e.agent === 'copilot' && e.phase !== 'session-start'));
  const par = seq.indexOf('copilot pre:create', seq.indexOf('copilot post:bash'));
  if (par >= 0) seq.splice(par, 4, ...seq.slice(par, par + 4).sort());
  return seq;
}

const EXPECTED_COPILOT_EVENTS = [
  'copilot turn-start',
  'copilot pre:create',
  'copilot post:create',
  'copilot pre:bash',
  'copilot post:bash',
  ...['copilot pre:create', 'copilot pre:bash', 'copilot post:create', 'copilot post:bash'].sort(),
  'copilot pre:create',
  'copilot post:create',
  'copilot pre:bash',
  'copilot post:bash',
  'copilot pre:edit',
  'copilot post:edit',
  'copilot turn-end',
  'copilot turn-start',
  'copilot pre:edit',
  'copilot post:edit',
  'copilot pre:bash',
  'copilot post:bash',
  'copilot turn-end',
];

const pathsOf = (r) => (r.paths ?? []).map((p) => `${p.status} ${p.path}`).sort();

/** The assertions both wirings share: the checkpoints, their attribution, restore, undo, .git, secrets. */
async function checkScenario(t, s) {
  const { box, trace, records, sessionId } = s;

  // Which hook events fired (Copilot's own).
  t.deepEqual(copilotSequence(trace), EXPECTED_COPILOT_EVENTS, 'Copilot fired every hook event, in order');
  t.is(trace.filter((e) => e.agent === 'copilot' && e.phase === 'session-start').length, 2, 'one sessionStart per CLI run');
  t.true(
    trace.every((e) => e.session === sessionId),
    'every event carries the session id',
  );
  const failedEdit = trace.find((e) => e.agent === 'copilot' && e.phase === 'post' && e.tool === 'edit' && e.payload?.error);
  t.is(failedEdit?.payload.error, 'No match found', 'the failed edit arrives as postToolUseFailure with `error`');
  t.is(failedEdit?.created, null, 'a failed edit changed nothing: no checkpoint');
  const failedShell = trace.find((e) => e.agent === 'copilot' && e.phase === 'post' && e.payload?.toolArgs?.command?.includes('exit 3'));
  t.is(failedShell?.payload.toolResult?.resultType, 'success', 'a non-zero shell exit is a postToolUse');
  t.regex(failedShell?.payload.toolResult?.textResultForLlm ?? '', /exit code 3/);

  // Attribution of every hook record.
  const hookRecords = records.filter((r) => r.agent || r.phase);
  t.true(hookRecords.length > 0);
  t.deepEqual([...new Set(hookRecords.map((r) => r.agent))], ['copilot'], 'the record says copilot, whichever config delivered the event');
  t.true(
    hookRecords.every((r) => r.session === sessionId),
    "session = Copilot's sessionId",
  );
  t.log(addresses(records).join(' '));

  // One checkpoint per real change: no two records with the same tree.
  const trees = records.map((r) => r.tree);
  t.is(new Set(trees).size, trees.length, 'no duplicate checkpoint of the same content');

  const posts = records.filter((r) => r.kind === 'post');
  const at = (turn, step) => posts.filter((r) => r.turn === turn && r.step === step);
  const one = (turn, step) => {
    const found = at(turn, step);
    t.is(found.length, 1, `one post checkpoint at turn ${turn} step ${step}`);
    return found[0] ?? {};
  };

  const create = one(1, 1);
  t.is(norm(create.tool), 'create');
  t.is(create.input, 'notes.txt');
  t.deepEqual(pathsOf(create), ['A notes.txt']);
  const firstOf = (turn) => records.find((r) => r.turn === turn) ?? {};
  t.is(firstOf(1).prompt, 'Turn one: files, shell and failures [[ckpt t1]]', "the first record of turn 1 carries the prompt's first line");

  const shell = one(1, 2);
  t.is(norm(shell.tool), 'bash');
  t.deepEqual(
    pathsOf(shell),
    ['A shell_made.txt', 'D doomed.txt', 'M notes.txt'],
    "the shell call's own post checkpoint holds its side effects",
  );
  t.is(shell.input, "sed -i 's/alpha/ALPHA/' notes.txt && echo made > shell_made.txt && rm doomed.txt");

  // Parallel calls: Copilot fires both pre hooks, runs both tools, then both post hooks,
  // so the first post checkpoint may already hold both files; each file is captured once.
  const par = posts.filter((r) => r.turn === 1 && (r.step === 3 || r.step === 4));
  t.true(par.length >= 1 && par.length <= 2, 'the parallel calls make one or two checkpoints');
  t.deepEqual(par.flatMap(pathsOf).sort(), ['A par_a.txt', 'A par_b.txt']);

  t.is(at(1, 5).length, 0, 'creating .env (never stored) makes no checkpoint');

  const failing = one(1, 6);
  t.is(norm(failing.tool), 'bash');
  t.deepEqual(pathsOf(failing), ['A failed_side.txt'], "a failing command's side effect is captured");
  t.is(failing.failed, true, 'failed: true on the failing shell call (exit code 3)');
  t.regex(String(failing.error ?? ''), /3/, "error: the failure's first line");
  t.is(at(1, 7).length, 0, 'the failed edit made no checkpoint');

  const edit2 = one(2, 1);
  t.is(norm(edit2.tool), 'edit');
  t.deepEqual(pathsOf(edit2), ['M notes.txt']);
  t.is(
    firstOf(2).prompt,
    'Turn two: edit notes.txt again [[ckpt t2]]',
    'the resumed turn is turn 2 and its first record carries its prompt',
  );
  const shell2 = one(2, 2);
  t.is(norm(shell2.tool), 'bash');
  t.deepEqual(pathsOf(shell2), ['M notes.txt']);
  t.is(shell2.input, "API_TOKEN=[REDACTED] sh -c 'sed -i s/ALPHA/omega/ notes.txt'", 'the command is redacted');
  t.is(posts.length, 7 - (par.length === 1 ? 1 : 0), 'no other post checkpoint');
  t.false(
    records.some((r) => (r.turn ?? 0) > 2),
    'two user prompts, two turns',
  );

  // The store keeps no secret, in any form.
  t.false(storeText(box).includes(SECRET), 'the secret is nowhere in the store');
  t.false(JSON.stringify(records).includes(SECRET));

  // `git ckpt log` sees the session.
  const log = await ckptJson(box, ['log', '--json', '--all']);
  t.is(log.length, records.length);

  // Rewind to just before turn 2, byte-exact; undo brings turn 2 back.
  const restore = await ckpt(box, ['restore', 'turn:2', '--delete-new']);
  t.is(restore.code, 0, restore.stderr);
  t.deepEqual(workspaceFiles(box), s.before2, 'restore turn:2 gives back the workspace as it was before turn 2');
  const undo = await ckpt(box, ['undo']);
  t.is(undo.code, 0, undo.stderr);
  t.deepEqual(workspaceFiles(box), s.after2, 'undo gives back the workspace after turn 2');

  t.is(gitDirFingerprint(box), s.fingerprint, "the user's .git is byte-identical");
}

// Module-level helpers read `agent`; they run inside the suite's tests only, once it is installed.
const agent = agentSuite(test, 'copilot', 'copilot: the real CLI', () => {
  /** Warm the runtime cache once (the first launch unpacks ~235 MB), so concurrent tests do not both unpack it. */
  test.before(async () => {
    const box = sandbox('warmup');
    try {
      linkRuntimeCache(box, agent.version);
      await run(agent.bin, ['--version'], {
        cwd: box.ws,
        env: { ...box.env, COPILOT_AUTO_UPDATE: 'false', COPILOT_OFFLINE: 'true' },
        timeoutMs: 300_000,
      });
    } finally {
      await removeSandbox(box);
    }
  });

  test('copilot: --agent copilot at user scope, untrusted folder: file tool, shell side effects, parallel calls, failures, resumed turn, restore, undo', async (t) => {
    const s = await scenario(t, { installArgs: ['--agent', 'copilot', '--scope', 'user'], trusted: false });
    t.true(existsSync(path.join(s.box.home, '.copilot', 'hooks', 'git-ckpt.json')), 'user-scope hooks live in ~/.copilot/hooks');
    t.false(existsSync(path.join(s.box.ws, '.github')), 'nothing written in the workspace');
    const config = path.join(s.box.home, '.copilot', 'config.json');
    t.false(
      existsSync(config) && readFileSync(config, 'utf8').includes(s.box.ws),
      'the folder was never trusted: user hooks need no trust',
    );
    t.false(
      s.trace.some((e) => e.agent !== 'copilot'),
      'only Copilot-format events',
    );
    await checkScenario(t, s);
  });

  test('copilot: --agent all at project scope, trusted folder: Claude-config events ride along, counted once, agent stays copilot', async (t) => {
    const s = await scenario(t, { installArgs: ['--agent', 'all', '--scope', 'project'], trusted: true });
    const claude = s.trace.filter((e) => e.agent === 'claude');
    const copilot = s.trace.filter((e) => e.agent === 'copilot');
    t.log(`Claude-format events: ${traceEvents(claude).join(', ')}`);
    // Every Claude-format event is the twin of a Copilot event: same session, same phase, same millisecond.
    for (const e of claude) {
      const ms = Date.parse(e.payload?.timestamp);
      const twin = copilot.find((c) => c.phase === e.phase && c.payload?.timestamp === ms && (e.tool === null || norm(e.tool) === c.tool));
      t.truthy(twin, `claude ${e.phase} ${e.tool ?? ''} at ${e.payload?.timestamp} has a copilot twin`);
      t.is(e.session, s.sessionId);
    }
    for (const phase of ['session-start', 'turn-start', 'turn-end']) {
      t.is(claude.filter((e) => e.phase === phase).length, 2, `Claude's ${phase} hook fires too, once per run`);
    }
    t.true(
      claude.some((e) => e.phase === 'post' && e.payload?.hook_event_name === 'PostToolUseFailure'),
      "Claude's PostToolUseFailure fires for the failed edit",
    );
    await checkScenario(t, s);
  });

  test('copilot: --agent all with Claude\'s tool hooks on matcher "*": every tool event arrives twice, counted once', async (t) => {
    // hooks/claude.json (and Claude's own docs) use matcher "*"; Copilot honours it on
    // Claude-format hooks, so then every pre and post reaches git-ckpt twice.
    const s = await scenario(t, {
      installArgs: ['--agent', 'all', '--scope', 'project'],
      trusted: true,
      afterInstall: (box) => {
        const file = path.join(box.ws, '.claude', 'settings.local.json');
        const settings = JSON.parse(readFileSync(file, 'utf8'));
        for (const groups of Object.values(settings.hooks)) for (const g of groups) if ('matcher' in g) g.matcher = '*';
        writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
      },
    });
    const claude = s.trace.filter((e) => e.agent === 'claude');
    const copilot = s.trace.filter((e) => e.agent === 'copilot');
    const key = (e) =>
      `${e.phase} ${norm(e.tool ?? '')} ${typeof e.payload?.timestamp === 'number' ? e.payload.timestamp : Date.parse(e.payload?.timestamp)}`;
    t.deepEqual(
      claude.map(key).sort(),
      copilot.map(key).sort(),
      'every event arrives twice: once per format, same phase, tool and millisecond',
    );
    await checkScenario(t, s);
  });

  test('copilot: project hooks fire only in a trusted folder (--trust-folder, COPILOT_ALLOW_ALL=true, trustedFolders in ~/.copilot/config.json)', async (t) => {
    const box = testSandbox(t);
    linkRuntimeCache(box, agent.version);
    const f = (name) => path.join(box.ws, name);
    const script = {};
    for (const name of ['untrusted', 'flag', 'allowall', 'config'])
      script[name] = [[{ name: 'create', args: { path: f(`${name}.txt`), file_text: `${name}\n` } }], 'Done.'];
    const model = await startCopilotModel(script);
    const proxy = await startProxyCatcher();
    t.teardown(() => model.close());
    t.teardown(() => proxy.close());
    const traceFile = path.join(box.base, 'trace.jsonl');
    const env = copilotEnv(box, { model, proxy, trace: traceFile });
    const inst = await ckpt(box, ['hooks', 'install', '--agent', 'copilot', '--scope', 'project']);
    t.is(inst.code, 0, inst.stderr);
    const configFile = path.join(box.home, '.copilot', 'config.json');
    const events = () => traceEvents(readTrace(traceFile));
    const created = (name) => ledgerRecords(box).filter((r) => (r.paths ?? []).some((p) => p.path === `${name}.txt`));

    // 1. Untrusted: the tool runs, no project hook does.
    const id1 = randomUUID();
    const r1 = await copilotTurn(agent, box, 'untrusted [[ckpt untrusted]]', { env, session: { id: id1 } });
    keep(t, 'untrusted', r1);
    t.is(r1.code, 0);
    t.true(existsSync(f('untrusted.txt')), 'the tool ran');
    t.deepEqual(events(), [], 'untrusted folder: no project hook fired');
    t.deepEqual(
      ledgerRecords(box).filter((r) => r.agent),
      [],
    );
    const verdict = async () => (await ckptJson(box, ['hooks', 'status', '--agent', 'copilot', '--scope', 'project', '--json']))[0].verdict;
    const untrusted = await verdict();
    t.is(untrusted.runs, 'no', 'hooks status tells that Copilot will not run project hooks here');
    t.regex(untrusted.step, /--trust-folder/);

    // 2. --trust-folder: trusted for this one new session, nothing saved.
    const r2 = await copilotTurn(agent, box, 'flag [[ckpt flag]]', { env, trustFolder: true });
    keep(t, '--trust-folder', r2);
    t.is(r2.code, 0);
    t.true(events().includes('copilot post:create'), '--trust-folder: the project hooks fire');
    t.is(created('flag').length, 1, 'and checkpoint the change');
    t.false(existsSync(configFile) && readFileSync(configFile, 'utf8').includes('trustedFolders'), '--trust-folder saves no trust');
    const rx = await copilotTurn(agent, box, 'resume [[ckpt flag]]', { env, session: { resume: id1 }, trustFolder: true });
    keep(t, '--trust-folder with --resume', rx);
    t.not(rx.code, 0, '--trust-folder cannot be combined with --resume');

    // 3. COPILOT_ALLOW_ALL=true (exactly "true") trusts the working directory too.
    let before = events().length;
    const r3 = await copilotTurn(agent, box, 'allow all [[ckpt allowall]]', {
      env: { ...env, COPILOT_ALLOW_ALL: 'true' },
      session: { id: randomUUID() },
    });
    keep(t, 'COPILOT_ALLOW_ALL=true', r3);
    t.true(events().slice(before).includes('copilot post:create'), 'COPILOT_ALLOW_ALL=true: the project hooks fire');

    // 4. Saved trust, as the trust dialog records it: ~/.copilot/config.json `trustedFolders`; it also covers resumed sessions.
    trustFolder(box);
    t.is((await verdict()).runs, 'yes', "hooks status reads Copilot's trustedFolders");
    before = events().length;
    const r4 = await copilotTurn(agent, box, 'config [[ckpt config]]', { env, session: { resume: id1 } });
    keep(t, 'trustedFolders', r4);
    t.is(r4.code, 0);
    const fired = events().slice(before);
    t.true(
      fired.includes('copilot turn-start') && fired.includes('copilot post:create'),
      'trustedFolders: the project hooks fire, resumed session included',
    );
    t.is(created('config').length, 1);
    t.deepEqual(model.unexpected, []);
    t.deepEqual(proxy.caught, []);
  });
});
