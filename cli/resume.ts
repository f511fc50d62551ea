/** git ckpt resume: the files back to before turn N, then the agent's conversation there. */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { resumeWithRestore } from '../lib/agents/resume.js';
import { forkedPlan, shellLine, unforkedPlan } from '../lib/agents/resume-plan.js';
import { forkSession } from '../lib/agents/fork.js';
import { resumeView } from '../lib/surfaces/views.js';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation } from './operation.js';

interface ResumeArgs extends GlobalArgs {
  turn: string;
  session?: string;
  print?: boolean;
  dryRun?: boolean;
  deleteNew?: boolean;
  json?: boolean;
}

export function define(command: Command): Command {
  return previewOptions(
    command
      .description(
        "restore the files to before a turn (never deletes unless --delete-new), then open the agent's conversation there (or print how)",
      )
      .argument('<turn>', "turn:N[~K][@SESSION]: before the Nth prompt of the session; prompt:ID: before the agent's prompt of that id"),
  )
    .option('--session <id>', 'the session (a unique prefix of its id; default: the most recent one)')
    .option('--delete-new', 'also delete captured files that are not in the checkpoint')
    .option('--print', 'print the plan and the command that opens the conversation; change nothing, start nothing')
    .action((...params) => runResume(argsOf<ResumeArgs>(params)));
}

async function runResume(argv: ResumeArgs): Promise<void> {
  const ws = openWorkspace(argv);
  // --print, like --dry-run, writes nothing and starts nothing: the restore is planned, never made.
  const printOnly = Boolean(argv.print || argv.dryRun);
  const resumed = await resumeWithRestore(ws, String(argv.turn), {
    session: argv.session,
    dryRun: printOnly,
    deleteNew: Boolean(argv.deleteNew),
  });
  const report = resumed.restore;
  let { plan } = resumed;
  // The agent forks the session right before that prompt (a new one: the one resumed from is untouched).
  if (plan.fork && !printOnly && !report.counts.failed) {
    try {
      plan = forkedPlan(plan, await forkSession(plan.agent, plan.fork.threadId, plan.fork.lastTurnId, ws.root, process.env));
    } catch (err) {
      process.stderr.write(`git-ckpt: ${(err as Error).message}; open the conversation and step back by hand\n`);
      plan = unforkedPlan(plan);
    }
  }
  if (argv.json) {
    printJson(resumeView(String(argv.turn), { ...resumed, plan }));
    exitCodeFor(report.counts.failed);
    return;
  }
  printOperation(report, false);
  const lines = [
    `${printOnly ? 'then' : 'now'} open the conversation with: ${shellLine(plan.command)}`,
    ...plan.steps.map((s) => `  and inside it: ${s}`),
    ...(plan.headless ? [`or, without a terminal, continue right before that prompt in a fork: ${shellLine(plan.headless)}`] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  exitCodeFor(report.counts.failed);
  // An interactive agent needs a terminal; a pipe or a dry run only gets the command.
  if (printOnly || report.counts.failed || !process.stdin.isTTY || !process.stdout.isTTY) return;
  await new Promise<void>((resolve) => {
    const child = spawn(plan.command[0]!, plan.command.slice(1), { stdio: 'inherit', cwd: ws.location.root });
    child.on('error', (err) => {
      process.stderr.write(`git-ckpt: could not start ${plan.command[0]}: ${err.message}\n`);
      resolve();
    });
    child.on('exit', () => resolve());
  });
}
