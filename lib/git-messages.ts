/**
 * Pure: what git's stderr says about paths. `git add` and `git ls-files` name
 * the paths they could not read in free-text lines; each becomes a skip (never
 * silence), and every other line is handed back for the caller to judge.
 */
import type { SkippedPath } from './ledger.js';

/** `git add`'s list of named paths that are ignored; it exits 1 after it, even when it staged every tracked file. */
const IGNORED_HEADER = 'The following paths are ignored by one of your .gitignore files:';

/** One pattern per message; the first group is the path. */
const PATH_MESSAGES: Array<{ re: RegExp; reason: SkippedPath['reason'] }> = [
  { re: /^error: '(.+)' does not have a commit checked out$/, reason: 'nested-repo-without-commit' },
  { re: /^warning: could not open directory '(.+)': /, reason: 'unreadable' },
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

export interface GitPathMessages {
  /** One per path (git often names a path it could not read in two or three lines). */
  skipped: SkippedPath[];
  /** Every other non-empty line, for the caller to judge. */
  other: string[];
}

/** Pure: the paths git could not read, from its stderr. */
export function pathMessages(stderr: string): GitPathMessages {
  const skipped = new Map<string, SkippedPath>();
  const other: string[] = [];
  let inIgnoredList = false;
  for (const line of stderr.split('\n')) {
    if (!line) continue;
    if (line === IGNORED_HEADER) {
      inIgnoredList = true;
      continue;
    }
    // The ignored list is bare names, one a line, until the next tagged line.
    if (inIgnoredList && !/^(?:hint|error|warning|fatal): /.test(line)) continue;
    inIgnoredList = false;
    if (HARMLESS.some((re) => re.test(line))) continue;
    const known = PATH_MESSAGES.find(({ re }) => re.test(line));
    const path = known?.re.exec(line)?.[1];
    if (known && path) {
      if (!skipped.has(path)) skipped.set(path, { path, reason: known.reason });
    } else other.push(line);
  }
  return { skipped: [...skipped.values()], other };
}
