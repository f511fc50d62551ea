// `git ckpt mcp`: the agent tools over the Model Context Protocol, driven by the
// official SDK's own client over stdio against the built CLI, on real workspaces.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, ROOT, ckpt, ckptJson, ledgerLines, sandbox, startUi, storeDir, treeState, workspaceState, write } from './helpers.mjs';

/** A connected SDK client for a server started in the workspace; closed when the test ends. */
async function connect(t, box, args = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args, 'mcp'],
    cwd: box.ws,
    env: box.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client({ name: 'git-ckpt-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  // Listed first, as agents do: the SDK's client then checks every structured result against the tool's output schema.
  await client.listTools();
  return { client, stderr: () => stderr };
}

const call = (client, name, args = {}) => client.callTool({ name, arguments: args });

/** What a dry run must leave alone: the workspace, the store's files and the ledger, byte for byte. */
function everything(box, skip = ['hook.log']) {
  return `${treeState(box.ws, { skip: ['.git'] })}\n--store--\n${treeState(storeDir(box), { skip })}`;
}

async function history(box) {
  write(box, 'a.txt', 'one\n');
  write(box, 'keep.txt', 'stays\n');
  const first = await ckptJson(box, ['snapshot', '-m', 'first']);
  write(box, 'a.txt', 'two\n');
  write(box, 'b.txt', 'new file\n');
  const second = await ckptJson(box, ['snapshot', '-m', 'second']);
  return { first, second };
}

test('initialize and list: nine tools with schemas, output schemas, annotations and instructions for the model', async (t) => {
  const box = sandbox();
  const { client } = await connect(t, box);
  t.is(client.getServerVersion()?.name, 'git-ckpt');
  t.regex(client.getInstructions() ?? '', /dry runs unless apply is true/);
  const { tools } = await client.listTools();
  t.deepEqual(
    tools.map((tool) => tool.name),
    [
      'checkpoint_now',
      'checkpoint_list',
      'checkpoint_diff',
      'checkpoint_restore',
      'checkpoint_undo',
      'checkpoint_forget',
      'checkpoint_status',
      'resume_plan',
      'checkpoint_share',
    ],
  );
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
  for (const tool of tools) {
    t.is(tool.inputSchema.type, 'object', tool.name);
    t.is(tool.outputSchema?.type, 'object', tool.name);
    t.true(tool.description.length > 80, tool.name);
  }
  t.true(byName.checkpoint_list.annotations.readOnlyHint);
  t.true(byName.checkpoint_diff.annotations.readOnlyHint);
  t.true(byName.checkpoint_status.annotations.readOnlyHint);
  t.true(byName.resume_plan.annotations.readOnlyHint);
  t.true(byName.checkpoint_restore.annotations.destructiveHint);
  t.false(byName.checkpoint_restore.annotations.readOnlyHint);
  t.false(byName.checkpoint_now.annotations.destructiveHint);
  t.deepEqual(byName.checkpoint_restore.inputSchema.required, ['target']);
  // Forget is offered as a preview only: read-only, and nothing to apply it with.
  t.true(byName.checkpoint_forget.annotations.readOnlyHint);
  t.false(byName.checkpoint_forget.annotations.destructiveHint);
  t.deepEqual(Object.keys(byName.checkpoint_forget.inputSchema.properties).sort(), ['before', 'checkpoints', 'paths', 'session']);
  t.deepEqual(byName.checkpoint_restore.inputSchema.properties.mode.enum, ['asof', 'revert']);
  // Only the share tool reaches beyond the machine, and only the remote the user named.
  t.deepEqual(
    tools.filter((tool) => tool.annotations.openWorldHint).map((tool) => tool.name),
    ['checkpoint_share'],
  );
});

test('checkpoint_share lists and fetches from the remote the user shared to; it pushes only with ckpt.share.agentPush=true', async (t) => {
  const other = sandbox();
  const remote = path.join(other.base, 'remote.git');
  spawnSync('git', ['init', '-q', '--bare', remote], { env: other.env });
  write(other, 'o.txt', 'from the other machine\n');
  await ckptJson(other, ['snapshot', '--kind', 'post', '--session', 'elsewhere', '--turn', '1']);
  await ckptJson(other, ['share', 'init', '--remote', remote]);
  await ckptJson(other, ['push']);

  const box = sandbox();
  await history(box);
  write(box, 'h.txt', 'here\n');
  await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 'here', '--turn', '1']);
  await ckptJson(box, ['share', 'init', '--remote', remote]);
  const { client } = await connect(t, box);
  // Listing the tools first makes the SDK's client check every structured result against its output schema, as agents do.
  await client.listTools();
  const listed = await call(client, 'checkpoint_share', { action: 'list' });
  t.falsy(listed.isError, listed.content[0].text);
  t.like(listed.structuredContent.sessions, [{ session: 'elsewhere', status: 'another machine' }]);
  const fetched = await call(client, 'checkpoint_share', { action: 'fetch' });
  t.falsy(fetched.isError, fetched.content[0].text);
  t.regex(fetched.content[0].text, /fetched 1 new checkpoint/);
  const list = await call(client, 'checkpoint_list', {});
  t.falsy(list.isError, list.content[0].text);
  t.regex(list.content[0].text, /elsewhere/);
  t.like(
    // Another store's session is named by its writer: it never joins one of this store's.
    list.structuredContent.checkpoints.find((c) => c.session?.startsWith('elsewhere@')),
    { origin: { remote: 'ckpt' } },
  );
  const refused = await call(client, 'checkpoint_share', { action: 'push' });
  t.true(refused.isError);
  t.regex(refused.content[0].text, /pushing is the user’s to do \(git ckpt push\), unless they set ckpt\.share\.agentPush=true/);
  const heads = () => spawnSync('git', ['--git-dir', remote, 'for-each-ref'], { env: box.env, encoding: 'utf8' }).stdout.trim().split('\n');
  t.is(heads().length, 1, 'nothing was pushed');
  const dry = await call(client, 'checkpoint_share', { action: 'push', dryRun: true });
  t.falsy(dry.isError, dry.content[0].text);
  t.like(dry.structuredContent.sessions, [{ session: 'here', status: 'would-push' }]);
  appendFileSync(path.join(box.home, '.gitconfig'), '[ckpt "share"]\n\tagentPush = true\n');
  const pushed = await call(client, 'checkpoint_share', { action: 'push' });
  t.falsy(pushed.isError, pushed.content[0].text);
  t.is(heads().length, 2);
});

test('checkpoint_now, list, diff and status on a real workspace: text for the model, structured content for programs', async (t) => {
  const box = sandbox();
  const { first, second } = await history(box);
  const userGit = treeState(path.join(box.ws, '.git'));
  const { client } = await connect(t, box);

  write(box, 'c.txt', 'before a risky command\n');
  const now = await call(client, 'checkpoint_now', { message: 'before the migration' });
  t.falsy(now.isError);
  t.true(now.structuredContent.created);
  t.regex(now.content[0].text, /^checkpoint [0-9a-f]{8} taken \(\+1 ~0 -0\): c\.txt/);
  const again = await call(client, 'checkpoint_now', {});
  t.false(again.structuredContent.created);
  t.regex(again.content[0].text, /nothing changed since checkpoint/);

  const list = await call(client, 'checkpoint_list', { limit: 2 });
  t.is(list.structuredContent.total, 3);
  t.is(list.structuredContent.shown, 2);
  t.is(list.structuredContent.more, 1);
  t.is(list.structuredContent.checkpoints[0].id, now.structuredContent.id);
  t.is(list.structuredContent.checkpoints[0].message, 'before the migration');
  t.is(list.structuredContent.checkpoints[1].id, second.id);
  t.deepEqual(list.structuredContent.checkpoints[1].stats, { added: 1, modified: 1, deleted: 0 });
  t.regex(list.content[0].text, /1 older checkpoint\(s\) not shown/);

  write(box, 'a.txt', 'three\n');
  const stat = await call(client, 'checkpoint_diff', {});
  t.regex(stat.structuredContent.diff, /a\.txt \| 2 \+-/);
  const patch = await call(client, 'checkpoint_diff', { from: first.id.slice(0, 8), to: second.id.slice(0, 8), format: 'patch' });
  t.regex(patch.structuredContent.diff, /-one\n\+two/);
  t.regex(patch.structuredContent.diff, /new file mode/);
  const onePath = await call(client, 'checkpoint_diff', { from: first.id.slice(0, 8), paths: ['b.txt'], format: 'patch' });
  t.notRegex(onePath.structuredContent.diff, /a\.txt/);

  const status = await call(client, 'checkpoint_status');
  t.is(status.structuredContent.checkpoints, 3);
  t.true(status.structuredContent.dirty);
  t.is(status.structuredContent.latest.id, now.structuredContent.id);
  t.regex(status.content[0].text, /3 checkpoint\(s\) in 0 session\(s\)/);
  t.is(treeState(path.join(box.ws, '.git')), userGit, "the user's .git is untouched");
});

test('restore and undo are dry runs unless apply is true: nothing changes; applied, they round-trip byte for byte', async (t) => {
  const box = sandbox();
  const { first } = await history(box);
  write(box, 'a.txt', 'uncommitted work\n');
  const { client } = await connect(t, box);
  const before = everything(box);
  const content = workspaceState(box);

  const plan = await call(client, 'checkpoint_restore', { target: first.id.slice(0, 8) });
  t.falsy(plan.isError);
  t.true(plan.structuredContent.dryRun);
  t.deepEqual(plan.structuredContent.files, [{ path: 'a.txt', action: 'restore' }]);
  t.deepEqual(plan.structuredContent.leftovers, ['b.txt']);
  t.regex(plan.structuredContent.diff, /-uncommitted work\n\+one/);
  t.regex(plan.content[0].text, /DRY RUN, nothing was written/);
  t.regex(plan.content[0].text, /apply: true/);
  const deleting = await call(client, 'checkpoint_restore', { target: first.id.slice(0, 8), deleteNew: true });
  t.deepEqual(
    deleting.structuredContent.files.map((f) => `${f.action} ${f.path}`),
    ['restore a.txt', 'delete b.txt'],
  );
  t.regex(deleting.structuredContent.diff, /deleted file mode[\s\S]*-new file/);
  const revertPlan = await call(client, 'checkpoint_restore', { target: 'latest', mode: 'revert' });
  t.true(revertPlan.structuredContent.dryRun);
  t.is(everything(box), before, 'dry runs wrote nothing: workspace, store and ledger are byte-identical');

  t.regex(plan.structuredContent.planId, /^[0-9a-f]{16}$/);
  t.regex(plan.content[0].text, new RegExp(`planId: "${plan.structuredContent.planId}"`));
  const applied = await call(client, 'checkpoint_restore', {
    target: first.id.slice(0, 8),
    apply: true,
    planId: plan.structuredContent.planId,
  });
  t.false(applied.structuredContent.dryRun);
  t.truthy(applied.structuredContent.guard);
  t.regex(applied.content[0].text, /checkpoint_undo with apply: true/);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'one\n');
  t.is(readFileSync(path.join(box.ws, 'b.txt'), 'utf8'), 'new file\n', 'a leftover is left alone');

  const undoPlan = await call(client, 'checkpoint_undo');
  t.true(undoPlan.structuredContent.dryRun);
  t.regex(undoPlan.structuredContent.diff, /-one\n\+uncommitted work/);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'one\n');
  const undone = await call(client, 'checkpoint_undo', { apply: true, planId: undoPlan.structuredContent.planId });
  t.falsy(undone.isError);
  t.is(workspaceState(box), content, 'undo brings back the exact state before the restore');
  t.true(ledgerLines(box).some((r) => r.kind === 'undo'));
});

test('apply writes only the plan the user saw: without a planId it is refused, and a plan changed since is refused as stale', async (t) => {
  const box = sandbox();
  const { first } = await history(box);
  write(box, 'a.txt', 'uncommitted work\n');
  const { client } = await connect(t, box);
  const plan = await call(client, 'checkpoint_restore', { target: first.id.slice(0, 8) });
  const planId = plan.structuredContent.planId;
  const bare = await call(client, 'checkpoint_restore', { target: first.id.slice(0, 8), apply: true });
  t.true(bare.isError);
  t.regex(bare.content[0].text, /needs the planId of the dry run/);
  // An edit elsewhere leaves the plan as it was; an edit to a file the plan writes changes it.
  write(box, 'unrelated.txt', 'elsewhere\n');
  const again = await call(client, 'checkpoint_restore', { target: first.id.slice(0, 8) });
  t.is(again.structuredContent.planId, planId, 'an unrelated edit does not change the plan');
  write(box, 'a.txt', 'edited after the preview\n');
  const stale = await call(client, 'checkpoint_restore', { target: first.id.slice(0, 8), apply: true, planId });
  t.true(stale.isError);
  t.regex(stale.content[0].text, /plan changed since its preview/);
  t.is(readFileSync(path.join(box.ws, 'a.txt'), 'utf8'), 'edited after the preview\n', 'nothing was written');
  t.false(ledgerLines(box).some((r) => r.kind === 'restore'));
});

test('checkpoint_forget is a dry run only: what would go and the bytes freed, the command for the user, and not one byte changed', async (t) => {
  const box = sandbox();
  const { second } = await history(box);
  write(box, 'credentials.json', '{"token":"captured by mistake"}\n');
  await ckptJson(box, ['snapshot', '-m', 'third']);
  const { client } = await connect(t, box);
  const before = everything(box);
  const r = await call(client, 'checkpoint_forget', { paths: ['credentials.json'] });
  t.falsy(r.isError);
  t.regex(r.content[0].text, /^forget: DRY RUN, nothing was changed \(this tool cannot apply it\)/);
  t.regex(r.content[0].text, /credentials\.json \(1 checkpoint\(s\)\)/);
  t.regex(r.content[0].text, /the user runs \(there is no undo\): git ckpt forget --path credentials\.json/);
  t.is(r.structuredContent.command, 'git ckpt forget --path credentials.json');
  t.deepEqual(r.structuredContent.paths, [{ path: 'credentials.json', checkpoints: 1 }]);
  // The store's size afterwards, as the repack would leave it (a store this small may grow: one new pack and its index).
  t.true(r.structuredContent.bytesAfter > 0);
  t.regex(r.content[0].text, /Store \S+ \S+ → ~\S+ \S+ \((~\S+ \S+ freed|it grows: the objects kept go into one new pack)/);
  const drop = await call(client, 'checkpoint_forget', { checkpoints: [second.id.slice(0, 8)] });
  t.deepEqual(
    drop.structuredContent.dropped.map((d) => d.id),
    [second.id],
  );
  // An apply smuggled in is not an argument this tool has: it stays a dry run.
  const smuggled = await call(client, 'checkpoint_forget', { paths: ['credentials.json'], apply: true });
  t.regex(smuggled.content[0].text, /DRY RUN/);
  for (const [args, pattern] of [
    [{ paths: ['!credentials.json'] }, /negations are not supported/],
    [{ before: 'someday' }, /bad --before date/],
    [{ session: 'x', paths: ['a'] }, /one kind of selection/],
    [{}, /name what to forget/],
  ]) {
    const bad = await call(client, 'checkpoint_forget', args);
    t.true(bad.isError, JSON.stringify(args));
    t.regex(bad.content[0].text, pattern);
  }
  t.is(everything(box), before, 'the previews wrote nothing: workspace, store and ledger are byte-identical');
  t.is(ledgerLines(box).length, 3);
});

test('one view of each record: the CLI --json, the MCP tools and the web API give the same fields with the same values', async (t) => {
  const box = sandbox();
  const { first } = await history(box);
  await ckptJson(box, ['snapshot', '--kind', 'post', '--session', 'sess-view', '--turn', '1', '--step', '1', '--tool', 'Bash']);
  write(box, 'a.txt', 'uncommitted work\n');
  const { client } = await connect(t, box);
  const ui = await startUi(t, box);
  const api = async (route, body) => {
    const r = await fetch(`${ui.base}${route}`, {
      method: body ? 'POST' : 'GET',
      headers: { cookie: `ckpt_ui_${ui.port}=${ui.token}`, ...(body ? { origin: ui.base, 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return r.json();
  };
  const cli = await ckptJson(box, ['log']);
  const mcp = (await call(client, 'checkpoint_list', { limit: 20 })).structuredContent.checkpoints;
  const web = (await api('/api/timeline')).records;
  t.true(cli.length >= 2);
  t.deepEqual(mcp, cli, 'MCP and the CLI');
  t.deepEqual(web, cli, 'the web API and the CLI');
  const plan = await ckptJson(box, ['restore', first.id, '--dry-run']);
  const mcpPlan = (await call(client, 'checkpoint_restore', { target: first.id })).structuredContent;
  const webPlan = await api('/api/rollback', { target: first.id, dryRun: true });
  const { undo: _undo, diff: _diff, diffTruncated: _cut, summary: _summary, ...mcpFields } = mcpPlan;
  const { undo: _u, diff: _d, diffTruncated: _c, ok: _ok, summary: _s, ...webFields } = webPlan;
  t.deepEqual(mcpFields, plan, 'MCP and the CLI plan');
  t.deepEqual(webFields, plan, 'the web API and the CLI plan');
});

test('bad calls are tool errors with one sentence, never a crash: unknown addresses, options as ids, hostile paths, oversized arguments', async (t) => {
  const box = sandbox();
  await history(box);
  const { client } = await connect(t, box);
  // Reading the history may refresh the degraded probe's cache; nothing else may change.
  const before = everything(box, ['hook.log', 'probe.json']);
  const cases = [
    ['checkpoint_restore', { target: 'ffffffffff' }, /unknown checkpoint/],
    ['checkpoint_restore', { target: '--output=/tmp/x' }, /not a checkpoint address/],
    ['checkpoint_diff', { from: 'latest~9' }, /only 2 checkpoints exist/],
    ['checkpoint_restore', { target: 'latest', paths: ['../outside.txt'] }, /outside the workspace/],
    ['checkpoint_restore', { target: 'latest', paths: ['.git/config'] }, /path refused/],
    ['checkpoint_diff', { paths: ['/etc/passwd'] }, /outside the workspace/],
    ['checkpoint_restore', { target: 'latest', mode: 'revert', paths: ['a.txt'] }, /asof" only/],
    ['checkpoint_list', { limit: -3 }, /limit/],
    ['checkpoint_restore', { mode: 'asof' }, /target/],
    ['checkpoint_diff', { paths: Array.from({ length: 40 }, (_, i) => `${'x'.repeat(2000)}${i}`) }, /64 KiB/],
  ];
  for (const [name, args, pattern] of cases) {
    const r = await call(client, name, args);
    t.true(r.isError, `${name} ${JSON.stringify(args).slice(0, 80)}`);
    t.regex(r.content[0].text, pattern, name);
    t.false(r.content[0].text.includes('\n    at '), 'no stack trace');
  }
  t.is(everything(box, ['hook.log', 'probe.json']), before, 'nothing changed');
  // Still serving.
  t.is((await call(client, 'checkpoint_list')).structuredContent.total, 2);
});

test('resume_plan: the files resume would restore and the command that reopens the conversation, read-only; a bad turn is a tool error', async (t) => {
  const box = sandbox();
  const event = (phase, payload) =>
    ckpt(box, ['hook', 'claude', phase], { input: JSON.stringify({ session_id: 'cs-mcp', cwd: box.ws, ...payload }) });
  for (const n of [1, 2]) {
    await event('turn-start', { hook_event_name: 'UserPromptSubmit', prompt: `prompt ${n}`, prompt_id: `p${n}` });
    const call = {
      prompt_id: `p${n}`,
      tool_name: 'Write',
      tool_use_id: `c${n}`,
      tool_input: { file_path: path.join(box.ws, `f${n}.txt`) },
    };
    await event('pre', { ...call, hook_event_name: 'PreToolUse' });
    write(box, `f${n}.txt`, `${n}\n`);
    await event('post', { ...call, hook_event_name: 'PostToolUse' });
  }
  const { client } = await connect(t, box);
  const before = everything(box, ['hook.log', 'probe.json']);
  const r = await call(client, 'resume_plan', { turn: 'turn:2' });
  t.falsy(r.isError, r.content[0].text);
  t.like(r.structuredContent, {
    agent: 'claude',
    session: 'cs-mcp',
    turn: 2,
    title: 'prompt 2',
    command: ['claude', '--resume=cs-mcp'],
    commandLine: 'claude --resume=cs-mcp',
  });
  // As restore does, resume deletes nothing unless asked: f2.txt, which turn 2 did not have, stays.
  t.deepEqual(r.structuredContent.restore.files, []);
  // One view of a resume: the CLI's --json and the web API give the same object (the tool adds its text as summary).
  const { summary: _summary, ...view } = r.structuredContent;
  t.deepEqual(await ckptJson(box, ['resume', 'turn:2', '--dry-run']), view, 'the CLI and MCP');
  const ui = await startUi(t, box);
  const web = await fetch(`${ui.base}/api/resume?turn=turn:2`, {
    headers: { cookie: `ckpt_ui_${ui.port}=${ui.token}` },
  });
  const { ok: _ok, ...webView } = await web.json();
  t.deepEqual(webView, view, 'the web API and MCP');
  t.regex(r.content[0].text, /and leave 1 file\(s\) that turn did not have \(--delete-new deletes the captured ones\)/);
  t.regex(r.content[0].text, /the user runs it all with: git ckpt resume turn:2@cs-mcp/);
  const first = await call(client, 'resume_plan', { turn: 'turn:1', session: 'cs-m' });
  t.is(first.structuredContent.commandLine, 'claude', 'before the first prompt: a new conversation');
  for (const [args, pattern] of [
    [{ turn: 'latest' }, /resume goes back to a turn of an agent session/],
    [{ turn: 'turn:7' }, /no turn 7/],
    [{ turn: '--output=/tmp/x' }, /not a checkpoint address/],
  ]) {
    const bad = await call(client, 'resume_plan', args);
    t.true(bad.isError, JSON.stringify(args));
    t.regex(bad.content[0].text, pattern);
  }
  t.is(everything(box, ['hook.log', 'probe.json']), before, 'nothing changed');
});

test('a malformed line on stdin does not stop the server, and its stdout carries only JSON-RPC', async (t) => {
  const box = sandbox();
  await history(box);
  const child = spawn(process.execPath, [CLI, 'mcp'], { cwd: box.ws, env: box.env });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const send = (message) => child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  const waitFor = async (id) => {
    for (let i = 0; i < 200; i++) {
      const line = out.split('\n').find((l) => l.includes(`"id":${id}`));
      if (line) return JSON.parse(line);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no answer to ${id}: ${out}`);
  };
  send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
  await waitFor(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send('{"this is": not json');
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'checkpoint_list', arguments: {} } });
  const listed = await waitFor(2);
  t.is(listed.result.structuredContent.total, 2);
  child.stdin.end();
  const code = await new Promise((resolve) => child.on('close', resolve));
  t.is(code, 0);
  for (const line of out.split('\n').filter(Boolean)) t.is(JSON.parse(line).jsonrpc, '2.0', line.slice(0, 80));
});

test('requests written all at once with stdin closed right after (printf … | git ckpt mcp) are each answered before the server exits', async (t) => {
  const box = sandbox();
  await history(box);
  const requests = [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'printf', version: '0' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'checkpoint_list', arguments: {} } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'checkpoint_diff', arguments: { from: 'latest~99' } } },
  ];
  const r = spawnSync(process.execPath, [CLI, 'mcp'], {
    cwd: box.ws,
    env: box.env,
    input: requests.map((m) => `${JSON.stringify(m)}\n`).join(''),
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.is(r.status, 0, r.stderr);
  const answers = new Map(
    r.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => [JSON.parse(line).id, JSON.parse(line)]),
  );
  t.deepEqual([...answers.keys()].sort(), [1, 2, 3], 'each request answered (in the order each finished)');
  t.is(answers.get(2).result.structuredContent.total, 2);
  t.true(answers.get(3).result.isError, 'a bad address is a tool error, answered too');
});

test('hooks keep working while the server runs: a hook checkpoint shows in the next list, the server holding no lock', async (t) => {
  const box = sandbox();
  await history(box);
  const { client } = await connect(t, box);
  t.is((await call(client, 'checkpoint_list')).structuredContent.total, 2);
  write(box, 'by-agent.txt', 'written by a tool\n');
  const hook = spawn(process.execPath, [CLI, 'hook', 'claude', 'post'], { cwd: box.ws, env: box.env });
  hook.stdin.end(
    JSON.stringify({
      session_id: 'sess-mcp',
      prompt_id: 'p1',
      cwd: box.ws,
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_use_id: 'toolu_1',
    }),
  );
  t.is(await new Promise((resolve) => hook.on('close', resolve)), 0);
  const list = await call(client, 'checkpoint_list', { limit: 1 });
  t.is(list.structuredContent.total, 3);
  t.is(list.structuredContent.checkpoints[0].session, 'sess-mcp');
  t.deepEqual(list.structuredContent.checkpoints[0].paths, [{ status: 'A', path: 'by-agent.txt' }]);
  // And a CLI command at the same time.
  t.is((await ckpt(box, ['log', '--oneline'])).code, 0);
});

test('a long diff is cut at 64 KiB with a line saying how to ask for less', async (t) => {
  const box = sandbox();
  write(box, 'big.txt', '');
  await ckptJson(box, ['snapshot']);
  writeFileSync(path.join(box.ws, 'big.txt'), Array.from({ length: 8000 }, (_, i) => `line ${i} ${'y'.repeat(20)}\n`).join(''));
  const { client } = await connect(t, box);
  const r = await call(client, 'checkpoint_diff', { format: 'patch' });
  t.true(r.structuredContent.truncated);
  t.true(Buffer.byteLength(r.structuredContent.diff) <= 64 * 1024 + 300);
  t.true(r.structuredContent.bytes > 64 * 1024);
  t.regex(r.structuredContent.diff, /\[diff cut at 64 KiB of \d+ KiB: ask for fewer paths/);
});

test('-C and the client’s roots name the workspace', async (t) => {
  const box = sandbox();
  await history(box);
  const elsewhere = sandbox();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, '-C', box.ws, 'mcp'],
    cwd: elsewhere.ws,
    env: box.env,
  });
  const client = new Client({ name: 't', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.is((await call(client, 'checkpoint_status')).structuredContent.workspace, box.ws);

  const rooted = new Client({ name: 't', version: '1' }, { capabilities: { roots: {} } });
  const { ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  rooted.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: `file://${box.ws}`, name: 'project' }] }));
  await rooted.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: elsewhere.ws, env: box.env }));
  t.teardown(() => rooted.close());
  t.is((await call(rooted, 'checkpoint_status')).structuredContent.workspace, box.ws);
});

test('mcp install: each agent’s own MCP config, merged and idempotent, backups outside the project; status and uninstall', async (t) => {
  const box = sandbox();
  write(box, '.mcp.json', `${JSON.stringify({ mcpServers: { other: { command: 'other-server' } } }, null, 2)}\n`);
  const userToml = '# my codex settings\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-server" # keep me\n';
  mkdirSync(path.join(box.home, '.codex'), { recursive: true });
  writeFileSync(path.join(box.home, '.codex', 'config.toml'), userToml);
  const installed = await ckptJson(box, ['mcp', 'install']);
  t.deepEqual(
    installed.map((r) => [r.agent, path.relative(box.ws, r.file), r.changed]),
    [
      ['claude', '.mcp.json', true],
      ['codex', '.codex/config.toml', true],
      ['gemini', '.gemini/settings.json', true],
      ['cursor', '.cursor/mcp.json', true],
      ['copilot', '.github/mcp.json', true],
      ['qwen', '.qwen/settings.json', true],
      ['droid', '.factory/mcp.json', true],
      ['opencode', 'opencode.json', true],
      ['kilo', 'kilo.json', true],
      ['qoder', '.qoder/settings.local.json', true],
      ['auggie', '.augment/settings.local.json', true],
    ],
  );
  const script = path.join(ROOT, 'hooks', 'git-ckpt-mcp');
  t.deepEqual(
    JSON.parse(readFileSync(path.join(box.ws, 'opencode.json'), 'utf8')).mcp['git-ckpt'],
    { type: 'local', command: ['sh', script], enabled: true },
    'OpenCode and Kilo: an `mcp` entry with the command as a list',
  );
  const claude = JSON.parse(readFileSync(path.join(box.ws, '.mcp.json'), 'utf8'));
  t.deepEqual(claude.mcpServers.other, { command: 'other-server' }, 'other servers stay');
  t.deepEqual(claude.mcpServers['git-ckpt'], { type: 'stdio', command: 'sh', args: [script] });
  t.true(installed[0].backup.startsWith(box.store), 'the backup is under the store root, not in the project');
  t.regex(readFileSync(path.join(box.ws, '.codex', 'config.toml'), 'utf8'), /\[mcp_servers\.git-ckpt\]\ncommand = "sh"/);
  t.is(JSON.parse(readFileSync(path.join(box.ws, '.github', 'mcp.json'), 'utf8')).mcpServers['git-ckpt'].type, 'local');

  const again = await ckptJson(box, ['mcp', 'install']);
  t.true(
    again.every((r) => !r.changed),
    'installing twice changes nothing',
  );
  const status = await ckptJson(box, ['mcp', 'status']);
  t.deepEqual(
    status.filter((r) => r.scope === 'project').map((r) => r.state),
    installed.map(() => 'installed'),
  );

  // Cline has no project MCP file: named alone there it is told so; at user scope its settings file under ~/.cline/data.
  const clineProject = await ckpt(box, ['mcp', 'install', '--agent', 'cline']);
  t.is(clineProject.code, 2);
  t.regex(clineProject.stderr, /Cline keeps MCP servers only in its user settings: use --scope user/);
  const [cline] = await ckptJson(box, ['mcp', 'install', '--agent', 'cline', '--scope', 'user']);
  t.is(cline.file, path.join(box.home, '.cline', 'data', 'settings', 'cline_mcp_settings.json'));
  t.deepEqual(JSON.parse(readFileSync(cline.file, 'utf8')).mcpServers['git-ckpt'], { command: 'sh', args: [script] });
  const user = await ckptJson(box, ['mcp', 'install', '--agent', 'codex', '--scope', 'user']);
  t.true(user[0].changed);
  const toml = readFileSync(path.join(box.home, '.codex', 'config.toml'), 'utf8');
  t.true(toml.startsWith(userToml), 'the user’s own TOML, comments included, is kept as it was');
  t.regex(toml, /# git-ckpt: begin[\s\S]*\[mcp_servers\.git-ckpt\][\s\S]*# git-ckpt: end\n$/);
  await ckptJson(box, ['mcp', 'uninstall', '--agent', 'codex', '--scope', 'user']);
  t.is(readFileSync(path.join(box.home, '.codex', 'config.toml'), 'utf8'), userToml, 'uninstall gives the file back byte for byte');

  const removed = await ckptJson(box, ['mcp', 'uninstall']);
  t.true(removed.every((r) => r.changed));
  t.deepEqual(JSON.parse(readFileSync(path.join(box.ws, '.mcp.json'), 'utf8')).mcpServers, { other: { command: 'other-server' } });
  t.false(readFileSync(path.join(box.ws, '.codex', 'config.toml'), 'utf8').includes('git-ckpt'));
  t.deepEqual(
    (await ckptJson(box, ['mcp', 'status', '--scope', 'project'])).map((r) => r.state),
    installed.map(() => 'not installed'),
  );
});

test('mcp install refuses a config it cannot read or would break, and leaves it untouched', async (t) => {
  const box = sandbox();
  write(box, '.cursor/mcp.json', '{ not json');
  const broken = await ckpt(box, ['mcp', 'install', '--agent', 'cursor']);
  t.is(broken.code, 1);
  t.regex(broken.stderr, /^git-ckpt: cannot parse .*mcp\.json .*left untouched\n$/);
  t.is(readFileSync(path.join(box.ws, '.cursor', 'mcp.json'), 'utf8'), '{ not json');
  // An inline table cannot take another [mcp_servers.*] table: the result would not parse.
  write(box, '.codex/config.toml', 'mcp_servers = { docs = { command = "d" } }\n');
  const inline = await ckpt(box, ['mcp', 'install', '--agent', 'codex']);
  t.is(inline.code, 1);
  t.regex(inline.stderr, /would not parse.*left untouched/);
  t.is(readFileSync(path.join(box.ws, '.codex', 'config.toml'), 'utf8'), 'mcp_servers = { docs = { command = "d" } }\n');
  t.is((await ckpt(box, ['mcp', 'install', '--agent', 'nobody'])).code, 2);
});

test('mcp install keeps a symlinked config a symlink, its mode and the user’s keys in our entry; odd configs are refused, never crashed on', async (t) => {
  const box = sandbox();
  const real = path.join(box.home, 'dotfiles', 'mcp.json');
  mkdirSync(path.dirname(real), { recursive: true });
  writeFileSync(real, `${JSON.stringify({ mcpServers: { 'git-ckpt': { command: 'old', env: { DEBUG: '1' } } } })}\n`, { mode: 0o640 });
  mkdirSync(path.join(box.ws, '.cursor'));
  symlinkSync(real, path.join(box.ws, '.cursor', 'mcp.json'));
  await ckptJson(box, ['mcp', 'install', '--agent', 'cursor']);
  t.true(lstatSync(path.join(box.ws, '.cursor', 'mcp.json')).isSymbolicLink(), 'still a link');
  t.is(statSync(real).mode & 0o777, 0o640);
  const entry = JSON.parse(readFileSync(real, 'utf8')).mcpServers['git-ckpt'];
  t.deepEqual(entry.env, { DEBUG: '1' }, 'the user’s keys stay');
  t.is(entry.command, 'sh');
  t.is((await ckptJson(box, ['mcp', 'status', '--agent', 'cursor', '--scope', 'project']))[0].state, 'installed');

  write(box, '.gemini/settings.json', '{"mcpServers": "x"}\n');
  const odd = await ckpt(box, ['mcp', 'uninstall', '--agent', 'gemini']);
  t.is(odd.code, 1, 'a config error, not an internal one');
  t.regex(odd.stderr, /"mcpServers" is not an object; left untouched/);
  write(
    box,
    '.codex/config.toml',
    '# git-ckpt: begin (written by `git ckpt mcp install`; `git ckpt mcp uninstall` removes it)\n[mcp_servers.git-ckpt]\ncommand = "sh"\n',
  );
  const torn = await ckpt(box, ['mcp', 'uninstall', '--agent', 'codex']);
  t.is(torn.code, 1);
  t.regex(torn.stderr, /end marker is gone/);
});
