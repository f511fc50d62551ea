/**
 * Pure: how to start an agent's conversation again at "before turn N", once
 * git-ckpt has put the files back there. No agent has a flag that opens an
 * interactive session at an earlier prompt, so the plan is its resume
 * command plus the one step inside it that goes back (Claude Code's and
 * Codex's Esc Esc, Gemini CLI's and Copilot CLI's /rewind). Claude Code's
 * print mode can continue from an exact line (`--resume-session-at`, into a
 * fork of the session): offered too when the line is known.
 */
import { shortSession } from './short-ids.js';

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
  /** Claude Code: a print-mode command that continues right before that prompt, in a fork of the session. */
  headless?: string[];
  /**
   * Codex: fork the thread after the turn before that prompt (its app-server's `thread/fork` with
   * `lastTurnId`), then open the fork: the conversation starts right before the prompt, the thread itself untouched.
   */
  fork?: { threadId: string; lastTurnId: string };
}

export const RESUMABLE_AGENTS = ['claude', 'codex', 'gemini', 'copilot'] as const;

/** The headless line's last word: printed as it is, never run. */
const PROMPT_PLACEHOLDER = '<your next prompt>';

/**
 * Pure: the argv that reopens a session. The id comes from a record (a fetched one is another
 * machine's): it never stands as a word of its own where the agent's parser could read it as an option.
 * Claude Code and Copilot CLI (commander) and Gemini CLI (yargs) take `--resume=<id>` whole, whatever
 * follows the `=` (Claude Code 2.1.332 answers `--resume=--dangerously-skip-permissions` with "not a
 * UUID"); Codex (clap) takes its SESSION_ID after `--`.
 */
function resumeArgv(agent: string, session: string): string[] {
  return agent === 'codex' ? ['codex', 'resume', '--', session] : [agent, `--resume=${session}`];
}

/** Pure: the plan for one agent, or undefined for an agent git-ckpt cannot resume. */
export function resumePlan(input: {
  agent: string;
  session: string;
  turn: number;
  title: string | null;
  /** Claude: the uuid of the transcript line right before that prompt (null: the prompt is the first). */
  resumeAt?: string | null;
  /** The turn is on a branch a rewind left behind: the agents reopen only the conversation's current branch. */
  leftBehind?: boolean;
  /** Codex: the turn id of the turn before that prompt on the branch. */
  previousTurnId?: string;
}): ResumePlan | undefined {
  const { agent, session, turn, title } = input;
  if (input.leftBehind && RESUMABLE_AGENTS.includes(agent as (typeof RESUMABLE_AGENTS)[number])) {
    const command = resumeArgv(agent, session);
    return {
      agent,
      session,
      turn,
      title,
      command,
      steps: [
        `prompt ${turn} is on a branch a rewind left behind, which the agent does not reopen: the conversation goes on from where it is now, with the files as they were before that prompt`,
      ],
    };
  }
  const prompt = `prompt ${turn}${title ? ` “${title}”` : ''}`;
  const base = { agent, session, turn, title };
  // Before the first prompt there is no conversation to go back into: a new one starts in the restored files.
  if (turn === 1) {
    return RESUMABLE_AGENTS.includes(agent as (typeof RESUMABLE_AGENTS)[number])
      ? { ...base, command: [agent], steps: ['start a new conversation: the files are as they were before its first prompt'] }
      : undefined;
  }
  switch (agent) {
    case 'claude':
      // --resume-session-at finds only messages of the conversation's current branch.
      return {
        ...base,
        command: resumeArgv('claude', session),
        steps: [`press Esc twice, pick ${prompt} and choose “Restore conversation” (git-ckpt has restored the files already)`],
        ...(input.resumeAt
          ? {
              headless: [
                'claude',
                '-p',
                `--resume=${session}`,
                '--fork-session',
                `--resume-session-at=${input.resumeAt}`,
                PROMPT_PLACEHOLDER,
              ],
            }
          : {}),
      };
    case 'codex':
      return input.previousTurnId
        ? {
            ...base,
            command: resumeArgv('codex', session),
            steps: [`git-ckpt forks the thread right before ${prompt} and opens the fork; the thread itself stays as it is`],
            fork: { threadId: session, lastTurnId: input.previousTurnId },
          }
        : { ...base, command: resumeArgv('codex', session), steps: [`press Esc twice and step back to ${prompt}, then Enter to edit it`] };
    case 'gemini':
      return {
        ...base,
        command: resumeArgv('gemini', session),
        steps: [`type /rewind and pick ${prompt} (the conversation only: the files are restored)`],
      };
    case 'copilot':
      return {
        ...base,
        command: resumeArgv('copilot', session),
        steps: [`type /rewind and pick ${prompt} (the conversation only: the files are restored)`],
      };
    default:
      return undefined;
  }
}

/** Pure: the plan once Codex's fork is made: open the new thread, nothing to do inside it. */
export function forkedPlan(plan: ResumePlan, threadId: string): ResumePlan {
  const { fork: _made, ...rest } = plan;
  return {
    ...rest,
    command: resumeArgv('codex', threadId),
    steps: [`a fork of the thread, right before prompt ${plan.turn} (the thread itself is as it was)`],
  };
}

/** Pure: the plan when the fork could not be made: the interactive step instead. */
export function unforkedPlan(plan: ResumePlan): ResumePlan {
  const { fork: _failed, ...rest } = plan;
  const prompt = `prompt ${plan.turn}${plan.title ? ` “${plan.title}”` : ''}`;
  return { ...rest, steps: [`press Esc twice and step back to ${prompt}, then Enter to edit it`] };
}

/** A word the shell reads as it is: no character it treats apart, and no `~` it would expand (first, or after `:` or `=`). */
function isPlainWord(a: string): boolean {
  return /^[A-Za-z0-9_@%+=:,./~-]+$/.test(a) && !/^~|[:=]~/.test(a);
}

/** Pure: argv as one shell line: every word but the prompt placeholder single-quoted where the shell would read it otherwise. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((a) => (isPlainWord(a) || a === PROMPT_PLACEHOLDER ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * Pure: the `git ckpt resume` line that names the same turn again, pinned to its session: a `turn:` address
 * without one meant the most recent session, which may not stay so (a `prompt:` address takes no session).
 */
export function resumeCommandLine(address: string, session: string): string {
  const pinned = address.startsWith('turn:') && !address.includes('@') ? `${address}@${shortSession(session)}` : address;
  return shellLine(['git', 'ckpt', 'resume', pinned]);
}
