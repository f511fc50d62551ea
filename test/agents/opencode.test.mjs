// OpenCode 1.18.33 (opencode-ai), for real, offline, against a scripted model server: git-ckpt's plugin
// installed by `git ckpt hooks install --agent opencode`, the checkpoints and their attribution, restore and
// undo byte-exact, the user's .git untouched, no secret in the store, and `hooks uninstall` leaving no trace.
import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { agentSuite, ckpt, ledgerRecords, testSandbox } from './harness.mjs';
import { startCopilotModel } from './copilot.mjs';
import { DRIVERS, mcpScenario, printOutputsOnFailure, twoTurnScenario } from './two-turns.mjs';

printOutputsOnFailure(test);

// One at a time: each first start in a fresh HOME has Bun install OpenCode's plugin package from the
// registry, and four at once on two cores ran past five minutes in CI (2026-12-02; 40-110 s alone).

const agent = agentSuite(test, 'opencode', 'opencode: the real CLI', () => {
  test.serial(
    'opencode: plugin at project scope: file tools, shell side effects, a failed call, a resumed turn, restore, undo, uninstall',
    async (t) => {
      const s = await twoTurnScenario(t, agent, 'opencode', 'project');
      t.true(
        s.trace.some((e) => e.phase === 'session-start'),
        'the new session is announced',
      );
    },
  );
  test.serial(
    'opencode: plugin at user scope (~/.config/opencode/plugins): the same session, nothing written in the workspace',
    async (t) => {
      const s = await twoTurnScenario(t, agent, 'opencode', 'user');
      t.false(existsSync(path.join(s.box.ws, '.opencode', 'plugins')), 'nothing in the workspace');
    },
  );
  test.serial(
    'opencode: `git ckpt mcp install --agent opencode`: OpenCode starts the server from opencode.json, the model lists checkpoints through it',
    async (t) => {
      const { list } = await mcpScenario(t, agent, 'opencode');
      t.is(list, 'git-ckpt_checkpoint_list', 'OpenCode names an MCP tool <server>_<tool>');
    },
  );
  test.serial(
    'opencode: a subagent (the task tool): its calls are the parent session’s turn, attributed to the subagent; its prompt is no turn',
    async (t) => {
      const box = testSandbox(t);
      const driver = DRIVERS.opencode;
      const f = (name) => path.join(box.ws, name);
      const model = await startCopilotModel({
        main: [
          [driver.tools.write(f('main.txt'), 'main\n')],
          [{ name: 'task', args: { description: 'Write sub.txt', prompt: 'Write sub.txt [[ckpt sub]]', subagent_type: 'general' } }],
          'Main done.',
        ],
        sub: [[driver.tools.write(f('sub.txt'), 'sub\n')], [driver.tools.bash('echo more >> sub.txt', 'Append')], 'Sub done.'],
      });
      t.teardown(() => model.close());
      driver.setup(box, model);
      const env = driver.env(box, path.join(box.base, 'trace.jsonl'), model);
      t.is((await ckpt(box, ['hooks', 'install', '--agent', 'opencode'])).code, 0);
      const run = await driver.turn(agent, box, 'Delegate [[ckpt main]]', { env });
      t.is(run.code, 0, run.stderr.slice(-2000));
      t.true(existsSync(f('sub.txt')), 'the subagent ran');
      const records = ledgerRecords(box).filter((r) => r.agent === 'opencode');
      t.true(
        records.every((r) => r.session === run.sessionId),
        'one session: the parent’s',
      );
      t.deepEqual([...new Set(records.map((r) => r.turn))], [1], 'one turn: the subagent’s prompt is not the user’s');
      const sub = records.filter((r) => r.paths?.some((p) => p.path === 'sub.txt'));
      t.true(sub.length >= 1, 'the subagent’s changes are checkpointed');
      t.true(
        sub.every((r) => r.subagent?.id?.startsWith('ses_') && r.subagent.id !== run.sessionId),
        `attributed to the subagent’s session: ${JSON.stringify(sub.map((r) => r.subagent))}`,
      );
      const main = records.find((r) => r.paths?.some((p) => p.path === 'main.txt'));
      t.is(main?.subagent, undefined, 'the parent’s own call is not the subagent’s');
    },
  );
});
