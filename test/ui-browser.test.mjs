// `git ckpt ui` in a real browser: Debian's Chromium driven by playwright-core.
// A scripted Claude Code session goes through the real hook command; the page
// must show its sessions and turns, a checkpoint's diff, a restore to before
// turn 2 (preview, confirm, files on disk) and its undo. Screenshots of the main
// views are saved in test/artifacts/ for a person to look at.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { chromium } from 'playwright-core';
import {
  CLI,
  ROOT,
  cannotRun,
  ckptJson,
  claudeSession,
  firstSnapshotTaken,
  restoreWithOwnGuard,
  sandbox,
  startUi,
  workspaceState,
  write,
} from './helpers.mjs';

/** An executable named `name` on PATH, as the shell's `command -v` finds it (.ci/run checks `command -v chromium`). */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

const CHROMIUM = process.env.CHROMIUM_PATH || onPath('chromium');
const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');

function hook(box, phase, payload) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'hook', 'claude', phase], { cwd: box.ws, env: box.env });
    child.stdin.end(JSON.stringify({ session_id: 'sess-browser-0001', cwd: box.ws, ...payload }));
    child.on('close', resolve);
  });
}

/** One tool call as Claude Code makes it: its pre hook, `edit` (what the tool does to the files), its post hook. */
async function toolCall(box, { prompt, tool, id, input }, edit) {
  const call = { prompt_id: prompt, tool_name: tool, tool_use_id: id, tool_input: input };
  await hook(box, 'pre', { hook_event_name: 'PreToolUse', ...call });
  edit();
  await hook(box, 'post', { hook_event_name: 'PostToolUse', ...call });
}

/** A two-turn Claude Code session, through the hook command as the agent runs it. */
async function session(box) {
  write(box, 'src/app.js', 'export const version = 1;\n');
  write(box, 'README.md', '# demo\n');
  await hook(box, 'session-start', { hook_event_name: 'SessionStart', source: 'startup' });
  await firstSnapshotTaken(box);
  await hook(box, 'turn-start', { hook_event_name: 'UserPromptSubmit', prompt_id: 'p1', prompt: 'Add a changelog and bump the version' });
  await toolCall(box, { prompt: 'p1', tool: 'Write', id: 't1', input: { file_path: `${box.ws}/CHANGELOG.md` } }, () =>
    write(box, 'CHANGELOG.md', '## 2\n- bumped\n'),
  );
  await toolCall(box, { prompt: 'p1', tool: 'Bash', id: 't2', input: { command: "sed -i 's/1/2/' src/app.js" } }, () =>
    write(box, 'src/app.js', 'export const version = 2;\n'),
  );
  await hook(box, 'turn-end', { hook_event_name: 'Stop', prompt_id: 'p1' });
  await hook(box, 'turn-start', { hook_event_name: 'UserPromptSubmit', prompt_id: 'p2', prompt: 'Now rewrite the README' });
  await toolCall(box, { prompt: 'p2', tool: 'Edit', id: 't3', input: { file_path: `${box.ws}/README.md` } }, () =>
    write(box, 'README.md', '# demo\n\nRewritten by the agent, with more words.\n'),
  );
  await toolCall(box, { prompt: 'p2', tool: 'Bash', id: 't4', input: { command: 'rm CHANGELOG.md && echo scratch > notes.txt' } }, () => {
    rmSync(path.join(box.ws, 'CHANGELOG.md'));
    write(box, 'notes.txt', 'scratch\n');
  });
  await hook(box, 'turn-end', { hook_event_name: 'Stop', prompt_id: 'p2' });
}

const launch = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });

/** The page of a `git ckpt ui` started in the box, in a fresh browser; `problems` collects page errors. */
async function openPage(t, box) {
  const { url } = await startUi(t, box);
  const browser = await launch();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console: ${msg.text()}`));
  await page.goto(url);
  return { page, problems };
}

/**
 * A preview dialog as it first shows: scrolled to its top with its title in view, the dialog focused
 * (no button), and Enter pressed twice writing nothing. A screenshot of that first view is kept.
 */
async function firstView(t, page, box, name) {
  await page.locator('.dialog h2').waitFor();
  await page.waitForFunction(() => document.activeElement?.classList.contains('dialog'));
  const view = await page.evaluate(() => {
    const modal = document.getElementById('modal');
    const title = document.querySelector('.dialog h2').getBoundingClientRect();
    return {
      scrollTop: modal.scrollTop,
      titleVisible: title.top >= 0 && title.bottom <= window.innerHeight,
      focused: document.activeElement?.tagName,
      focusedClass: document.activeElement?.className,
    };
  });
  t.is(view.scrollTop, 0, `${name}: the dialog opens at its top`);
  t.true(view.titleVisible, `${name}: its title is in view`);
  t.deepEqual([view.focused, view.focusedClass], ['DIV', 'dialog'], `${name}: the dialog has the focus, not a button`);
  await page.screenshot({ path: path.join(ARTIFACTS, `first-view-${name}.png`) });
  const before = workspaceState(box);
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(workspaceState(box), before, `${name}: Enter twice applies nothing`);
  t.true(await page.locator('.dialog h2').isVisible(), `${name}: still the preview`);
}

if (!CHROMIUM || !existsSync(CHROMIUM)) {
  const reason = CHROMIUM ? `no browser at CHROMIUM_PATH=${CHROMIUM}` : 'no chromium on PATH; .ci/run installs Debian’s chromium';
  cannotRun(test, 'the timeline in Chromium', reason);
} else {
  test('the timeline in Chromium: sessions and turns, a checkpoint’s diff, restore to before turn 2 with preview and confirmation, and undo', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const box = sandbox();
    await session(box);
    const afterSession = workspaceState(box);
    const { page, problems } = await openPage(t, box);
    t.false(page.url().includes('token='), 'the token leaves the address bar');

    // Sessions and turns, titled by the prompts.
    await page.locator('.row.session').first().waitFor();
    t.regex(await page.locator('.row.session').first().textContent(), /claude[\s\S]*session sess-browser-…/, 'a cut session id ends in …');
    const turns = await page.locator('.row.turn').allInnerTexts();
    t.true(
      turns.some((x) => /turn 2[\s\S]*Now rewrite the README/.test(x)),
      turns.join(' | '),
    );
    t.true(
      turns.some((x) => /turn 1[\s\S]*Add a changelog/.test(x)),
      turns.join(' | '),
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'timeline.png') });

    // A checkpoint's changes: its files and the diff of the first one.
    await page.locator('.row.checkpoint', { hasText: 'Edit' }).first().click();
    await page.locator('.files li').first().waitFor();
    t.regex(await page.locator('.files').textContent(), /README\.md/);
    await page.locator('.d2h-file-wrapper').first().waitFor();
    t.regex(await page.locator('.diff').first().textContent(), /Rewritten by the agent/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'checkpoint-diff.png') });

    // One file restored to a checkpoint: CHANGELOG.md, deleted in turn 2, as turn 1 wrote it; a plan for that file alone.
    await page.locator('.row.checkpoint', { hasText: 'Write' }).first().click();
    await page.locator('.files li', { hasText: 'CHANGELOG.md' }).waitFor();
    await page.getByRole('button', { name: 'Preview restore of this file' }).click();
    await page.locator('.dialog table.plan').waitFor();
    t.regex(await page.locator('.dialog h2').textContent(), /Restore CHANGELOG\.md to/);
    t.deepEqual(await page.locator('.dialog table.plan tr').allTextContents(), ['recreateCHANGELOG.md']);
    await page.getByRole('button', { name: 'Cancel' }).click();
    t.is(workspaceState(box), afterSession);
    // Any two points: the initial snapshot (latest~4) against the checkpoint shown.
    await page.getByLabel('compare with').fill('latest~4');
    await page.getByRole('button', { name: 'Compare with…' }).click();
    await page.locator('.detail h2', { hasText: 'latest~4 →' }).waitFor();
    t.is(await page.locator('.detail .files').textContent(), 'ACHANGELOG.md', 'the initial snapshot against the Write checkpoint');

    // Keyboard: j moves the selection, / focuses the filter, which narrows the list.
    await page.locator('#timeline').focus();
    await page.keyboard.press('j');
    await page.keyboard.press('/');
    t.is(await page.evaluate(() => document.activeElement?.id), 'filter');
    await page.keyboard.type('path:CHANGELOG');
    await page.waitForFunction(() => document.querySelectorAll('.row.checkpoint').length === 2);
    t.is(await page.locator('#count').textContent(), '2 of 5 checkpoints');
    await page.locator('#filter').fill('');
    await page.keyboard.press('Escape');

    // Restore to before turn 2: the preview is the engine's plan and diff; nothing is written yet.
    await page.locator('.row.turn', { hasText: 'turn 2' }).click();
    await page.getByRole('button', { name: 'Preview restore to before turn 2' }).click();
    await page.locator('.dialog table.plan').waitFor();
    await firstView(t, page, box, 'restore');
    const plan = await page.locator('.dialog table.plan').textContent();
    t.regex(plan, /restore\s*README\.md/);
    t.regex(plan, /recreate\s*CHANGELOG\.md/);
    t.regex(await page.locator('.dialog').textContent(), /Left alone \(not in the checkpoint\): notes\.txt/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'restore-preview.png') });
    t.is(workspaceState(box), afterSession, 'the preview wrote nothing');

    // Apply asks first, then writes.
    await page.getByRole('button', { name: 'Apply…' }).click();
    t.is(workspaceState(box), afterSession, 'one click only asks');
    await page.getByRole('button', { name: /Confirm: write 2 files/ }).click();
    await page.locator('.dialog .guard').waitFor();
    t.regex(await page.locator('.dialog .guard').textContent(), /guard checkpoint [0-9a-f]{8}/);
    t.is(readFileSync(path.join(box.ws, 'README.md'), 'utf8'), '# demo\n');
    t.is(readFileSync(path.join(box.ws, 'CHANGELOG.md'), 'utf8'), '## 2\n- bumped\n');
    t.is(readFileSync(path.join(box.ws, 'notes.txt'), 'utf8'), 'scratch\n', 'a leftover is left alone');
    await page.screenshot({ path: path.join(ARTIFACTS, 'restore-applied.png') });

    // Undo, with its own preview.
    await page.getByRole('button', { name: 'Preview undo' }).click();
    await firstView(t, page, box, 'undo');
    await page.getByRole('button', { name: 'Apply undo' }).click();
    await page.locator('.dialog .guard').waitFor();
    t.is(workspaceState(box), afterSession, 'undo brings back the state after the session, byte for byte');

    // A three-way revert of turn 1's tool calls: the version bump goes back; its CHANGELOG.md, deleted since by turn 2, stays gone.
    await page.keyboard.press('Escape');
    await page.locator('.row.turn', { hasText: 'turn 1' }).click();
    await page.getByRole('button', { name: 'Preview revert of turn 1’s tool calls' }).click();
    await page.locator('.dialog table.plan').waitFor();
    await firstView(t, page, box, 'revert');
    const revertPlan = await page.locator('.dialog table.plan').textContent();
    t.regex(revertPlan, /restore\s*src\/app\.js\s*reverted/);
    t.notRegex(revertPlan, /CHANGELOG/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'revert-turn-preview.png') });
    await page.getByRole('button', { name: 'Cancel' }).click();
    t.is(workspaceState(box), afterSession, 'a preview writes nothing');

    // The new restore and undo records appear on their own (live).
    await page.locator('.row.checkpoint', { hasText: 'undo' }).first().waitFor({ timeout: 5000 });

    // A narrow window stacks the panes, and the filter box keeps a usable width (a line of its own on a phone-sized one).
    await page.setViewportSize({ width: 700, height: 800 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'narrow.png') });
    await page.setViewportSize({ width: 360, height: 720 });
    const filterBox = await page.locator('#filter').boundingBox();
    t.true(filterBox.width >= 300, `the filter box is ${filterBox.width}px wide at 360px`);
    await page.locator('#filter').fill('tool:Bash');
    t.regex(await page.locator('#count').textContent(), /of/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'phone.png') });
    t.deepEqual(problems, []);
  });

  test('a rewind inside the agent in Chromium: the notice, the turns left behind named on their branch, and Resume showing the commands', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const box = sandbox();
    await claudeSession(box);
    const before = workspaceState(box);
    const { page, problems } = await openPage(t, box);
    await page.locator('#notice p').waitFor();
    t.regex(
      await page.locator('#notice').textContent(),
      /Session cs1's conversation was rewound to before turn 2 .*turns 2–3's changes \(3 files, 2 only by the shell\)/,
    );
    const turns = await page.locator('.row.turn').allInnerTexts();
    t.true(
      turns.some((x) => /turn 2~1[\s\S]*turn 2/.test(x)),
      turns.join(' | '),
    );
    t.true(
      turns.some((x) => /^turn 2\b(?!~)[\s\S]*turn 4/.test(x)),
      turns.join(' | '),
    );
    t.is(await page.locator('.row.turn.left').count(), 2, 'turns 2~1 and 3~1 are set back');
    await page.locator('.row.turn.left', { hasText: 'turn 2~1' }).click();
    t.is(await page.getByRole('button', { name: /Preview revert/ }).count(), 0, 'no revert range for a turn left behind');
    await page.getByRole('button', { name: 'Resume the conversation before turn 2~1' }).click();
    await page.locator('.dialog pre.command').first().waitFor();
    await firstView(t, page, box, 'resume');
    const commands = await page.locator('.dialog pre.command').allInnerTexts();
    t.deepEqual(commands, ['git ckpt resume turn:2~1@cs1', 'claude --resume=cs1']);
    t.regex(await page.locator('.dialog').textContent(), /4 file\(s\) that turn did not have stay as they are \(add --delete-new/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'rewind-resume.png') });
    t.is(workspaceState(box), before, 'the page wrote nothing');
    t.deepEqual(problems, []);
  });

  test('a checkpoint fetched from another machine in Chromium: its origin on the row and in its facts', async (t) => {
    const other = sandbox();
    const remote = path.join(other.base, 'remote.git');
    spawnSync('git', ['init', '-q', '--bare', remote], { env: other.env });
    write(other, 'far.txt', 'from far away\n');
    const pushed = JSON.parse(
      spawnSync(process.execPath, [CLI, 'snapshot', '--kind', 'post', '--session', 'far', '--turn', '1', '--json'], {
        cwd: other.ws,
        env: other.env,
        encoding: 'utf8',
      }).stdout,
    );
    for (const args of [['share', 'init', '--remote', remote], ['push']])
      spawnSync(process.execPath, [CLI, ...args], { cwd: other.ws, env: other.env });
    const box = sandbox();
    write(box, 'here.txt', 'here\n');
    for (const args of [['snapshot'], ['share', 'init', '--remote', remote], ['fetch']]) {
      const r = spawnSync(process.execPath, [CLI, ...args], { cwd: box.ws, env: box.env, encoding: 'utf8' });
      t.is(r.status, 0, r.stderr);
    }
    const { page, problems } = await openPage(t, box);
    const badge = page.locator('.row.checkpoint .mark.origin').first();
    await badge.waitFor();
    t.is(await badge.textContent(), 'ckpt');
    t.regex((await badge.getAttribute('title')) ?? '', new RegExp(`its id there ${pushed.id}`));
    await page
      .locator('.row.checkpoint', { has: page.locator('.mark.origin') })
      .first()
      .click();
    await page.locator('dl.facts dt', { hasText: 'from' }).waitFor();
    t.regex(await page.locator('dl.facts').textContent(), /from.*ckpt, writer [0-9a-f]{12}/);
    t.deepEqual(problems, []);
  });

  test('an operation in Chromium is one row with its guard folded in, not a row of bookkeeping above it', async (t) => {
    const box = sandbox();
    const { first, restore } = await restoreWithOwnGuard(box);
    t.is((await ckptJson(box, ['log'])).length, 4, 'four records: the restore, its guard and the two snapshots');
    const { page, problems } = await openPage(t, box);
    await page.locator('.row.checkpoint').first().waitFor();
    const rows = await page.locator('.row.checkpoint').allInnerTexts();
    t.is(rows.length, 3, rows.join(' | '));
    t.regex(
      rows[0],
      new RegExp(`${restore.record.slice(0, 8)}[\\s\\S]*restore to ${first.id.slice(0, 8)} · guard ${restore.guard.slice(0, 8)}`),
    );
    t.false(
      rows.some((row) => row.startsWith(restore.guard.slice(0, 8))),
      'the guard has no row of its own',
    );
    await page.locator('.row.checkpoint').first().click();
    await page.locator('dl.facts dt', { hasText: 'guard' }).waitFor();
    t.regex(
      await page.locator('dl.facts').textContent(),
      new RegExp(`guard${restore.guard.slice(0, 8)}: the workspace just before it, where undo returns \\(it captured \\+0 ~1 -0 first\\)`),
    );
    t.deepEqual(problems, []);
  });
}
