// git ckpt as a natural git citizen: help and man page, quiet pipes, pager and colour,
// errors for scripts, shell completion, versions, and a package that installs globally.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI, ROOT, ckpt, ckptJson, sandbox, write, libPath } from './helpers.mjs';

/** A folder on PATH with `git-ckpt` in it, so that `git ckpt` finds it as git finds subcommands. */
function binDir(box) {
  const bin = path.join(box.base, 'bin');
  mkdirSync(bin, { recursive: true });
  if (!existsSync(path.join(bin, 'git-ckpt'))) symlinkSync(CLI, path.join(bin, 'git-ckpt'));
  return { ...box.env, PATH: `${bin}:${process.env.PATH}` };
}

/** Run a shell command line in the sandbox's workspace. */
function sh(box, line, env = binDir(box)) {
  return spawnSync('bash', ['-c', line], { cwd: box.ws, env, encoding: 'utf8' });
}

/** Run a command line under a pseudo-terminal (util-linux `script`): stdout is a TTY there. */
function inTerminal(box, line, env = binDir(box)) {
  return spawnSync('script', ['-qec', line, '/dev/null'], { cwd: box.ws, env: { ...env, TERM: 'xterm' }, encoding: 'utf8' });
}

async function withHistory(box) {
  for (let i = 0; i < 3; i++) {
    write(box, `f${i}.txt`, `${'line\n'.repeat(200)}${i}\n`);
    await ckptJson(box, ['snapshot', '-m', `step ${i}`]);
  }
  write(box, 'f0.txt', 'changed\n');
}

test('help like a git subcommand: -h, help <command>, a bare git ckpt (usage on stderr, exit 1)', async (t) => {
  const box = sandbox();
  const h = await ckpt(box, ['-h']);
  t.is(h.code, 0);
  t.regex(h.stdout, /^usage: git ckpt \[-C <path>\]/);
  t.regex(h.stdout, /EXIT STATUS/);
  const bare = await ckpt(box, []);
  t.is(bare.code, 1);
  t.is(bare.stdout, '');
  t.regex(bare.stderr, /^usage: git ckpt \[-C <path>\]/);
  const restore = await ckpt(box, ['help', 'restore']);
  t.is(restore.code, 0);
  t.regex(restore.stdout, /^usage: git ckpt restore <ckpt> \[--dry-run\]/);
  t.regex(restore.stdout, /--delete-new/);
  const viaGit = sh(box, 'git ckpt -h');
  t.is(viaGit.status, 0);
  t.regex(viaGit.stdout, /<command>/);
  // An unknown command or help topic is an error, one line, with git's suggestion when one is close.
  for (const args of [['help', 'nosuch'], ['nosuch', '--help'], ['nosuch']]) {
    const r = await ckpt(box, args);
    t.is(r.code, 2, args.join(' '));
    t.is(r.stdout, '');
    t.is(r.stderr, "git-ckpt: unknown command 'nosuch'\n", args.join(' '));
  }
  const typo = await ckpt(box, ['lgo']);
  t.is(typo.code, 2);
  t.is(typo.stderr, "git-ckpt: unknown command 'lgo' (did you mean log?)\n");
});

test('the man page is generated from the same definitions as --help, with every command, address form, exit code and setting', (t) => {
  const page = readFileSync(path.join(ROOT, 'man', 'git-ckpt.1'), 'utf8');
  t.regex(page, /^\.TH GIT-CKPT 1/);
  const rendered = spawnSync('man', ['-l', path.join(ROOT, 'man', 'git-ckpt.1')], {
    env: { ...process.env, MANPAGER: 'cat', MANWIDTH: '100' },
    encoding: 'utf8',
  });
  t.is(rendered.status, 0, rendered.stderr);
  for (const command of [
    'init',
    'snapshot',
    'log',
    'show',
    'diff',
    'status',
    'restore',
    'revert',
    'undo',
    'resume',
    'hooks',
    'gc',
    'forget',
    'fsck',
    'stores',
    'version',
    'completion',
  ]) {
    t.regex(rendered.stdout, new RegExp(`git ckpt ${command}`), command);
  }
  for (const text of [
    'turn:N[@SESSION]',
    'turn:N~K[@SESSION]',
    'ckpt.followRewind',
    'latest~N',
    'HEAD~N',
    'EXIT STATUS',
    'ckpt.maxFileBytes',
    'ckpt.recordPrompts',
    '--delete-new',
    '--paginate',
    'FORGET',
    '--before <date>',
  ])
    t.true(rendered.stdout.includes(text), text);
  const help = spawnSync(process.execPath, [CLI, 'restore', '--help'], { encoding: 'utf8', env: { ...process.env, COLUMNS: '80' } });
  t.true(rendered.stdout.includes(help.stdout.split('\n')[0]), 'the page carries the command help itself');
});

test('a closed pipe ends every read command quietly: no stack trace, no error line', async (t) => {
  const box = sandbox();
  await withHistory(box);
  for (const args of ['log', 'show --patch latest', 'diff', 'status', 'hooks status', 'stores', 'log --json']) {
    // `true` exits without reading: every write after that meets a closed pipe.
    const r = sh(box, `git-ckpt ${args} | true; echo "exit=\${PIPESTATUS[0]}" >&2`);
    const exit = Number(/exit=(\d+)/.exec(r.stderr)?.[1]);
    t.true(exit === 0 || exit === 141, `${args}: exit ${exit}`);
    t.is(r.stderr.replace(/exit=\d+\n/, ''), '', `${args}: stderr`);
  }
  const head = sh(box, 'git-ckpt show --patch latest | head -1');
  t.is(head.status, 0);
  t.is(head.stderr, '');
});

test('log, show and diff page through git’s pager on a terminal, never into a pipe; --no-pager and -p', async (t) => {
  const box = sandbox();
  await withHistory(box);
  const paged = path.join(box.base, 'paged.txt');
  const env = { ...binDir(box), GIT_PAGER: `cat > '${paged}'` };
  for (const args of ['log', 'show latest', 'diff']) {
    rmSync(paged, { force: true });
    const r = inTerminal(box, `git-ckpt ${args}`, env);
    t.is(r.status, 0, `${args}: ${r.stdout}`);
    t.true(existsSync(paged) && readFileSync(paged, 'utf8').length > 0, `${args} went through the pager`);
  }
  rmSync(paged, { force: true });
  const pipe = sh(box, 'git-ckpt log | cat > /dev/null', env);
  t.is(pipe.status, 0);
  t.false(existsSync(paged), 'no pager when stdout is a pipe');
  const noPager = inTerminal(box, 'git-ckpt --no-pager log', env);
  t.is(noPager.status, 0);
  t.false(existsSync(paged), '--no-pager');
  t.regex(noPager.stdout, /step 2/);
  const paginate = inTerminal(box, 'git-ckpt -p status', env);
  t.is(paginate.status, 0);
  t.true(existsSync(paged), '-p pages a command that does not by default');
  rmSync(paged, { force: true });
  const withCorePager = inTerminal(box, 'git -c core.pager="cat > \'' + paged + '\'" ckpt log', { ...binDir(box) });
  t.is(withCorePager.status, 0);
  t.true(existsSync(paged), 'git -c core.pager=… ckpt log pages through it, as git’s own commands would');
  rmSync(paged, { force: true });
  writeFileSync(path.join(box.home, '.gitconfig'), `[core]\n\tpager = cat > '${paged}'\n`, { flag: 'a' });
  t.is(inTerminal(box, 'git-ckpt log', binDir(box)).status, 0);
  t.true(existsSync(paged), 'core.pager from the user’s config');
});

test('colour only on a terminal: --color=always|never, NO_COLOR, never on a pipe', async (t) => {
  const box = sandbox();
  await withHistory(box);
  const esc = /\x1b\[/;
  t.notRegex(sh(box, 'git-ckpt log').stdout, esc, 'a pipe gets no escape codes');
  t.regex(sh(box, 'git-ckpt log --color=always').stdout, esc);
  t.regex(sh(box, 'git-ckpt --color=always diff').stdout, esc, 'git’s own diff colours too');
  const env = { ...binDir(box), GIT_PAGER: 'cat' };
  t.regex(inTerminal(box, 'git-ckpt log', env).stdout, esc, 'a terminal gets colour');
  t.notRegex(inTerminal(box, 'git-ckpt log --color=never', env).stdout, esc);
  t.notRegex(inTerminal(box, 'git-ckpt log', { ...env, NO_COLOR: '1' }).stdout, esc, 'NO_COLOR');
  t.is((await ckpt(box, ['log', '--color=sometimes'])).code, 2);
  // git's --color=<when> also read with a space; a bare --color before the command is `always`.
  t.notRegex(inTerminal(box, 'git-ckpt --color never log', env).stdout, esc);
  t.regex(inTerminal(box, 'git-ckpt --color log', env).stdout, esc);
  const demo = spawnSync('bash', [path.join(ROOT, 'bench', 'demo.sh')], { env: box.env, encoding: 'utf8' });
  t.is(demo.status, 0, demo.stderr);
  t.notRegex(demo.stdout, esc, 'the demo writes no escape codes to a pipe');
});

test('the pager and colour settings ignore an inherited GIT_DIR (a git hook’s), and keep git -c', async (t) => {
  const box = sandbox();
  await withHistory(box);
  const esc = /\x1b\[/;
  const paged = path.join(box.base, 'paged.txt');
  // Another repository, as GIT_DIR names it inside someone's git hook: its config must not be read.
  const other = path.join(box.base, 'other');
  mkdirSync(other);
  sh(box, `git init -q '${other}' && git -C '${other}' config color.ui never && git -C '${other}' config core.pager "cat > '${paged}'"`);
  const env = { ...binDir(box), GIT_DIR: path.join(other, '.git'), PAGER: 'cat' };
  const r = inTerminal(box, 'git-ckpt log', env);
  t.is(r.status, 0, r.stdout);
  t.regex(r.stdout, esc, 'colour: the other repository’s color.ui = never is not read');
  t.regex(r.stdout, /step 2/, 'the log went to the terminal, not through the other repository’s core.pager');
  t.false(existsSync(paged));
  const viaGit = inTerminal(box, 'git -c color.ui=never ckpt --no-pager log', binDir(box));
  t.is(viaGit.status, 0, viaGit.stdout);
  t.notRegex(viaGit.stdout, esc, 'git -c color.ui=never ckpt is honoured');
});

test('under --json an error is one JSON object on stderr, with the same exit code', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  await ckptJson(box, ['snapshot']);
  for (const [args, code, exit] of [
    [['show', 'nope'], 'bad-address', 1],
    [['restore', 'latest', '--', '../outside'], 'path', 1],
    [['show', '--output=/tmp/x'], 'bad-address', 1],
    [['log', '--bogus'], 'usage', 2],
  ]) {
    const plain = await ckpt(box, args);
    // --json before any `--`: after it every word is a path, as in git.
    const json = await ckpt(box, [args[0], '--json', ...args.slice(1)]);
    t.is(plain.code, exit, args.join(' '));
    t.is(json.code, exit, `${args.join(' ')} --json`);
    t.is(json.stdout, '');
    t.deepEqual(Object.keys(JSON.parse(json.stderr)), ['error']);
    t.is(JSON.parse(json.stderr).error.code, code, args.join(' '));
    t.is(JSON.parse(json.stderr).error.message, plain.stderr.replace(/^git-ckpt: /, '').trim());
  }
});

test('version: git-ckpt, git and Node; versions compared as numbers', async (t) => {
  const box = sandbox();
  const r = await ckpt(box, ['--version']);
  t.is(r.code, 0);
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  t.regex(r.stdout, new RegExp(`^git-ckpt version ${pkg.version}\\ngit version \\d+\\.\\d+`));
  t.regex(r.stdout, new RegExp(`node version ${process.versions.node}`));
  t.deepEqual(Object.keys(await ckptJson(box, ['version'])), ['gitCkpt', 'git', 'node']);
  const { versionBelow } = await import(libPath('runner'));
  t.true(versionBelow('2.9.1', '2.32'));
  t.false(versionBelow('2.39.5', '2.32'));
  t.false(versionBelow('2.32', '2.32'));
  t.true(versionBelow('1.99', '2.32'));
});

test('completion inside git’s own bash completion: commands, options, checkpoint ids, turn addresses, sessions, agents', async (t) => {
  const box = sandbox();
  write(box, 'a.txt', 'a\n');
  const made = await ckptJson(box, ['snapshot', '--session', 'sess-abcdef12', '--turn', '1']);
  write(box, 'a.txt', 'b\n');
  await ckptJson(box, ['snapshot', '--session', 'sess-abcdef12', '--turn', '2']);
  const script = path.join(box.base, 'ckpt-completion.bash');
  writeFileSync(script, (await ckpt(box, ['completion', 'bash'])).stdout);
  const complete = (line) => {
    const r = sh(
      box,
      `source /usr/share/bash-completion/completions/git; source '${script}'
COMP_WORDS=(${line}); [[ "${line}" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); COMP_LINE="${line}"; COMP_POINT=\${#COMP_LINE}; COMPREPLY=()
__git_wrap__git_main; printf '%s\\n' "\${COMPREPLY[@]}"`,
    );
    return r.stdout.split('\n').filter(Boolean);
  };
  t.deepEqual(complete('git ckpt re'), ['restore', 'revert', 'resume']);
  t.deepEqual(complete(`git ckpt show ${made.id.slice(0, 3)}`), [made.id.slice(0, 8)]);
  // Sessions complete cut as everywhere (13 characters: all of this short one).
  t.deepEqual(complete('git ckpt restore turn:'), ['turn:1', 'turn:2', 'turn:1@sess-abcdef12', 'turn:2@sess-abcdef12']);
  t.deepEqual(complete('git ckpt log --session s'), ['sess-abcdef12']);
  t.true(complete('git ckpt log --s').includes('--session'));
  // --agent takes the agents the command knows, from the registry.
  t.deepEqual(complete('git ckpt hooks install --agent c'), ['claude', 'codex', 'cursor', 'copilot', 'cline']);
  t.false(complete('git ckpt mcp install --agent ').includes('pi'), 'pi has no MCP client');
  t.true(complete('git ckpt mcp install --agent ').includes('all'));
  t.regex((await ckpt(box, ['completion', 'zsh'])).stdout, /^#compdef git-ckpt/);
});

test('npm pack, then npm i -g into a fresh prefix: git ckpt from anywhere, its man page, hooks point at the installed script, uninstall leaves only the stores', async (t) => {
  const box = sandbox();
  const work = mkdtempSync(path.join(tmpdir(), 'ckpt-pack-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  // dist/ and man/ are built by `npm test`; --ignore-scripts keeps the build running tests use untouched.
  const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' });
  t.is(pack.status, 0, pack.stderr);
  const [{ filename, files }] = JSON.parse(pack.stdout);
  const names = files.map((f) => f.path);
  for (const f of [
    'dist/bin/main.js',
    'dist/bin/hook.cjs',
    'dist/bin/git-ckpt.cjs',
    'dist/completion.json',
    'hooks/git-ckpt-hook',
    'man/git-ckpt.1',
    'README.md',
  ])
    t.true(names.includes(f), f);
  t.false(
    names.some((f) => f.startsWith('test/') || f.startsWith('lib/')),
    'sources and tests stay out',
  );
  const prefix = path.join(work, 'prefix');
  const npmEnv = {
    ...process.env,
    npm_config_prefix: prefix,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  const install = spawnSync('npm', ['install', '-g', path.join(work, filename)], { env: npmEnv, encoding: 'utf8' });
  t.is(install.status, 0, install.stderr);
  const env = {
    ...box.env,
    PATH: `${path.join(prefix, 'bin')}:/usr/bin:/bin`,
    MANPATH: path.join(prefix, 'share', 'man'),
    MANPAGER: 'cat',
    MANWIDTH: '100',
  };
  const run = (args, cwd = box.ws) => spawnSync('git', args, { cwd, env, encoding: 'utf8' });
  const version = run(['ckpt', '--version'], box.base);
  t.is(version.status, 0, version.stderr);
  t.regex(version.stdout, /^git-ckpt version/);
  const man = run(['ckpt', '--help']);
  t.is(man.status, 0, man.stderr);
  t.regex(man.stdout, /GIT-CKPT\(1\)/, 'git ckpt --help opens the man page');
  t.regex(run(['ckpt', '-h']).stdout, /<command>/);
  t.is(run(['ckpt']).status, 1);
  t.regex(run(['ckpt', 'help', 'restore']).stdout, /git ckpt restore/);
  t.is(run(['ckpt', 'hooks', 'install', '--agent', 'claude']).status, 0);
  const settings = readFileSync(path.join(box.ws, '.claude', 'settings.local.json'), 'utf8');
  const installedScript = path.join(prefix, 'lib', 'node_modules', 'git-ckpt', 'hooks', 'git-ckpt-hook');
  // The installed entry script is on PATH: the config names the command, not a checkout's path (nor the prefix's).
  t.regex(settings, /"git-ckpt-hook claude [a-z-]+ 2>\/dev\/null \|\| true"/, 'the agent runs the installed hook script');
  t.false(settings.includes(ROOT), 'not a checkout');
  write(box, 'x.txt', 'x\n');
  const hook = spawnSync('sh', [installedScript, 'claude', 'post'], {
    cwd: box.ws,
    env,
    input: JSON.stringify({ session_id: 's', cwd: box.ws, tool_name: 'Write' }),
    encoding: 'utf8',
  });
  t.is(hook.status, 0);
  t.is(run(['ckpt', 'log', '--json']).status, 0);
  t.true(JSON.parse(run(['ckpt', 'log', '--json']).stdout).length > 0, 'the installed hook made a checkpoint');
  const npx = spawnSync('npx', ['--yes', `--package=${path.join(work, filename)}`, 'git-ckpt', 'version'], {
    cwd: box.ws,
    env: { ...npmEnv, npm_config_cache: path.join(work, 'npx-cache') },
    encoding: 'utf8',
  });
  t.is(npx.status, 0, npx.stderr);
  t.regex(npx.stdout, /^git-ckpt version/);
  const uninstall = spawnSync('npm', ['uninstall', '-g', 'git-ckpt'], { env: npmEnv, encoding: 'utf8' });
  t.is(uninstall.status, 0, uninstall.stderr);
  const left = (dir) => (existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((p) => !String(p).endsWith('.bin')) : []);
  t.deepEqual(left(path.join(prefix, 'lib', 'node_modules')), []);
  t.deepEqual(left(path.join(prefix, 'bin')), []);
  t.false(existsSync(path.join(prefix, 'share', 'man', 'man1', 'git-ckpt.1')));
  t.true(readdirSync(box.store).length > 0, 'the stores stay');
});

test('pager and colour rules (pure): git’s order of pagers, and what turns colour on', async (t) => {
  const { pagerCommand, colorOn } = await import(path.join(ROOT, 'dist', 'cli', 'terminal.js'));
  t.is(pagerCommand({ GIT_PAGER: 'most', PAGER: 'more' }, 'less -S'), 'most');
  t.is(pagerCommand({ PAGER: 'more' }, 'less -S'), 'less -S');
  t.is(pagerCommand({ PAGER: 'more' }, undefined), 'more');
  t.is(pagerCommand({}, undefined), 'less');
  t.is(pagerCommand({ GIT_PAGER: 'cat' }, undefined), undefined);
  t.is(pagerCommand({ GIT_PAGER: '' }, undefined), undefined);
  t.true(colorOn('always', 'never', { NO_COLOR: '1' }, false));
  t.false(colorOn('never', 'always', {}, true));
  t.false(colorOn(undefined, undefined, { NO_COLOR: '1' }, true));
  t.false(colorOn('auto', 'false', {}, true));
  t.true(colorOn(undefined, 'always', {}, false));
  t.true(colorOn(undefined, undefined, {}, true));
  t.false(colorOn(undefined, undefined, {}, false));
});
