// Cline CLI 3.0.65 (`cline`), for real, offline: its OpenAI-compatible provider on the scripted server, driven
// through its ACP mode (the only headless way to give one session a second prompt); a hook file per event in
// .clinerules/hooks or ~/.cline/hooks written by `git ckpt hooks install --agent cline`, and the same
// two-turn scenario as the others (two-turns.mjs).
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { agentSuite } from './harness.mjs';
import { mcpScenario, printOutputsOnFailure, twoTurnScenario } from './two-turns.mjs';

printOutputsOnFailure(test);

const agent = agentSuite(test, 'cline', 'cline: the real CLI', () => {
  test('cline: hook files at project scope (.clinerules/hooks): file tools, shell side effects, a failed call, a resumed turn, restore, undo, uninstall', async (t) => {
    const s = await twoTurnScenario(t, agent, 'cline', 'project');
    t.false(existsSync(path.join(s.box.ws, '.clinerules', 'hooks')), 'uninstall removed the hook files and their folder');
  });
  test('cline: hook files at user scope (~/.cline/hooks): the same session, nothing in the workspace', async (t) => {
    const s = await twoTurnScenario(t, agent, 'cline', 'user');
    t.false(existsSync(path.join(s.box.ws, '.clinerules')), 'nothing in the workspace');
    t.true(readFileSync(path.join(s.box.home, '.cline', 'data', 'settings', 'global-settings.json'), 'utf8').includes('telemetryOptOut'));
  });
  test('cline: `git ckpt mcp install --agent cline --scope user`: Cline starts the server from ~/.cline/data/settings/cline_mcp_settings.json, the model lists checkpoints through it', async (t) => {
    await mcpScenario(t, agent, 'cline', 'user');
  });
});
