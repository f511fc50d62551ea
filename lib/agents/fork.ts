/**
 * An agent's own fork of a session after a turn (its adapter's `resume.fork`),
 * asked of the agent's server over JSON-RPC on stdio: the `initialize`
 * handshake, then the fork request, whose result names the new session. The
 * session forked from is left as it is. The agent is the one on PATH.
 */
import { spawn } from 'node:child_process';
import type { Json } from './adapter.js';
import { CkptError } from '../model/errors.js';
import { adapterOf } from './registry.js';

const FORK_TIMEOUT_MS = 20_000;

/** The new session's id. */
export function forkSession(agent: string, session: string, lastTurn: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const fork = adapterOf(agent).resume?.fork;
  if (!fork) return Promise.reject(new CkptError('usage', `${adapterOf(agent).title} cannot fork a session`));
  const [command, ...args] = fork.command;
  const server = fork.command.join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
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
      () => finish(new CkptError('io', `${server} did not fork the session within ${FORK_TIMEOUT_MS / 1000} s`)),
      FORK_TIMEOUT_MS,
    );
    child.on('error', (err) => finish(new CkptError('io', `cannot start ${server}: ${err.message}`)));
    child.on('exit', (code) => finish(new CkptError('io', `${server} exited (${code}) before it forked the session`)));
    // One that exits at once (or closes its input) makes a write fail with EPIPE: an answer, not an unhandled error.
    child.stdin.on('error', (err: NodeJS.ErrnoException) =>
      finish(new CkptError('io', `${server} closed its input (${err.code ?? err.message}) before it forked the session`)),
    );
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let message: { id?: number; result?: Json; error?: { message?: string } };
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message.id === 1) {
          if (message.error) return finish(new CkptError('io', `${server}: ${message.error.message ?? 'initialize failed'}`));
          send({ method: 'initialized' });
          send({ id: 2, ...fork.request(session, lastTurn) });
        } else if (message.id === 2) {
          const id = message.result && !message.error ? fork.sessionOf(message.result) : null;
          if (id === null)
            return finish(
              new CkptError('io', `${server} did not fork the session: ${message.error?.message ?? 'no session in its answer'}`),
            );
          finish(null, id);
        }
      }
    });
    send({ id: 1, method: 'initialize', params: fork.initialize });
  });
}
