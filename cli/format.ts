/** Human output helpers. Colour is decided once per command (see terminal.ts). */
import type { CheckpointRecord } from '../lib/model/ledger.js';

export { attribution, firstPaths, formatBytes, relativeAge, shortId, skippedLines } from '../lib/inspect/describe.js';

let colored = false;

/** Turn colour on or off for everything printed from now on. */
export function setColor(on: boolean): void {
  colored = on;
}

/** Whether output is coloured (diffs from git get --color=always then). */
export function useColor(): boolean {
  return colored;
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
