/**
 * Workspace-relative paths as restore sees them: '/'-separated, no empty, '.'
 * or '..' segment, not absolute, and no '.git' segment at any depth (compared
 * case-insensitively, because APFS and NTFS fold case). Every path that can
 * become a write, whether it came from the user, a tree, a ledger or a journal,
 * passes `unsafePathReason` first.
 */

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

/** Pure: normalize a user's selection (already workspace-relative) and refuse unsafe entries. */
export function normalizeSelection(paths: readonly string[]): { paths: string[]; refused?: { path: string; reason: string } } {
  const out: string[] = [];
  for (const raw of paths) {
    const p = raw.replace(/\/+$/, '');
    if (p === '.' || p === '') {
      out.push('.');
      continue;
    }
    const reason = unsafePathReason(p);
    if (reason) return { paths: out, refused: { path: raw, reason } };
    out.push(p);
  }
  return { paths: [...new Set(out)] };
}
