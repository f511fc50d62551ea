// git-ckpt-plugin: __GIT_CKPT_AGENT__
// git-ckpt's plugin for __GIT_CKPT_AGENT__: checkpoints before and after every tool call. Written here by
// `git ckpt hooks install --agent __GIT_CKPT_AGENT__`; `git ckpt hooks uninstall` removes it (only while the
// marker line above is intact). It is a copy, not an import of git-ckpt, so the agent still starts when
// git-ckpt is gone.
//
// Each event goes, as the agent gave it, to git-ckpt's daemon through its Unix socket when it runs (no
// process at all), else to its entry script (git-ckpt-hook, which runs `git ckpt hook`); git-ckpt maps it
// (each agent's `normalize` in lib/agents/adapters/). The agent awaits
// these handlers, so a pre-call snapshot is taken before the tool runs; a post-call one is left running
// in the background, as Claude Code's async hooks are. Nothing here throws into the agent, and a git-ckpt
// that is gone is said once in the agent's log, not at every call.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { homedir } from 'node:os';
import path from 'node:path';

const ENTRY = '__GIT_CKPT_ENTRY__';
const AGENT = '__GIT_CKPT_AGENT__';
const WAIT_MS = 30_000;
/** How long a post left running waits for the daemon to queue it. */
const POST_HANDOVER_MS = 2000;
/** Tool output is kept to its first line by git-ckpt: no need to pipe megabytes of it. */
// biome-ignore lint/correctness/noUnusedVariables: the agent's adapter, written after this file, uses it
const TEXT_MAX = 4096;

/** The daemon's socket, in the store root git-ckpt uses (GIT_CKPT_HOME, XDG_STATE_HOME/git-ckpt, ~/.local/state/git-ckpt). */
function daemonSocket() {
  const { GIT_CKPT_HOME: home, XDG_STATE_HOME: state } = process.env;
  const root = home
    ? path.resolve(home)
    : state && path.isAbsolute(state)
      ? path.join(state, 'git-ckpt')
      : path.join(homedir(), '.local', 'state', 'git-ckpt');
  return path.join(root, 'daemon', 'socket');
}

/**
 * The workspace as a header: percent-encoded, because Node writes a header string's bytes as UTF-8 or Latin-1
 * depending on the request body's type and Bun always as UTF-8. Null for a string no URI can hold.
 */
function cwdHeader(cwd) {
  try {
    return encodeURIComponent(cwd);
  } catch {
    return null;
  }
}

/**
 * The event to the daemon, in this process: resolves true once the daemon took it (a post is answered when
 * queued, a pre once recorded), false when there is no daemon or it refused (busy): the entry script then
 * records it, as it would for a command hook.
 */
function toDaemon(phase, body, cwd, timeoutMs) {
  return new Promise((resolve) => {
    const socketPath = daemonSocket();
    const where = cwdHeader(cwd);
    if (!where || !existsSync(socketPath)) return resolve(false);
    // The workspace and nothing else: the daemon reads no variable of this process (a hook trace is the one its
    // own environment named when it started).
    const headers = { 'content-type': 'application/json', 'x-ckpt-cwd-uri': where };
    let req;
    try {
      req = request({ socketPath, method: 'POST', path: `/hook/${AGENT}/${phase}`, headers, timeout: timeoutMs }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
        res.on('error', () => resolve(false));
      });
    } catch {
      return resolve(false);
    }
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end(body);
  });
}

/**
 * send(phase, payload, cwd, wait): the payload to the daemon, else to the entry script; resolves when it is
 * recorded (wait) or handed over (not wait), never rejects. `warn(message)` is called once if git-ckpt is gone.
 */
// biome-ignore lint/correctness/noUnusedVariables: the agent's adapter, written after this file, uses it
function entrySender(warn) {
  let warned = false;
  return (phase, payload, cwd, wait) =>
    new Promise((resolve) => {
      if (!existsSync(ENTRY)) {
        if (!warned) {
          warned = true;
          try {
            warn(
              `git-ckpt is not installed any more (${ENTRY} is gone): no checkpoints; run \`git ckpt hooks uninstall --agent ${AGENT}\` or reinstall git-ckpt`,
            );
          } catch {
            /* the log is best effort */
          }
        }
        return resolve();
      }
      const body = JSON.stringify({ time: Date.now(), ...payload });
      const viaEntry = () => {
        let child;
        try {
          child = spawn('sh', [ENTRY, AGENT, phase], { cwd, stdio: ['pipe', 'ignore', 'ignore'], detached: !wait });
        } catch {
          return resolve();
        }
        const timer = wait ? setTimeout(() => child.kill('SIGKILL'), WAIT_MS) : null;
        const done = () => {
          if (timer) clearTimeout(timer);
          resolve();
        };
        child.on('error', done);
        child.on('close', done);
        child.stdin.on('error', () => {});
        child.stdin.end(body);
        if (!wait) {
          child.unref();
          resolve();
        }
      };
      // The daemon answers a post as soon as it is queued: even a post left running waits that long, so it is
      // not lost to an agent that exits right after it; one the daemon does not take in time goes the entry's way.
      toDaemon(phase, body, cwd, wait ? WAIT_MS : POST_HANDOVER_MS)
        .then((taken) => (taken ? resolve() : viaEntry()))
        .catch(() => resolve());
    });
}
