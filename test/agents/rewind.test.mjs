// A rewind of the conversation inside the real Claude Code (2.1.332), offline against the scripted
// server of ./claude.mjs. Three turns, each with changes made by Claude's file tools and by Bash; then
// the conversation goes back to before turn 2 the way an interactive rewind leaves it on disk: the next
// prompt continues from the line before turn 2's (`claude -p --resume ID --resume-session-at UUID`).
//   A. "conversation only" (the files kept), with ckpt.followRewind=auto: git-ckpt says so in the
//      agent and in status, marks the rewind, and restores nothing.
//   B. "code and conversation": Claude puts back what its own file tools wrote (`--rewind-files`, its
//      SDK file checkpointing), the user edits one of the shell's files, then the next turn runs: with
//      auto, git-ckpt restores what Claude missed but the user's file, says why, and undo brings it back.
// And the real Codex CLI (0.171) rewound by its app-server's thread/revert, which its TUI's backtrack calls,
// and the real Gemini CLI (0.61) by /rewind in its own TUI, on a pseudo-terminal.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agentSuite, ckpt, ckptJson, gitDirFingerprint, ledgerRecords, run, storeDir, testSandbox, workspaceFiles } from './harness.mjs';
import { claudeEnv, marker, readTrace, runClaude, startClaudeServer, tracePath } from './claude.mjs';
import {
  codexEnv,
  codexTurn,
  describeRun,
  hookTrustEntries,
  readTrace as readCodexTrace,
  startCodexServer,
  trustHooksInConfig,
  withAppServer,
  writeCodexConfig,
} from './codex.mjs';
import { MODEL, configureGemini, describeRun as describeGeminiRun, runGeminiTurn, startGeminiServer } from './gemini.mjs';

/** The scripts of the three turns and the one after the rewind: Write and Edit, and Bash beside them. */
function scripts(ws) {
  return {
    t1: [{ tools: [{ name: 'Write', input: { file_path: `${ws}/one.txt`, content: 'one\n' } }] }, { text: 'Turn 1 done.' }],
    t2: [
      { tools: [{ name: 'Write', input: { file_path: `${ws}/two.txt`, content: 'two\n' } }] },
      { tools: [{ name: 'Bash', input: { command: 'echo shell2 > shell2.txt', description: 'Make shell2.txt' } }] },
      { text: 'Turn 2 done.' },
    ],
    t3: [
      { tools: [{ name: 'Edit', input: { file_path: `${ws}/one.txt`, old_string: 'one', new_string: 'ONE' } }] },
      { tools: [{ name: 'Bash', input: { command: 'echo shell3 > shell3.txt && rm README.md', description: 'Make shell3.txt' } }] },
      { text: 'Turn 3 done.' },
    ],
    t4: [{ tools: [{ name: 'Bash', input: { command: 'echo four > four.txt', description: 'Make four.txt' } }] }, { text: 'Turn 4 done.' }],
    t5: [{ text: 'Turn 5 done.' }],
  };
}

/** Claude's transcript lines; `prompt(name)` is the user line of the prompt carrying that marker. */
function transcriptOf(file) {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  return {
    lines,
    prompt: (name) =>
      lines.find((l) => l.type === 'user' && typeof l.message?.content === 'string' && l.message.content.includes(marker(name))),
  };
}

agentSuite(test, 'claude', 'rewind: the real Claude Code', (agent) => {
  /** Turns 1–3 in a fresh sandbox; resolves with what the rewind tests need. */
  async function threeTurns(t, env = {}) {
    const box = testSandbox(t, 'rewind');
    const server = await startClaudeServer(scripts(box.ws));
    t.teardown(() => server.close());
    const install = await ckpt(box, ['hooks', 'install', '--agent', 'claude', '--scope', 'project']);
    t.is(install.code, 0, install.stderr);
    const hookEnv = { GIT_CKPT_HOOK_TRACE: tracePath(box), ...env };
    const before = {};
    for (const [i, name] of ['t1', 't2', 't3'].entries()) {
      before[name] = workspaceFiles(box);
      const r = await runClaude(agent.bin, box, server, `${marker(name)} turn ${i + 1}`, { env: hookEnv, resume: i > 0 });
      t.is(r.code, 0, `${name}: ${r.stderr}`);
      t.regex(r.stdout, new RegExp(`Turn ${i + 1} done`));
    }
    const first = readTrace(tracePath(box))[0].payload;
    return { box, server, hookEnv, before, session: first.session_id, transcript: first.transcript_path };
  }

  /** The turn after the rewind: the conversation continues from the line before turn 2's prompt. */
  async function turnAfterRewind(box, server, hookEnv, session, transcript) {
    const resumeAt = transcriptOf(transcript).prompt('t2').parentUuid;
    const args = ['-p', `${marker('t4')} turn four`, '--dangerously-skip-permissions', '--output-format', 'stream-json', '--verbose'];
    args.push('--resume', session, '--resume-session-at', resumeAt);
    const r = await run(agent.bin, args, { cwd: box.ws, env: claudeEnv(box, server, hookEnv), stdin: 'ignore', timeoutMs: 120_000 });
    // What Claude showed the user from the hooks (`systemMessage`), as its stream reports it.
    const shown = r.stdout
      .split('\n')
      .filter((l) => l.includes('git-ckpt:'))
      .map((l) => JSON.parse(l).content ?? '');
    return { r, shown, resumeAt };
  }

  test('rewind (conversation only): git-ckpt notices at the next turn, says what turns 2–3 left, marks it, and restores nothing, even with auto', async (t) => {
    const { box, server, hookEnv, before, session, transcript } = await threeTurns(t);
    appendFileSync(path.join(box.home, '.gitconfig'), '\tfollowRewind = auto\n');
    const fingerprint = gitDirFingerprint(box);
    const afterThree = workspaceFiles(box);
    const { r, shown } = await turnAfterRewind(box, server, hookEnv, session, transcript);
    t.is(r.code, 0, r.stderr);
    // The new prompt hangs off turn 1 in Claude's own transcript: that is what an interactive rewind writes.
    const tx = transcriptOf(transcript);
    t.is(tx.prompt('t4').parentUuid, tx.prompt('t2').parentUuid);
    t.deepEqual(server.unexpected, []);

    t.is(shown.length, 1, `one line shown in Claude: ${JSON.stringify(shown)}`);
    t.regex(
      shown[0],
      /git-ckpt: conversation rewound to before turn 2; the workspace still has turns 2–3's changes \(5 files, 3 of them only by the shell\)/,
    );
    t.regex(shown[0], /git ckpt restore turn:2~1@/);
    // Nothing restored: the files are as turns 2–3 left them, plus turn 4's.
    t.deepEqual(workspaceFiles(box), { ...afterThree, 'four.txt': Buffer.from('four\n').toString('base64') });
    const records = ledgerRecords(box);
    const marks = records.filter((x) => x.rewind);
    t.is(marks.length, 1);
    t.like(marks[0], { session, turn: 4, phase: 'rewind', rewind: { parent: 1, kind: 'conversation', pending: 5, shell: 3 } });
    t.false(records.some((x) => x.kind === 'restore'));

    // Turns as people count them: turn 2 is the new one; the turns left behind are 2~1 and 3~1.
    const log = await ckptJson(box, ['log', '--json']);
    t.deepEqual([...new Set(log.filter((x) => x.session === session).map((x) => `${x.turn}=${x.turnLabel}`))].sort(), [
      '1=1',
      '2=2~1',
      '3=3~1',
      '4=2',
    ]);
    const status = await ckpt(box, ['status']);
    t.regex(
      status.stdout,
      /rewound: session \w+'s conversation went back to before turn 2 .*turns 2–3's changes \(5 files, 3 of them only by the shell\)/,
    );
    // The address the message names is the state before turn 2, as it was: restoring it is the user's call.
    const dry = await ckptJson(box, ['restore', `turn:2~1@${session.slice(0, 8)}`, '--dry-run', '--delete-new', '--json']);
    t.deepEqual(dry.files.map((f) => `${f.action} ${f.path}`).sort(), [
      'delete four.txt',
      'delete shell2.txt',
      'delete shell3.txt',
      'delete two.txt',
      'recreate README.md',
      'restore one.txt',
    ]);
    const restored = await ckpt(box, ['restore', `turn:2~1@${session.slice(0, 8)}`, '--delete-new']);
    t.is(restored.code, 0, restored.stderr);
    t.deepEqual(workspaceFiles(box), before.t2);

    // resume goes the other way. A turn the rewind left behind: its files, and the conversation as it is now
    // (Claude reopens only the current branch).
    const left = await ckptJson(box, ['resume', `turn:3~1@${session.slice(0, 8)}`, '--delete-new', '--json']);
    t.like(left, { agent: 'claude', session, turn: 3, commandLine: `claude --resume=${session}` });
    t.is(left.headless, null);
    t.regex(left.steps[0], /on a branch a rewind left behind/);
    t.deepEqual(workspaceFiles(box), before.t3, 'resume restored the files before turn 3 of that branch');
    // Turn 2 of the current branch: the files as it started, and Claude's print mode, as resume prints it,
    // continues right before that prompt in a fork of the session.
    const plan = await ckptJson(box, ['resume', `turn:2@${session.slice(0, 8)}`, '--delete-new', '--json']);
    t.deepEqual(workspaceFiles(box), afterThree);
    t.is(plan.headless.at(-1), '<your next prompt>');
    // The last message before that prompt (the line it hangs off may be a system one, a stop-hook summary).
    const message = (uuid) => tx.lines.find((l) => l.uuid === uuid);
    let before4 = message(tx.prompt('t4').parentUuid);
    while (before4 && before4.type !== 'user' && before4.type !== 'assistant') before4 = message(before4.parentUuid);
    t.is(plan.headless.at(-2), `--resume-session-at=${before4.uuid}`);
    const argv = [...plan.headless.slice(1, -1), `${marker('t5')} turn five`, '--dangerously-skip-permissions', '--output-format', 'text'];
    const forked = await run(agent.bin, argv, { cwd: box.ws, env: claudeEnv(box, server, hookEnv), stdin: 'ignore', timeoutMs: 120_000 });
    t.is(forked.code, 0, forked.stderr);
    t.regex(forked.stdout, /Turn 5 done/);
    const folder = path.dirname(transcript);
    const fork = readdirSync(folder).find((f) => f.endsWith('.jsonl') && f !== path.basename(transcript));
    t.truthy(fork, 'a fork of the session, in a file of its own');
    t.is(transcriptOf(path.join(folder, fork)).prompt('t5').parentUuid, before4.uuid, 'it continues right before that prompt');
    // git-ckpt links the fork to the session and the turn it came from, and touches no file for it.
    const forkSession = path.basename(fork, '.jsonl');
    t.is(readTrace(tracePath(box)).find((e) => e.session === forkSession && e.phase === 'session-start')?.payload.source, 'fork');
    t.like(
      ledgerRecords(box).find((x) => x.fork),
      { session: forkSession, phase: 'fork', fork: { session, turn: 1 } },
    );
    t.deepEqual(workspaceFiles(box), afterThree, 'the fork left the files as resume restored them');
    const forkLog = await ckpt(box, ['log', '--session', forkSession]);
    t.regex(forkLog.stdout, new RegExp(`forked from ${session.slice(0, 13)} after its turn 1`));
    t.is(gitDirFingerprint(box), fingerprint, "the user's .git is untouched");
  });

  test('rewind (code and conversation), followRewind=auto: Claude puts back its own edits, git-ckpt what it missed but a file the user edited since; undo brings them back', async (t) => {
    // Claude's SDK file checkpointing: its own restore of what Write and Edit changed (`--rewind-files`).
    const { box, server, hookEnv, before, session, transcript } = await threeTurns(t, {
      CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: 'true',
    });
    appendFileSync(path.join(box.home, '.gitconfig'), '\tfollowRewind = auto\n');
    const fingerprint = gitDirFingerprint(box);
    const prompt2 = transcriptOf(transcript).prompt('t2').uuid;
    const rewound = await run(agent.bin, ['-p', '--resume', session, '--rewind-files', prompt2, '--dangerously-skip-permissions'], {
      cwd: box.ws,
      env: claudeEnv(box, server, hookEnv),
      stdin: 'ignore',
      timeoutMs: 120_000,
    });
    t.is(rewound.code, 0, rewound.stderr);
    t.regex(rewound.stdout, /Files rewound/);
    // Claude's restore covers its file tools only: two.txt gone, one.txt back; the shell's files stay.
    const files = workspaceFiles(box);
    t.is(files['one.txt'], before.t2['one.txt']);
    t.false('two.txt' in files);
    t.true('shell2.txt' in files && 'shell3.txt' in files && !('README.md' in files));
    // The user edits one of the shell's files before the next prompt.
    writeFileSync(path.join(box.ws, 'shell2.txt'), 'mine now\n');

    const { r, shown } = await turnAfterRewind(box, server, hookEnv, session, transcript);
    t.is(r.code, 0, r.stderr);
    t.is(shown.length, 1, JSON.stringify(shown));
    t.regex(
      shown[0],
      /git-ckpt: conversation rewound to before turn 2: restored 2 files of turns 2–3, which Claude Code's rewind did not put back: /,
    );
    t.regex(shown[0], /shell2\.txt \(changed since by you or another program\)/);
    t.regex(shown[0], /git ckpt undo brings turns 2–3's files back/);
    // Byte for byte: before turn 2, plus turn 4's file, plus the user's own edit.
    t.deepEqual(workspaceFiles(box), {
      ...before.t2,
      'four.txt': Buffer.from('four\n').toString('base64'),
      'shell2.txt': Buffer.from('mine now\n').toString('base64'),
    });
    const records = ledgerRecords(box);
    t.like(
      records.find((x) => x.rewind),
      { rewind: { parent: 1, kind: 'code', pending: 2, shell: 2 } },
    );
    const op = records.find((x) => x.kind === 'restore');
    t.truthy(op, 'the restore is a journaled operation of its own');
    t.deepEqual([...op.op.paths].sort(), ['README.md', 'shell3.txt']);
    t.regex(readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8'), /followRewind=auto: restored 2 path\(s\)/);

    const undo = await ckpt(box, ['undo']);
    t.is(undo.code, 0, undo.stderr);
    const back = workspaceFiles(box);
    t.true('shell3.txt' in back && !('README.md' in back), 'undo brings back what turns 2–3 left');
    t.true('two.txt' in back, 'what Claude put back of turns 2–3 too');
    t.is(back['shell2.txt'], Buffer.from('mine now\n').toString('base64'));
    t.is(gitDirFingerprint(box), fingerprint, "the user's .git is untouched");
  });
});

// Codex CLI 0.171: its backtrack goes through the app-server's thread/revert (what the TUI calls), which
// starts a new rollout segment whose history ends before the turn reverted to.
agentSuite(test, 'codex', 'rewind: the real Codex', (agent) => {
  test('rewind in Codex (app-server thread/revert before turn 2): the next prompt marks it and tells what turns 2–3 left, nothing restored; resume forks the thread before a prompt', async (t) => {
    const box = testSandbox(t, 'rewind');
    const server = await startCodexServer({
      u1: { steps: [[{ shell: "printf 'one\\n' > one.txt" }]], final: 'T1 done.' },
      u2: { steps: [[{ shell: "printf 'two\\n' > two.txt" }]], final: 'T2 done.' },
      u3: { steps: [[{ shell: "printf 'three\\n' > three.txt && rm README.md" }]], final: 'T3 done.' },
      u4: { steps: [[{ shell: "printf 'four\\n' > four.txt" }]], final: 'T4 done.' },
      u5: { steps: [], final: 'T5 done.' },
    });
    t.teardown(() => server.close?.());
    writeCodexConfig(box, server.url);
    appendFileSync(path.join(box.home, '.gitconfig'), '\tfollowRewind = auto\n');
    const install = await ckpt(box, ['hooks', 'install', '--agent', 'codex', '--scope', 'user']);
    t.is(install.code, 0, install.stderr);
    trustHooksInConfig(box, hookTrustEntries(path.join(box.home, '.codex', 'hooks.json')));
    const fingerprint = gitDirFingerprint(box);
    let thread = null;
    const before = {};
    for (const name of ['u1', 'u2', 'u3']) {
      before[name] = workspaceFiles(box);
      const r = await codexTurn(box, agent.bin, `[[ckpt ${name}]] go`, { resume: thread ? 'last' : null });
      t.is(r.code, 0, describeRun(r));
      thread ??= r.thread;
    }
    const turnIds = readCodexTrace(box)
      .filter((e) => e.phase === 'turn-start')
      .map((e) => e.payload.turn_id);
    t.is(turnIds.length, 3);
    const afterThree = workspaceFiles(box);
    // Back to before turn 2, as the TUI's Esc Esc does it.
    await withAppServer(box, agent.bin, async (call) => {
      await call('thread/resume', { threadId: thread });
      await call('thread/revert', { threadId: thread, beforeTurnId: turnIds[1] });
    });
    const r4 = await codexTurn(box, agent.bin, '[[ckpt u4]] go', { resume: thread });
    t.is(r4.code, 0, describeRun(r4));
    // The prompt's rollout is the new segment: its history ends before turn 2 started.
    const segment = readCodexTrace(box).findLast((e) => e.phase === 'turn-start').payload.transcript_path;
    t.regex(path.basename(segment), new RegExp(`${thread}_[0-9a-f-]+\\.jsonl$`));
    t.is(JSON.parse(readFileSync(segment, 'utf8').split('\n')[0]).payload.history_base.thread_id, thread);

    const mark = ledgerRecords(box).find((x) => x.rewind);
    t.like(mark, { session: thread, turn: 4, agent: 'codex', rewind: { parent: 1, kind: 'unknown', pending: 3, shell: 3 } });
    t.regex(
      readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8'),
      /codex turn-start .*conversation rewound to before turn 2 \(turns 2–3 left behind, unknown\)/,
    );
    // Only the shell wrote: the workspace cannot say which rewind it was, so auto restores nothing.
    t.deepEqual(workspaceFiles(box), { ...afterThree, 'four.txt': Buffer.from('four\n').toString('base64') });
    const status = await ckpt(box, ['status']);
    t.regex(status.stdout, /went back to before turn 2 .*turns 2–3's changes \(3 files, 3 of them only by the shell\)/);
    const log = await ckptJson(box, ['log', '--json']);
    t.deepEqual([...new Set(log.filter((x) => x.session === thread).map((x) => `${x.turn}=${x.turnLabel}`))].sort(), [
      '1=1',
      '2=2~1',
      '3=3~1',
      '4=2',
    ]);
    const restored = await ckpt(box, ['restore', `turn:2~1@${thread.slice(0, 8)}`, '--delete-new']);
    t.is(restored.code, 0, restored.stderr);
    t.deepEqual(workspaceFiles(box), before.u2);

    // resume turn:2 (the prompt after the rewind): the files as it started, and Codex's own fork of the
    // thread right after turn 1 (app-server thread/fork, lastTurnId), which `codex resume` then opens.
    const codexOnPath = { ...codexEnv(box), PATH: `${path.dirname(agent.bin)}${path.delimiter}${box.env.PATH}` };
    const resumed = await ckpt(box, ['resume', `turn:2@${thread.slice(0, 8)}`, '--delete-new', '--json'], { env: codexOnPath });
    t.is(resumed.code, 0, resumed.stderr);
    const plan = JSON.parse(resumed.stdout);
    t.deepEqual(workspaceFiles(box), afterThree);
    t.is(plan.command[0], 'codex');
    t.deepEqual(plan.command.slice(1, 3), ['resume', '--'], 'the thread id after --: never an option of codex');
    const forkId = plan.command[3];
    t.not(forkId, thread, 'a new thread');
    t.is(plan.fork, null);
    // The fork holds turn 1 and nothing after it: its next turn sees only the first prompt.
    const r5 = await codexTurn(box, agent.bin, '[[ckpt u5]] go', { resume: forkId });
    t.is(r5.code, 0, describeRun(r5));
    const u5 = server.requests.filter((q) => JSON.stringify(q.body ?? '').includes('[[ckpt u5]]')).at(-1);
    const asked = JSON.stringify(u5?.body ?? '');
    t.true(asked.includes('[[ckpt u1]]'), 'turn 1 is in the fork');
    t.false(/\[\[ckpt u[234]\]\]/.test(asked), 'turns 2–4 are not');
    // The fork's first prompt links it to the thread and the turn it was forked after.
    t.like(
      ledgerRecords(box).find((x) => x.fork),
      { session: forkId, agent: 'codex', phase: 'fork', fork: { session: thread, turn: 1 } },
    );
    t.false(
      ledgerRecords(box).some((x) => x.session === forkId && x.rewind),
      'a fork is no rewind',
    );
    t.is(gitDirFingerprint(box), fingerprint, "the user's .git is untouched");
  });
});

// Gemini CLI 0.61: /rewind is a dialog of its TUI only, so the TUI runs on a pseudo-terminal
// (test/agents/tty-drive.py) and the keys are typed as a person types them.
agentSuite(test, 'gemini', 'rewind: the real Gemini CLI', (agent) => {
  test('rewind in Gemini CLI (/rewind in its TUI, to before prompt 2, conversation only): the next prompt marks it and tells what turns 2–3 left', async (t) => {
    const box = testSandbox(t, 'rewind');
    const server = await startGeminiServer({
      g1: [{ calls: [{ name: 'write_file', args: { file_path: 'one.txt', content: 'one\n' } }] }, { text: 'G1 done.' }],
      g2: [{ calls: [{ name: 'run_shell_command', args: { command: "printf 'two\\n' > two.txt" } }] }, { text: 'G2 done.' }],
      g3: [{ calls: [{ name: 'write_file', args: { file_path: 'three.txt', content: 'three\n' } }] }, { text: 'G3 done.' }],
      g4: [{ text: 'G4 done.' }],
    });
    t.teardown(() => server.close?.());
    const env = { ...configureGemini(box, server), GIT_CKPT_HOOK_TRACE: path.join(box.base, 'trace.jsonl') };
    const install = await ckpt(box, ['hooks', 'install', '--agent', 'gemini', '--scope', 'user']);
    t.is(install.code, 0, install.stderr);
    const fingerprint = gitDirFingerprint(box);
    const before = {};
    for (const [i, name] of ['g1', 'g2', 'g3'].entries()) {
      before[name] = workspaceFiles(box);
      const r = await runGeminiTurn(agent, box, env, `[[ckpt ${name}]] go`, { resume: i > 0 });
      t.is(r.code, 0, describeGeminiRun(name, r));
    }
    const afterThree = workspaceFiles(box);
    // The TUI, resumed: /rewind lists the user's messages oldest first (each tool result too), the cursor
    // on "Stay at current position": up to prompt 2, Enter, then down to "Rewind conversation" (the
    // conversation only), Enter.
    const up = '\u001b[A';
    const down = '\u001b[B';
    const tty = spawnSync(
      'python3',
      [
        path.join(path.dirname(fileURLToPath(import.meta.url)), 'tty-drive.py'),
        JSON.stringify({
          argv: [agent.bin, '--resume', 'latest', '-m', MODEL, '--approval-mode', 'yolo'],
          cwd: box.ws,
          env: { ...env, TERM: 'xterm-256color', CI: '' },
          steps: [
            ['Type your message', '', 30],
            [null, '', 3],
            [null, '/rewind', 2],
            [null, '\r', 1],
            ['Use Enter to select a message', '', 20],
            ['until:● \\[\\[ckpt g2\\]\\] go', up, 15],
            [null, '\r', 1],
            ['Confirm Rewind', '', 15],
            ['until:● \\d\\. Rewind conversation +│', down, 4],
            [null, '\r', 1],
            [null, '', 3],
          ],
        }),
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    t.is(tty.status, 0, tty.stderr);
    const chats = path.join(box.home, '.gemini', 'tmp', 'rewind', 'chats');
    const sessionFile = path.join(
      chats,
      readdirSync(chats).find((f) => f.endsWith('.jsonl')),
    );
    const records = readFileSync(sessionFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const prompt2 = records.find((r) => r.type === 'user' && JSON.stringify(r.content).includes('[[ckpt g2]]'));
    t.truthy(
      records.find((r) => r.$rewindTo === prompt2.id),
      `Gemini wrote $rewindTo prompt 2 itself; the screen:\n${tty.stdout.slice(-3000)}`,
    );

    const r4 = await runGeminiTurn(agent, box, env, '[[ckpt g4]] go', { resume: true });
    t.is(r4.code, 0, describeGeminiRun('g4', r4));
    const session = r4.sessionId;
    const mark = ledgerRecords(box).find((x) => x.rewind);
    t.like(mark, { agent: 'gemini', turn: 4, rewind: { parent: 1, kind: 'conversation', pending: 2, shell: 1 } });
    t.regex(
      readFileSync(path.join(storeDir(box), 'hook.log'), 'utf8'),
      /gemini turn-start .*conversation rewound to before turn 2 \(turns 2–3 left behind, conversation\)/,
    );
    // Conversation only: nothing restored; the files as turns 2–3 left them.
    t.deepEqual(workspaceFiles(box), afterThree);
    const log = await ckptJson(box, ['log', '--json']);
    t.deepEqual([...new Set(log.filter((x) => x.session === mark.session).map((x) => `${x.turn}=${x.turnLabel}`))].sort(), [
      '1=1',
      '2=2~1',
      '3=3~1',
      '4=2',
    ]);
    t.true(session === null || session === mark.session);
    const restored = await ckpt(box, ['restore', `turn:2~1@${mark.session.slice(0, 8)}`, '--delete-new']);
    t.is(restored.code, 0, restored.stderr);
    t.deepEqual(workspaceFiles(box), before.g2);
    t.is(gitDirFingerprint(box), fingerprint, "the user's .git is untouched");
  });
});
