/**
 * How ids are cut for people, in one place for every surface: the CLI, the
 * agent tools, the library's messages and the web page (which bundles this
 * file, so it imports nothing).
 */

/**
 * Hex digits a checkpoint id is shown with. 8 digits (32 bits) stay unique
 * among the checkpoints a store keeps, and any unique prefix of 4 or more
 * digits is an address, so what is shown can be typed back. @public (tests use it)
 */
export const SHORT_ID_LENGTH = 8;

/**
 * Characters an agent session id is shown with: the same in the log's headers,
 * its `turn:N@SESSION` hints, completion, messages and the page. A UUID's first
 * two groups: for a time-ordered UUIDv7 (Codex's) that is its whole millisecond
 * timestamp, so two sessions started a minute apart do not share it (its first 8
 * characters change only every 65 s). The resolver takes any unique prefix and
 * says when one is ambiguous. @public (tests use it)
 */
export const SHORT_SESSION_LENGTH = 13;

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID_LENGTH);
}

/**
 * A session as shown: a fetched one (`<session>@<writer>`, 12 hex digits) keeps a short writer, so that
 * what is shown names it and not this workspace's own session of the same id.
 */
export function shortSession(session: string): string {
  const foreign = /^(.+)@([0-9a-f]{12})$/.exec(session);
  if (foreign) return `${foreign[1]!.slice(0, SHORT_SESSION_LENGTH)}@${foreign[2]!.slice(0, 6)}`;
  return session.slice(0, SHORT_SESSION_LENGTH);
}

/** A session id as a label: the shown characters, and … when the id is longer, so a cut id never passes for a whole one. */
export function sessionLabel(session: string): string {
  return session.length > SHORT_SESSION_LENGTH ? `${shortSession(session)}…` : session;
}
