/**
 * Codex's own fork of a thread after a turn, through its app-server (JSON-RPC
 * over stdio, the API its TUI uses): `thread/fork {threadId, lastTurnId}`
 * makes a new thread holding the turns up to and including that one. The
 * thread forked from is left as it is. Codex is the one on PATH.
 */
import { spawn } from 'node:child_process';
import { CkptError } from '../model/errors.js';

const FORK_TIMEOUT_MS = 20_000;

/** The new thread's id. */
export function forkCodexThread(threadId: string, lastTurnId: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('codex', ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    let buffered = '';
    let settled = false;
    const finish = (err: Error | null, id?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin.end();
      child.kill('SIGTERM');
      if (err) reject(err);
      else resolve(id!);
    };
    const timer = setTimeout(
      () => finish(new CkptError('io', `codex app-server did not fork the thread within ${FORK_TIMEOUT_MS / 1000} s`)),
      FORK_TIMEOUT_MS,
    );
    child.on('error', (err) => finish(new CkptError('io', `cannot start codex app-server: ${err.message}`)));
    child.on('exit', (code) => finish(new CkptError('io', `codex app-server exited (${code}) before it forked the thread`)));
    // One that exits at once (or closes its input) makes a write fail with EPIPE: an answer, not an unhandled error.
    child.stdin.on('error', (err: NodeJS.ErrnoException) =>
      finish(new CkptError('io', `codex app-server closed its input (${err.code ?? err.message}) before it forked the thread`)),
    );
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let message: { id?: number; result?: { thread?: { id?: unknown } }; error?: { message?: string } };
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message.id === 1) {
          if (message.error) return finish(new CkptError('io', `codex app-server: ${message.error.message ?? 'initialize failed'}`));
          send({ method: 'initialized' });
          send({ id: 2, method: 'thread/fork', params: { threadId, lastTurnId } });
        } else if (message.id === 2) {
          const id = message.result?.thread?.id;
          if (message.error || typeof id !== 'string')
            return finish(
              new CkptError('io', `codex app-server did not fork the thread: ${message.error?.message ?? 'no thread in its answer'}`),
            );
          finish(null, id);
        }
      }
    });
    send({ id: 1, method: 'initialize', params: { clientInfo: { name: 'git-ckpt', title: null, version: '0' } } });
  });
}
