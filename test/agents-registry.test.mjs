// The agents axis has one home (issue 34): one pure adapter per agent in lib/agents/adapters/, one registry
// that every agent list derives from, and no agent named anywhere else in lib/ or cli/. Files that still
// name agents are listed in STILL_NAMING until their concern moves into the adapters; the list only shrinks
// (a listed file that names none fails too, so it leaves the list the day it is clean).
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ckpt, HOOK_SCRIPT, libPath, ROOT, sandbox } from './helpers.mjs';

const { ADAPTERS, AGENT_ENV, adapterOf, neutralOutput } = await import(libPath('registry'));
const { parseHookPayload } = await import(libPath('hook-payload'));
const NAMES = ADAPTERS.map((a) => a.name);
const ADAPTER_DIR = path.join(ROOT, 'lib', 'agents', 'adapters');

/** The files that still name agents, and the concern that will take their names into the adapters (docs/research/adapters-plan.md §3). */
const STILL_NAMING = {};

/** Words that name an agent's namesake, not the agent, and the file they may stand in, with why. */
const EXEMPT = {
  'cli/reference.ts': [['Cursor’s editor', 'watch serves editors without hooks; the editor is not the agent Cursor’s hooks wire']],
};

const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
const ALL = [...sources(path.join(ROOT, 'lib')), ...sources(path.join(ROOT, 'cli'))].map((f) => path.relative(ROOT, f));
const read = (rel) => readFileSync(path.join(ROOT, rel), 'utf8');
/** The code without its comments (block comments, and line comments that do not follow a quote or a colon). */
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\'"`])\/\/.*$/gm, '$1');
/** An agent's name as code may spell it: any case; pi as a word; the neutral protocol only as the string 'generic'. */
const spelling = (name) => (name === 'pi' ? /\bpi\b/i : name === 'generic' ? /'generic'/ : new RegExp(name, 'i'));
const importsOf = (text) => [...text.matchAll(/(?:\bfrom|\bimport\(?)\s*'([^']+)'/g)].map((m) => m[1]);

/** The agents a file names, but for its own adapter and the registry, which name them by design. */
function agentsNamedIn(rel) {
  if (rel === 'lib/agents/registry.ts') return [];
  let text = code(read(rel));
  for (const [phrase] of EXEMPT[rel] ?? []) text = text.replaceAll(phrase, '');
  // An adapter may name the variables its agent's CLI sets, another agent's included (Qwen Code sets Claude's).
  if (rel.startsWith('lib/agents/adapters/')) text = text.replace(/'[A-Z][A-Z0-9_]*'/g, "''");
  return NAMES.filter((n) => rel !== `lib/agents/adapters/${n}.ts` && spelling(n).test(text));
}

test('one adapter file per registered agent, each exporting the adapter its file names', (t) => {
  const files = readdirSync(ADAPTER_DIR).filter((f) => f.endsWith('.ts'));
  t.deepEqual(files.map((f) => f.replace(/\.ts$/, '')).sort(), [...NAMES].sort());
  for (const name of NAMES) {
    t.regex(read(`lib/agents/adapters/${name}.ts`), new RegExp(`^export const ${name} = \\{\\n  name: '${name}',`, 'm'), name);
    t.is(adapterOf(name).name, name);
  }
  t.is(new Set(NAMES).size, NAMES.length, 'names are unique');
  t.is(NAMES.at(-1), 'generic', 'the neutral protocol comes last');
  t.is(adapterOf('an-agent-nobody-registered').name, 'generic', 'an unknown name reads as generic');
});

test('git ckpt hook --help names every registered agent, the neutral protocol last', async (t) => {
  const r = await ckpt(sandbox(), ['hook', '--help']);
  t.is(r.code, 0);
  const agentLine = r.stdout.split('\n').find((l) => /^\s+agent\s/.test(l)) ?? '';
  const named = NAMES.filter((n) => new RegExp(`\\b${n}\\b`).test(r.stdout));
  t.deepEqual(named, NAMES, agentLine);
  t.regex(r.stdout, /or\s+generic\s+\(any\s+other\s+name\s+is\s+read\s+as\s+generic\)/);
});

test('no file of lib/ or cli/ names an agent outside its adapter and the registry, but those still listed, and each listed one still does', (t) => {
  const naming = Object.fromEntries(ALL.map((rel) => [rel, agentsNamedIn(rel)]).filter(([, names]) => names.length > 0));
  const unlisted = Object.keys(naming).filter((rel) => !(rel in STILL_NAMING));
  t.deepEqual(
    unlisted.map((rel) => `${rel}: ${naming[rel].join(', ')}`),
    [],
    'an agent named outside its adapter: move it into the adapter and read it through the registry',
  );
  const clean = Object.keys(STILL_NAMING).filter((rel) => !(rel in naming));
  t.deepEqual(clean, [], 'these name no agent any more: take them off STILL_NAMING');
});

test('adapters are pure data: they import only the adapter interface, model/ and node:path; only the registry imports them', (t) => {
  for (const name of NAMES)
    for (const spec of importsOf(read(`lib/agents/adapters/${name}.ts`)))
      t.true(spec === '../adapter.js' || /^\.\.\/\.\.\/model\/[a-z-]+\.js$/.test(spec) || spec === 'node:path', `${name} imports ${spec}`);
  const importers = ALL.filter((rel) => importsOf(read(rel)).some((spec) => /(^|\/)adapters\/[a-z-]+\.js$/.test(spec)));
  t.deepEqual(importers, ['lib/agents/registry.ts']);
  for (const spec of importsOf(read('lib/agents/adapter.ts')))
    t.true(
      /^\.\.\/model\//.test(spec) || (spec.startsWith('node:') && !/^node:(fs|child_process)$/.test(spec)),
      `adapter.ts imports ${spec}`,
    );
});

test('the entry script takes its agent lists from the registry: the variables it forwards and the agents whose neutral output is {}', (t) => {
  const script = readFileSync(HOOK_SCRIPT, 'utf8');
  t.deepEqual(/for name in ([A-Z0-9_ ]+); do/.exec(script)?.[1].trim().split(/\s+/), [...AGENT_ENV]);
  const neutralCase = /case "\$agent" in ([a-z|]+)\) printf '\{\}\\n' ;; esac/.exec(script);
  t.truthy(neutralCase, 'the script has its neutral-output case');
  t.deepEqual(
    neutralCase[1].split('|'),
    NAMES.filter((n) => neutralOutput(n) === '{}\n'),
  );
});

test('every alias an adapter declares is read, by every parser; a canonical key wins over an alias', (t) => {
  // The parsed event's property each payload field lands in.
  const read = {
    session: (e) => e.session,
    turnKey: (e) => e.turnKey,
    callId: (e) => e.callId,
    tool: (e) => e.tool,
    input: (e) => e.input,
    cwd: (e) => e.cwd,
    roots: (e) => e.workspaceRoot,
    eventName: (e) => (e.failed ? 'Failure' : null),
    error: (e) => e.error,
    prompt: (e) => e.prompt,
    transcript: (e) => e.transcript,
    subagentId: (e) => e.subagent?.id,
    subagentType: (e) => e.subagent?.type,
  };
  const value = { input: { file_path: 'a.txt' }, roots: ['/w'], eventName: 'PostToolUseFailure', subagentType: 'x' };
  const expected = { input: 'a.txt', roots: '/w', eventName: 'Failure', subagentType: 'x' };
  let seen = 0;
  for (const adapter of ADAPTERS)
    for (const [field, keys] of Object.entries(adapter.payload.aliases ?? {})) {
      t.truthy(read[field], `${adapter.name} aliases an unknown field ${field}`);
      const phase = field === 'prompt' ? 'turn-start' : 'post';
      for (const key of keys)
        for (const via of ['generic', 'claude', adapter.name]) {
          const payload = { [key]: value[field] ?? 'v1', ...(field === 'subagentType' ? { agent_id: 's' } : {}) };
          t.is(
            read[field](parseHookPayload(via, phase, JSON.stringify(payload))),
            expected[field] ?? 'v1',
            `${adapter.name}'s ${key} via ${via}`,
          );
          seen++;
        }
    }
  t.true(seen > 30, `aliases were tried (${seen})`);
  const both = parseHookPayload(
    'generic',
    'post',
    JSON.stringify({ thread_id: 'alias', session_id: 'canonical', toolCallId: 'c2', toolUseId: 'c1' }),
  );
  t.is(both.session, 'canonical');
  t.is(both.callId, 'c1', 'the canonical key in camelCase comes before an alias');
});

test('README’s agents table and the entry script’s lists are what scripts/agents.mjs makes of the adapters', async (t) => {
  const { renderReadme, renderEntryScript } = await import(path.join(ROOT, 'scripts', 'agents.mjs'));
  const readme = read('README.md');
  t.is(readme, renderReadme(readme), 'README.md’s agents table is stale: node scripts/agents.mjs --write');
  const script = readFileSync(HOOK_SCRIPT, 'utf8');
  t.is(script, renderEntryScript(script), 'hooks/git-ckpt-hook’s lists are stale: node scripts/agents.mjs --write');
  for (const a of ADAPTERS.filter((x) => x.wiring)) t.truthy(a.readme, `${a.name} has a README row`);
});

test('hooks/README.md’s first install line names every agent hooks install wires', (t) => {
  const line = read('hooks/README.md')
    .split('\n')
    .find((l) => l.startsWith('git ckpt hooks install --agent claude'));
  const listed = /# or (.*), all$/.exec(line ?? '')?.[1]?.split(', ');
  t.deepEqual(
    listed,
    NAMES.filter((n) => adapterOf(n).wiring && n !== 'claude'),
  );
});

/** The agents proven by payloads copied from their source (no CLI run here): their fixture folders. */
const SOURCE_FIXTURES = { qoder: 'qoder-1.1.52-source', auggie: 'auggie-0.36.0-source', letta: 'letta-code-0.32.18-source' };

for (const [agent, folder] of Object.entries(SOURCE_FIXTURES))
  test(`${agent}: a payload from its source for every event it is wired for, each read with its session, phase and tool`, (t) => {
    const lines = read(`test/fixtures/${folder}/hook-payloads.jsonl`)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const wiring = adapterOf(agent).wiring;
    t.deepEqual(
      wiring.events.map((e) => e.event).filter((event) => !lines.some((l) => l.event === event)),
      [],
      'an event without a fixture',
    );
    // The session the agent's environment names where a payload names none (Letta's Stop).
    const env = Object.fromEntries((adapterOf(agent).payload.sessionEnv ?? []).map((key) => [key, 'from-env']));
    for (const { phase, event, payload } of lines) {
      t.is(wiring.events.find((e) => e.event === event)?.phase, phase, `${event} is wired as ${phase}`);
      const e = parseHookPayload(agent, phase, JSON.stringify(payload), env);
      t.deepEqual(e.problems, [], event);
      t.truthy(e.session, `${event}: a session`);
      if (agent === 'letta') t.is(e.subagent, null, `${event}: its agent_id is the session, not a subagent`);
      if (phase === 'pre' || phase === 'post') t.truthy(e.tool, `${event}: a tool`);
      if (phase === 'turn-start' && payload.prompt !== undefined) t.is(e.prompt, payload.prompt);
      if (phase === 'post')
        t.is(e.failed, /Failure$/.test(event) || 'tool_error' in payload || payload.tool_result?.status === 'error', event);
    }
  });
