// Factory Droid 0.225 (@factory/cli), for real, offline: a BYOK model on the scripted server and
// FACTORY_AIRGAP_ENABLED (no Factory login), driven through `droid exec`'s JSON-RPC mode (the only
// headless one that fires UserPromptSubmit); Claude-style hooks in .factory/settings.json written by
// `git ckpt hooks install --agent droid`, and the same two-turn scenario as the others (two-turns.mjs).
import test from 'ava';
import { agentSuite } from './harness.mjs';
import { mcpScenario, printOutputsOnFailure, twoTurnScenario } from './two-turns.mjs';

printOutputsOnFailure(test);

const agent = agentSuite(test, 'droid', 'droid: the real CLI', () => {
  test('droid: hooks at project scope (.factory/settings.json): file tools, shell side effects, a failed call, a resumed turn, restore, undo, uninstall', async (t) => {
    await twoTurnScenario(t, agent, 'droid', 'project');
  });
  test('droid: hooks at user scope (~/.factory/settings.json), next to its model settings', async (t) => {
    await twoTurnScenario(t, agent, 'droid', 'user');
  });
  test('droid: `git ckpt mcp install --agent droid`: Droid starts the server from .factory/mcp.json, the model lists checkpoints through it', async (t) => {
    await mcpScenario(t, agent, 'droid', 'project');
  });
});
