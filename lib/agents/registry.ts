/**
 * The one list of agents. Every other list (the agents `git ckpt hook` reads, the variables
 * the entry script forwards and the daemon takes, the help) derives from it, and nothing
 * but this file imports an adapter; test/agents-registry.test.mjs keeps it so.
 */
import type { AgentAdapter, AgentEnv, ConfigWiring, PayloadField, Wiring } from './adapter.js';
import { auggie } from './adapters/auggie.js';
import { claude } from './adapters/claude.js';
import { cline } from './adapters/cline.js';
import { codex } from './adapters/codex.js';
import { copilot } from './adapters/copilot.js';
import { cursor } from './adapters/cursor.js';
import { droid } from './adapters/droid.js';
import { gemini } from './adapters/gemini.js';
import { generic } from './adapters/generic.js';
import { kilo } from './adapters/kilo.js';
import { letta } from './adapters/letta.js';
import { opencode } from './adapters/opencode.js';
import { pi } from './adapters/pi.js';
import { qoder } from './adapters/qoder.js';
import { qwen } from './adapters/qwen.js';

/** In the order help and lists show them; `generic`, the neutral protocol, last. */
const LIST = [claude, codex, gemini, cursor, copilot, qwen, droid, opencode, kilo, pi, cline, qoder, auggie, letta, generic] as const;
export type AgentName = (typeof LIST)[number]['name'];
/** @public (the structure test reads it; the engines will, as their concerns move into the adapters) */
export const ADAPTERS: readonly AgentAdapter<AgentName>[] = LIST;

const BY_NAME = new Map<string, AgentAdapter<AgentName>>(ADAPTERS.map((a) => [a.name, a]));

/**
 * The adapter of a named agent; a name no adapter has (a fetched store's, a typo) reads as `generic`.
 * @public (as ADAPTERS)
 */
export function adapterOf(name: string): AgentAdapter<AgentName> {
  return BY_NAME.get(name) ?? generic;
}

export function isAgentName(v: string): v is AgentName {
  return BY_NAME.has(v);
}

/** The agents `hooks install` wires, in the registry's order. */
export const HOOK_AGENTS: readonly AgentName[] = ADAPTERS.filter((a) => a.wiring !== undefined).map((a) => a.name);
/** @public (tests use it) The agents wired through hooks in their JSON config file. */
export const CONFIG_AGENTS: readonly AgentName[] = ADAPTERS.filter((a) => a.wiring?.kind === 'config').map((a) => a.name);
/** The agents whose MCP config `mcp install` writes: those with an MCP client. */
export const MCP_AGENTS: readonly AgentName[] = ADAPTERS.filter((a) => a.mcp !== undefined).map((a) => a.name);

/** How an agent is wired; an agent without wiring (the neutral protocol) is a caller's mistake. */
export function wiringOf(agent: string): Wiring {
  const wiring = adapterOf(agent).wiring;
  if (!wiring) throw new Error(`${agent} has no hook wiring`);
  return wiring;
}

/** The wiring of an agent with hooks in its JSON config file. */
export function configWiring(agent: string): ConfigWiring {
  const wiring = wiringOf(agent);
  if (wiring.kind !== 'config') throw new Error(`${agent} is not wired through a config file`);
  return wiring;
}

/**
 * Pure: whether a tool of the agent's is one whose writes its own rewind puts back, and how its input names
 * them: a file path, or a patch's paths. @public (rewind.ts passes it on; tests use it)
 */
export function fileToolKind(agent: string | null, tool: string): 'path' | 'patch' | null {
  const tools = agent === null ? undefined : adapterOf(agent).transcript?.fileTools;
  return tools?.path?.includes(tool) ? 'path' : tools?.patch?.includes(tool) ? 'patch' : null;
}

/** The agent's name for people ("the agent" for none). */
export function agentTitle(agent: string | null): string {
  return agent === null ? 'the agent' : (BY_NAME.get(agent)?.title ?? agent);
}

/** The agents' names for people, in the order given: "Claude Code, Codex CLI, … and Cline CLI". */
export function agentTitles(agents: readonly string[], conjunction: 'and' | 'or' = 'and'): string {
  const titles = agents.map((a) => adapterOf(a).title);
  return titles.length > 1 ? `${titles.slice(0, -1).join(', ')} ${conjunction} ${titles.at(-1)}` : (titles[0] ?? '');
}

/** The names of the agents an adapter's part says something of, in the registry's order. */
export function agentsWith(has: (adapter: AgentAdapter<AgentName>) => unknown): AgentName[] {
  return ADAPTERS.filter((a) => has(a)).map((a) => a.name);
}

/** README's table of supported agents, one row per adapter that has one. @public (scripts/agents.mjs writes it) */
export function agentTable(): string {
  const rows = ADAPTERS.flatMap((a) =>
    a.readme ? [`| ${a.title} | ${a.readme.tested} | ${a.readme.wiredThrough} | ${a.readme.waits} | ${a.readme.gaps} |`] : [],
  );
  return ['| agent | tested | wired through | waits | known gaps |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The agents whose payloads `git ckpt hook` reads (their hooks and plugins name them); anything else is read as `generic`. */
const PAYLOAD_AGENTS: readonly AgentName[] = ADAPTERS.map((a) => a.name);

/**
 * Every text an agent tells a shell's non-zero exit by, when it tells it only in the result (group 1: the code).
 * All of them are tried on every payload: an agent that runs others' hooks sends its own shape through their wiring.
 */
export const EXIT_CODE_TEXTS: readonly RegExp[] = ADAPTERS.flatMap((a) => a.payload.exitCode ?? []);

/** Pure: every adapter's aliases of a payload field, in the registry's order (read after the canonical keys). */
export function payloadAliases(field: PayloadField): readonly string[] {
  return ADAPTERS.flatMap((a) => a.payload.aliases?.[field] ?? []);
}

/** `git ckpt hook --help`'s words for its <agent> argument. */
export function hookAgentHelp(): string {
  const named = PAYLOAD_AGENTS.filter((a) => a !== generic.name);
  return `${named.join(', ')}, or ${generic.name} (any other name is read as ${generic.name})`;
}

/**
 * The agents' environment variables that attribution reads, and the only ones: project folders, session ids,
 * and the markers of the agent that really runs. The entry script forwards exactly these to the daemon
 * (hooks/git-ckpt-hook; a test compares the two lists), and the daemon takes no other variable from a request.
 */
export const AGENT_ENV: readonly string[] = [
  ...new Set(
    ADAPTERS.flatMap((a): readonly string[] => [...a.payload.projectDirEnv, ...(a.payload.sessionEnv ?? []), ...(a.payload.markers ?? [])]),
  ),
];

/** Pure: the part of an environment that parsing may read (AGENT_ENV's variables, and no other). */
export function pickAgentEnv(env: Readonly<Record<string, string | undefined>>): AgentEnv {
  const picked: Record<string, string> = {};
  for (const key of AGENT_ENV) {
    const value = env[key];
    if (value !== undefined) picked[key] = value;
  }
  return picked;
}

/**
 * An environment without the agents' variables. The daemon starts with none and records with none of its own:
 * the hook that started it (one session of one agent) lends them to no other event, whose come from its own
 * request or not at all.
 */
export function withoutAgentEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const rest = { ...env };
  for (const key of AGENT_ENV) delete rest[key];
  return rest;
}

/**
 * Pure: the agent really running a hook wired for `via`. An agent that also runs others' hooks (Copilot CLI,
 * Cursor) says so by the variables it sets in every hook; its own hooks name it already.
 */
export function runningAgent(via: AgentName, env: AgentEnv): AgentName {
  if (adapterOf(via).payload.runsOthersHooks) return via;
  for (const a of ADAPTERS) if (a.payload.runsOthersHooks && a.payload.markers?.some((key) => env[key])) return a.name;
  return via;
}

/** Pure: the agent's project folder, from the variables it sets (none, for an agent that sets none). */
export function projectDirOf(agent: string, env: AgentEnv): string | null {
  for (const key of adapterOf(agent).payload.projectDirEnv) if (env[key]?.trim()) return env[key]!;
  return null;
}

/** Pure: the session a hook's environment names, for a payload that names none. */
export function sessionFromEnv(env: AgentEnv): string | null {
  for (const a of ADAPTERS) for (const key of a.payload.sessionEnv ?? []) if (env[key]?.trim()) return env[key]!;
  return null;
}

/** Pure: what the hook must print on stdout so that the agent proceeds untouched. */
export function neutralOutput(agent: string): string {
  return adapterOf(agent).output.neutral;
}

/** Pure: the hook's output carrying one line for the user, where the agent shows one; else the neutral output. */
export function outputWithMessage(agent: string, message: string): string {
  return adapterOf(agent).output.systemMessage ? `${JSON.stringify({ systemMessage: message })}\n` : neutralOutput(agent);
}
