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

/** Pure: why a workspace-relative path must never be written, or undefined when it is safe. */
export function unsafePathReason(p: string): string | undefined {
  if (typeof p !== 'string' || p.length === 0) return 'empty path';
  if (p.includes('\0')) return 'path contains NUL';
  if (p.startsWith('/') || (WINDOWS && (/^[A-Za-z]:/.test(p) || p.includes('\\')))) return 'absolute path';
  for (const segment of p.split('/')) {
    if (segment === '' || segment === '.') return 'empty or "." segment';
    if (segment === '..') return '".." segment';
    if (segment.toLowerCase() === '.git') return '".git" segment';
  }
  return undefined;
}

/** Pure: the directories above a path, nearest last: 'a/b/c' gives 'a', 'a/b'. */
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
