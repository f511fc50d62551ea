// The agent tools through a real agent's own MCP client. Claude Code 2.1.332 and
// Gemini CLI 0.61.0 start `git ckpt mcp` from the config `git ckpt mcp install`
// wrote (.mcp.json, .gemini/settings.json); their scripted models list
// checkpoints, ask for a restore plan (a dry run), then apply it. What the model
// received back and the workspace afterwards are checked.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { agentSuite, ckpt, ckptJson, git, gitDirFingerprint, ledgerRecords, testSandbox, workspaceFiles } from './harness.mjs';
import { marker, runClaude, startClaudeServer } from './claude.mjs';
import { configureGemini, describeRun, runGeminiTurn, startGeminiServer } from './gemini.mjs';

/** A project for test `t` whose committed app.txt the scripted sessions bump, then rewind. */
function projectWithApp(t) {
  const box = testSandbox(t);
  writeFileSync(path.join(box.ws, 'app.txt'), 'version 1\n');
  git(box, ['add', '-A']);
  git(box, ['commit', '-qm', 'app']);
  return box;
}

/** The tool results the model received for its calls of `name`, in order: [{ text, isError }]. */
function toolResults(server, name) {
  const ids = new Set(server.calls.filter((c) => c.name === name).map((c) => c.id));
  const seen = new Map();
  for (const { body } of server.requests) {
    for (const message of body?.messages ?? []) {
      if (message.role !== 'user' || !Array.isArray(message.content)) continue;
      for (const block of message.content) {
        if (block.type !== 'tool_result' || !ids.has(block.tool_use_id)) continue;
        const text = typeof block.content === 'string' ? block.content : block.content.map((c) => c.text ?? '').join('\n');
        seen.set(block.tool_use_id, { text, isError: Boolean(block.is_error) });
      }
    }
  }
  return [...ids].map((id) => seen.get(id));
}

/** The planId of a dry run, as the CLI prints it. */
async function planIdOf(box, args) {
  return (await ckptJson(box, [...args, '--dry-run', '--json'])).planId;
}

agentSuite(test, 'claude', 'claude mcp: the real CLI', (claude) => {
  test('claude: the model lists checkpoints, gets a restore plan (dry run), applies it; the workspace is back to before turn 1', async (t) => {
    const box = projectWithApp(t);
    const ws = box.ws;
    const fingerprint = gitDirFingerprint(box);
    t.is((await ckpt(box, ['hooks', 'install', '--agent', 'claude'])).code, 0);
    const mcp = await ckpt(box, ['mcp', 'install', '--agent', 'claude']);
    t.is(mcp.code, 0, mcp.stderr);
    // What a person does once when Claude Code asks about the project's .mcp.json: Claude adds it to the
    // project's local settings, where git-ckpt's hooks are.
    const local = path.join(ws, '.claude', 'settings.local.json');
    writeFileSync(local, `${JSON.stringify({ ...JSON.parse(readFileSync(local, 'utf8')), enabledMcpjsonServers: ['git-ckpt'] })}\n`);
    const before = workspaceFiles(box);

    const tool = (name) => `mcp__git-ckpt__${name}`;
    const scripts = {
      t1: [
        { tools: [{ name: 'Write', input: { file_path: `${ws}/notes.txt`, content: 'notes\n' } }] },
        { tools: [{ name: 'Bash', input: { command: "sed -i 's/1/2/' app.txt", description: 'Bump the version' } }] },
        { text: 'Turn 1 done.' },
      ],
      t2: [
        { tools: [{ name: tool('checkpoint_list'), input: { limit: 10 } }] },
        { tools: [{ name: tool('checkpoint_restore'), input: { target: 'turn:1', deleteNew: true } }] },
        { tools: [{ name: tool('checkpoint_restore'), input: { target: 'turn:1', deleteNew: true, apply: true } }] },
        { text: 'Rewound.' },
      ],
    };
    const server = await startClaudeServer(scripts);
    t.teardown(() => server.close());
    const r1 = await runClaude(claude.bin, box, server, `${marker('t1')} Write notes and bump the version.`);
    t.is(r1.code, 0, r1.stderr);
    t.is(readFileSync(path.join(ws, 'app.txt'), 'utf8'), 'version 2\n');
    // The model applies the plan it was shown: the dry run's planId, which the same dry run from the CLI gives.
    scripts.t2[2].tools[0].input.planId = await planIdOf(box, ['restore', 'turn:1', '--delete-new']);
    const r2 = await runClaude(claude.bin, box, server, `${marker('t2')} Undo everything you did in turn 1.`, { resume: true });
    t.is(r2.code, 0, r2.stderr);
    t.regex(r2.stdout, /Rewound\./);
    t.deepEqual(server.unexpected, []);
    t.deepEqual(server.outbound, []);

    // Claude Code defers MCP tools behind its ToolSearch tool: their names reach the model in the request text.
    const sent = JSON.stringify(server.requests.map((r) => r.body));
    for (const name of [
      'checkpoint_now',
      'checkpoint_list',
      'checkpoint_diff',
      'checkpoint_restore',
      'checkpoint_undo',
      'checkpoint_status',
    ])
      t.true(sent.includes(tool(name)), `${name} made known to the model`);

    // Claude Code hands the model the structured content as JSON; its summary is the readable text.
    const [list] = toolResults(server, tool('checkpoint_list'));
    t.truthy(list, 'the model received the list');
    t.false(list.isError);
    const listed = JSON.parse(list.text);
    t.regex(listed.summary, /turn 1 “\[\[ckpt t1\]\] Write notes and bump the version\.”/);
    t.true(listed.checkpoints.some((c) => c.paths.some((p) => p.status === 'A' && p.path === 'notes.txt') && c.tool === 'Write'));
    const [plan, applied] = toolResults(server, tool('checkpoint_restore')).map((r) => ({ ...r, json: JSON.parse(r.text) }));
    t.false(plan.isError, plan.text);
    t.true(plan.json.dryRun);
    t.deepEqual(
      plan.json.files.map((f) => `${f.action} ${f.path}`),
      ['restore app.txt', 'delete notes.txt'],
    );
    t.regex(plan.json.summary, /DRY RUN, nothing was written/);
    t.regex(plan.json.diff, /-version 2\n\+version 1/);
    t.false(applied.isError, applied.text);
    t.false(applied.json.dryRun);
    t.regex(applied.json.summary, /checkpoint_undo with apply: true/);

    t.deepEqual(workspaceFiles(box), before, 'the workspace is as it was before turn 1');
    t.is(gitDirFingerprint(box), fingerprint, "the user's .git is untouched");
    const records = ledgerRecords(box);
    t.true(
      records.some((r) => r.kind === 'restore'),
      'the restore is journaled and recorded, undoable',
    );
    const undo = await ckpt(box, ['undo']);
    t.is(undo.code, 0, undo.stderr);
    t.is(readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'notes\n', 'and the person can take the rewind back');
  });
});

/** What Gemini CLI sent back to the model for each of its calls of `name`: the functionResponse parts, in order. */
function functionResponses(server, name) {
  const last = server.requests.at(-1)?.body;
  return (last?.contents ?? []).flatMap((c) =>
    (c.parts ?? []).filter((p) => p.functionResponse?.name === name).map((p) => p.functionResponse.response),
  );
}

agentSuite(test, 'gemini', 'gemini mcp: the real CLI', (gemini) => {
  test('gemini: the model lists checkpoints, gets a restore plan (dry run), applies it, through the settings.json mcpServers entry', async (t) => {
    const box = projectWithApp(t);
    const ws = box.ws;
    const scripts = {
      t1: [
        { calls: [{ name: 'write_file', args: { file_path: `${ws}/notes.txt`, content: 'notes\n' } }] },
        { calls: [{ name: 'run_shell_command', args: { command: "sed -i 's/1/2/' app.txt", description: 'Bump the version' } }] },
        { text: 'Turn 1 done.' },
      ],
      t2: [],
    };
    const server = await startGeminiServer(scripts);
    t.teardown(() => server.close());
    const env = configureGemini(box, server);
    t.is((await ckpt(box, ['hooks', 'install', '--agent', 'gemini'])).code, 0);
    const mcp = await ckpt(box, ['mcp', 'install', '--agent', 'gemini']);
    t.is(mcp.code, 0, mcp.stderr);
    const before = workspaceFiles(box);

    const r1 = await runGeminiTurn(gemini, box, env, `${marker('t1')} Write notes and bump the version.`);
    t.is(r1.code, 0, describeRun('turn 1', r1));
    // The names Gemini CLI declared for our tools (it qualifies MCP tools with the server's name).
    const declared = server.requests.flatMap((r) =>
      (r.body?.tools ?? []).flatMap((x) => (x.functionDeclarations ?? []).map((d) => d.name)),
    );
    const named = (tool) => declared.find((d) => d.endsWith(tool) && d.includes('git-ckpt'));
    for (const tool of [
      'checkpoint_now',
      'checkpoint_list',
      'checkpoint_diff',
      'checkpoint_restore',
      'checkpoint_undo',
      'checkpoint_status',
    ])
      t.truthy(named(tool), `${tool} declared to the model (declared: ${[...new Set(declared)].join(' ')})`);
    t.log(`Gemini CLI names the tools ${named('checkpoint_list')} and so on`);
    scripts.t2.push(
      { calls: [{ name: named('checkpoint_list'), args: { limit: 10 } }] },
      { calls: [{ name: named('checkpoint_restore'), args: { target: 'turn:1', deleteNew: true } }] },
      {
        calls: [
          {
            name: named('checkpoint_restore'),
            args: { target: 'turn:1', deleteNew: true, apply: true, planId: await planIdOf(box, ['restore', 'turn:1', '--delete-new']) },
          },
        ],
      },
      { text: 'Rewound.' },
    );
    const r2 = await runGeminiTurn(gemini, box, env, `${marker('t2')} Undo everything you did in turn 1.`, { resume: true });
    t.is(r2.code, 0, describeRun('turn 2', r2));
    const text = (response) => JSON.stringify(response);
    const [list] = functionResponses(server, named('checkpoint_list'));
    t.regex(text(list), /notes\.txt/, 'the model received the list');
    const [plan, applied] = functionResponses(server, named('checkpoint_restore'));
    t.regex(text(plan), /DRY RUN, nothing was written/);
    t.regex(text(plan), /delete\s+notes\.txt/);
    t.regex(text(applied), /checkpoint_undo with apply: true/);
    t.deepEqual(workspaceFiles(box), before, 'the workspace is as it was before turn 1');
  });
});
