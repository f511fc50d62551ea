/**
 * git-ckpt's own CLI started in the background (the daemon, the first snapshot, a background gc, the
 * turn's push): a session of its own, /dev/null for its standard streams, and nothing else of the
 * process that started it. Node's spawn leaves every descriptor it did not open itself: one this process
 * inherited without close-on-exec (a pipe bash's process substitution keeps on 63, a caller's `3>&1`)
 * stays open in the child for its whole life, and whoever reads that pipe waits for an end of file that
 * never comes. So each open descriptor above 2 is given /dev/null in the child (Node's spawn maps any
 * descriptor number it is given), which closes the inherited one there.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readdirSync } from 'node:fs';
import { cliEntry } from './layout.js';

/** The process's open descriptors, listed by macOS and Linux alike; elsewhere each number below PROBE_BELOW is tried. */
const FD_DIR = '/dev/fd';
const PROBE_BELOW = 1024;

function isOpen(fd: number): boolean {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}

/** This process's open descriptors above 2 (the listing's own one is closed again by the time each is checked). */
function descriptorsAbove2(): number[] {
  let candidates: number[];
  try {
    candidates = readdirSync(FD_DIR).map(Number);
  } catch {
    candidates = Array.from({ length: PROBE_BELOW }, (_, fd) => fd);
  }
  return candidates.filter((fd) => Number.isInteger(fd) && fd > 2 && isOpen(fd)).sort((a, b) => a - b);
}

export interface BackgroundOptions {
  env: NodeJS.ProcessEnv;
  /** Its working directory (default: this process's). */
  cwd?: string;
}

/** Start `git-ckpt <args>` detached, holding nothing of this process; its pid, or undefined when it could not start. */
export function spawnBackground(args: string[], options: BackgroundOptions): number | undefined {
  const inherited = descriptorsAbove2();
  // Opened after the listing: its own number is left out of the child's map, and it closes there on exec.
  const devNull = inherited.length ? openSync('/dev/null', 'r+') : -1;
  try {
    for (let covered = inherited; ; covered = covered.slice(0, -1)) {
      const stdio: ('ignore' | number)[] = ['ignore', 'ignore', 'ignore'];
      for (const fd of covered) stdio[fd] = devNull;
      for (let fd = 3; fd < stdio.length; fd++) stdio[fd] ??= 'ignore';
      try {
        const child = spawn(process.execPath, [cliEntry(), ...args], {
          detached: true,
          stdio,
          env: options.env,
          ...(options.cwd ? { cwd: options.cwd } : {}),
        });
        child.on('error', () => undefined);
        child.unref();
        return child.pid;
      } catch (err) {
        // A descriptor at or above the open-file limit (a parent opened it, then lowered the limit) cannot be a
        // child's: spawn refuses the map (EINVAL). That one stays, as it would without the map; the rest are covered.
        if ((err as NodeJS.ErrnoException).code !== 'EINVAL' || covered.length === 0) throw err;
      }
    }
  } finally {
    if (devNull >= 0) closeSync(devNull);
  }
}
