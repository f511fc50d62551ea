/** git ckpt mcp [install|uninstall|status]: serve the agent tools over MCP on stdio, or wire the server into the agents. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Argument, Option, type Command } from 'commander';
import { CkptError } from '../lib/model/errors.js';
import type { Scope } from '../lib/agents/agent-config.js';
import { packageRoot } from '../lib/store/layout.js';
import { locateWorkspace } from '../lib/store/locate.js';
import { installMcp, MCP_AGENTS, mcpHasScope, mcpStatus, mcpTarget, uninstallMcp } from '../lib/agents/mcp-install.js';
import { agentsNamed, argsOf, printJson, repeatable, startDir, type GlobalArgs } from './common.js';
import { dim, green, yellow } from './format.js';

interface McpArgs extends GlobalArgs {
  action?: 'install' | 'uninstall' | 'status';
  agent?: string[];
  scope?: Scope;
  json?: boolean;
}

export function define(command: Command): Command {
  return command
    .description(
      'serve the agent tools (checkpoint, list, diff, restore, undo, status) over MCP on stdio; install, uninstall or status wires the server into the agents',
    )
    .addArgument(new Argument('[action]').choices(['install', 'uninstall', 'status']))
    .option('--agent <agent>', `agent(s): ${MCP_AGENTS.join(', ')}, or all (repeatable, or comma-separated)`, repeatable)
    .addOption(new Option('--scope <scope>', 'the project config (default) or your user config').choices(['project', 'user']))
    .option('--json', 'print JSON')
    .action((...params) => runMcp(argsOf<McpArgs>(params)));
}

async function runMcp(argv: McpArgs): Promise<void> {
  if (!argv.action) {
    if (argv.agent || argv.scope || argv.json)
      throw new CkptError('usage', '--agent, --scope and --json go with install, uninstall or status');
    const { serveMcp } = await import('../lib/surfaces/mcp.js');
    const version = (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
    // stdout is the protocol's: anything else printed by mistake goes to stderr.
    console.log = console.error;
    await serveMcp({
      dir: argv.C?.length ? startDir(argv) : undefined,
      cwd: process.cwd(),
      version,
      log: (line) => process.stderr.write(`git-ckpt mcp: ${line}\n`),
    });
    return;
  }
  const agents = agentsNamed(argv.agent, MCP_AGENTS);
  const scopes: Scope[] = argv.scope ? [argv.scope] : argv.action === 'status' ? ['project', 'user'] : ['project'];
  let root: string | undefined;
  try {
    root = locateWorkspace(startDir(argv)).root;
  } catch (err) {
    if (scopes.includes('project') && argv.action !== 'status') throw err;
  }
  // An agent named alone at a scope it has no MCP file for is told so (mcpTarget); `all` passes it by.
  const named = agents.length === 1 && argv.agent?.length;
  const targets = agents.flatMap((agent) =>
    scopes.filter((s) => (s === 'user' || root) && (named || mcpHasScope(agent, s))).map((scope) => mcpTarget(agent, scope, root ?? '')),
  );
  if (argv.action === 'status') {
    const rows = targets.map((t) => mcpStatus(t));
    if (argv.json) return printJson(rows);
    for (const r of rows) {
      const state = r.state === 'installed' ? green(r.state) : r.state === 'not installed' ? dim(r.state) : yellow(r.state);
      const note = r.error ? ` (${r.error})` : r.brokenScript ? yellow(' (the script it names is gone: run mcp install again)') : '';
      process.stdout.write(`${r.agent.padEnd(8)} ${r.scope.padEnd(8)} ${state}${note}  ${dim(r.file)}\n`);
    }
    return;
  }
  const results = targets.map((t) => (argv.action === 'install' ? installMcp(t) : uninstallMcp(t)));
  if (argv.json) return printJson(results);
  for (const r of results) {
    const what =
      argv.action === 'install'
        ? r.changed
          ? 'added the git-ckpt MCP server'
          : 'already there; nothing changed'
        : r.changed
          ? 'removed'
          : 'not there; nothing changed';
    process.stdout.write(`${r.agent.padEnd(8)} ${what}: ${r.file}${r.backup ? dim(` (backup: ${r.backup})`) : ''}\n`);
  }
}
