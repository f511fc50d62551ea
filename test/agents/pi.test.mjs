// pi 0.74.2 (@earendil-works/pi-coding-agent, the newest on Node 20), for real, offline: git-ckpt's extension
// installed by `git ckpt hooks install --agent pi` into .pi/extensions or ~/.pi/agent/extensions, and the same
// two-turn scenario as OpenCode's and Kilo's (test/agents/two-turns.mjs).
import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { agentSuite } from './harness.mjs';
import { printOutputsOnFailure, twoTurnScenario } from './two-turns.mjs';

printOutputsOnFailure(test);

const agent = agentSuite(test, 'pi', 'pi: the real CLI', () => {
  test('pi: extension at project scope (.pi/extensions): file tools, shell side effects, a failed call, a resumed turn, restore, undo, uninstall', async (t) => {
    const s = await twoTurnScenario(t, agent, 'pi', 'project');
    const started = s.trace.filter((e) => e.phase === 'session-start');
    t.is(started.length, 2, 'each run announces its session (pi says startup for a resumed one too)');
    t.true(
      s.records.filter((r) => r.agent).every((r) => r.transcript?.endsWith('pi-session.jsonl')),
      'the transcript is the session file',
    );
  });
  test('pi: extension at user scope (~/.pi/agent/extensions): the same session, nothing written in the workspace', async (t) => {
    const s = await twoTurnScenario(t, agent, 'pi', 'user');
    t.false(existsSync(path.join(s.box.ws, '.pi')), 'nothing in the workspace');
  });
});
