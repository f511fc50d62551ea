/**
 * The reference text `git ckpt --help` ends with and the man page carries:
 * one source, so they cannot drift. Plain text; the man page generator
 * (scripts/man.mjs) turns each section into roff.
 */

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
    title: 'ADDRESSES',
    rows: [
      [
        'latest, latest~N',
        'The newest checkpoint, and the Nth before it (degraded ones are skipped); this workspace’s own: a fetched one is named by its id (or the id it had where it was taken), turn:N@SESSION or --session.',
      ],
      ['HEAD, HEAD~N, @, @~N', 'git’s spellings, for the hands that type them: the same as latest and latest~N.'],
      ['<hex prefix>', 'A unique prefix of 4 or more hex digits of a checkpoint id; an ambiguous one is an error.'],
      [
        'turn:N[@SESSION]',
        'The state just before turn N of an agent session: the Nth prompt you typed. SESSION is a unique prefix; the most recent session by default.',
      ],
      [
        'turn:N~K[@SESSION]',
        'After you rewound the conversation inside the agent, turn:N counts the prompts the conversation now holds; turn:N~K is turn N of the branch that was current K rewinds ago (log names those turns so).',
      ],
    ],
  },
  {
    title: 'FORGET',
    paragraphs: [
      'git ckpt forget removes from the store, for good: checkpoints named by address, every checkpoint of an agent session (--session), every checkpoint older than a date (--before), or, with --path, files from every checkpoint that holds them (a credentials.json no secret pattern matched). Kept checkpoints after what goes get new commits with the same metadata and trailers (new trees too for --path), re-parented onto the nearest kept ancestor, so a diff from the parent stays meaningful; their old ids keep resolving, and so do latest~N, turn:N and undo. The objects are pruned at once. The files in your workspace are never touched.',
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
    rows: [
      ['0', 'Success (skipped paths are reported, not failures).'],
      [
        '1',
        'An error, one line "git-ckpt: …" on stderr (with --json, one JSON object {"error":{"code","message"}}): a bad address or path, a bad setting, a busy or refused workspace, a time budget, a failed file, revert conflicts, a remote that refused a push.',
      ],
      ['2', 'A usage error.'],
      ['3', 'A bug in git-ckpt ("internal error"; GIT_CKPT_TRACE=1 shows the stack).'],
    ],
  },
  {
    title: 'SETTINGS',
    paragraphs: [
      'Read from a [ckpt] section of your global git config, or of the store’s own config file (which wins): git config --global ckpt.maxFileBytes 32m',
    ],
    rows: [
      ['ckpt.maxFileBytes (16m)', 'Larger files are not stored.'],
      ['ckpt.maxNewFiles (5000)', 'A directory that appears with more files than this is not stored.'],
      [
        'ckpt.secretPatterns',
        'gitignore-style patterns of files never stored, added to the defaults (.env .env.* *.pem *.key id_rsa* id_ed25519*); !PATTERN drops a default, or lets matching files be stored. git ckpt status lists the patterns in force.',
      ],
      ['ckpt.timeBudget (15s)', 'A snapshot stops cleanly past it and keeps its progress; it always hashes at least one batch.'],
      ['ckpt.lockTimeout (30s)', 'How long to wait for another process working on the same workspace.'],
      ['ckpt.hookBudget (10s)', 'Wall-clock budget of one agent hook, lock wait included; at most 25 s.'],
      ['ckpt.keep (500)', 'Checkpoints kept per session by gc.'],
      ['ckpt.maxAge (30d)', 'Checkpoints older than this are dropped by gc.'],
      ['ckpt.maxBytes (2g)', 'Soft quota of the store: gc drops the oldest checkpoints while above it.'],
      ['ckpt.recordPrompts (true)', 'Keep the first line of each prompt (redacted) as its turn’s title.'],
      [
        'ckpt.followRewind (ask)',
        'After you rewind the conversation inside Claude Code, Codex or Gemini CLI: off only records it; ask says in the agent (and in git ckpt status) what the workspace still holds of the turns left behind, and how to restore it; auto restores that too, after a rewind that put back the agent’s own edits, when nothing else changed those files since (undo brings them back).',
      ],
      ['ckpt.share.agentPush (false)', 'The agent’s checkpoint_share MCP tool may push; it may always list, fetch and dry-run.'],
      [
        'ckpt.share.auto (off)',
        'turn: after git ckpt share init, each turn’s end pushes its session in the background (never a tool call’s hook); what it could not send or withheld goes to the store’s hook.log.',
      ],
    ],
  },
  {
    title: 'SHARING',
    paragraphs: [
      'git ckpt share init --remote <name|url> says where checkpoints go; nothing is pushed before it, nor ever by your own git push. A private repository of its own is best: sharing to your origin needs --yes, since everyone who can read it could fetch the checkpoints, and deleting a ref does not purge it.',
      'git ckpt push sends an export copy of a session (the latest, --session S, or --all) to refs/ckpt/v1/<workspace>/<session>/<writer>: one ref per session and store, moved only forward, never forced. Paths your .gitignore ignores are left out (unless --include-ignored), files the secret patterns name too, and a credential found in any file withholds its checkpoint and the rest of the session, naming the path and the rule. A file over 50 MB or a push over 1.5 GB is refused before any network I/O. The chain is parented on the newest commit of your HEAD your repository knows the remote has, so a push sends only what the session changed.',
      'git ckpt fetch brings other machines’ sessions of the workspace; log marks them [from <remote>/<writer>], show names their origin, and restore, revert and undo take them like any checkpoint. git ckpt bundle create|verify|import <file> carries them where no remote reaches (--incremental: only what the last bundle did not hold). git ckpt unpush --session S deletes this store’s ref of a session on the remote, with a lease.',
    ],
  },
  {
    title: 'ENVIRONMENT',
    rows: [
      ['GIT_CKPT_HOME', 'The store root (else $XDG_STATE_HOME/git-ckpt, else ~/.local/state/git-ckpt).'],
      ['GIT_PAGER, PAGER', 'The pager, after git’s core.pager as git orders them; less with LESS=FRX by default.'],
      ['NO_COLOR', 'No colour, unless --color=always.'],
      ['GIT_CKPT_TRACE', 'Print every git command git-ckpt runs, and the stack of an internal error.'],
      ['GIT_CKPT_HOOK_TRACE', 'An absolute file: each hook appends what it received and did, one JSON line.'],
    ],
  },
  {
    title: 'FILES',
    paragraphs: [
      'Each workspace has a store under the store root: the shadow git directory, its index, ledger.jsonl (one record per checkpoint), forgotten (the patterns forget --path removed, never captured again), share.json (where checkpoints go, what was exported, pushed and bundled), fetched.jsonl (checkpoints fetched from other stores) and a few caches. Nothing is written inside the workspace except by restore, revert and undo.',
      'Agent hooks are described in hooks/README.md of the package.',
    ],
  },
];

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
