// The documentation people read first, kept true: docs/reference.md is what the generator writes
// from the one source (cli/reference.ts and the commands' own definitions), committed; `git ckpt hook
// --help` names every agent README's table names; README's links and docs' links lead somewhere;
// README's set-up commands are the ones CI runs.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { renderMarkdown } from '../scripts/reference.mjs';
import { CLI, libPath, ROOT } from './helpers.mjs';

const read = (rel) => readFileSync(path.join(ROOT, rel), 'utf8');

test('docs/reference.md is what the generator writes now, and it is committed so', async (t) => {
  const rendered = await renderMarkdown();
  t.is(read('docs/reference.md'), rendered, 'docs/reference.md differs from the generator: run npm run build');
  // The build rewrites the file, so the check that matters is against what git holds (a fresh clone's copy).
  const committed = spawnSync('git', ['show', ':docs/reference.md'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  t.is(committed.status, 0, `docs/reference.md is not in git: ${committed.stderr}`);
  t.is(committed.stdout, rendered, 'the committed docs/reference.md is stale: run npm run build and commit docs/reference.md');
  // The reference carries every command's help and every setting the engine reads.
  for (const heading of ['### git ckpt restore', '### git ckpt hook', '## SETTINGS', '## ADDRESSES', '## EXIT STATUS'])
    t.true(rendered.includes(`\n${heading}\n`), heading);
  for (const key of ['ckpt.daemon (true)', 'ckpt.daemonIdle', 'ckpt.daemonVerify', 'ckpt.recordPrompts', 'ckpt.followRewind'])
    t.true(rendered.includes(key), key);
});

/** README's names of the agents (its table's first column), as the hook command spells them: their adapters' titles. */
const { ADAPTERS } = await import(libPath('registry'));
const AGENT_IDS = Object.fromEntries(ADAPTERS.map((a) => [a.title, a.name]));

function readmeAgents() {
  const section =
    read('README.md')
      .split(/^## Supported agents$/m)[1]
      ?.split(/^## /m)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| agent ') && !line.startsWith('|---'))
    .map((line) => line.split('|')[1].trim());
}

const helpOf = (...args) => {
  const r = spawnSync(process.execPath, [CLI, ...args, '--help'], { encoding: 'utf8', env: { ...process.env, COLUMNS: '200' } });
  return r.stdout.replace(/\s+/g, ' ');
};

test('git ckpt hook --help names every agent README’s table names, and the same agents hooks install wires', (t) => {
  const agents = readmeAgents();
  t.true(agents.length >= 11, `README's agents table: ${agents.join(', ')}`);
  const hookHelp = helpOf('hook');
  const listed = /Arguments: agent (.*?) phase /.exec(hookHelp)?.[1];
  t.truthy(listed, `hook --help lists the agents: ${hookHelp}`);
  for (const name of agents) {
    const id = AGENT_IDS[name];
    t.truthy(id, `README's table names an agent no adapter has: ${name}`);
    t.regex(listed, new RegExp(`\\b${id}\\b`), `hook --help names ${name} (${id})`);
  }
  const installs = /--agent <agent> agent\(s\): (.*?), or all/.exec(helpOf('hooks'))?.[1];
  t.truthy(installs, 'hooks --help lists the agents');
  for (const id of installs.split(', ')) t.regex(listed, new RegExp(`\\b${id}\\b`), `hook --help names ${id}, which hooks install wires`);
});

/** GitHub's anchor for a heading. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file) {
  const seen = new Map();
  const anchors = new Set();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

test('every relative link in README and docs/ leads to a file and a heading that exist', (t) => {
  const docs = [
    'README.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  let links = 0;
  for (const doc of docs) {
    const text = read(doc).replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
      links++;
      const [file, anchor] = target.split('#');
      const resolved = file ? path.join(ROOT, path.dirname(doc), file) : path.join(ROOT, doc);
      t.true(existsSync(resolved), `${doc}: ${target}: no such file`);
      if (anchor && resolved.endsWith('.md') && existsSync(resolved))
        t.true(anchorsOf(resolved).has(anchor), `${doc}: ${target}: no such heading`);
    }
  }
  t.true(links > 20, `${links} links checked`);
});

test('README fits a newcomer’s three minutes, and its set-up commands are the ones CI runs', (t) => {
  const readme = read('README.md');
  const lines = readme.split('\n').length - 1;
  t.true(lines <= 200, `README.md has ${lines} lines`);
  const setUp = /^## Set up$[\s\S]*?^```sh\n([\s\S]*?)^```$/m.exec(readme)?.[1];
  t.truthy(setUp, 'README has a Set up section with one sh block');
  const commands = setUp
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/\s+#.*$/, ''));
  t.deepEqual(commands, ['npm run demo', 'npm test']);
  const ci = read('.ci/run').split('\n');
  for (const command of commands) t.true(ci.includes(command), `.ci/run runs ${command} verbatim`);
});
