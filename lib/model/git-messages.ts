/**
 * Pure: what git's stderr says about paths. `git add` and `git ls-files` name
 * the paths they could not read in free-text lines; each becomes a skip (never
 * silence), and every other line is handed back for the caller to judge.
 */
import type { SkippedPath } from './ledger.js';

/** `git add`'s list of named paths that are ignored; it exits 1 after it, even when it staged every tracked file. */
const IGNORED_HEADER = 'The following paths are ignored by one of your .gitignore files:';

/**
 * `could not open directory 'x/': <why>`. Past PATH_MAX, git's 4 KiB message
 * buffer cuts the line before the closing quote: then the path is what was
 * printed, up to its last complete folder.
 */
const OPEN_DIR_RE = /^warning: could not open directory '(.+?)(?:': (.+))?$/;

function openDirMessage(line: string): SkippedPath | undefined {
  const m = OPEN_DIR_RE.exec(line);
  if (!m) return undefined;
  const [, printed, why] = m as unknown as [string, string, string | undefined];
  if (why === undefined) return { path: printed.slice(0, printed.lastIndexOf('/') + 1) || printed, reason: 'path-too-long' };
  return { path: printed, reason: /name too long/i.test(why) ? 'path-too-long' : 'unreadable' };
}

/** One pattern per message; the first group is the path. */
const PATH_MESSAGES: Array<{ re: RegExp; reason: SkippedPath['reason'] }> = [
  { re: /^error: '(.+)' does not have a commit checked out$/, reason: 'nested-repo-without-commit' },
  { re: /^warning: unable to access '(.+)': /, reason: 'unreadable' },
  { re: /^error: (?:open|readlink)\("(.+)"\): /, reason: 'unreadable' },
  { re: /^error: unable to (?:index file|stat|add) '(.+?)'/, reason: 'unreadable' },
  { re: /^error: (?:short read|read error) while indexing (.+)$/, reason: 'unreadable' },
  { re: /^error: (.+): (?:unsupported file type|failed to insert into database)$/, reason: 'unreadable' },
  // Any other error naming a quoted path (`invalid path 'x'`, …): that path was not staged.
  { re: /^error: .*?'(.+)'/, reason: 'unreadable' },
];

/** Lines that say nothing about what was captured. */
const HARMLESS = [/^hint: /, /^warning: adding embedded git repository: /];

/**
 * The errors of a path that is gone: it was deleted (`rm -rf` while a tool call ran) between the
 * listing and the read, or a folder above it was replaced by a file. That is a deletion, which the
 * next listing records, never a path that could not be read. (The runner sets LC_ALL=C: the texts are
 * the C library's own.)
 */
const VANISHED_RE = /: (?:No such file or directory|Not a directory)$/;

export interface GitPathMessages {
  /** One per path (git often names a path it could not read in two or three lines); never a path that vanished. */
  skipped: SkippedPath[];
  /** Every other non-empty line, for the caller to judge. */
  other: string[];
  /** Whether `git add` listed named paths below ignored folders (its exit 1 then means only that). */
  ignoredAdvice: boolean;
}

/** Pure: the paths git could not read, from its stderr. */
export function pathMessages(stderr: string): GitPathMessages {
  const skipped = new Map<string, SkippedPath>();
  const vanished = new Set<string>();
  const other: string[] = [];
  let inIgnoredList = false;
  let ignoredAdvice = false;
  for (const line of stderr.split('\n')) {
    if (!line) continue;
    if (line === IGNORED_HEADER) {
      inIgnoredList = ignoredAdvice = true;
      continue;
    }
    // The ignored list is bare names, one a line, until the next tagged line.
    if (inIgnoredList && !/^(?:hint|error|warning|fatal): /.test(line)) continue;
    inIgnoredList = false;
    if (HARMLESS.some((re) => re.test(line))) continue;
    const known = PATH_MESSAGES.find(({ re }) => re.test(line));
    const path = known?.re.exec(line)?.[1];
    const skip = openDirMessage(line) ?? (known && path ? { path, reason: known.reason } : undefined);
    if (!skip) other.push(line);
    else if (VANISHED_RE.test(line)) vanished.add(skip.path);
    else if (!skipped.has(skip.path)) skipped.set(skip.path, skip);
  }
  // git names a vanished file again in a line of its own (`unable to index file 'x'`): that is no skip either.
  return { skipped: [...skipped.values()].filter((s) => !vanished.has(s.path)), other, ignoredAdvice };
}
