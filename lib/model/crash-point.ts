/**
 * Named points where a test makes git-ckpt fail or wait deterministically, the
 * way git's GIT_TEST_* variables do, so a fault test lands at a chosen moment
 * instead of racing a timer. Unset in normal use, where each call is one string
 * compare. Test-only; not part of git-ckpt's interface.
 *
 * - `GIT_CKPT_TEST_CRASH=<point>` sends this process SIGKILL there;
 *   `GIT_CKPT_TEST_CRASH=throw:<point>` throws a plain Error there instead (a bug,
 *   which the CLI reports as an internal error, exit 3).
 * - `GIT_CKPT_TEST_PAUSE=<point>` with `GIT_CKPT_TEST_PAUSE_UNTIL=<file>` waits
 *   there until that file exists; meanwhile `<file>.waiting` holds this process's id.
 */
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';

const CRASH_AT = process.env.GIT_CKPT_TEST_CRASH;
const PAUSE_AT = process.env.GIT_CKPT_TEST_PAUSE;
const PAUSE_UNTIL = process.env.GIT_CKPT_TEST_PAUSE_UNTIL;

/**
 * Points: `journal` (written, nothing applied), `write:N` (after N files written), `gc-pack` (new pack made,
 * nothing deleted), `door` (inside the workspace lock, before the command's work), `endpoint` (the daemon's
 * handler of a hook event, before it reads the body).
 */
export function crashPoint(point: string): void {
  if (CRASH_AT === undefined) return;
  if (CRASH_AT === point) process.kill(process.pid, 'SIGKILL');
  if (CRASH_AT === `throw:${point}`) throw new Error(`test fault at ${point} (GIT_CKPT_TEST_CRASH)`);
}

/**
 * Points: `staged` (a snapshot's files are hashed into the shadow index, its tree not written yet),
 * `post-lane` (the daemon answered a post and its capture is about to run).
 */
export async function pausePoint(point: string): Promise<void> {
  if (PAUSE_AT !== point || !PAUSE_UNTIL || existsSync(PAUSE_UNTIL)) return;
  const waiting = `${PAUSE_UNTIL}.waiting`;
  // Written whole, then renamed: a test that sees the file reads a whole pid, never an empty one (kill(0) would hit its own group).
  writeFileSync(`${waiting}.tmp`, `${process.pid}\n`);
  renameSync(`${waiting}.tmp`, waiting);
  while (!existsSync(PAUSE_UNTIL)) await new Promise((resolve) => setTimeout(resolve, 20));
  rmSync(waiting, { force: true });
}
