/**
 * Pure: how to start an agent's conversation again at "before turn N", once
 * git-ckpt has put the files back there: the agent's resume command plus the
 * one step inside it that goes back (its adapter's `resume`). Where the agent
 * can continue from an exact message in print mode, or fork a session itself,
 * that is offered too.
 */
import { shortSession } from '../model/short-ids.js';
import { shellWord } from '../model/text.js';
import { ADAPTERS, adapterOf } from './registry.js';

export interface ResumePlan {
  agent: string;
  session: string;
  /** The turn the conversation goes back to before (its position on its branch), and its title. */
  turn: number;
  title: string | null;
  /** The command that opens the conversation, as argv. */
  command: string[];
  /** What to do inside it, in words. */
  steps: string[];
  /** A print-mode command that continues right before that prompt, in a fork of the session. */
  headless?: string[];
  /**
   * The agent forks the session after the turn before that prompt itself (fork.ts), then the fork opens:
   * the conversation starts right before the prompt, the session itself untouched.
   */
  fork?: { threadId: string; lastTurnId: string };
}

/** The agents git-ckpt can resume. */
export const RESUMABLE_AGENTS: readonly string[] = ADAPTERS.filter((a) => a.resume !== undefined).map((a) => a.name);

/** The headless line's last word: printed as it is, never run. */
const PROMPT_PLACEHOLDER = '<your next prompt>';

const promptWords = (turn: number, title: string | null) => `prompt ${turn}${title ? ` “${title}”` : ''}`;

/** Pure: the plan for one agent, or undefined for an agent git-ckpt cannot resume. */
export function resumePlan(input: {
  agent: string;
  session: string;
  turn: number;
  title: string | null;
  /** The transcript's message right before that prompt (null: the prompt is the first), for a print-mode fork. */
  resumeAt?: string | null;
  /** The turn is on a branch a rewind left behind: the agents reopen only the conversation's current branch. */
  leftBehind?: boolean;
  /** The agent's id of the turn before that prompt on the branch, for the agent's own fork. */
  previousTurnId?: string;
}): ResumePlan | undefined {
  const { agent, session, turn, title } = input;
  const spec = adapterOf(agent).resume;
  if (!spec) return undefined;
  const base = { agent, session, turn, title };
  if (input.leftBehind)
    return {
      ...base,
      command: spec.argv(session),
      steps: [
        `prompt ${turn} is on a branch a rewind left behind, which the agent does not reopen: the conversation goes on from where it is now, with the files as they were before that prompt`,
      ],
    };
  // Before the first prompt there is no conversation to go back into: a new one starts in the restored files.
  if (turn === 1)
    return { ...base, command: [...spec.fresh], steps: ['start a new conversation: the files are as they were before its first prompt'] };
  const prompt = promptWords(turn, title);
  if (spec.fork && input.previousTurnId)
    return {
      ...base,
      command: spec.argv(session),
      steps: [spec.fork.planned(prompt)],
      fork: { threadId: session, lastTurnId: input.previousTurnId },
    };
  return {
    ...base,
    command: spec.argv(session),
    steps: [spec.step(prompt)],
    ...(spec.headless && input.resumeAt ? { headless: [...spec.headless.argv(session, input.resumeAt), PROMPT_PLACEHOLDER] } : {}),
  };
}

/** Pure: the plan once the agent's fork is made: open the new session, nothing to do inside it. */
export function forkedPlan(plan: ResumePlan, forked: string): ResumePlan {
  const { fork: _made, ...rest } = plan;
  const spec = adapterOf(plan.agent).resume!;
  return { ...rest, command: spec.argv(forked), steps: [spec.fork!.made(`prompt ${plan.turn}`)] };
}

/** Pure: the plan when the fork could not be made: the interactive step instead. */
export function unforkedPlan(plan: ResumePlan): ResumePlan {
  const { fork: _failed, ...rest } = plan;
  return { ...rest, steps: [adapterOf(plan.agent).resume!.step(promptWords(plan.turn, plan.title))] };
}

/** Pure: argv as one shell line: every word but the prompt placeholder quoted where the shell would read it otherwise. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((a) => (a === PROMPT_PLACEHOLDER ? a : shellWord(a))).join(' ');
}

/**
 * Pure: the `git ckpt resume` line that names the same turn again, pinned to its session: a `turn:` address
 * without one meant the most recent session, which may not stay so (a `prompt:` address takes no session).
 */
export function resumeCommandLine(address: string, session: string): string {
  const pinned = address.startsWith('turn:') && !address.includes('@') ? `${address}@${shortSession(session)}` : address;
  return shellLine(['git', 'ckpt', 'resume', pinned]);
}
