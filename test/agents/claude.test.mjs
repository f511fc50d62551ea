// Claude Code 2.1.332 end to end: the real CLI (`claude -p`, then `--continue`),
// offline against the scripted server of ./claude.mjs, with git-ckpt's hooks
// installed by `git ckpt hooks install`. Two sessions, run concurrently:
//   A. project scope: Write, a shell `sed -i` + create + delete, two Bash calls in
//      one message, a secret in a command, a prompt and a .env, a failing Bash
//      (PostToolUseFailure); turn 2 resumed with --continue: Read, Edit, a shell
//      edit; restore turn:2 and undo byte-exact; the user's .git untouched.
//   B. user scope: the Agent tool with a background subagent (Write + Bash),
//      whose completion comes back as a `<task-notification>` prompt that must
//      stay in turn 1; turn 2 resumed.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import {
  ENTRY,
  agentSuite,
  ckpt,
  ckptJson,
  git,
  gitDirFingerprint,
  ledgerRecords,
  storeDir,
  storeText,
  testSandbox,
  workspaceFiles,
} from './harness.mjs';
import { libPath } from '../helpers.mjs';
import { claudeWiring, marker, readTrace, runClaude, startClaudeServer, traceEvents, tracePath, wiredEvents } from './claude.mjs';

const hookSpecs = await import(libPath('hook-specs'));

const SECRET = 'ckpt-secret-4f9a2c71e0b3';
const DAEMON_MODE = process.env.GIT_CKPT_TEST_DAEMON === '1';

/** A sandbox for `t` whose TMPDIR is a folder of its own. */
function claudeSandbox(t) {
  const box = testSandbox(t);
  box.env.TMPDIR = path.join(box.base, 'tmp');
  mkdirSync(box.env.TMPDIR);
  return box;
}

agentSuite(test, 'claude', 'claude: the real CLI', (agent) => {
  test('claude: project scope, two turns (--continue): shell side effects, parallel calls, a failing call, secrets, restore turn:2 and undo', async (t) => {
    const box = claudeSandbox(t);
    const ws = box.ws;
    writeFileSync(path.join(ws, 'obsolete.txt'), 'to be deleted by the shell\n');
    git(box, ['add', '-A']);
    git(box, ['commit', '-qm', 'obsolete.txt']);
    const fingerprint = gitDirFingerprint(box);

    const scripts = {
      t1: [
        { tools: [{ name: 'Write', input: { file_path: `${ws}/notes.txt`, content: 'alpha\nbeta\ngamma\n' } }] },
        {
          tools: [
            {
              name: 'Bash',
              input: {
                command: "sed -i 's/beta/BETA/' notes.txt && echo made > shell_made.txt && rm obsolete.txt",
                description: 'Edit notes, make a file, delete one',
              },
            },
          ],
        },
        {
          text: 'Two at once.',
          tools: [
            { name: 'Bash', input: { command: 'echo a > par_a.txt', description: 'Create par_a.txt' } },
            { name: 'Bash', input: { command: `DEPLOY_TOKEN=${SECRET} sh -c 'echo b > par_b.txt'`, description: 'Create par_b.txt' } },
          ],
        },
        { tools: [{ name: 'Write', input: { file_path: `${ws}/.env`, content: `API_KEY=${SECRET}\n` } }] },
        {
          tools: [
            { name: 'Bash', input: { command: 'echo partial > failed_made.txt && exit 3', description: 'Create a file, then fail' } },
          ],
        },
        { text: 'Turn 1 done.' },
      ],
      t2: [
        { tools: [{ name: 'Read', input: { file_path: `${ws}/notes.txt` } }] },
        { tools: [{ name: 'Edit', input: { file_path: `${ws}/notes.txt`, old_string: 'alpha', new_string: 'ALPHA' } }] },
        {
          tools: [
            {
              name: 'Bash',
              input: {
                command: "sed -i 's/gamma/GAMMA/' notes.txt && echo two > t2_made.txt",
                description: 'Edit notes again, make a file',
              },
            },
          ],
        },
        { text: 'Turn 2 done.' },
      ],
    };
    const server = await startClaudeServer(scripts);
    const outputs = [];
    const c = checks();
    t.teardown(() => server.close());
    let ok = false;
    try {
      // The user already has settings of their own (settings.local.json: install merges into it and backs it
      // up outside the project), and the team's settings.json holds the hooks an older git-ckpt put there:
      // command hooks, so that with HTTP hooks of ours left beside them an event would run twice.
      mkdirSync(path.join(ws, '.claude'), { recursive: true });
      const team = { includeCoAuthoredBy: false };
      writeFileSync(path.join(ws, '.claude', 'settings.local.json'), '{ "model": "opus" }\n');
      writeFileSync(
        path.join(ws, '.claude', 'settings.json'),
        `${JSON.stringify(hookSpecs.mergeHooks(team, 'claude', ENTRY, 'settings.json'), null, 2)}\n`,
      );
      // With the daemon on (GIT_CKPT_TEST_DAEMON=1), the tool events go to it as Claude's HTTP hooks.
      const transport = DAEMON_MODE ? ['--transport', 'http'] : [];
      // An HTTP hook carries no environment: the daemon traces with its own.
      if (DAEMON_MODE) await ckpt(box, ['daemon', 'start'], { env: { GIT_CKPT_HOOK_TRACE: tracePath(box) } });
      const install = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--scope', 'project', ...transport, '--json']);
      c.eq(install.code, 0, `hooks install: ${install.stderr}`);
      const installed = JSON.parse(install.stdout || '[{}]')[0];
      c.ok(
        installed.backup &&
          !installed.backup.startsWith(ws + path.sep) &&
          readFileSync(installed.backup, 'utf8') === '{ "model": "opus" }\n',
        `the backup is kept outside the workspace: ${installed.backup}`,
      );
      c.eq(readdirSync(path.join(ws, '.claude')).sort(), ['settings.json', 'settings.local.json'], 'nothing else next to the settings');
      c.eq(JSON.parse(readFileSync(path.join(ws, '.claude', 'settings.json'), 'utf8')), team, "the team's file keeps only the team's");
      c.ok(
        readFileSync(path.join(ws, '.claude', 'settings.local.json'), 'utf8').includes('git-ckpt-hook'),
        'project .claude/settings.local.json wired',
      );
      // The daemon token: in the user's settings, which Claude fills the HTTP hooks' header from, and in no project file.
      const daemonToken = DAEMON_MODE ? readFileSync(path.join(box.store, 'daemon', 'token'), 'utf8').trim() : undefined;
      if (daemonToken) {
        const user = JSON.parse(readFileSync(path.join(box.home, '.claude', 'settings.json'), 'utf8'));
        c.eq(user.env?.GIT_CKPT_TOKEN, daemonToken, "the token in the user's settings");
        for (const name of ['settings.json', 'settings.local.json'])
          c.no(readFileSync(path.join(ws, '.claude', name), 'utf8').includes(daemonToken), `no token in .claude/${name}`);
      }
      const wiring = claudeWiring(path.join(ws, '.claude', 'settings.local.json'));
      for (const e of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop'])
        c.ok(wiring.events.includes(e), `${e} wired`);

      const env = { GIT_CKPT_HOOK_TRACE: tracePath(box) };
      const prompt1 = `${marker('t1')} Write notes.txt, edit it with sed, API_TOKEN=${SECRET} two shells at once\nThen fail once.`;
      const r1 = await runClaude(agent.bin, box, server, prompt1, { env });
      outputs.push(['turn 1', r1]);
      c.eq(r1.code, 0, 'turn 1 exit code');
      c.re(r1.stdout, /Turn 1 done\./, 'turn 1 answer');
      const before2 = workspaceFiles(box);
      const trace1 = readTrace(tracePath(box));

      const r2 = await runClaude(agent.bin, box, server, `${marker('t2')} Capitalise alpha and gamma.`, { env, resume: true });
      outputs.push(['turn 2', r2]);
      c.eq(r2.code, 0, 'turn 2 exit code');
      c.re(r2.stdout, /Turn 2 done\./, 'turn 2 answer');
      const after2 = workspaceFiles(box);

      // Offline: every request was scripted, nothing went anywhere else.
      c.eq(server.unexpected, [], 'unscripted requests');
      c.eq(server.outbound, [], 'requests for other hosts');

      // Which hook events fired, in order.
      const trace = readTrace(tracePath(box));
      // The full list is what the CLI emits; the installer's matchers leave read-only tools out.
      const full = [
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse:Write',
        'PostToolUse:Write',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PreToolUse:Write',
        'PostToolUse:Write',
        'PreToolUse:Bash',
        'PostToolUseFailure:Bash',
        'Stop',
      ];
      const full2 = [
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse:Read',
        'PostToolUse:Read',
        'PreToolUse:Edit',
        'PostToolUse:Edit',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'Stop',
      ];
      // Post hooks run in the background: the order of a post and the next pre may vary, and `claude -p`
      // exits without waiting for one, so a turn's last post may never run (its Stop takes the change:
      // the ledger checks below). Every other event must be there, and nothing else.
      const got = [...traceEvents(trace)].sort();
      const want = [...wiredEvents(wiring, [...full, ...full2])].sort();
      const without = (list, minus) => {
        const rest = [...list];
        for (const e of minus) {
          const i = rest.indexOf(e);
          if (i >= 0) rest.splice(i, 1);
        }
        return rest;
      };
      c.eq(without(got, want), [], 'no unexpected hook events');
      const missing = without(want, got);
      c.ok(missing.length <= 2 && missing.every((e) => e.startsWith('PostToolUse:')), `only background posts may be missing: ${missing}`);
      const session = trace[0]?.payload.session_id;
      c.ok(session, 'session id');
      c.ok(
        trace.every((e) => e.payload.session_id === session && e.session === session),
        'one session across --continue',
      );
      c.eq(
        trace.filter((e) => e.payload.hook_event_name === 'SessionStart').map((e) => e.payload.source),
        ['startup', 'resume'],
        'SessionStart sources',
      );
      const prompt1Id = trace1.find((e) => e.payload.hook_event_name === 'UserPromptSubmit')?.payload.prompt_id;
      const prompt2Id = trace.filter((e) => e.payload.hook_event_name === 'UserPromptSubmit')[1]?.payload.prompt_id;
      const transcript = trace[1]?.payload.transcript_path;
      c.ok(prompt1Id && prompt2Id && prompt1Id !== prompt2Id, 'a prompt_id per prompt');

      // One checkpoint per real change: a post per mutating call, none for Read, none for the
      // never-captured .env, no pre or turn checkpoint (nothing changed between calls).
      const records = ledgerRecords(box);
      const hookRecords = records.filter((r) => r.agent);
      const byId = new Map(records.map((r) => [r.id, r]));
      for (const r of hookRecords) {
        if (r.parent) c.ne(r.tree, byId.get(r.parent).tree, `${r.id.slice(0, 8)} (${r.message}) duplicates its parent's content`);
      }
      const calls = server.calls;
      const call = (script, step, i = 0) =>
        calls.filter((x) => x.script === script && x.step === step)[i] ?? { id: `missing ${script}.${step}.${i}` };
      const mutating = [call('t1', 0), call('t1', 1), call('t1', 2, 0), call('t1', 2, 1), call('t1', 4), call('t2', 1), call('t2', 2)];
      const posts = hookRecords.filter((r) => r.kind === 'post');
      c.eq(
        posts.map((r) => r.call),
        mutating.map((x) => x.id),
        'one post checkpoint per mutating call, in order',
      );
      c.eq(
        hookRecords.filter((r) => r.kind !== 'post').map((r) => `${r.kind} ${r.phase}`),
        [],
        'nothing but the posts: the first snapshot, taken in the background by hooks install, holds the state before',
      );
      c.eq(`${records[0]?.kind} ${records[0]?.message}`, 'manual initial snapshot', 'the first snapshot comes first');
      for (const x of [call('t1', 3), call('t2', 0)])
        c.no(
          records.some((r) => r.call === x.id),
          `no checkpoint for ${x.name} (${x.id})`,
        );

      // Attribution: session, turn from user prompts, step, tool, call id, agent's turn id, transcript.
      const postOf = (x) => posts.find((r) => r.call === x.id) ?? { paths: [], message: `no post for ${x.id}` };
      const [write, shell, parA, parB, failing, edit, shell2] = mutating.map(postOf);
      // The step: the call's place among the turn's hooked calls.
      const stepOf = (x) => calls.filter((y) => y.script === x.script && wiring.fires('PreToolUse', y.name)).indexOf(x) + 1;
      const expect = [
        [write, 1, 'Write', stepOf(mutating[0]), prompt1Id],
        [shell, 1, 'Bash', stepOf(mutating[1]), prompt1Id],
        [parA, 1, 'Bash', stepOf(mutating[2]), prompt1Id],
        [parB, 1, 'Bash', stepOf(mutating[3]), prompt1Id],
        [failing, 1, 'Bash', stepOf(mutating[4]), prompt1Id],
        [edit, 2, 'Edit', stepOf(mutating[5]), prompt2Id],
        [shell2, 2, 'Bash', stepOf(mutating[6]), prompt2Id],
      ];
      c.eq(
        expect.map((e) => e[3]),
        [1, 2, 3, 4, 6, wiring.fires('PreToolUse', 'Read') ? 2 : 1, wiring.fires('PreToolUse', 'Read') ? 3 : 2],
        'steps',
      );
      for (const [r, turn, tool, step, agentTurn] of expect) {
        const what = `${r.message}`;
        c.eq(r.agent, 'claude', `${what}: agent`);
        c.eq(r.phase, 'post', `${what}: phase`);
        c.eq(r.session, session, `${what}: session`);
        c.eq(r.turn, turn, `${what}: turn`);
        c.eq(r.tool, tool, `${what}: tool`);
        c.eq(r.step, step, `${what}: step`);
        c.eq(r.agentTurn, agentTurn, `${what}: agentTurn = prompt_id`);
        c.eq(r.transcript, transcript, `${what}: transcript`);
        if (r !== failing) c.no(r.failed, `${what}: failed`);
      }
      c.eq(write.input, 'notes.txt', 'Write input');
      c.eq(edit.input, 'notes.txt', 'Edit input');

      // The shell's side effects are in its own post checkpoint.
      const paths = (r) => Object.fromEntries(r.paths.map((p) => [p.path, p.status]));
      c.eq(paths(shell), { 'notes.txt': 'M', 'shell_made.txt': 'A', 'obsolete.txt': 'D' }, 'sed/create/delete shell post paths');
      c.eq(shell.stats, { added: 1, modified: 1, deleted: 1 }, 'shell post stats');
      c.eq(paths(parA), { 'par_a.txt': 'A' }, 'parallel call A paths');
      c.eq(paths(parB), { 'par_b.txt': 'A' }, 'parallel call B paths');
      c.eq(paths(shell2), { 'notes.txt': 'M', 't2_made.txt': 'A' }, 'turn 2 shell paths');
      c.eq(paths(edit), { 'notes.txt': 'M' }, 'Edit paths');

      // The failing call: its file captured by its own post, marked failed with the error's first line.
      c.eq(paths(failing), { 'failed_made.txt': 'A' }, 'failing call paths');
      c.eq(failing.failed, true, 'failed: true on a PostToolUseFailure post');
      c.eq(failing.error, 'Exit code 3', 'error: first line of the failure');

      // Turn titles: the first line of the user's prompt, redacted, on each turn's first record.
      const firstOf = (turn) => hookRecords.find((r) => r.turn === turn);
      c.eq(
        firstOf(1)?.prompt,
        `${marker('t1')} Write notes.txt, edit it with sed, API_TOKEN=[REDACTED] two shells at once`,
        'turn 1 title (prompt) on its first record',
      );
      c.eq(firstOf(2)?.prompt, `${marker('t2')} Capitalise alpha and gamma.`, 'turn 2 title (prompt) on its first record');
      c.no(
        hookRecords.some((r) => r.prompt && r !== firstOf(r.turn)),
        'prompt only on the first record of a turn',
      );

      // No secret anywhere in the store: not the command, the prompt or the .env.
      c.ok(parB.input?.includes('DEPLOY_TOKEN='), `redacted command keeps its shape: ${parB.input}`);
      c.no(parB.input?.includes(SECRET), 'secret in the command summary');
      c.no(storeText(box).includes(SECRET), 'the secret reached the store');
      if (daemonToken) c.no(storeText(box).includes(daemonToken), 'the daemon token reached the store');
      c.ok(existsSync(path.join(ws, '.env')), '.env written by the agent');
      // What is not captured is said: status lists it now, hook.log says it once, not on every later call.
      const status = await ckptJson(box, ['status', '--json']);
      c.ok(
        status.uncaptured?.some((u) => u.path === '.env' && u.reason === 'secret'),
        `status lists .env as not captured: ${JSON.stringify(status.uncaptured)}`,
      );
      const hookLog = readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8');
      c.eq(hookLog.match(/\.env \(secret\)/g)?.length, 1, `hook.log names the .env skip once: ${hookLog}`);

      // Rewind to just before turn 2, byte-exact, then undo back.
      const restore = await ckpt(box, ['restore', 'turn:2', '--delete-new']);
      c.eq(restore.code, 0, `restore turn:2: ${restore.stderr}`);
      c.eq(workspaceFiles(box), before2, 'restore turn:2 byte-exact');
      const undo = await ckpt(box, ['undo']);
      c.eq(undo.code, 0, `undo: ${undo.stderr}`);
      c.eq(workspaceFiles(box), after2, 'undo byte-exact');

      // `git ckpt log` agrees with the ledger on sessions.
      const log = await ckptJson(box, ['log', '--json', '--all']);
      c.ok(
        log.some((r) => r.session === session),
        'log --json has the session',
      );

      // The user's repository is untouched by install, hooks, restore and undo.
      c.eq(gitDirFingerprint(box), fingerprint, '.git changed');
      ok = c.failures.length === 0;
    } finally {
      if (!ok) logOutputs(t, box, outputs, server);
    }
    // Every check ran; all failures at once (several await fields other work adds).
    t.deepEqual(c.failures, []);
  });

  test('claude: user scope, background subagent: its calls carry the subagent, its files its own posts, the task notification stays in turn 1', async (t) => {
    const box = claudeSandbox(t);
    const ws = box.ws;
    const fingerprint = gitDirFingerprint(box);
    const scripts = {
      s1: [
        {
          tools: [
            {
              name: 'Agent',
              input: {
                description: 'Write files in a subagent',
                prompt: `${marker('sub')} Write sub_agent.txt and make sub_shell.txt.`,
                subagent_type: 'general-purpose',
                run_in_background: true,
              },
            },
          ],
        },
        { text: 'Turn 1 done, the subagent works in the background.' },
      ],
      sub: [
        { tools: [{ name: 'Write', input: { file_path: `${ws}/sub_agent.txt`, content: 'from the subagent\n' } }] },
        { tools: [{ name: 'Bash', input: { command: 'echo y > sub_shell.txt', description: 'Create sub_shell.txt' } }] },
        { text: 'Subagent done.' },
      ],
      s2: [{ tools: [{ name: 'Bash', input: { command: 'echo two > s2.txt', description: 'Create s2.txt' } }] }, { text: 'Turn 2 done.' }],
    };
    const server = await startClaudeServer(scripts);
    const outputs = [];
    const c = checks();
    t.teardown(() => server.close());
    let ok = false;
    try {
      const install = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--scope', 'user']);
      c.eq(install.code, 0, `hooks install: ${install.stderr}`);
      c.ok(
        readFileSync(path.join(box.home, '.claude', 'settings.json'), 'utf8').includes('git-ckpt-hook'),
        '~/.claude/settings.json wired',
      );
      const wiring = claudeWiring(path.join(box.home, '.claude', 'settings.json'));
      c.no(existsSync(path.join(ws, '.claude')), 'user scope writes nothing in the workspace');

      const env = { GIT_CKPT_HOOK_TRACE: tracePath(box) };
      const r1 = await runClaude(agent.bin, box, server, `${marker('s1')} Delegate the file work to a background subagent.`, { env });
      outputs.push(['turn 1', r1]);
      c.eq(r1.code, 0, 'turn 1 exit code');
      // `-p` keeps running until the background subagent finished and its notification was answered.
      c.re(r1.stdout, /background task finished/, 'turn 1 ends with the answer to the task notification');
      c.eq(
        existsSync(path.join(ws, 'sub_shell.txt')) && readFileSync(path.join(ws, 'sub_agent.txt'), 'utf8'),
        'from the subagent\n',
        'the subagent finished before -p exited',
      );
      const before2 = workspaceFiles(box);

      const r2 = await runClaude(agent.bin, box, server, `${marker('s2')} One more file.`, { env, resume: true });
      outputs.push(['turn 2', r2]);
      c.eq(r2.code, 0, 'turn 2 exit code');
      c.re(r2.stdout, /Turn 2 done\./, 'turn 2 answer');
      const after2 = workspaceFiles(box);
      c.eq(server.unexpected, [], 'unscripted requests');
      c.eq(server.outbound, [], 'requests for other hosts');

      // Events: the subagent runs in parallel with the main thread's end of turn, so each
      // thread's order is checked on its own.
      const trace = readTrace(tracePath(box));
      const events = traceEvents(trace);
      // Post hooks run in the background: a post may come after the next event, and `claude -p`
      // kills one still running when the session ends (the next synchronous hook takes its change
      // as that call's, checked below). So: every event but posts in order, posts as a subset.
      const isPost = (e) => /^PostToolUse/.test(e);
      const mainWanted = wiredEvents(wiring, [
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse:Agent',
        'PostToolUse:Agent',
        'Stop',
        'UserPromptSubmit',
        'Stop',
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'Stop',
      ]);
      const mainSeen = events.filter((e) => !e.endsWith('@sub'));
      c.eq(
        mainSeen.filter((e) => !isPost(e)),
        mainWanted.filter((e) => !isPost(e)),
        'main thread hook events',
      );
      c.ok(
        mainSeen.filter(isPost).every((e) => mainWanted.includes(e)),
        `main thread posts: ${mainSeen.filter(isPost).join(', ')}`,
      );
      const subWanted = wiredEvents(wiring, [
        'SubagentStart@sub',
        'PreToolUse:Write@sub',
        'PostToolUse:Write@sub',
        'PreToolUse:Bash@sub',
        'PostToolUse:Bash@sub',
        'SubagentStop@sub',
      ]);
      const subSeen = events.filter((e) => e.endsWith('@sub'));
      c.eq(
        subSeen.filter((e) => !isPost(e)),
        subWanted.filter((e) => !isPost(e)),
        'subagent hook events',
      );
      c.ok(
        subSeen.filter(isPost).every((e) => subWanted.includes(e)),
        `subagent posts: ${subSeen.filter(isPost).join(', ')}`,
      );
      const prompts = trace.filter((e) => e.payload.hook_event_name === 'UserPromptSubmit');
      c.ok(prompts[1]?.payload.prompt.startsWith('<task-notification>'), 'the subagent completion arrives as a UserPromptSubmit');
      c.ok(events.lastIndexOf('PostToolUse:Bash@sub') < events.indexOf('UserPromptSubmit', 2), 'the notification follows the subagent');
      const subEvents = trace.filter((e) => e.payload.agent_id);
      const agentId = subEvents[0]?.payload.agent_id;
      c.ok(
        agentId && subEvents.every((e) => e.payload.agent_id === agentId && e.payload.agent_type === 'general-purpose'),
        'agent_id and agent_type on the subagent events',
      );
      const session = trace[0]?.payload.session_id;
      c.ok(session && trace.every((e) => e.payload.session_id === session), 'one session id');

      const records = ledgerRecords(box);
      const hookRecords = records.filter((r) => r.agent);
      const find = (pred) => server.calls.find(pred) ?? { id: 'missing call' };
      const subWrite = find((x) => x.script === 'sub' && x.name === 'Write');
      const subBash = find((x) => x.script === 'sub' && x.name === 'Bash');
      const s2Bash = find((x) => x.script === 's2');
      const agentCall = find((x) => x.name === 'Agent');
      const postOf = (x) => {
        const found = hookRecords.filter((r) => r.call === x.id && r.kind === 'post');
        c.eq(found.length, 1, `post checkpoints for ${x.name} ${x.id}`);
        return found[0] ?? { paths: [], message: `no post for ${x.id}` };
      };
      const w = postOf(subWrite);
      const b = postOf(subBash);
      const s2 = postOf(s2Bash);
      c.no(
        hookRecords.some((r) => r.call === agentCall.id),
        'launching the subagent changes nothing',
      );

      // The subagent's files are captured by its own calls' posts, attributed to it ...
      const paths = (r) => Object.fromEntries(r.paths.map((p) => [p.path, p.status]));
      c.eq(paths(w), { 'sub_agent.txt': 'A' }, 'the subagent Write post holds its file (not the main thread turn-end)');
      c.eq(paths(b), { 'sub_shell.txt': 'A' }, 'the subagent Bash post holds its file');
      for (const r of [w, b]) {
        c.eq(r.subagent, { id: agentId, type: 'general-purpose' }, `subagent on ${r.message}`);
        c.eq(r.session, session, `session on ${r.message}`);
        c.eq(r.turn, 1, `${r.message} is in turn 1`);
      }
      c.no(s2.subagent, 'no subagent on a main-thread call');
      c.no(
        hookRecords.some((r) => r !== w && r.paths.some((p) => p.path === 'sub_agent.txt')),
        `no other checkpoint took the subagent file (${hookRecords
          .filter((r) => r !== w && r.paths.some((p) => p.path === 'sub_agent.txt'))
          .map((r) => r.message)
          .join('; ')})`,
      );

      // ... and the notification prompt opened no turn: the resumed prompt is turn 2.
      c.eq(s2.turn, 2, 'the <task-notification> prompt does not count as a turn (resumed prompt is turn 2)');
      // The session start of an empty store begins the first snapshot in the background (no record of
      // its own then), or records one outside any turn when a checkpoint already exists.
      c.eq(
        [...new Set(hookRecords.map((r) => r.turn ?? null))].filter((x) => x !== null),
        [1, 2],
        'turns in the ledger',
      );
      const noTurn3 = await ckpt(box, ['restore', 'turn:3', '--dry-run']);
      c.eq(noTurn3.code, 1, 'restore turn:3 refused: there is no turn 3');

      const restore = await ckpt(box, ['restore', 'turn:2', '--delete-new']);
      c.eq(restore.code, 0, `restore turn:2: ${restore.stderr}`);
      c.eq(workspaceFiles(box), before2, 'restore turn:2 byte-exact');
      const undo = await ckpt(box, ['undo']);
      c.eq(undo.code, 0, `undo: ${undo.stderr}`);
      c.eq(workspaceFiles(box), after2, 'undo byte-exact');
      c.eq(gitDirFingerprint(box), fingerprint, '.git changed');
      ok = c.failures.length === 0;
    } finally {
      if (!ok) logOutputs(t, box, outputs, server);
    }
    // Every check ran; all failures at once (several await fields other work adds).
    t.deepEqual(c.failures, []);
  });

  test('claude: HTTP hooks to the daemon, which a tool call kills in turn 2: Claude goes on (its HTTP hooks fail open), every change is still captured, the next command hook restarts it', async (t) => {
    const box = claudeSandbox(t);
    const ws = box.ws;
    // This test is about the daemon: on here whatever the suite's mode.
    writeFileSync(path.join(box.home, '.gitconfig'), '[user]\n\tname = T\n\temail = t@example.com\n[ckpt]\n\tdaemonIdle = 60s\n');
    const scripts = {
      k1: [
        { tools: [{ name: 'Write', input: { file_path: `${ws}/one.txt`, content: 'one\n' } }] },
        { tools: [{ name: 'Bash', input: { command: 'echo shell > two.txt', description: 'Create two.txt' } }] },
        { text: 'Turn 1 done.' },
      ],
      k2: [
        // The daemon dies in the middle of the turn: the next tool calls' HTTP hooks find nothing listening.
        {
          tools: [
            {
              name: 'Bash',
              input: {
                command: `kill -9 $(sed -n 's/.*"pid":\\([0-9]*\\).*/\\1/p' '${path.join(box.store, 'daemon', 'endpoint.json')}')`,
                description: 'Stop the daemon',
              },
            },
          ],
        },
        { tools: [{ name: 'Write', input: { file_path: `${ws}/three.txt`, content: 'three\n' } }] },
        { tools: [{ name: 'Bash', input: { command: 'echo again >> one.txt', description: 'Append to one.txt' } }] },
        { text: 'Turn 2 done.' },
      ],
    };
    const server = await startClaudeServer(scripts);
    t.teardown(() => server.close());
    t.teardown(() => ckpt(box, ['daemon', 'stop']));
    const install = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--scope', 'project', '--transport', 'http', '--json']);
    t.is(install.code, 0, install.stderr);
    const settings = JSON.parse(readFileSync(path.join(ws, '.claude', 'settings.local.json'), 'utf8'));
    t.is(settings.hooks.PreToolUse[0].hooks[0].type, 'http');
    t.is(settings.env, undefined, 'the token is in the user’s settings, not the project’s');
    const endpointFile = path.join(box.store, 'daemon', 'endpoint.json');
    const r1 = await runClaude(agent.bin, box, server, `${marker('k1')} Two files.`);
    t.is(r1.code, 0, r1.stderr);
    const daemon1 = JSON.parse(readFileSync(endpointFile, 'utf8'));
    const posts1 = ledgerRecords(box).filter((r) => r.kind === 'post');
    t.deepEqual(
      posts1.map((r) => `${r.tool} ${r.paths.map((p) => p.path).join(',')}`),
      ['Write one.txt', 'Bash two.txt'],
      'turn 1: each call its own post, through the HTTP hooks',
    );
    const r2 = await runClaude(agent.bin, box, server, `${marker('k2')} More.`, { resume: true });
    t.is(r2.code, 0, r2.stderr);
    t.is(r2.stdout.includes('Turn 2 done.'), true, 'the HTTP hooks that found no daemon let Claude go on');
    // The turn's end, a command hook, found no daemon answering, recorded it itself and started another (on the same port).
    // It starts the daemon in the background: its endpoint is written once it listens.
    let daemon2 = daemon1;
    for (
      const start = Date.now();
      daemon2.pid === daemon1.pid && Date.now() - start < 15_000;
      await new Promise((r) => setTimeout(r, 100))
    ) {
      try {
        daemon2 = JSON.parse(readFileSync(endpointFile, 'utf8'));
      } catch {
        /* being rewritten */
      }
    }
    t.not(daemon2.pid, daemon1.pid);
    t.is(daemon2.port, daemon1.port);
    // Claude's transcript says it went on: each HTTP hook after the kill is a non-blocking error, connection refused.
    const refused = transcriptLines(box).filter(
      (l) => l.attachment?.type === 'hook_non_blocking_error' && /ECONNREFUSED/.test(l.attachment.stderr ?? ''),
    );
    t.deepEqual([...new Set(refused.map((l) => l.attachment.hookName))].sort(), [
      'PostToolUse:Bash',
      'PostToolUse:Write',
      'PreToolUse:Bash',
      'PreToolUse:Write',
    ]);
    // What Claude waited for each hook, as its own transcript records it (the Stop hook's only: Claude
    // 2.1.332 keeps no duration for a tool hook).
    t.log(`hook timings in Claude's transcript: ${JSON.stringify(hookTimings(box))}`);
    // Every change is in the last checkpoint, whichever hook took it.
    const records = ledgerRecords(box);
    const last = records.at(-1);
    const shadow = (args) =>
      spawnSync('git', args, { cwd: box.base, env: { ...box.env, GIT_DIR: path.join(storeDir(box), 'git') }, encoding: 'utf8' }).stdout;
    const listing = shadow(['ls-tree', '-r', last.tree]);
    for (const name of ['one.txt', 'two.txt', 'three.txt']) t.true(listing.includes(`\t${name}\n`), `${name} captured`);
    const blob = listing
      .split('\n')
      .find((l) => l.endsWith('\tone.txt'))
      ?.split(/\s+/)[2];
    t.is(shadow(['cat-file', 'blob', blob]), 'one\nagain\n');
    t.true(records.filter((r) => r.turn === 2).length > 0, 'turn 2 has its checkpoints');
  });
});

/** Every hook duration Claude's transcripts of the sandbox record (its stop-hook summaries and hook attachments). */
function hookTimings(box) {
  const found = [];
  const walk = (v, event) => {
    if (Array.isArray(v)) for (const x of v) walk(x, event);
    else if (v && typeof v === 'object') {
      const name = v.hookEvent ?? v.hookEventName ?? v.hook_event_name ?? v.hookName ?? event;
      if (typeof v.durationMs === 'number')
        found.push(`${name ?? '?'} ${v.type ?? v.command ?? v.url ?? ''} ${v.durationMs} ms`.replace(/\s+/g, ' '));
      for (const x of Object.values(v)) walk(x, name);
    }
  };
  for (const line of transcriptLines(box)) walk(line);
  return found;
}

/** Every line of Claude's transcripts in the sandbox. */
function transcriptLines(box) {
  const projects = path.join(box.home, '.claude', 'projects');
  return readdirSync(projects).flatMap((dir) =>
    readdirSync(path.join(projects, dir))
      .filter((n) => n.endsWith('.jsonl'))
      .flatMap((f) =>
        readFileSync(path.join(projects, dir, f), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      ),
  );
}

/**
 * Soft checks: each failure is recorded with what it checked, and the test asserts
 * the whole list at its end, so that one missing field does not hide the others.
 */
function checks() {
  const failures = [];
  const show = (v) => (typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v)?.slice(0, 400));
  const fail = (what, detail) => failures.push(`${what ?? 'check'}: ${detail}`);
  return {
    failures,
    eq(actual, expected, what) {
      if (!isDeepStrictEqual(actual, expected)) fail(what, `got ${show(actual)}, want ${show(expected)}`);
    },
    ne(actual, other, what) {
      if (isDeepStrictEqual(actual, other)) fail(what, `got ${show(actual)} twice`);
    },
    ok(value, what) {
      if (!value) fail(what, `not true (${show(value)})`);
    },
    no(value, what) {
      if (value) fail(what, `not false (${show(value)})`);
    },
    re(text, pattern, what) {
      if (!pattern.test(text)) fail(what ?? `output ${pattern}`, `no match in ${show(text)}`);
    },
  };
}

/** On failure: the CLI's own output, the requests, the trace and the ledger, to the test log. */
function logOutputs(t, box, outputs, server) {
  for (const [name, r] of outputs)
    t.log(`${name}: exit ${r.code}${r.signal ? ` (${r.signal})` : ''} in ${r.ms} ms\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  t.log(
    `requests: ${server.requests.length}; unexpected: ${JSON.stringify(server.unexpected)}; outbound: ${JSON.stringify(server.outbound)}`,
  );
  t.log(`trace: ${traceEvents(readTrace(tracePath(box))).join(' ')}`);
  for (const r of ledgerRecords(box))
    t.log(
      `ledger: ${r.kind} t${r.turn ?? '-'}.s${r.step ?? '-'} ${r.message} ${r.paths.map((p) => `${p.status} ${p.path}`).join(', ')}${r.failed ? ' FAILED' : ''}${r.subagent ? ` sub=${r.subagent.id}` : ''}`,
    );
}
