/**
 * Pure: text made one line of at most `max` characters (… marks a cut), for
 * commit messages and trailers, log lines and input summaries alike. Every
 * whitespace run that holds a line break, a tab or another non-space blank
 * (with the spaces around it) becomes one space, so nothing can start a new
 * line or a new trailer; runs of plain spaces are kept, so a one-line message
 * comes back from its commit as it was typed (`fsck --rebuild-ledger`).
 */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/ *[^\S ][\s]*/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
