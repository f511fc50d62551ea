/**
 * Shell completion. `git ckpt completion bash|zsh` prints a script; the script
 * asks `git-ckpt __complete <words…>` (the words after `ckpt`, the last one
 * being completed) for candidates: commands, options, checkpoint ids,
 * `turn:N` addresses and session prefixes. Commands and options come from
 * completion.json, generated at build time from the same command definitions
 * as --help, so they cannot drift.
 */
import { shortId, shortSession } from '../lib/model/short-ids.js';
import { labelOfTurn } from '../lib/model/turn-tree.js';
import { readFileSync } from 'node:fs';
import { Argument, type Command } from 'commander';
import { CkptError } from '../lib/model/errors.js';
import { completionTable } from '../lib/store/layout.js';
import { ADDRESS_COMMANDS } from './reference.js';
import { HOOK_AGENTS, MCP_AGENTS } from '../lib/agents/registry.js';

/** The values `--agent` takes, by command. */
const AGENT_VALUES: Record<string, readonly string[]> = { hooks: [...HOOK_AGENTS, 'all'], mcp: [...MCP_AGENTS, 'all'] };

interface CompletionData {
  commands: Record<string, string[]>;
  global: string[];
}

const BASH = `# git-ckpt completion for bash. Source it after git's own completion:
#   git ckpt completion bash > ~/.local/share/bash-completion/completions/git-ckpt
# git's completion calls _git_ckpt for \`git ckpt <TAB>\`; git-ckpt <TAB> works too.
_git_ckpt_candidates () {
	local i start=-1
	for ((i = 0; i < \${#COMP_WORDS[@]}; i++)); do
		case "\${COMP_WORDS[i]}" in ckpt|git-ckpt) start=$i; break ;; esac
	done
	((start < 0)) && return
	git-ckpt __complete "\${COMP_WORDS[@]:start+1:COMP_CWORD-start}" 2>/dev/null
}
_git_ckpt () {
	local IFS=$'\\n'
	COMPREPLY=($(_git_ckpt_candidates))
}
complete -o default -F _git_ckpt git-ckpt
`;

const ZSH = `#compdef git-ckpt
# git-ckpt completion for zsh: put it in a folder on $fpath as _git-ckpt
#   git ckpt completion zsh > ~/.zsh/completions/_git-ckpt
# zsh's _git calls _git-ckpt for \`git ckpt <TAB>\`; git-ckpt <TAB> works too.
_git-ckpt () {
	local i start=0
	for ((i = 1; i <= $#words; i++)); do
		case "$words[i]" in ckpt|git-ckpt) start=$i; break ;; esac
	done
	(( start == 0 )) && start=1
	local -a candidates
	candidates=(\${(f)"$(git-ckpt __complete "\${(@)words[start+1,CURRENT]}" 2>/dev/null)"})
	compadd -Q -- $candidates
}
_git-ckpt "$@"
`;

export function define(command: Command): Command {
  return command
    .description('print the shell completion script (bash or zsh)')
    .addArgument(new Argument('<shell>').choices(['bash', 'zsh']))
    .action((shell: string) => {
      process.stdout.write(shell === 'zsh' ? ZSH : BASH);
    });
}

function data(): CompletionData {
  try {
    return JSON.parse(readFileSync(completionTable(), 'utf8')) as CompletionData;
  } catch {
    throw new CkptError('internal', 'completion.json is missing: run npm run build');
  }
}

/** Pure: the candidates for the last word, from the data and (for addresses and sessions) the ledger's view. */
export function candidates(
  words: string[],
  d: CompletionData,
  view: () => { ids: string[]; turns: string[]; sessions: string[] },
): string[] {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const command = before.find((w, i) => !w.startsWith('-') && before[i - 1] !== '-C');
  const pick = (list: string[]) => list.filter((c) => c.startsWith(current));
  if (!command) return pick(current.startsWith('-') ? d.global : Object.keys(d.commands));
  if (command === 'help') return pick(Object.keys(d.commands));
  if (before.at(-1) === '--session') return pick(view().sessions);
  if (before.at(-1) === '--agent') return pick([...(AGENT_VALUES[command] ?? [])]);
  if (current.startsWith('-')) return pick([...(d.commands[command] ?? []), ...d.global]);
  if (ADDRESS_COMMANDS.has(command) && !before.includes('--')) {
    const v = view();
    return pick(['latest', 'latest~1', 'latest~2', ...v.ids, ...v.turns]);
  }
  return [];
}

/** `git-ckpt __complete <words…>`: print the candidates, one a line; never an error on stdout. */
export async function runComplete(words: string[]): Promise<void> {
  const view = () => ({ ids: [] as string[], turns: [] as string[], sessions: [] as string[] });
  let ledger: ReturnType<typeof view> | undefined;
  const lazyView = () => ledger ?? view();
  try {
    const needsLedger = words.length > 1;
    if (needsLedger) {
      const { Workspace } = await import('../lib/workspace.js');
      const { records, labels } = await Workspace.open(process.cwd()).list({ limit: 200 });
      const sessions = [...new Set(records.map((r) => r.session).filter((s): s is string => s !== null))];
      const latestSession = sessions[0];
      // Turns as people name them: `3`, or `3~1` on a branch a rewind inside the agent left.
      const turnsOf = (s: string) =>
        [...new Set(records.filter((r) => r.session === s && r.turn !== null).map((r) => r.turn!))]
          .sort((a, b) => a - b)
          .map((t) => labelOfTurn(labels, s, t));
      ledger = {
        ids: records.slice(0, 30).map((r) => shortId(r.id)),
        turns: [
          ...(latestSession ? turnsOf(latestSession).map((t) => `turn:${t}`) : []),
          ...sessions.flatMap((s) => turnsOf(s).map((t) => `turn:${t}@${shortSession(s)}`)),
        ],
        sessions: sessions.map((s) => shortSession(s)),
      };
    }
  } catch {
    /* not in a workspace, or no store: commands and options still complete */
  }
  const out = candidates(words, data(), lazyView);
  process.stdout.write(out.length ? `${out.join('\n')}\n` : '');
}
