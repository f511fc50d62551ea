/**
 * Named points where a test can kill git-ckpt deterministically, the way
 * git's GIT_TEST_* variables do: `GIT_CKPT_TEST_CRASH=<point>` sends this
 * process SIGKILL there, so a fault test lands at a chosen moment instead of
 * racing a timer. Unset in normal use, where each call is one string compare.
 */
const CRASH_AT = process.env.GIT_CKPT_TEST_CRASH;

/** Points: `journal` (written, nothing applied), `write:N` (after N files written), `gc-pack` (new pack made, nothing deleted). */
export function crashPoint(point: string): void {
  if (CRASH_AT !== undefined && CRASH_AT === point) process.kill(process.pid, 'SIGKILL');
}
