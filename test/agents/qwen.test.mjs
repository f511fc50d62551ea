// Qwen Code 0.15.10 (@qwen-code/qwen-code, the newest on Node 20: 0.21 on need Node 22), for real, offline:
// Claude-style command hooks in .qwen/settings.json or ~/.qwen/settings.json written by
// `git ckpt hooks install --agent qwen`, and the same two-turn scenario as the plugin agents' (two-turns.mjs).
import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { agentSuite } from './harness.mjs';
import { mcpScenario, printOutputsOnFailure, twoTurnScenario } from './two-turns.mjs';

printOutputsOnFailure(test);

const agent = agentSuite(test, 'qwen', 'qwen: the real CLI', () => {
  test('qwen: hooks at project scope (.qwen/settings.json): file tools, shell side effects, a failed call, a resumed turn, restore, undo, uninstall', async (t) => {
    const s = await twoTurnScenario(t, agent, 'qwen', 'project');
    t.true(
      s.records.filter((r) => r.agent && r.kind === 'post').every((r) => typeof r.call === 'string' && r.call !== ''),
      "every post carries Qwen's tool_use_id",
    );
  });
  test('qwen: hooks at user scope (~/.qwen/settings.json): the same session, nothing of ours in the workspace', async (t) => {
    const s = await twoTurnScenario(t, agent, 'qwen', 'user');
    t.is(JSON.parse(s.installedConfig).$version, 4, 'the settings keep the version Qwen Code writes');
    // Uninstall took our hooks out of a file that then held nothing else: it went.
    t.false(existsSync(path.join(s.box.home, '.qwen', 'settings.json')));
  });
  test('qwen: `git ckpt mcp install --agent qwen`: Qwen Code starts the server from .qwen/settings.json, the model lists checkpoints through it', async (t) => {
    await mcpScenario(t, agent, 'qwen', 'project');
  });
});
