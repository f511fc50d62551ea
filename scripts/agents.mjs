// The text outside lib/ that lists the agents, made from their adapters (lib/agents/registry.ts): README's
// table of supported agents, the two lists of the POSIX entry script hooks/git-ckpt-hook (the variables
// it forwards to the daemon, and the agents whose neutral answer is `{}`), and the example config each agent
// wired through a config file gets (hooks/<agent>.json, what `hooks install` merges). `node scripts/agents.mjs --write`
// writes them after an adapter changes; test/agents-registry.test.mjs fails while what is committed differs.
// Reads the built registry in dist/.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { ADAPTERS, AGENT_ENV, agentTable, CONFIG_AGENTS } = await import(path.join(ROOT, 'dist', 'lib', 'agents', 'registry.js'));
const { mergeHooks } = await import(path.join(ROOT, 'dist', 'lib', 'agents', 'hook-specs.js'));

const README = path.join(ROOT, 'README.md');
const ENTRY = path.join(ROOT, 'hooks', 'git-ckpt-hook');
const TABLE_BEGIN = '<!-- agents: made from lib/agents/adapters by scripts/agents.mjs; edit there -->';
const TABLE_END = '<!-- /agents -->';

/** README with its agents table as the adapters give it. */
export function renderReadme(text) {
  const begin = text.indexOf(TABLE_BEGIN);
  const end = text.indexOf(TABLE_END);
  if (begin < 0 || end < begin) throw new Error(`README.md has no ${TABLE_BEGIN} … ${TABLE_END} block`);
  return `${text.slice(0, begin)}${TABLE_BEGIN}\n${agentTable()}\n${text.slice(end)}`;
}

/** The entry script with its forwarded variables and its `{}` agents as the adapters give them. */
export function renderEntryScript(text) {
  const neutral = ADAPTERS.filter((a) => a.output.neutral === '{}\n').map((a) => a.name);
  return text
    .replace(/for name in [A-Z0-9_ ]+; do/, `for name in ${AGENT_ENV.join(' ')}; do`)
    .replace(/case "\$agent" in [a-z|]+\) printf '\{\}\\n' ;; esac/, `case "$agent" in ${neutral.join('|')}) printf '{}\\n' ;; esac`);
}

/** Each config agent's example file, as `hooks install` would write it into an empty config. */
export function shippedConfigs() {
  return Object.fromEntries(
    CONFIG_AGENTS.map((agent) => [
      path.join('hooks', `${agent}.json`),
      `${JSON.stringify(mergeHooks({}, agent, '/path/to/git-ckpt/hooks/git-ckpt-hook'), null, 2)}\n`,
    ]),
  );
}

if (process.argv.includes('--write')) {
  for (const [rel, text] of Object.entries(shippedConfigs())) writeFileSync(path.join(ROOT, rel), text);
  writeFileSync(README, renderReadme(readFileSync(README, 'utf8')));
  writeFileSync(ENTRY, renderEntryScript(readFileSync(ENTRY, 'utf8')));
}
