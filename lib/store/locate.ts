/**
 * Workspace discovery: the git toplevel when the directory is inside a work tree,
 * otherwise the directory itself. Discovery walks up looking for `.git` the way
 * git does, in-process, so that every command saves a process start. A git
 * directory itself (a bare repository, or any folder inside one) is refused.
 */
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CkptError } from '../model/errors.js';

export interface WorkspaceLocation {
  /** Real (symlink-resolved) absolute path of the workspace root. */
  root: string;
  /** The user's git directory when the workspace is a git work tree (never written to). */
  userGitDir?: string;
  /** The user's common git directory (differs from userGitDir in linked worktrees). */
  userCommonDir?: string;
}

function readGitFile(dotGit: string): string | undefined {
  try {
    const text = readFileSync(dotGit, 'utf8');
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
    if (!match) return undefined;
    return path.resolve(path.dirname(dotGit), match[1]!);
  } catch {
    return undefined;
  }
}

/** Returns the git dir that `<dir>/.git` designates, if it is a repository marker. */
function gitDirAt(dir: string): string | undefined {
  const dotGit = path.join(dir, '.git');
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dotGit);
  } catch {
    return undefined;
  }
  if (st.isDirectory()) return existsSync(path.join(dotGit, 'HEAD')) ? dotGit : undefined;
  if (st.isFile()) return readGitFile(dotGit);
  return undefined;
}

/**
 * Whether `dir` is a repository's own folder (a bare repository, a separate git
 * dir, a linked worktree's admin folder), by git's own signature: a HEAD file,
 * and objects/ and refs/ here or in its common dir.
 */
function isGitDirectory(dir: string): boolean {
  try {
    if (!statSync(path.join(dir, 'HEAD')).isFile()) return false;
  } catch {
    return false;
  }
  const common = commonDirOf(dir);
  return existsSync(path.join(common, 'objects')) && existsSync(path.join(common, 'refs'));
}

function commonDirOf(gitDir: string): string {
  try {
    const rel = readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    if (rel) return path.resolve(gitDir, rel);
  } catch {
    /* not a linked worktree */
  }
  return gitDir;
}

export function locateWorkspace(startDir: string): WorkspaceLocation {
  let real: string;
  try {
    real = realpathSync(path.resolve(startDir));
  } catch {
    throw new CkptError('bad-workspace', `cannot open workspace: ${startDir}: no such directory`);
  }
  if (!statSync(real).isDirectory()) {
    throw new CkptError('bad-workspace', `not a directory: ${startDir}`);
  }
  if (real.split(path.sep).includes('.git')) {
    throw new CkptError('bad-workspace', `refusing to run inside a git directory: ${real}`);
  }
  let root = real;
  let userGitDir: string | undefined;
  for (let dir = real; ; ) {
    // Snapshotting a repository's own files as a folder would let a restore rewind its refs.
    if (isGitDirectory(dir)) throw new CkptError('bad-workspace', `refusing to use a git directory as a workspace: ${dir}`);
    const found = gitDirAt(dir);
    if (found) {
      root = dir;
      userGitDir = found;
      break;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  // A dotfiles repository in $HOME must not swallow every project below it.
  if (userGitDir && root === homeDir() && real !== root) {
    root = real;
    userGitDir = undefined;
  }
  refuseUnsafeRoot(root);
  return userGitDir ? { root, userGitDir, userCommonDir: commonDirOf(userGitDir) } : { root };
}

function homeDir(): string {
  try {
    return realpathSync(homedir());
  } catch {
    return homedir();
  }
}

function refuseUnsafeRoot(root: string): void {
  if (path.dirname(root) === root) {
    throw new CkptError('bad-workspace', `refusing to use the filesystem root as a workspace: ${root}`);
  }
  if (root === homeDir()) {
    throw new CkptError(
      'bad-workspace',
      `refusing to use your home directory as a workspace: ${root} (run git ckpt inside a project directory)`,
    );
  }
}
