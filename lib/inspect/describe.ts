/**
 * Plain-text descriptions of checkpoints, shared by every surface that shows
 * them to a person or a model (the CLI, the MCP tools): ids, ages, sizes,
 * attribution, changed and uncaptured paths. No colour, no terminal.
 */
import type { CheckpointRecord } from '../model/ledger.js';
import { displayPath } from '../model/paths.js';
import { shortSession } from '../model/short-ids.js';

export { shortId } from '../model/short-ids.js';

export function relativeAge(time: number, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - time) / 1000));
  const units: Array<[number, string]> = [
    [365 * 86400, 'year'],
    [30 * 86400, 'month'],
    [7 * 86400, 'week'],
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return seconds < 5 ? 'just now' : `${seconds} seconds ago`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** session/turn/step as `s:abcd1234 t3 #2` (`t3~1`: on a branch a rewind left behind), omitting what is unknown. */
export function attribution(r: CheckpointRecord, turnLabel?: string): string {
  const parts: string[] = [];
  if (r.session) parts.push(`s:${shortSession(r.session)}`);
  if (r.turn !== null) parts.push(`t${turnLabel ?? r.turn}`);
  if (r.step !== null) parts.push(`#${r.step}`);
  return parts.join(' ');
}

/** `+A ~M -D`. */
export function plainStats(r: Pick<CheckpointRecord, 'stats'>): string {
  return `+${r.stats.added} ~${r.stats.modified} -${r.stats.deleted}`;
}

export function firstPaths(r: CheckpointRecord, max = 3): string {
  const shown = r.paths.slice(0, max).map((p) => displayPath(p.path));
  const more = r.changed - shown.length;
  return shown.join(', ') + (more > 0 ? ` (+${more} more)` : '');
}

export function skippedLines(r: Pick<CheckpointRecord, 'skipped' | 'skippedCount'>): string[] {
  const reasons: Record<string, string> = {
    'too-large': 'too large',
    secret: 'secret',
    forgotten: 'forgotten (git ckpt forget --path)',
    'new-directory-too-many-files': 'new directory with too many files',
    unreadable: 'unreadable',
    'path-too-long': 'path too long',
    'name-not-utf8': 'name is not valid UTF-8',
    'nested-repo-without-commit': 'nested repository without a commit',
  };
  const lines = r.skipped.map((s) => {
    const size = s.size === undefined ? '' : s.reason === 'too-large' ? ` (${formatBytes(s.size)})` : ` (${s.size}+ files)`;
    return `not captured: ${displayPath(s.path)}: ${reasons[s.reason] ?? s.reason}${size}`;
  });
  if (r.skippedCount > r.skipped.length) lines.push(`not captured: … and ${r.skippedCount - r.skipped.length} more`);
  return lines;
}
