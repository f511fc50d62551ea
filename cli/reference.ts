/**
 * The reference text `git ckpt --help` ends with, and that the man page and
 * docs/reference.md carry with each command's notes: one source, so they cannot
 * drift. Plain text; scripts/reference.mjs turns it into roff and into Markdown.
 * What it says of the agents comes from their adapters (lib/agents/registry.ts).
 */
import { adapterOf, agentsWith, agentTitles } from '../lib/agents/registry.js';
import { shellLine } from '../lib/agents/resume-plan.js';

/** The agents that have this part, by title: "Claude Code, Codex CLI and Gemini CLI". */
const titlesWith = (part: Parameters<typeof agentsWith>[0], conjunction: 'and' | 'or' = 'and') =>
  agentTitles(agentsWith(part), conjunction);
/** How each resumable agent's conversation is reopened, as a command line. */
const resumeCommands = agentsWith((a) => a.resume)
  .map((a) => shellLine(adapterOf(a).resume!.argv('ID')))
  .join(', ');

interface ReferenceSection {
  title: string;
  /** Paragraphs, or `term: text` rows when `rows` is set. */
  paragraphs?: string[];
  rows?: [string, string][];
}

/** Commands whose positionals are checkpoint addresses (an option there is a smuggled id; ids complete there). */
export const ADDRESS_COMMANDS = new Set(['show', 'diff', 'restore', 'revert', 'forget', 'resume']);

export const DESCRIPTION =
  'Rewindable checkpoints of a workspace for people who let AI coding agents edit their code. Each checkpoint captures the whole ' +
  'workspace, edits made through the shell included, as an unreferenced commit in a shadow git directory outside the workspace. ' +
  'Your own repository is never touched: not its HEAD, index, refs, reflog, config or objects.';

/** @public (scripts/man.mjs builds the man page from it) */
export const GLOBAL_OPTIONS: [string, string][] = [
  ['-C <path>', 'Run as if started in <path> (repeatable, like git -C).'],
  ['-p, --paginate', 'Page the output of log, show and diff even when it would not be.'],
  ['--no-pager', 'Never page.'],
  ['--color[=<when>]', 'Colour: auto (the default: on a terminal), always, or never. git’s color.ui and NO_COLOR are honoured.'],
  ['-h, --help', 'Usage of git ckpt or of one command; git ckpt help <command> too.'],
  ['--version', 'The versions of git-ckpt, git and Node.js.'],
];

/** @public (scripts/man.mjs builds the man page from it) */
export const REFERENCE: ReferenceSection[] = [
  {
    title: 'WORKSPACE',
    paragraphs: [
      'Every command accepts -C <dir> (like git’s) and works in any directory: inside a git work tree the workspace is the toplevel; anywhere else it is the directory itself. The filesystem root, your home directory and a repository’s own git directory (a bare repository, or any folder inside one) are refused.',
    ],
  },
  {
    title: 'ADDRESSES',
    paragraphs: [
      'Where a command takes a checkpoint, it takes one of these. "Rewind to before my third prompt" is git ckpt restore turn:3. An ambiguous prefix fails with "is ambiguous (N matches)"; it never picks one.',
    ],
    rows: [
      [
        'latest, latest~N',
        'The newest checkpoint, and the Nth before it (degraded ones are skipped); this workspace’s own, even in a store that holds only fetched ones: a fetched one is named by its id (or the id it had where it was taken), turn:N@SESSION@WRITER or --session.',
      ],
      ['HEAD, HEAD~N, @, @~N', 'git’s spellings, for the hands that type them: the same as latest and latest~N.'],
      ['<hex prefix>', 'A unique prefix of 4 or more hex digits of a checkpoint id; an ambiguous one is an error.'],
      [
        'turn:N[@SESSION]',
        'The state just before turn N of an agent session: the Nth prompt you typed. SESSION is a unique prefix; the most recent session of this workspace by default. The turn’s first checkpoint holds that state when it was taken at the turn’s start (the prompt hook or the first pre hook); when the turn starts with a post checkpoint, its parent does; a turn that changed nothing is reached through the next one. A session fetched from another store is SESSION@WRITER (log shows it so), even under the id of one of yours: its turns never join yours.',
      ],
      [
        'turn:N~K[@SESSION]',
        'After you rewound the conversation inside the agent, turn:N counts the prompts the conversation now holds; turn:N~K is turn N of the branch that was current K rewinds ago (log names those turns so).',
      ],
      [
        'prompt:ID',
        'A turn named by the agent’s own id of its prompt (a prompt_id or turn_id in its hook payload: log --json shows it as agentTurn), on whichever branch holds it.',
      ],
    ],
  },
  {
    title: 'FORGET',
    paragraphs: [
      'git ckpt forget removes from the store, for good: checkpoints named by address, every checkpoint of an agent session (--session), every checkpoint older than a date (--before), or, with --path, files from every checkpoint that holds them (a credentials.json no secret pattern matched). Kept checkpoints after what goes get new commits with the same metadata and trailers (new trees too for --path), re-parented onto the nearest kept ancestor, so a diff from the parent stays meaningful; their old ids keep resolving, and so do latest~N, turn:N and undo. The objects are pruned at once. The files in your workspace are never touched. With --path, a record’s text that names a forgotten path (the command that wrote it, a message, a prompt’s title) is replaced by a mark too. Export chains that carried what goes are dropped (the next push makes the session’s again), and the report names the remotes and the bundle files that still hold it: git ckpt unpush --session S deletes the ref (the host keeps the objects until it purges them), then git ckpt push --session S sends the session as it is now. Checkpoints fetched from other stores are kept unless named (an id, or --session SESSION@WRITER).',
      'Like gc it applies at once, and nothing can undo it: run it with --dry-run first, which says what goes and the bytes it frees. A restore, revert or undo interrupted part way blocks a forget that would remove what its journal needs; a forget interrupted part way is named by git ckpt status, and running the same forget again finishes it.',
    ],
    rows: [
      [
        '--path <pattern>',
        'gitignore syntax relative to the workspace root, as in ckpt.secretPatterns: a name matches at any depth, a path with a slash is anchored at the root, a trailing slash names a directory; case matters. Repeatable. Files the patterns match are never captured again (the store’s forgotten file lists them; delete a line to capture again).',
      ],
      [
        '--before <date>',
        '2024-05-01 (local midnight), 2024-05-01T14:30 (local, or with Z or ±hh:mm), @<unix seconds>, or an age: 90m, 12h, 30d, 2w.',
      ],
    ],
  },
  {
    title: 'EXIT STATUS',
    paragraphs: ['Messages are English whatever the locale.'],
    rows: [
      ['0', 'Success (skipped paths are reported, not failures).'],
      [
        '1',
        'An error, one line "git-ckpt: …" on stderr (with --json, one JSON object {"error":{"code","message"}}): an unknown or ambiguous address, an option smuggled in where an id belongs (show --output=/tmp/x), a refused path, a bad setting, a busy or refused workspace, an exhausted time budget, a failed file, revert conflicts, a remote that refused a push.',
      ],
      ['2', 'A usage error.'],
      ['3', 'A bug in git-ckpt ("internal error: …"; GIT_CKPT_TRACE=1 shows the stack).'],
    ],
  },
  {
    title: 'SETTINGS',
    paragraphs: [
      'Read by git itself from a [ckpt] section of your global config, or of the store’s own config file (which wins): git config --global ckpt.maxFileBytes 32m, or git config --file "$(git ckpt status --json | jq -r .store)/config" ckpt.timeBudget 60s.',
    ],
    rows: [
      ['ckpt.maxFileBytes (16m)', 'Larger files are not stored (a captured file that grows past it leaves the checkpoint).'],
      [
        'ckpt.maxNewFiles (5000)',
        'A directory that appears between two snapshots with more files than this is not stored (an un-ignored node_modules being installed). Never applies to a workspace’s first snapshot.',
      ],
      [
        'ckpt.secretPatterns',
        'gitignore-style patterns (comma or space separated) of files never stored, added to the defaults (.env .env.* *.pem *.key id_rsa* id_ed25519*). !PATTERN drops that default (!*.key), or else lets matching files be stored (!.env.example). git ckpt status lists the patterns in force.',
      ],
      [
        'ckpt.timeBudget (15s)',
        'A snapshot that runs longer stops cleanly and keeps its progress (1500ms, 15s, 2m); it always hashes at least one batch.',
      ],
      ['ckpt.lockTimeout (30s)', 'How long a command waits for another process working on the same workspace.'],
      ['ckpt.keep (500)', 'Checkpoints kept per session by gc (the newest).'],
      ['ckpt.maxAge (30d)', 'Checkpoints older than this are dropped by gc (12h, 30d, …).'],
      [
        'ckpt.maxBytes (2g)',
        'Soft quota of the workspace’s store: gc drops the oldest checkpoints while the store is above it. git ckpt status shows the share in use.',
      ],
      ['ckpt.hookBudget (10s)', 'Wall-clock budget of one agent hook, lock wait included; at most 25 s, below every agent’s hook timeout.'],
      [
        'ckpt.daemon (true)',
        'Hooks reach a resident daemon that watches the workspace, so a tool call’s capture scans only what changed (docs/daemon.md). false: every hook scans the workspace itself, as before; a running daemon exits within 30 s.',
      ],
      ['ckpt.daemonIdle (30m)', 'The daemon exits after this long without a hook event.'],
      [
        'ckpt.daemonVerify (10m)',
        'Every this long (of activity) the daemon checks its account of changes against a full scan, and records what it finds in git ckpt daemon status and hook.log.',
      ],
      [
        'ckpt.followRewind (ask)',
        `After you rewind the conversation inside ${titlesWith((a) => a.transcript, 'or')}: off only marks it; ask says in the agent (and in git ckpt status) what the workspace still holds of the turns left behind, and how to restore it; auto restores that too, after a rewind that put back the agent’s own edits, leaving what anything else changed since (undo brings them back). See docs/rewinds.md.`,
      ],
      [
        'ckpt.share.auto (off)',
        'turn: after git ckpt share init, each turn’s end pushes its session in the background (never a tool call’s hook); what it could not send or withheld goes to the store’s hook.log. See docs/share.md.',
      ],
      ['ckpt.share.agentPush (false)', 'The agent’s checkpoint_share MCP tool may push; it may always list, fetch and dry-run.'],
      [
        'ckpt.recordPrompts (true)',
        'Keep the first line of each prompt you type (at most 100 characters, secrets redacted) as its turn’s title in log. false keeps no prompt text at all.',
      ],
    ],
  },
  {
    title: 'WHAT IS CAPTURED',
    paragraphs: [
      'What is not captured is never silent: every skip is listed with its reason on the command’s output and on the checkpoint’s record, git ckpt show prints it, and git ckpt status lists what the workspace holds right now that no checkpoint captures. The reasons: too large, secret, a new directory with too many files, unreadable, a path longer than the system allows (PATH_MAX), a name that is not valid UTF-8 (shown as bad\\xff.txt; see docs/design.md, Byte-exact capture), and a nested repository without a commit.',
      'Ignored files follow .gitignore files, your repository’s .git/info/exclude, and a .ckptignore (gitignore syntax) at the workspace root. A core.excludesFile set in your global config is not read (the store is private, and capturing more is the safe side); git’s default one, $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore), is. A file already captured stays captured while it exists when a rule from any of these later ignores it (build/ added to .gitignore after a build), as git keeps tracking a tracked file: its changes and its deletion are recorded, new files beside it are ignored, and a change of ignore rules never stops a snapshot.',
      'git-ckpt’s own stores are never captured. A store inside its own workspace (GIT_CKPT_HOME or XDG_STATE_HOME pointing there, directly or through a symlink) is refused with one line: an agent’s rm -rf or git clean -x would take the checkpoints with it. Any other store root inside the workspace (GIT_CKPT_HOME, XDG_STATE_HOME/git-ckpt, ~/.local/state/git-ckpt, as given and through symlinks) is left out of every checkpoint, and no restore writes there.',
    ],
  },
  {
    title: 'PAGER, COLOUR AND COMPLETION',
    paragraphs: [
      'log, show and diff page through git’s pager on a terminal (GIT_PAGER, core.pager, PAGER, else less -FRX; git ckpt --no-pager log), and colour follows --color, color.ui and NO_COLOR. Nothing is paged or coloured into a pipe or a file.',
      'Shell completion works inside git’s own (git ckpt re<TAB>, checkpoint ids, turn:N, sessions). bash, with the bash-completion package: mkdir -p ~/.local/share/bash-completion/completions && git ckpt completion bash > ~/.local/share/bash-completion/completions/git-ckpt. zsh: git ckpt completion zsh > ~/.zsh/completions/_git-ckpt, in a folder on $fpath.',
    ],
  },
  {
    title: 'SHARING',
    paragraphs: [
      'git ckpt share init --remote <name|url> says where checkpoints go; nothing is pushed before it, nor ever by your own git push. A private repository of its own is best: sharing to your origin needs --yes, since everyone who can read it could fetch the checkpoints, and deleting a ref does not purge it.',
      'git ckpt push sends an export copy of a session (the latest, --session S, or --all) to refs/ckpt/v1/<workspace>/<session>/<writer>: one ref per session and store, moved only forward, never forced. Paths your .gitignore ignores are left out (unless --include-ignored), files the secret patterns name too, and a credential found in any file withholds its checkpoint and the rest of the session, naming the path and the rule. A file over 50 MB or a push over 1.5 GB is refused before any network I/O. The chain is parented on the newest commit of your HEAD your repository knows the remote has, so a push sends only what the session changed.',
      'git ckpt fetch brings other machines’ sessions of the workspace; log marks them [from <remote>/<writer>] and names each SESSION@WRITER, show names their origin, and restore, revert and undo take them when named. An imported chain whose ids are not id-shaped (a session id that looks like an option) is refused whole. git ckpt bundle create|verify|import <file> carries them where no remote reaches (--incremental: only what the last bundle did not hold; import takes this workspace’s chains only, --any-workspace every one). git ckpt unpush --session S deletes this store’s ref of a session on the remote, with a lease (--session _none: the checkpoints of no session).',
    ],
  },
  {
    title: 'ENVIRONMENT',
    rows: [
      ['GIT_CKPT_HOME', 'The store root (else $XDG_STATE_HOME/git-ckpt, else ~/.local/state/git-ckpt).'],
      ['GIT_PAGER, PAGER', 'The pager, after git’s core.pager as git orders them; less with LESS=FRX by default.'],
      ['NO_COLOR', 'No colour, unless --color=always.'],
      ['GIT_CKPT_TRACE', 'Print every git command git-ckpt runs, and the stack of an internal error.'],
      [
        'GIT_CKPT_HOOK_TRACE',
        'An absolute file: each hook appends what it received and did, one JSON line. Events the daemon records go to the file its own environment named when it started (a request never names one).',
      ],
    ],
  },
  {
    title: 'FILES',
    paragraphs: [
      'Each workspace has a store under the store root: the shadow git directory, its index, ledger.jsonl (one record per checkpoint), forgotten (the patterns forget --path removed, never captured again), share.json (where checkpoints go, what was exported, pushed and bundled), fetched.jsonl (checkpoints fetched from other stores) and a few caches. Nothing is written inside the workspace except by restore, revert and undo, and by hooks install and mcp install (the agents’ own config files).',
      'Agent hooks are described in hooks/README.md of the package; how it works, and why, in docs/design.md of the repository.',
    ],
  },
];

/**
 * What each command does beyond its one-line --help: the man page and docs/reference.md
 * print it under the command's usage (scripts/man.mjs).
 * @public (scripts/man.mjs builds the man page from it)
 */
export const COMMAND_NOTES: Record<string, string[]> = {
  init: [
    'Take the first snapshot explicitly, with no time budget, and with progress on stderr when it is a terminal (none into a pipe or a file, as git does). The workspace is read and hashed in chunks, so its memory stays at git’s own whatever its size (a million files: 88 s and 215 MB here, against 75 s and 237 MB for git add -A).',
  ],
  snapshot: [
    'Capture the workspace. If nothing changed since the latest checkpoint, nothing is created: it exits 0 and says so (--json: "created": false with the latest id).',
  ],
  log: [
    'Newest first, grouped under a header per agent session and turn: short id, age, session/turn/step, tool, kind, +A ~M -D, the first paths, and what the agent ran; "N older checkpoints" when -n cuts. --session takes a unique prefix. --json is an array of checkpoints (id, parent, time, session, turn, tool, kind, prompt, stats, paths, skipped, op, degraded, …): the same view, field for field, that the agent tools and the web API give.',
  ],
  show: ['A header (ids, time, attribution, what was not captured), then git’s own diff from the parent.'],
  diff: [
    'Two checkpoints, or, with one or no argument, a checkpoint (default latest) against the live workspace, new files included. Paths after -- are relative to the current directory.',
  ],
  status: [
    'Workspace, store path, checkpoint count, sessions, bytes on disk, the secret patterns in force, latest checkpoint, whether the workspace differs from it (dirty; null with notCompared saying why while the first snapshot runs or a restore is interrupted), an interrupted restore if there is one, and, when the daemon watches the workspace, whether its next capture scans everything and why (watcher; with the fix when part of the workspace cannot be watched).',
  ],
  restore: [
    'Make the workspace (or only the named files and directories) match a checkpoint. Never deletes unless --delete-new, and then only files the guard captured. Every write is one transaction: a guard checkpoint of the state before, a journal, then the writes; git ckpt undo reverses it. docs/recovery.md says what it never touches.',
    '--continue or --abort finishes, or rolls back, a restore, revert or undo that was interrupted (crash, kill -9, power loss); a path changed since the interruption is left as it is.',
  ],
  revert: [
    'Undo a checkpoint’s change, or an agent session’s (a turn’s, a turn range’s) tool calls, three-way: later edits that do not overlap are kept; overlapping ones are conflicts, listed with their lines (exit 1). See docs/recovery.md.',
  ],
  undo: ['Reverse the last restore, revert or undo, new files included; run it again to redo.'],
  resume: [
    `The files back to before turn N (a restore, with its guard and undo; as with restore, files the checkpoint lacks stay unless --delete-new, and only captured ones go), then the agent’s conversation there: on a terminal it starts the agent’s resume command (${resumeCommands}: a session id, which may come from a fetched record, is never read as an option) and says the one step inside it that goes back to that prompt (Esc Esc, or /rewind); into a pipe it restores and prints them; --print and --dry-run print the plan and the commands and change nothing, start nothing.`,
    `For ${titlesWith((a) => a.resume?.fork)}, which can fork a session itself, it forks the session right before that prompt (after the turn before; the session resumed from is untouched) and opens the fork. For ${titlesWith((a) => a.resume?.headless)} it also prints the print-mode command that continues right before that prompt in a fork of the session. A turn a rewind left behind gets its files back, but no agent reopens that branch of the conversation. See docs/rewinds.md.`,
  ],
  hook: [
    'What the agents run before and after each tool call, with their JSON payload on stdin. Always exits 0 and prints only the neutral answer. An agent name it does not know is read as generic.',
  ],
  hooks: [
    `Wire git-ckpt into ${titlesWith((a) => a.wiring?.kind === 'config')} (their own config files, merged, idempotent, with a backup) and ${titlesWith((a) => a.wiring && a.wiring.kind !== 'config')} (plugin or hook files of ours in their folders); ${titlesWith((a) => a.wiring?.kind === 'config' && a.wiring.http)}’s tool events as HTTP hooks to the daemon when it has them. What it writes is yours, not the team’s: hooks/README.md (Which files to commit) lists each agent’s files.`,
  ],
  mcp: [
    'Without an action: the agent tools over MCP on stdin/stdout (docs/ui-and-mcp.md). With one: the server in each agent’s own MCP config, merged, idempotent, with a backup outside the project.',
  ],
  ui: [
    'A web timeline on 127.0.0.1: sessions, turns titled by your prompts, tool calls, diffs, restore with preview and confirmation, undo. See docs/ui-and-mcp.md.',
  ],
  gc: [
    'Apply the retention policy: drop what it lets go (each with the rule that dropped it), pack exactly what the kept checkpoints need, remove leftovers of killed processes. Also started in the background by snapshots when there is something to do.',
  ],
  forget: [
    'Remove checkpoints, a session, everything older than a date, or files captured by mistake from every checkpoint, from the store for good; the objects go at once. Applies at once like gc, with no undo: --dry-run first says what goes and the bytes freed. See FORGET below, and docs/forget.md.',
  ],
  fsck: [
    'Degraded checkpoints (any object missing), orphan objects, store size, unreadable ledger lines. --json has degraded: the ids, empty when none. --rebuild-ledger recovers the ledger from the commits’ trailers (the old one is kept as a backup). Exit 1 when something is degraded or unreadable.',
  ],
  watch: [
    'For agents and editors without hooks (Cursor’s editor, Aider, Zed, VS Code, you): the daemon takes a checkpoint of kind watch after each quiet period of changes (default 2 s), shown in log, the timeline and the MCP tools like any other, kept by the same retention, until --stop or the daemon’s exit.',
  ],
  daemon: ['The resident watcher hooks reach (docs/daemon.md); hooks start it, so these are for looking at it.'],
  stores: [
    'Every workspace store under the store root: size, last use, checkpoints, and whether its workspace still exists. --prune-missing removes the stores of deleted workspaces.',
  ],
  share: [
    'Say where checkpoints go: a remote of your repository by name (its push URL, insteadOf applied) or a URL. Nothing is pushed before it, nor ever by your own git push. See SHARING below, and docs/share.md.',
  ],
  push: [
    'The latest session (or the one named, or all) to the remote, as an export copy: one ref per session and store, fast-forward only, never forced. --dry-run lists sessions, checkpoints, bytes, and what is withheld and why.',
  ],
  fetch: [
    'Other machines’ sessions of this workspace into this store: log, show, diff, restore, revert, undo, the web timeline and the MCP tools take them, with their origin shown. --list: what the remote holds.',
  ],
  bundle: [
    'The same export copy in one file, for a machine no remote reaches; an incremental bundle names its prerequisites, and verify says which of them a store lacks.',
  ],
  unpush: [
    'Delete this store’s ref of a session on the remote, with a lease. Deleting is not purging: the host keeps the objects until it purges them.',
  ],
};

/** The reference as plain text, for the end of `git ckpt --help`. */
export function referenceText(width = 100): string {
  const wrap = (text: string, indent: string) => {
    const words = text.split(' ');
    const lines: string[] = [];
    let line = indent;
    for (const w of words) {
      if (line.trim() && line.length + w.length + 1 > width) {
        lines.push(line.trimEnd());
        line = indent;
      }
      line += `${w} `;
    }
    lines.push(line.trimEnd());
    return lines.join('\n');
  };
  return REFERENCE.map((s) => {
    const body = [
      ...(s.paragraphs ?? []).map((p) => wrap(p, '  ')),
      ...(s.rows ?? []).map(([term, text]) => `  ${term}\n${wrap(text, '      ')}`),
    ];
    return `${s.title}\n${body.join('\n')}`;
  }).join('\n\n');
}
