/**
 * Workspace-relative paths as restore sees them: '/'-separated, no empty, '.'
 * or '..' segment, not absolute, and no '.git' segment at any depth (compared
 * case-insensitively, because APFS and NTFS fold case). Every path that can
 * become a write, whether it came from the user, a tree, a ledger or a journal,
 * passes `unsafePathReason` first.
 */

import path from 'node:path';
import { CkptError } from './errors.js';

/** Restore's temporary files in the workspace start with this; snapshots exclude them and recovery removes them. */
export const TMP_PREFIX = '.git-ckpt-tmp-';

/** On Windows a backslash separates directories and `C:` starts an absolute path; elsewhere both are plain name bytes. */
const WINDOWS = process.platform === 'win32';

/**
 * Names that are not UTF-8. Paths are JS strings everywhere (ledger, journal,
 * plans, fs calls), so a byte that is not part of valid UTF-8 rides in one as a
 * lone surrogate U+DC80–U+DCFF (Python's "surrogateescape"): no two names
 * collide, and none passes for a valid one. Such a name is never captured
 * (Node's fs would encode it as U+FFFD, another file's name), only reported.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Pure: whether a name decoded by decodePathBytes was valid UTF-8. */
export function isUtf8Path(p: string): boolean {
  return !LONE_SURROGATE.test(p);
}

/** Pure: the length of the valid UTF-8 sequence at `i` (WHATWG's rules), or 0. */
function utf8SequenceAt(buf: Uint8Array, i: number, end: number): number {
  const b0 = buf[i]!;
  if (b0 < 0x80) return 1;
  const n = b0 >= 0xc2 && b0 <= 0xdf ? 2 : b0 >= 0xe0 && b0 <= 0xef ? 3 : b0 >= 0xf0 && b0 <= 0xf4 ? 4 : 0;
  if (n === 0 || i + n > end) return 0;
  const lo = b0 === 0xe0 ? 0xa0 : b0 === 0xf0 ? 0x90 : 0x80;
  const hi = b0 === 0xed ? 0x9f : b0 === 0xf4 ? 0x8f : 0xbf;
  if (buf[i + 1]! < lo || buf[i + 1]! > hi) return 0;
  for (let k = 2; k < n; k++) if (buf[i + k]! < 0x80 || buf[i + k]! > 0xbf) return 0;
  return n;
}

/** Pure: a name from git's `-z` output, every byte kept (see LONE_SURROGATE). */
export function decodePathBytes(buf: Buffer, start: number, end: number): string {
  const text = buf.toString('utf8', start, end);
  // U+FFFD is where the decoder replaced something, unless the name really holds one.
  if (!text.includes('\uFFFD') || Buffer.from(text).equals(buf.subarray(start, end))) return text;
  let out = '';
  for (let i = start; i < end; ) {
    const n = utf8SequenceAt(buf, i, end);
    if (n === 0) {
      out += String.fromCharCode(0xdc00 + buf[i]!);
      i++;
    } else {
      out += buf.toString('utf8', i, i + n);
      i += n;
    }
  }
  return out;
}

/** Pure: a name's own bytes again (the inverse of decodePathBytes). */
export function pathBytes(p: string): Buffer {
  if (isUtf8Path(p)) return Buffer.from(p);
  const parts: Buffer[] = [];
  for (const ch of p) {
    const code = ch.charCodeAt(0);
    parts.push(ch.length === 1 && code >= 0xdc80 && code <= 0xdcff ? Buffer.from([code - 0xdc00]) : Buffer.from(ch));
  }
  return Buffer.concat(parts);
}

/** Pure: a name for people: each byte that is not UTF-8 spelled `\xNN`. */
export function displayPath(p: string): string {
  return isUtf8Path(p) ? p : p.replace(/(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/g, (c) => `\\x${(c.charCodeAt(0) - 0xdc00).toString(16)}`);
}

/** Pure: why a workspace-relative path must never be written, or undefined when it is safe. */
export function unsafePathReason(p: string): string | undefined {
  if (typeof p !== 'string' || p.length === 0) return 'empty path';
  if (p.includes('\0')) return 'path contains NUL';
  if (!isUtf8Path(p)) return 'name is not valid UTF-8';
  if (p.startsWith('/') || (WINDOWS && (/^[A-Za-z]:/.test(p) || p.includes('\\')))) return 'absolute path';
  for (const segment of p.split('/')) {
    if (segment === '' || segment === '.') return 'empty or "." segment';
    if (segment === '..') return '".." segment';
    if (segment.toLowerCase() === '.git') return '".git" segment';
  }
  return undefined;
}

/** Pure: the directories above a slash-separated path, the root's child first: 'a/b/c' gives 'a', 'a/b'. */
export function ancestorsOf(p: string): string[] {
  const out: string[] = [];
  let i = p.indexOf('/');
  while (i !== -1) {
    out.push(p.slice(0, i));
    i = p.indexOf('/', i + 1);
  }
  return out;
}

/** Pure: whether `p` is one of the selected paths or lies below one. An empty selection takes everything. */
export function isSelected(p: string, selection: readonly string[] | undefined): boolean {
  if (!selection || selection.length === 0) return true;
  for (const s of selection) {
    if (s === '.' || p === s || p.startsWith(`${s}/`)) return true;
  }
  return false;
}

/**
 * Pure: the one gate for paths a person names (`diff -- <path>`, `restore --
 * <path>`): relative to `cwd` as git takes them, so `../docs` from `src/` is
 * fine while it stays inside the workspace; then held to the same rules as
 * tree and journal paths. Returns the workspace-relative path ('.' for the
 * whole workspace, which only '.' or the root itself names; an empty path is
 * refused) or throws a `path` error.
 */
export function userPath(root: string, cwd: string, raw: string): string {
  // An unset shell variable (`-- "$DIR"`) must not mean the whole workspace.
  if (raw === '') throw new CkptError('path', 'path refused: "" (empty path)');
  const rel = path.relative(root, path.resolve(cwd, raw)).split(path.sep).join('/');
  if (rel === '') return '.';
  if (rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) throw new CkptError('path', `path is outside the workspace: ${raw}`);
  const unsafe = unsafePathReason(rel);
  if (unsafe) throw new CkptError('path', `path refused: ${JSON.stringify(raw)} (${unsafe})`);
  return rel;
}
