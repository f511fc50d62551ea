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
 * says when one is ambiguous.
 */
export const SHORT_SESSION_LENGTH = 13;

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID_LENGTH);
}

export function shortSession(session: string): string {
  return session.slice(0, SHORT_SESSION_LENGTH);
}
