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

/** Pure: a word single-quoted for a POSIX shell, whatever it holds: the one quoter of every command line git-ckpt writes. */
export function shellQuoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Pure: a word of a command line git-ckpt prints for a person to run, quoted for a POSIX shell where it
 * needs it: a character the shell treats apart (a space, a quote, `$`, `;` …), or a `~` it would expand
 * (first, or after `:` or `=`). Quoted, it stays one word and runs nothing.
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./~-]+$/.test(word) && !/^~|[:=]~/.test(word) ? word : shellQuoted(word);
}

/** Pure: an option and its value as a printed command line takes them: `--name=value` when the value looks like an option itself. */
export function optionWords(option: string, value: string): string {
  return value.startsWith('-') ? `${option}=${shellWord(value)}` : `${option} ${shellWord(value)}`;
}

/**
 * Pure: a noun phrase with its article, as it is said: "an AWS access key", "an npm token", "a GitHub token".
 * A vowel, an initialism whose first letter is said with one (F, H, L, M, N, R, S, X), and npm take "an".
 */
export function withArticle(phrase: string): string {
  return /^[aeiouAEIOU]|^[FHLMNRSX][A-Z0-9]|^npm\b/.test(phrase) ? `an ${phrase}` : `a ${phrase}`;
}
