/** Human output helpers. Colour is decided once per command (see terminal.ts). */
import type { CheckpointRecord } from '../lib/model/ledger.js';

export { attribution, firstPaths, formatBytes, relativeAge, shortId, skippedLines } from '../lib/inspect/describe.js';

let colored = false;
/** The terminal's width when output ends on one (directly or through the pager); undefined into a pipe or a file. */
let width: number | undefined;

/** Turn colour on or off for everything printed from now on. */
export function setColor(on: boolean): void {
  colored = on;
}

/** Whether output is coloured (diffs from git get --color=always then). */
export function useColor(): boolean {
  return colored;
}

/** Set the width lines are cut to (see terminal.ts), or undefined: never cut. */
export function setWidth(columns: number | undefined): void {
  width = columns;
}

// Control sequences (colour) take no column.
const COLOUR_CODE = /\x1b\[[0-9;]*m/y;
const MARK = /^\p{M}$/u;
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;

/** Combining marks, zero-width spaces and joiners take no column; East Asian wide characters and emoji take two. */
function columnsOf(char: string): number {
  const code = char.codePointAt(0)!;
  if (MARK.test(char) || (code >= 0x200b && code <= 0x200f)) return 0;
  return WIDE.test(char) ? 2 : 1;
}

/** The pieces of `text` with the columns each takes: a colour code (none) or one character. */
function* pieces(text: string): Generator<{ text: string; columns: number }> {
  for (let i = 0; i < text.length; ) {
    COLOUR_CODE.lastIndex = i;
    const code = COLOUR_CODE.exec(text)?.[0] ?? String.fromCodePoint(text.codePointAt(i)!);
    yield { text: code, columns: code.length > 2 && code.startsWith('\x1b') ? 0 : columnsOf(code) };
    i += code.length;
  }
}

/** Pure: how many terminal columns `text` takes (colour codes take none). */
export function displayWidth(text: string): number {
  let n = 0;
  for (const piece of pieces(text)) n += piece.columns;
  return n;
}

/** Pure: `text` cut to `columns` with `…` at the end when it is wider (colour codes kept, colour reset after the cut). */
function truncateTo(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  let out = '';
  let used = 0;
  for (const piece of pieces(text)) {
    if (used + piece.columns > columns - 1) break;
    out += piece.text;
    used += piece.columns;
  }
  return `${out}…${out.includes('\x1b[') ? '\x1b[0m' : ''}`;
}

/** A line as the terminal shows it whole: cut to its width there, never into a pipe or a file (as git). */
export function fitToTerminal(line: string): string {
  return width === undefined ? line : truncateTo(line, width);
}

const paint = (code: string) => (text: string) => (colored ? `\x1b[${code}m${text}\x1b[0m` : text);
export const yellow = paint('33');
export const green = paint('32');
export const red = paint('31');
export const cyan = paint('36');
export const dim = paint('2');
export const bold = paint('1');

export function statsText(r: CheckpointRecord): string {
  return `${green(`+${r.stats.added}`)} ${yellow(`~${r.stats.modified}`)} ${red(`-${r.stats.deleted}`)}`;
}
