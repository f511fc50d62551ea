/**
 * Typed errors with stable codes. The CLI maps them to exit codes in one place
 * (cli/app.ts); library callers can branch on `code` instead of message text.
 */
export type ErrorCode =
  | 'usage' // malformed invocation: exit 2
  | 'bad-address' // unknown, ambiguous or malformed checkpoint address
  | 'bad-workspace' // refused or unusable workspace
  | 'store' // store collision, newer schema, unreadable store
  | 'lock-timeout' // another process held the workspace lock too long
  | 'budget' // snapshot time budget ran out (progress is kept)
  | 'git' // a git child process failed
  | 'refused' // the runner refused a git call (verb or argument)
  | 'path' // a path the user named is unsafe, outside the workspace, or unknown
  | 'config' // a setting or an agent's config file that cannot be used
  | 'pending' // an interrupted restore, revert or undo must be finished or rolled back first
  | 'stale' // undo would overwrite changes made since the operation (use --force), or a plan changed since its preview
  | 'nothing' // an operation that needs a checkpoint found none
  | 'degraded' // a checkpoint named explicitly has lost objects
  | 'remote' // a remote refused a push or a fetch, or cannot be reached; or a bundle cannot be used
  | 'io' // the filesystem refused (EACCES, ENOSPC, EROFS …); the cause is attached
  | 'internal'; // a bug in git-ckpt: a rule it sets itself was about to be broken

export class CkptError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CkptError';
    this.code = code;
    this.data = data;
  }
}

/**
 * Errors leave the library as CkptErrors: a filesystem error becomes `io`
 * (with the system's message and the error as its cause), anything else that
 * is not already ours is a bug, `internal`.
 */
export function asCkptError(err: unknown): CkptError {
  if (err instanceof CkptError) return err;
  const errno = (err as NodeJS.ErrnoException | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof errno === 'string' && /^E[A-Z]+$/.test(errno)) return new CkptError('io', message, { errno }, { cause: err });
  return new CkptError('internal', message, {}, { cause: err });
}

export function isCkptError(err: unknown, code?: ErrorCode): err is CkptError {
  return err instanceof CkptError && (code === undefined || err.code === code);
}

/** Why a store cannot be written now, in words, by errno: a full disk or quota, a read-only mount, no permission. */
export const UNWRITABLE_ERRNOS: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'over the disk quota',
  EROFS: 'a read-only file system',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};
/** The same, as git words them in a failed child's message. */
const UNWRITABLE_GIT_RE = /No space left on device|Disk quota exceeded|Read-only file system|Permission denied/;
/** A full disk or quota, in an errno or in git's words. */
const DISK_FULL_RE = /ENOSPC|EDQUOT|No space left on device|Disk quota exceeded|Out of diskspace/;

/** Whether an error says the store cannot be written now (read-only commands then go on without writing). */
export function storeUnwritable(err: unknown): boolean {
  if (!(err instanceof CkptError)) return false;
  if (err.code === 'io') return String(err.data.errno) in UNWRITABLE_ERRNOS;
  return err.code === 'git' && UNWRITABLE_GIT_RE.test(err.message);
}

/** Whether an error says the disk (or the quota) is full. */
export function diskFull(err: unknown): boolean {
  if (err instanceof CkptError && err.code === 'io') return err.data.errno === 'ENOSPC' || err.data.errno === 'EDQUOT';
  return DISK_FULL_RE.test(`${(err as Error)?.message ?? err}`);
}
