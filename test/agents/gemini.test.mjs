// Gemini CLI 0.61.0, for real, offline: git-ckpt's hooks installed by `git ckpt hooks install`,
// the CLI run headless (`-p … --approval-mode yolo`, then `--resume latest`) against the
// scripted model server of ./gemini.mjs. Three sandboxes:
//   A. project scope, two turns: write_file, a shell command that sed-edits, creates and
//      deletes, three calls in one model message, a failing command; then a resumed turn
//      with replace and a shell edit. Attribution, one checkpoint per change, secrets,
//      restore turn:2 / undo byte-exact, the user's .git untouched.
//   B. user scope: an untrusted folder first (headless Gemini refuses to start), then a
//      trusted one with a read-only call and parallel writes; a regex matcher probe shows
//      which tool names `^(write_file|replace|run_shell_command)$` selects.
//   C. strict environment sanitization (GITHUB_SHA set, as in GitHub Actions): Gemini strips
//      GIT_CKPT_HOOK_TRACE (and XDG_STATE_HOME, GIT_CKPT_HOME) from the hook environment;
//      `security.environmentVariableRedaction.allowed` brings them back.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  agentSuite,
  ckpt,
  ckptJson,
  git,
  gitDirFingerprint,
  ledgerRecords,
  removeSandbox,
  sandbox,
  storeText,
  workspaceFiles,
} from './harness.mjs';
import { configureGemini, describeRun, readTrace, runGeminiTurn, startGeminiServer } from './gemini.mjs';

const boxes = [];
const servers = [];

/** A promise computed once, on first use, shared by the tests that read it. */
function once(fn) {
  let p = null;
  return () => (p ??= fn());
}

const sorted = (a) => [...a].sort();
const pathList = (rec) => sorted((rec?.paths ?? []).map((p) => `${p.status} ${p.path}`));
const traceAddr = (e) => `${e.phase}${e.tool ? `:${e.tool}` : ''}`;
const secret = (label) => `${label}-${randomBytes(9).toString('hex')}`;

/** A session's hook records (those an agent hook made), oldest first. */
const hookRecords = (records) => records.filter((r) => r.agent);

test.afterEach.always((t) => {
  if (!t.passed) for (const line of t.context.logs ?? []) t.log(line);
});

test.after.always(async () => {
  for (const s of servers) await s.close();
  if (!process.env.GIT_CKPT_KEEP_SANDBOX) for (const b of boxes) await removeSandbox(b);
});

// ---------------------------------------------------------------------------------------------
// A. Project scope, two turns.
// ---------------------------------------------------------------------------------------------

const A = {
  secretEnv: secret('envsecret'),
  secretCmd: secret('cmdsecret'),
  secretPrompt: secret('promptsecret'),
};
A.shell1 = "sed -i 's/alpha/ALPHA/' notes.txt && echo made > shell_made.txt && rm doomed.txt";
A.shellPar = 'echo b > par_b.txt';
A.shellFail = 'echo partial > fail_made.txt && exit 3';
A.shell2 = `DEPLOY_TOKEN=${A.secretCmd} sh -c 'echo more >> par_b.txt' && sed -i 's/ALPHA/OMEGA/' notes.txt`;
A.prompt1 = 'Turn one: notes.txt, a shell edit, parallel writes, a failing command [[ckpt a1]]';
A.prompt2 = `Turn two: edit notes.txt and par_b.txt; deploy with API_TOKEN=${A.secretPrompt} [[ckpt a2]]`;
A.scripts = {
  a1: [
    { calls: [{ name: 'write_file', args: { file_path: 'notes.txt', content: 'alpha\nbeta\n' } }] },
    { calls: [{ name: 'run_shell_command', args: { command: A.shell1, description: 'edit notes, create and delete files' } }] },
    {
      calls: [
        { name: 'write_file', args: { file_path: 'par_a.txt', content: 'a\n' } },
        // A secret file (never stored). Not .env: Gemini refuses write_file on .env at validation, and a
        // call refused there fires no hook at all.
        {
          name: 'write_file',
          args: { file_path: 'deploy.pem', content: `-----BEGIN PRIVATE KEY-----\n${A.secretEnv}\n-----END PRIVATE KEY-----\n` },
        },
        { name: 'run_shell_command', args: { command: A.shellPar, description: 'create par_b.txt' } },
      ],
    },
    { calls: [{ name: 'run_shell_command', args: { command: A.shellFail, description: 'create a file, then fail' } }] },
    { text: 'Turn 1 done.' },
  ],
  a2: [
    {
      calls: [
        {
          name: 'replace',
          args: { file_path: 'notes.txt', instruction: 'Replace beta with gamma.', old_string: 'beta', new_string: 'gamma' },
        },
      ],
    },
    { calls: [{ name: 'run_shell_command', args: { command: A.shell2, description: 'append and edit' } }] },
    { text: 'Turn 2 done.' },
  ],
};

const sessionA = once(async () => {
  const box = sandbox('project-a');
  boxes.push(box);
  const logs = [`sandbox A: ${box.base}`];
  writeFileSync(path.join(box.ws, 'doomed.txt'), 'to be deleted by the shell\n');
  git(box, ['add', 'doomed.txt']);
  git(box, ['commit', '-qm', 'doomed']);
  const fpBefore = gitDirFingerprint(box);

  const install = await ckpt(box, ['hooks', 'install', '--agent', 'gemini', '--scope', 'project']);
  logs.push(`hooks install: ${install.code} ${install.stdout}${install.stderr}`);
  const statusUntrusted = await ckptJson(box, ['hooks', 'status', '--json']);
  const server = await startGeminiServer(A.scripts);
  servers.push(server);
  const env = configureGemini(box, server);
  const statusTrusted = await ckptJson(box, ['hooks', 'status', '--json']);
  const traceFile = path.join(box.base, 'trace.jsonl');
  env.GIT_CKPT_HOOK_TRACE = traceFile;

  const r1 = await runGeminiTurn(agent, box, env, A.prompt1);
  logs.push(describeRun('gemini turn 1', r1));
  const trace1Len = readTrace(traceFile).length;
  const before2 = workspaceFiles(box);
  const r2 = await runGeminiTurn(agent, box, env, A.prompt2, { resume: true });
  logs.push(describeRun('gemini turn 2 (--resume latest)', r2));
  logs.push(`server turns: ${JSON.stringify(server.turns)}`);
  if (server.unexpected.length) logs.push(`unexpected requests: ${JSON.stringify(server.unexpected).slice(0, 4000)}`);
  const after2 = workspaceFiles(box);
  const trace = readTrace(traceFile);
  const records = ledgerRecords(box);
  logs.push(`trace: ${JSON.stringify(trace.map((e) => `${traceAddr(e)} created=${e.created}`))}`);
  logs.push(
    `ledger: ${JSON.stringify(
      records.map((r) => ({ ...r, tree: undefined, parent: undefined })),
      null,
      1,
    ).slice(0, 8000)}`,
  );
  return {
    box,
    server,
    env,
    install,
    statusUntrusted,
    statusTrusted,
    r1,
    r2,
    trace,
    trace1: trace.slice(0, trace1Len),
    trace2: trace.slice(trace1Len),
    records,
    store: storeText(box),
    before2,
    after2,
    fpBefore,
    logs,
  };
});

// ---------------------------------------------------------------------------------------------
// B. User scope, an untrusted folder first, a regex matcher probe.
// ---------------------------------------------------------------------------------------------

const B = { matcher: '^(write_file|replace|run_shell_command)$' };
B.prompt = 'User scope: read README.md, then write u.txt and edit README.md together [[ckpt b1]]';
B.scripts = {
  b1: [
    { calls: [{ name: 'read_file', args: { file_path: 'README.md' } }] },
    {
      calls: [
        { name: 'write_file', args: { file_path: 'u.txt', content: 'u\n' } },
        {
          name: 'replace',
          args: { file_path: 'README.md', instruction: 'Rename the title.', old_string: '# project', new_string: '# project B' },
        },
      ],
    },
    { text: 'User scope done.' },
  ],
};

const sessionB = once(async () => {
  const box = sandbox('project-b');
  boxes.push(box);
  const logs = [`sandbox B: ${box.base}`];
  const fpBefore = gitDirFingerprint(box);
  const install = await ckpt(box, ['hooks', 'install', '--agent', 'gemini', '--scope', 'user']);
  logs.push(`hooks install --scope user: ${install.code} ${install.stdout}${install.stderr}`);
  const status = await ckptJson(box, ['hooks', 'status', '--json']);
  const server = await startGeminiServer(B.scripts);
  servers.push(server);
  const traceFile = path.join(box.base, 'trace.jsonl');

  // 1. Not in trustedFolders.json: headless Gemini refuses to start (folder trust is on by default).
  const envUntrusted = { ...configureGemini(box, server, { trust: false }), GIT_CKPT_HOOK_TRACE: traceFile };
  const untrusted = await runGeminiTurn(agent, box, envUntrusted, B.prompt);
  logs.push(describeRun('gemini in an untrusted folder', untrusted));
  const traceUntrusted = readTrace(traceFile);
  const requestsUntrusted = server.requests.length;
  const statusUntrusted = await ckptJson(box, ['hooks', 'status', '--json']);

  // 2. Trusted, with a probe hook next to git-ckpt's: a BeforeTool definition with a regex matcher.
  const env = { ...configureGemini(box, server), GIT_CKPT_HOOK_TRACE: traceFile };
  const statusTrusted = await ckptJson(box, ['hooks', 'status', '--json']);
  const settingsFile = path.join(box.home, '.gemini', 'settings.json');
  const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
  const probeFile = path.join(box.base, 'probe.jsonl');
  settings.hooks.BeforeTool.push({
    matcher: B.matcher,
    hooks: [{ name: 'matcher-probe', type: 'command', command: `(cat; echo) >> '${probeFile}'; echo '{}'`, timeout: 10000 }],
  });
  writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
  const r1 = await runGeminiTurn(agent, box, env, B.prompt);
  logs.push(describeRun('gemini (trusted, user-scope hooks)', r1));
  logs.push(`server turns: ${JSON.stringify(server.turns)}`);
  const probe = existsSync(probeFile) ? readTrace(probeFile) : [];
  const trace = readTrace(traceFile);
  const records = ledgerRecords(box);
  logs.push(`trace: ${JSON.stringify(trace.map((e) => `${traceAddr(e)} created=${e.created}`))}`);
  logs.push(`probe: ${JSON.stringify(probe.map((p) => p.tool_name))}`);
  logs.push(
    `ledger: ${JSON.stringify(
      records.map((r) => ({ ...r, tree: undefined, parent: undefined })),
      null,
      1,
    ).slice(0, 6000)}`,
  );
  return {
    box,
    server,
    install,
    status,
    statusUntrusted,
    statusTrusted,
    untrusted,
    traceUntrusted,
    requestsUntrusted,
    r1,
    probe,
    trace,
    records,
    fpBefore,
    fpAfter: gitDirFingerprint(box),
    files: workspaceFiles(box),
    logs,
  };
});

// ---------------------------------------------------------------------------------------------
// C. Strict environment sanitization (GitHub Actions).
// ---------------------------------------------------------------------------------------------

const C = {
  prompt1: 'Strict env: write c.txt [[ckpt c1]]',
  prompt2: 'Strict env, allowed list: write d.txt [[ckpt c2]]',
  scripts: {
    c1: [{ calls: [{ name: 'write_file', args: { file_path: 'c.txt', content: 'c\n' } }] }, { text: 'c1 done.' }],
    c2: [{ calls: [{ name: 'write_file', args: { file_path: 'd.txt', content: 'd\n' } }] }, { text: 'c2 done.' }],
  },
};

const sessionC = once(async () => {
  const box = sandbox('project-c');
  boxes.push(box);
  const logs = [`sandbox C: ${box.base}`];
  await ckpt(box, ['hooks', 'install', '--agent', 'gemini', '--scope', 'project']);
  const server = await startGeminiServer(C.scripts);
  servers.push(server);
  const traceFile = path.join(box.base, 'trace.jsonl');
  // GITHUB_SHA (or SURFACE=Github) switches Gemini's sanitizeEnvironment to strict mode.
  const strict = { GITHUB_SHA: '0123456789abcdef0123456789abcdef01234567', GIT_CKPT_HOOK_TRACE: traceFile };
  const env1 = { ...configureGemini(box, server), ...strict };
  const r1 = await runGeminiTurn(agent, box, env1, C.prompt1);
  logs.push(describeRun('gemini, strict sanitization', r1));
  const trace1 = readTrace(traceFile);
  const records1 = ledgerRecords(box);
  // With the daemon on, it traces with the environment it was started with (a request never names the
  // file): the one turn 1's hooks started had no trace, so turn 2's first hook starts another. A second
  // daemon one of turn 1's hooks spawned while the first was starting waits for its lock (2 s) and takes
  // over when the first stops: stopped until none is left.
  if (process.env.GIT_CKPT_TEST_DAEMON === '1')
    for (let i = 0; i < 5 && (await ckpt(box, ['daemon', 'stop'])).stdout.trim() === 'stopped'; i++)
      await new Promise((resolve) => setTimeout(resolve, 2500));
  // The documented way out: security.environmentVariableRedaction.allowed.
  const env2 = {
    ...configureGemini(box, server, {
      extraSettings: {
        security: { auth: { selectedType: 'gemini-api-key' }, environmentVariableRedaction: { allowed: ['GIT_CKPT_HOOK_TRACE'] } },
      },
    }),
    ...strict,
  };
  const r2 = await runGeminiTurn(agent, box, env2, C.prompt2, { resume: true });
  logs.push(describeRun('gemini, strict sanitization, allowed list', r2));
  const trace2 = readTrace(traceFile);
  const records2 = ledgerRecords(box);
  logs.push(`trace: ${JSON.stringify(trace2.map(traceAddr))}`);
  logs.push(`ledger: ${JSON.stringify(records2.map((r) => `${r.phase}:${r.tool}:${r.input}`))}`);
  return { box, r1, r2, trace1, records1, trace2, records2, logs };
});

// ---------------------------------------------------------------------------------------------

// The sessions above read `agent`; they run inside the suite's tests only, once it is installed.
const agent = agentSuite(test, 'gemini', 'gemini: the real CLI', () => {
  test.serial('A: both turns run to the end against the scripted server, in one resumed session', async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    t.is(s.install.code, 0);
    t.true(
      existsSync(path.join(s.box.ws, '.gemini', 'settings.json')),
      'project-scope install writes .gemini/settings.json in the workspace',
    );
    const verdict = (status) => status.find((x) => x.agent === 'gemini' && x.scope === 'project')?.verdict;
    t.is(verdict(s.statusUntrusted)?.runs, 'no', 'hooks status: not before the folder is trusted');
    t.is(verdict(s.statusTrusted)?.runs, 'yes', 'hooks status: yes once ~/.gemini/trustedFolders.json trusts it');
    t.is(s.r1.code, 0);
    t.is(s.r2.code, 0);
    t.is(s.r1.json?.response, 'Turn 1 done.');
    t.is(s.r2.json?.response, 'Turn 2 done.');
    t.truthy(s.r1.sessionId);
    t.is(s.r2.sessionId, s.r1.sessionId, '--resume latest continues the same session id');
    t.deepEqual(
      s.server.turns.map((x) => `${x.name}.${x.step}`),
      ['a1.0', 'a1.1', 'a1.2', 'a1.3', 'a1.4', 'a2.0', 'a2.1', 'a2.2'],
      'every scripted step was requested exactly once',
    );
    // Side requests (generateContent for a classifier or a next-speaker check) are answered and logged;
    // with an explicit model and the default skipNextSpeakerCheck, 0.61 sends none. No unknown endpoint.
    t.deepEqual(
      s.server.unexpected.filter((u) => u.why === 'unknown endpoint'),
      [],
    );
    // The workspace the scripted tools produced.
    t.is(readFileSync(path.join(s.box.ws, 'notes.txt'), 'utf8'), 'OMEGA\ngamma\n');
    t.is(readFileSync(path.join(s.box.ws, 'par_b.txt'), 'utf8'), 'b\nmore\n');
    t.false(existsSync(path.join(s.box.ws, 'doomed.txt')));
    t.true(existsSync(path.join(s.box.ws, 'fail_made.txt')));
  });

  test.serial('A: hook events, in order (SessionStart, BeforeAgent, BeforeTool/AfterTool per call, AfterAgent)', async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    const t1 = s.trace1.map(traceAddr);
    t.deepEqual(t1.slice(0, 6), [
      'session-start',
      'turn-start',
      'pre:write_file',
      'post:write_file',
      'pre:run_shell_command',
      'post:run_shell_command',
    ]);
    // The three calls of one model message: Gemini runs them one after the other (pre, post, pre, post…).
    const par = t1.slice(6, 12);
    t.deepEqual(
      sorted(par),
      sorted(['pre:write_file', 'post:write_file', 'pre:write_file', 'post:write_file', 'pre:run_shell_command', 'post:run_shell_command']),
    );
    for (let i = 0; i < par.length; i += 2) t.is(par[i].replace(/^pre/, 'post'), par[i + 1], 'each pre is followed by its own post');
    t.deepEqual(t1.slice(12), ['pre:run_shell_command', 'post:run_shell_command', 'turn-end']);
    t.deepEqual(s.trace2.map(traceAddr), [
      'session-start',
      'turn-start',
      'pre:replace',
      'post:replace',
      'pre:run_shell_command',
      'post:run_shell_command',
      'turn-end',
    ]);
    // Payload facts: Gemini's event names, the session id on every event, the resume source, no tool-call or turn id.
    const events = s.trace.map((e) => e.payload.hook_event_name);
    t.deepEqual([...new Set(events)].sort(), ['AfterAgent', 'AfterTool', 'BeforeAgent', 'BeforeTool', 'SessionStart']);
    for (const e of s.trace) {
      t.is(e.agent, 'gemini');
      t.is(e.payload.session_id, s.r1.sessionId);
      t.is(e.session, s.r1.sessionId);
      t.falsy(e.payload.tool_use_id ?? e.payload.tool_call_id ?? e.payload.prompt_id ?? e.payload.turn_id);
      t.is(typeof e.payload.transcript_path, 'string');
    }
    t.is(s.trace1[0].payload.source, 'startup');
    t.is(s.trace2[0].payload.source, 'resume');
    t.is(s.trace1[1].payload.prompt, A.prompt1, 'BeforeAgent carries the prompt');
    t.is(s.trace2[1].payload.prompt, A.prompt2);
  });

  test.serial("A: one checkpoint per real change, shell side effects in the shell call's own post", async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    // Every pre finds nothing new (nothing happened between calls); every post of a call that changed a captured file creates one.
    for (const e of s.trace.filter((x) => x.phase === 'pre')) t.is(e.created, null, `pre ${e.tool} created nothing`);
    const posts = s.trace.filter((x) => x.phase === 'post');
    const byInput = (pred) => posts.filter((e) => pred(e.payload.tool_input ?? {}));
    const envPost = byInput((i) => i.file_path === 'deploy.pem');
    t.is(envPost.length, 1);
    t.is(envPost[0]?.created, null, 'writing only a secret file (*.pem, never stored) makes no checkpoint');
    const changing = posts.filter((e) => e !== envPost[0]);
    t.is(changing.length, 7);
    for (const e of changing)
      t.truthy(e.created, `post ${e.tool} ${JSON.stringify(e.payload.tool_input).slice(0, 80)} created a checkpoint`);
    const hooks = hookRecords(s.records);
    const ids = new Set(hooks.map((r) => r.id));
    for (const e of changing) t.true(ids.has(e.created), 'the traced checkpoint id is in the ledger');
    // No two checkpoints of the same content.
    const trees = s.records.map((r) => r.tree);
    t.is(new Set(trees).size, trees.length, 'every checkpoint has a tree of its own');

    const post = hooks.filter((r) => r.kind === 'post');
    t.deepEqual(
      post.map((r) => `${r.turn}:${r.tool}`),
      [
        '1:write_file',
        '1:run_shell_command',
        '1:write_file',
        '1:run_shell_command',
        '1:run_shell_command',
        '2:replace',
        '2:run_shell_command',
      ],
    );
    const [write1, shell1, parA, parB, fail, replace, shell2] = post;
    t.deepEqual(pathList(write1), ['A notes.txt']);
    t.deepEqual(
      pathList(shell1),
      ['A shell_made.txt', 'D doomed.txt', 'M notes.txt'],
      "sed -i, the new file and the rm are all in the shell call's post",
    );
    t.deepEqual(pathList(parA), ['A par_a.txt']);
    t.deepEqual(pathList(parB), ['A par_b.txt']);
    t.deepEqual(pathList(fail), ['A fail_made.txt'], "the failing command's file is captured by its own post");
    t.deepEqual(pathList(replace), ['M notes.txt']);
    t.deepEqual(pathList(shell2), ['M notes.txt', 'M par_b.txt']);
    t.deepEqual(shell1.stats, { added: 1, modified: 1, deleted: 1 });
  });

  test.serial('A: attribution (session, turn from user prompts, step, tool, no call id, input summaries)', async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    const hooks = hookRecords(s.records);
    for (const r of hooks) {
      t.is(r.agent, 'gemini');
      t.is(r.session, s.r1.sessionId, "the session id is Gemini's own");
      t.falsy(r.call, 'Gemini sends no tool-call id');
    }
    const post = hooks.filter((r) => r.kind === 'post');
    for (const turn of [1, 2]) {
      const steps = post.filter((r) => r.turn === turn).map((r) => r.step);
      t.true(
        steps.every((x) => Number.isInteger(x) && x >= 1),
        `turn ${turn}: steps are numbers`,
      );
      t.deepEqual(
        steps,
        [...steps].sort((a, b) => a - b),
        `turn ${turn}: steps grow`,
      );
      t.is(new Set(steps).size, steps.length, `turn ${turn}: one step per call`);
    }
    // Turn 1 has 6 calls (the deploy.pem write makes no checkpoint): the failing command is step 6.
    t.deepEqual(
      post.filter((r) => r.turn === 1).map((r) => r.step),
      [1, 2, 3, 5, 6],
    );
    t.deepEqual(
      post.filter((r) => r.turn === 2).map((r) => r.step),
      [1, 2],
    );
    const [write1, shell1, parA, , , replace, shell2] = post;
    t.is(write1.input, 'notes.txt');
    t.is(parA.input, 'par_a.txt');
    t.is(shell1.input, A.shell1);
    t.true(replace.input.startsWith('notes.txt'), 'replace is summarized by its file');
    t.false(/gamma|beta/.test(replace.input), "input never carries the edit's content");
    t.false(shell2.input.includes(A.secretCmd), 'NAME=value with TOKEN in NAME is redacted in the command');
    t.true(shell2.input.includes('DEPLOY_TOKEN=[REDACTED]'));
  });

  test.serial('A: failed shell command: failed + error on its post, other posts not failed', async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    const post = hookRecords(s.records).filter((r) => r.kind === 'post');
    const fail = post.find((r) => r.input === A.shellFail);
    t.truthy(fail);
    // Gemini sends no error field for a non-zero exit: only `Exit Code: 3` in tool_response.llmContent
    // (and `Command exited with code: 3` in returnDisplay when there is no output).
    const payload = s.trace.find((e) => e.phase === 'post' && e.payload.tool_input?.command === A.shellFail).payload;
    t.regex(payload.tool_response.llmContent, /^Exit Code: 3$/m);
    t.is(payload.tool_response.error, undefined);
    t.is(fail?.failed, true, "the failing command's post is marked failed");
    t.regex(String(fail?.error), /3/, 'error is the first line naming the exit code');
    for (const r of post.filter((x) => x !== fail)) t.falsy(r.failed, `${r.tool} ${r.input} did not fail`);
  });

  test.serial('A: turn titles, agentTurn and transcript on hook records', async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    const hooks = hookRecords(s.records);
    const first1 = hooks.find((r) => r.turn === 1);
    const first2 = hooks.find((r) => r.turn === 2);
    t.is(first1?.prompt, A.prompt1, 'the first record of turn 1 carries its title');
    t.truthy(first2?.prompt);
    t.true(
      String(first2?.prompt).startsWith('Turn two: edit notes.txt and par_b.txt; deploy with API_TOKEN=[REDACTED]'),
      'the title is redacted',
    );
    t.false(String(first2?.prompt).includes(A.secretPrompt));
    for (const r of hooks.filter((x) => x.turn === 1 || x.turn === 2)) {
      if (r !== first1 && r !== first2) t.falsy(r.prompt, 'only the first record of a turn has a title');
    }
    const transcriptOf = new Map(s.trace.filter((e) => e.created).map((e) => [e.created, e.payload.transcript_path]));
    for (const r of hooks) {
      t.falsy(r.agentTurn, 'Gemini has no turn id');
      t.is(r.transcript, transcriptOf.get(r.id), `record ${r.id.slice(0, 8)} names the payload's transcript`);
    }
  });

  test.serial('A: no secret text anywhere in the store', async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    t.true(s.store.length > 0);
    for (const v of [A.secretEnv, A.secretCmd, A.secretPrompt])
      t.false(s.store.includes(v), `the store does not contain ${v.split('-')[0]}`);
    t.true(existsSync(path.join(s.box.ws, 'deploy.pem')), 'deploy.pem is in the workspace, just not in the store');
  });

  test.serial("A: restore turn:2 and undo are byte-exact; the user's .git is untouched", async (t) => {
    const s = await sessionA();
    t.context.logs = s.logs;
    t.notDeepEqual(s.before2, s.after2);
    const dry = await ckpt(s.box, ['restore', 'turn:2', '--dry-run']);
    t.is(dry.code, 0, dry.stderr);
    t.deepEqual(workspaceFiles(s.box), s.after2, 'a dry run changes nothing');
    const r = await ckpt(s.box, ['restore', 'turn:2']);
    s.logs.push(`restore turn:2: ${r.code} ${r.stdout}${r.stderr}`);
    t.is(r.code, 0, r.stderr);
    t.deepEqual(workspaceFiles(s.box), s.before2, 'restore turn:2 = the state just before the second prompt');
    const u = await ckpt(s.box, ['undo']);
    s.logs.push(`undo: ${u.code} ${u.stdout}${u.stderr}`);
    t.is(u.code, 0, u.stderr);
    t.deepEqual(workspaceFiles(s.box), s.after2, 'undo brings back the state after turn 2');
    t.is(gitDirFingerprint(s.box), s.fpBefore, "the user's .git is byte-identical");
  });

  test.serial('B: untrusted folder: headless Gemini refuses to start, no hook runs', async (t) => {
    const s = await sessionB();
    t.context.logs = s.logs;
    t.is(s.untrusted.code, 55, 'FatalUntrustedWorkspaceError exits 55');
    t.regex(s.untrusted.stderr + s.untrusted.stdout, /not running in a trusted directory/);
    t.deepEqual(s.traceUntrusted, []);
    t.is(s.requestsUntrusted, 0, 'not one model request');
  });

  test.serial('B: hooks status tells whether Gemini will run user-scope hooks (no in an untrusted folder, yes once trusted)', async (t) => {
    const s = await sessionB();
    t.context.logs = s.logs;
    const verdict = (status) => status.find((x) => x.agent === 'gemini' && x.scope === 'user')?.verdict;
    t.log(`untrusted: ${JSON.stringify(verdict(s.statusUntrusted))}; trusted: ${JSON.stringify(verdict(s.statusTrusted))}`);
    // Gemini 0.61 registers the settings hooks of every scope (user included) only in a trusted folder
    // (HookRegistry.processHooksFromConfig); headless it does not even start there (exit 55).
    t.is(verdict(s.statusUntrusted)?.runs, 'no', 'user-scope hooks do not run in an untrusted folder');
    t.is(verdict(s.statusTrusted)?.runs, 'yes');
  });

  test.serial('B: user scope: hooks from ~/.gemini/settings.json fire, nothing written in the workspace', async (t) => {
    const s = await sessionB();
    t.context.logs = s.logs;
    t.is(s.install.code, 0);
    t.false(existsSync(path.join(s.box.ws, '.gemini')), 'user scope writes nothing in the workspace');
    const gem = s.status.filter((x) => x.agent === 'gemini');
    t.deepEqual(gem.map((x) => `${x.scope}:${x.state}`).sort(), ['project:not wired', 'user:wired']);
    t.is(s.r1.code, 0);
    t.is(s.r1.json?.response, 'User scope done.');
    t.deepEqual(
      s.server.turns.map((x) => `${x.name}.${x.step}:${x.calls}`),
      ['b1.0:read_file', 'b1.1:write_file,replace', 'b1.2:null'],
      'read_file ran',
    );
    // git-ckpt's tool matcher excludes Gemini's read-only tools (a negative lookahead: Gemini's
    // matcher is a JS RegExp), so read_file spawns no hook at all; the writes do.
    const addr = s.trace.map(traceAddr);
    t.deepEqual(addr.slice(0, 2), ['session-start', 'turn-start']);
    t.deepEqual(sorted(addr.slice(2, 6)), sorted(['pre:write_file', 'post:write_file', 'pre:replace', 'post:replace']));
    t.deepEqual(addr.slice(6), ['turn-end']);
    t.false(
      addr.some((x) => x.endsWith(':read_file')),
      'no hook for read_file',
    );
    for (const e of s.trace) t.is(e.session, s.r1.sessionId);
    const post = hookRecords(s.records).filter((r) => r.kind === 'post');
    t.deepEqual(sorted(post.map((r) => `${r.tool} ${pathList(r).join(',')}`)), ['replace M README.md', 'write_file A u.txt']);
    for (const r of post) t.is(r.turn, 1);
    t.is(s.fpAfter, s.fpBefore, "the user's .git is byte-identical");
  });

  test.serial('B: a BeforeTool matcher is an unanchored RegExp: ^(write_file|replace|run_shell_command)$ skips read_file', async (t) => {
    const s = await sessionB();
    t.context.logs = s.logs;
    t.deepEqual(sorted(s.probe.map((p) => p.tool_name)), ['replace', 'write_file']);
    for (const p of s.probe) t.is(p.hook_event_name, 'BeforeTool');
  });

  test.serial(
    'C: strict env sanitization (GITHUB_SHA) strips GIT_CKPT_HOOK_TRACE; the ledger still records; the allowed list restores it',
    async (t) => {
      const s = await sessionC();
      t.context.logs = s.logs;
      t.is(s.r1.code, 0);
      t.is(s.r2.code, 0);
      t.deepEqual(s.trace1, [], 'no trace line: the variable never reached the hook');
      // HOME survives (always allowed), so the store is found and the hooks still checkpoint.
      const post1 = hookRecords(s.records1).filter((r) => r.kind === 'post');
      t.deepEqual(
        post1.map((r) => `${r.tool} ${r.input} ${r.session === s.r1.sessionId}`),
        ['write_file c.txt true'],
      );
      // security.environmentVariableRedaction.allowed: ["GIT_CKPT_HOOK_TRACE"] lets it through.
      t.deepEqual(s.trace2.map(traceAddr), ['session-start', 'turn-start', 'pre:write_file', 'post:write_file', 'turn-end']);
      const post2 = hookRecords(s.records2).filter((r) => r.kind === 'post');
      t.deepEqual(
        post2.map((r) => `${r.turn}:${r.tool} ${r.input}`),
        ['1:write_file c.txt', '2:write_file d.txt'],
      );
    },
  );
});
