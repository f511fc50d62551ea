/** git ckpt hooks install|uninstall|status: wire the shipped hook into each agent's own config. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Argument, Option, type Command } from 'commander';
import type { Scope } from '../lib/agents/agent-config.js';
import { agentTitles, HOOK_AGENTS, type AgentName } from '../lib/agents/registry.js';
import {
  changeHooks,
  gitStanding,
  hookStatusWithVerdict,
  hookTarget,
  httpTransport,
  installedHasHttpHooks,
  type HookNotice,
} from '../lib/agents/hooks-install.js';
import { hasHttpHooks, type HttpTransport } from '../lib/agents/hook-specs.js';
import { readUserSettings } from '../lib/store/settings.js';
import { locateWorkspace } from '../lib/store/locate.js';
import { Workspace } from '../lib/workspace.js';
import { CkptError } from '../lib/model/errors.js';
import { agentsNamed, argsOf, printJson, repeatable, startDir, warn, type GlobalArgs } from './common.js';
import { dim, green, yellow } from './format.js';

interface HooksArgs extends GlobalArgs {
  action: 'install' | 'uninstall' | 'status';
  agent?: string[];
  scope?: Scope;
  transport?: 'auto' | 'command' | 'http';
  json?: boolean;
}

/** The agents that may have HTTP hooks to the daemon. */
const HTTP_AGENTS = HOOK_AGENTS.filter(hasHttpHooks);

/** HTTP hooks for the agents that have them: asked for, or (auto) when the installed agent has them and the daemon is on. */
async function chosenHttp(transport: 'auto' | 'command' | 'http', agents: readonly AgentName[]): Promise<HttpTransport | undefined> {
  if (transport === 'command') return undefined;
  if (transport === 'auto') {
    const settings = await readUserSettings(process.env).catch(() => undefined);
    if (!settings?.daemon || !agents.some((a) => installedHasHttpHooks(a))) return undefined;
  }
  return httpTransport(process.env);
}

function projectRoot(argv: HooksArgs): string {
  return locateWorkspace(startDir(argv)).root;
}

export function define(command: Command): Command {
  return command
    .description(`install, uninstall or show git-ckpt's hooks in the agents (${agentTitles(HOOK_AGENTS)})`)
    .addArgument(new Argument('<action>').choices(['install', 'uninstall', 'status']))
    .option('--agent <agent>', `agent(s): ${HOOK_AGENTS.join(', ')}, or all (repeatable, or comma-separated)`, repeatable)
    .addOption(new Option('--scope <scope>', 'the project config (default) or your user config').choices(['project', 'user']))
    .addOption(
      new Option(
        '--transport <how>',
        `${agentTitles(HTTP_AGENTS)}'s tool events as HTTP hooks to the daemon, or commands (auto: HTTP when the installed agent has them and ckpt.daemon is on)`,
      )
        .choices(['auto', 'command', 'http'])
        .default('auto'),
    )
    .option('--json', 'print JSON')
    .action((...params) => runHooks(argsOf<HooksArgs>(params)));
}

/** Each notice on a line of its own, below its agent's. */
function printNotices(notices: readonly HookNotice[], indent: string): void {
  for (const n of notices) process.stdout.write(`${indent}${n.code === 'token-file' ? dim(n.text) : yellow(n.text)}\n`);
}

async function runHooks(argv: HooksArgs): Promise<void> {
  const agents = agentsNamed(argv.agent);
  if (argv.action === 'status') {
    const scopes: Scope[] = argv.scope ? [argv.scope] : ['project', 'user'];
    let root: string | undefined;
    try {
      root = projectRoot(argv);
    } catch {
      root = undefined; // not in a workspace: user scope only
    }
    const targets = agents.flatMap((agent) =>
      scopes.filter((s) => s === 'user' || root).map((scope) => hookTarget(agent, scope, root ?? '')),
    );
    const all = await Promise.all(targets.map((target) => hookStatusWithVerdict(target, root ?? null)));
    if (argv.json) {
      printJson(all);
      return;
    }
    // Every agent asked for by name; otherwise those wired, or whose config folder is there (the agent is used here).
    const named = (argv.agent ?? []).length > 0;
    const rows = named ? all : all.filter((r) => r.state !== 'not wired' || r.notices.length > 0 || existsSync(path.dirname(r.file)));
    if (rows.length === 0) process.stdout.write(`no agent is wired here: git ckpt hooks install --agent <${HOOK_AGENTS.join('|')}>\n`);
    for (const r of rows) {
      const state = r.state === 'wired' ? green(r.state) : r.state === 'not wired' ? dim(r.state) : yellow(r.state);
      const detail = r.state === 'partly wired' ? ` (missing ${r.missing.join(', ')})` : r.error ? ` (${r.error})` : '';
      const viaHttp = Object.entries(r.transports)
        .filter(([, how]) => how === 'http')
        .map(([event]) => event);
      const how = viaHttp.length
        ? ` (HTTP to the daemon: ${viaHttp.join(', ')}; the others run a command)`
        : Object.values(r.transports).includes('plugin')
          ? ' (in the agent, through its plugin)'
          : '';
      process.stdout.write(
        `${r.agent.padEnd(8)} ${r.scope.padEnd(8)} ${state}${detail}${how}${r.brokenScript ? yellow(' (the hook script it names is gone: run hooks install again)') : ''}  ${dim(r.file)}\n`,
      );
      printNotices(r.notices, '                  ');
      if (r.verdict) {
        const runs = r.verdict.runs === 'yes' ? green('will run') : r.verdict.runs === 'no' ? yellow('will NOT run') : dim('may not run');
        process.stdout.write(`                  ${runs}: ${r.verdict.reason}\n`);
        if (r.verdict.step && r.verdict.runs !== 'yes') process.stdout.write(`                  next: ${r.verdict.step}\n`);
      }
    }
    const unshown = all.length - rows.length;
    if (rows.length > 0 && unshown > 0)
      process.stdout.write(dim(`(${unshown} more not wired, and no config folder of theirs here: --agent all lists them)\n`));
    return;
  }
  const scope = argv.scope ?? 'project';
  const root = scope === 'project' ? projectRoot(argv) : '';
  const httpAgents = agents.filter(hasHttpHooks);
  const http = argv.action === 'install' && httpAgents.length ? await chosenHttp(argv.transport ?? 'auto', httpAgents) : undefined;
  const results = await changeHooks(
    argv.action,
    agents.map((agent) => hookTarget(agent, scope, root)),
    process.env,
    undefined,
    http,
  );
  const verdicts =
    argv.action === 'install'
      ? await Promise.all(results.map(async (r) => (r.error ? undefined : (await hookStatusWithVerdict(r, root || null)).verdict)))
      : [];
  // A file of the user's own that git would commit is told at once.
  if (argv.action === 'install')
    for (const r of results) if (r.changed && !r.error) r.notices.push(...(await gitStanding(r, root || null, process.env)));
  // The first snapshot of a large workspace takes a while: it starts now, in the background.
  let baseline = false;
  let baselineError: string | undefined;
  if (argv.action === 'install' && scope === 'project' && results.some((r) => r.changed)) {
    // The configs are written by now: a store that cannot be made must not hide that report.
    try {
      baseline = await Workspace.open(root).startBaseline();
    } catch (err) {
      baselineError = (err as Error).message;
    }
  }
  const failed = results.filter((r) => r.error);
  const failure = () => new CkptError('config', `not written: ${failed.map((r) => `${r.agent} (${r.error})`).join(', ')}`);
  if (baselineError) warn([`the first snapshot was not started: ${baselineError}`]);
  if (argv.json) {
    printJson(results.map((r, i) => ({ ...r, ...(verdicts[i] ? { verdict: verdicts[i] } : {}), ...(baseline ? { baseline: true } : {}) })));
    if (failed.length) throw failure();
    return;
  }
  for (const [i, r] of results.entries()) {
    // "removed" only for what was removed: a file that held nothing else, or our hooks in it.
    const what = r.error
      ? `not written (${r.error})`
      : argv.action === 'install'
        ? r.changed
          ? `wired ${r.events.length} events`
          : 'already wired; nothing changed'
        : r.removed
          ? "removed (it held only git-ckpt's hooks)"
          : r.files.includes(r.file)
            ? "removed git-ckpt's hooks from"
            : r.changed
              ? 'not wired here'
              : 'not wired; nothing changed';
    process.stdout.write(`${r.agent.padEnd(8)} ${what}: ${r.file}${r.backup ? dim(` (backup: ${r.backup})`) : ''}\n`);
    printNotices(r.notices, '         ');
    const verdict = verdicts[i];
    if (verdict && verdict.runs !== 'yes') process.stdout.write(`         next: ${verdict.step ?? verdict.reason}\n`);
  }
  if (baseline) process.stdout.write('the first snapshot is being taken in the background (git ckpt status shows its progress)\n');
  if (failed.length) throw failure();
}
