// Every install README shows, from a fresh copy of this checkout, each into a temporary npm prefix:
// `npm link`, `npm install -g <checkout>` and `npm install -g <packed tarball>`; then what a new user
// types first: `git ckpt version`, `git ckpt --help` (the man page) and a snapshot, a restore and its undo.
// (`npm install -g <git URL>` is npm's own bug, npm/cli#8440: docs/design.md.)
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv, ROOT } from './helpers.mjs';

const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'ckpt-install-')));

/** The environment of a user whose npm installs globally into `prefix`; npm's cache is the developer's, so nothing is downloaded twice. */
function userEnv(prefix) {
  const home = path.join(prefix, 'home');
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = New User\n\temail = new@example.com\n[ckpt]\n\tdaemon = false\n');
  return cleanEnv({
    HOME: home,
    npm_config_prefix: prefix,
    npm_config_cache: process.env.npm_config_cache ?? path.join(homedir(), '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    GIT_CKPT_HOME: path.join(prefix, 'store'),
    PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH}`,
    MANPAGER: 'cat',
    PAGER: 'cat',
    MANWIDTH: '80',
  });
}

/** A fresh copy of the checkout as a clone would have it: the files git tracks or would track, nothing built or installed. */
function freshCheckout(name) {
  const dir = path.join(base, name);
  const files = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .stdout.split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    try {
      cpSync(path.join(ROOT, file), path.join(dir, file), { verbatimSymlinks: true });
    } catch (err) {
      if (err.code !== 'ENOENT') throw err; // deleted in the working tree, not yet in the index
    }
  }
  return dir;
}

function exec(command, args, { cwd, env, input, timeout }) {
  const r = spawnSync(command, args, { cwd, env, input, timeout, encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', text: `${r.stdout}${r.stderr}` };
}

/** What a new user does first with the installed `git ckpt`, from a project of their own. */
function firstSteps(t, env, how) {
  const ws = path.join(env.HOME, 'project');
  mkdirSync(ws, { recursive: true });
  const git = (...args) => exec('git', args, { cwd: ws, env });
  git('init', '-q');
  const version = git('ckpt', 'version');
  t.is(version.code, 0, `${how}: git ckpt version: ${version.text}`);
  t.regex(version.stdout, /^git-ckpt version \d+\.\d+\.\d+/m, how);
  const help = git('ckpt', '--help');
  t.is(help.code, 0, `${how}: git ckpt --help: ${help.text}`);
  t.regex(help.stdout, /GIT-CKPT\(1\)[\s\S]*NAME[\s\S]*git-ckpt/, `${how}: --help opens the man page`);
  writeFileSync(path.join(ws, 'app.js'), 'v1\n');
  t.is(git('ckpt', 'snapshot', '-m', 'first').code, 0, how);
  writeFileSync(path.join(ws, 'app.js'), 'v2\n');
  t.is(git('ckpt', 'snapshot', '-m', 'second').code, 0, how);
  const restored = git('ckpt', 'restore', 'latest~1');
  t.is(restored.code, 0, `${how}: restore: ${restored.text}`);
  t.is(readFileSync(path.join(ws, 'app.js'), 'utf8'), 'v1\n', how);
  const undone = git('ckpt', 'undo');
  t.is(undone.code, 0, `${how}: undo: ${undone.text}`);
  t.is(readFileSync(path.join(ws, 'app.js'), 'utf8'), 'v2\n', how);

  // A project's hook config, which the team commits, names the installed command, not this install's path;
  // and that command, run as the agent runs it, records the tool call.
  const wired = git('ckpt', 'hooks', 'install', '--agent', 'codex', '--scope', 'project');
  t.is(wired.code, 0, `${how}: hooks install: ${wired.text}`);
  const config = readFileSync(path.join(ws, '.codex', 'hooks.json'), 'utf8');
  t.false(config.includes(env.npm_config_prefix), `${how}: no path of this install in the shared config`);
  const command = JSON.parse(config).hooks.PostToolUse[0].hooks[0].command;
  t.is(command, 'git-ckpt-hook codex post 2>/dev/null || true', how);
  t.regex(git('ckpt', 'hooks', 'status', '--agent', 'codex').stdout, /codex.*project.*wired/, how);
  writeFileSync(path.join(ws, 'app.js'), 'v3\n');
  const payload = JSON.stringify({
    session_id: 'install-test',
    cwd: ws,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'x' },
  });
  const fired = exec('sh', ['-c', command], { cwd: ws, env, input: payload });
  t.is(fired.code, 0, how);
  t.regex(git('ckpt', 'log', '-n', '1').stdout, /install-test|codex post/, `${how}: the hook recorded the call`);

  // The project's MCP config (.mcp.json, committed too) names the installed server command; it answers.
  t.is(git('ckpt', 'mcp', 'install', '--agent', 'claude').code, 0, how);
  const mcp = JSON.parse(readFileSync(path.join(ws, '.mcp.json'), 'utf8')).mcpServers['git-ckpt'];
  t.deepEqual([mcp.command, mcp.args], ['git-ckpt-mcp', []], how);
  const hello = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const served = exec(mcp.command, mcp.args, { cwd: ws, env, input: `${JSON.stringify(hello)}\n`, timeout: 30_000 });
  t.regex(served.stdout, /"serverInfo":\{"name":"git-ckpt"/, `${how}: the installed MCP server answers: ${served.text}`);
}

test.serial('npm link from a fresh checkout, then npm pack of it installed with npm install -g', async (t) => {
  t.timeout(10 * 60_000);
  const checkout = freshCheckout('linked');
  const env = userEnv(path.join(base, 'prefix-link'));
  const linked = exec('npm', ['link'], { cwd: checkout, env });
  t.is(linked.code, 0, `npm link: ${linked.text}`);
  firstSteps(t, env, 'npm link');

  // The packed tarball, made from that built checkout, into a prefix of its own.
  const packed = exec('npm', ['pack', '--silent', '--pack-destination', base], { cwd: checkout, env });
  t.is(packed.code, 0, `npm pack: ${packed.text}`);
  const tarball = path.join(base, packed.stdout.trim().split('\n').at(-1));
  const tarEnv = userEnv(path.join(base, 'prefix-tarball'));
  const installed = exec('npm', ['install', '-g', tarball], { cwd: base, env: tarEnv });
  t.is(installed.code, 0, `npm install -g <tarball>: ${installed.text}`);
  t.false(
    readdirSync(path.join(base, 'prefix-tarball', 'lib', 'node_modules', 'git-ckpt')).includes('lib'),
    'the tarball carries the build, not the sources',
  );
  firstSteps(t, tarEnv, 'npm install -g <tarball>');
});

test.serial('npm install -g <checkout folder> from a fresh checkout', async (t) => {
  t.timeout(10 * 60_000);
  const checkout = freshCheckout('folder');
  const env = userEnv(path.join(base, 'prefix-folder'));
  const installed = exec('npm', ['install', '-g', checkout], { cwd: base, env });
  t.is(installed.code, 0, `npm install -g <folder>: ${installed.text}`);
  firstSteps(t, env, 'npm install -g <folder>');
});
