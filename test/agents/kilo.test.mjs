// Kilo Code CLI 7.7.7 (@kilocode/cli, an OpenCode fork with its plugin API), for real, offline: the same
// plugin as OpenCode's, installed by `git ckpt hooks install --agent kilo` into .kilo/plugin or
// ~/.config/kilo/plugin, and the same two-turn scenario as test/agents/opencode.test.mjs.
import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { agentSuite } from './harness.mjs';
import { mcpScenario, printOutputsOnFailure, twoTurnScenario } from './two-turns.mjs';

printOutputsOnFailure(test);

const agent = agentSuite(test, 'kilo', 'kilo: the real CLI', () => {
  test('kilo: plugin at project scope (.kilo/plugin): file tools, shell side effects, a failed call, a resumed turn, restore, undo, uninstall', async (t) => {
    const s = await twoTurnScenario(t, agent, 'kilo', 'project');
    t.true(
      s.trace.some((e) => e.phase === 'session-start'),
      'the new session is announced',
    );
  });
  test('kilo: plugin at user scope (~/.config/kilo/plugin): the same session, nothing written in the workspace', async (t) => {
    const s = await twoTurnScenario(t, agent, 'kilo', 'user');
    t.false(existsSync(path.join(s.box.ws, '.kilo', 'plugin')), 'nothing in the workspace');
  });
  test('kilo: `git ckpt mcp install --agent kilo`: Kilo starts the server from kilo.json, the model lists checkpoints through it', async (t) => {
    await mcpScenario(t, agent, 'kilo', 'project');
  });
});
