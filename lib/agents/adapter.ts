/**
 * What git-ckpt knows of one agent, held in one pure file per agent
 * (`adapters/<name>.ts`) and read by agent-neutral engines through
 * `registry.ts`, never by an agent's name. This is its first slice: the
 * variables a hook's environment carries and what a hook prints. Wiring,
 * trust, MCP, resume and transcripts join it as their engines learn to read
 * adapters (docs/research/adapters-plan.md, issue 34).
 */

/** An environment as parsing may read it: only the variables the adapters name (registry.ts `pickAgentEnv`). */
export type AgentEnv = Readonly<Record<string, string | undefined>>;

interface PayloadSpec {
  /** The variables that name the agent's project folder, first set wins; the entry script forwards them all. */
  readonly projectDirEnv: readonly string[];
  /** The variables that name the session when a payload does not. */
  readonly sessionEnv?: readonly string[];
  /** Variables the agent sets in every hook it runs: seen in a hook wired for another agent, this agent is the one running. */
  readonly markers?: readonly string[];
  /** The agent also runs hooks wired for another agent (Claude Code's), so one event may arrive twice. */
  readonly runsOthersHooks?: boolean;
}

export interface AgentAdapter<N extends string = string> {
  readonly name: N;
  /** The agent's name for people. */
  readonly title: string;
  readonly payload: PayloadSpec;
  /**
   * What a hook prints so that the agent proceeds untouched (some agents read stdout as JSON, or stderr
   * when stdout is empty), and whether the agent shows a hook's `systemMessage` to the user.
   */
  readonly output: { readonly neutral: '' | '{}\n'; readonly systemMessage: boolean };
}
