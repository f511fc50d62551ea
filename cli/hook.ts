/**
 * git ckpt hook <agent> <phase>: called by an agent before and after each tool
 * call, with the agent's JSON payload on stdin. Loaded without the CLI parser (the
 * agent waits for this process). Whatever happens it prints only the neutral
 * output the agent needs and exits 0; a hard timer past the budget makes sure
 * a stuck hook never holds the agent.
 */
import type { Command } from 'commander';
import { hookAgentHelp, neutralOutput, withoutAgentEnv } from '../lib/agents/registry.js';
import { PHASES } from '../lib/model/phases.js';
import { HOOK_BUDGET_CAP_MS } from '../lib/store/settings.js';

/** More than any real payload; the rest is drained, not kept. */
const PAYLOAD_MAX_BYTES = 4 * 1024 * 1024;
/** An agent that never closes stdin: proceed with what arrived. */
const STDIN_WAIT_MS = 2000;

function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      process.stdin.pause();
      resolve(size > PAYLOAD_MAX_BYTES ? '' : Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(finish, STDIN_WAIT_MS);
    process.stdin.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= PAYLOAD_MAX_BYTES) chunks.push(chunk);
    });
    process.stdin.on('end', finish);
    process.stdin.on('error', finish);
  });
}

export async function runHookCommand(args: string[]): Promise<void> {
  const startedAt = Date.now();
  const [agent = '', phase = ''] = args;
  // Nothing may reach stderr: Gemini reads it as the hook's answer when stdout is empty.
  process.removeAllListeners('warning');
  const neutral = neutralOutput(agent);
  const exit = (stdout: string) => {
    process.stdout.write(stdout, () => process.exit(0));
  };
  process.on('uncaughtException', () => exit(neutral));
  process.on('unhandledRejection', () => exit(neutral));
  // The budget (ckpt.hookBudget, capped) is enforced inside; this timer is the last resort.
  const hard = setTimeout(() => exit(neutral), HOOK_BUDGET_CAP_MS + 3000);
  hard.unref();
  try {
    const payload = await readStdin();
    const { runHook } = await import('../lib/agents/hook.js');
    const run = await runHook(agent, phase, payload, { env: process.env, cwd: process.cwd(), startedAt });
    // The entry script says so when it found the daemon's socket but no daemon answering.
    if (run.wantsDaemon)
      (await import('../lib/store/daemon-client.js')).ensureDaemon(
        withoutAgentEnv(process.env),
        process.env.GIT_CKPT_DAEMON_UNREACHABLE === '1',
      );
    exit(run.stdout);
  } catch {
    exit(neutral);
  }
}

/** For --help and for `git ckpt -C dir hook …`; the fast path in main.ts skips the parser. */
export function define(command: Command): Command {
  return command
    .description('record an agent hook event from its JSON payload on stdin (always exits 0)')
    .argument('<agent>', hookAgentHelp())
    .argument('<phase>', `${PHASES.slice(0, -1).join(', ')} or ${PHASES.at(-1)}`)
    .allowUnknownOption()
    .allowExcessArguments()
    .action((agent: string, phase: string) => runHookCommand([agent, phase]));
}
