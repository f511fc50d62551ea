/**
 * Pure: the agents whose hooks are in-process plugins (OpenCode, Kilo Code CLI,
 * its fork with the same plugin API, and pi's extensions). Their wiring is one
 * file of ours in the agent's plugin folder, made from two shipped templates
 * (hooks/plugin-transport.js, then the agent's adapter) with the entry script's
 * path written in: a copy, not an import, so the agent still starts when
 * git-ckpt is gone (the plugin then says so once). Recognised by its marker
 * line; a file there without it is the user's, never overwritten or removed.
 */
import path from 'node:path';
import type { Phase } from '../model/phases.js';

export type PluginAgent = 'opencode' | 'kilo' | 'pi' | 'cline';
export const PLUGIN_AGENTS: readonly PluginAgent[] = ['opencode', 'kilo', 'pi', 'cline'];

/** The template every plugin starts with: the marker, and the hand-over to the entry script. */
export const PLUGIN_TRANSPORT = 'plugin-transport.js';

interface PluginSpec {
  /** The plugin file in the project, relative to its root (Cline: the folder of its hook files). */
  project: string;
  /** The plugin file of the user, from the environment and the home directory (Cline: the folder). */
  user(env: NodeJS.ProcessEnv, home: string): string;
  /**
   * The agent's adapter template, in hooks/; or `hookFiles`: an executable per event in a folder (Cline),
   * each named after its event and running the entry script.
   */
  template?: string;
  hookFiles?: true;
  /** The agent's events the plugin hands on, with their phase: what `hooks status` lists as wired. */
  events: { event: string; phase: Phase }[];
}

const OPENCODE_EVENTS: PluginSpec['events'] = [
  { event: 'tool.execute.before', phase: 'pre' },
  { event: 'tool.execute.after', phase: 'post' },
  { event: 'chat.message', phase: 'turn-start' },
  { event: 'session.idle', phase: 'turn-end' },
  { event: 'session.created', phase: 'session-start' },
];

/** OpenCode and Kilo read user plugins under the XDG config home. */
const configHome = (env: NodeJS.ProcessEnv, home: string) =>
  env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(home, '.config');

export const PLUGIN_SPECS: Record<PluginAgent, PluginSpec> = {
  opencode: {
    project: '.opencode/plugins/git-ckpt.js',
    user: (env, home) => path.join(configHome(env, home), 'opencode', 'plugins', 'git-ckpt.js'),
    template: 'opencode-plugin.js',
    events: OPENCODE_EVENTS,
  },
  kilo: {
    project: '.kilo/plugin/git-ckpt.js',
    user: (env, home) => path.join(configHome(env, home), 'kilo', 'plugin', 'git-ckpt.js'),
    template: 'opencode-plugin.js',
    events: OPENCODE_EVENTS,
  },
  // pi loads extensions from <agent dir>/extensions (PI_CODING_AGENT_DIR, else ~/.pi/agent) and .pi/extensions.
  pi: {
    project: '.pi/extensions/git-ckpt.js',
    user: (env, home) =>
      path.join(
        env.PI_CODING_AGENT_DIR ? path.resolve(env.PI_CODING_AGENT_DIR) : path.join(home, '.pi', 'agent'),
        'extensions',
        'git-ckpt.js',
      ),
    template: 'pi-extension.js',
    events: [
      { event: 'tool_call', phase: 'pre' },
      { event: 'tool_result', phase: 'post' },
      { event: 'before_agent_start', phase: 'turn-start' },
      { event: 'agent_end', phase: 'turn-end' },
      { event: 'session_start', phase: 'session-start' },
    ],
  },
  // Cline runs a file named after each event from ~/.cline/hooks ($CLINE_DIR/hooks) and .clinerules/hooks,
  // through bash unless it has a shebang or an extension. PreToolUse waits for the hook; PostToolUse does not
  // hold the turn (3.0.65 started TaskComplete's hook, and answered the prompt, while the post hook still ran);
  // TaskStart and TaskComplete run detached (their checkpoint may land after the first call's).
  cline: {
    project: '.clinerules/hooks',
    user: (env, home) => path.join(env.CLINE_DIR ? path.resolve(env.CLINE_DIR) : path.join(home, '.cline'), 'hooks'),
    hookFiles: true,
    events: [
      { event: 'PreToolUse', phase: 'pre' },
      { event: 'PostToolUse', phase: 'post' },
      { event: 'TaskStart', phase: 'turn-start' },
      { event: 'TaskResume', phase: 'turn-start' },
      { event: 'TaskComplete', phase: 'turn-end' },
      { event: 'TaskCancel', phase: 'turn-end' },
      { event: 'TaskError', phase: 'turn-end' },
    ],
  },
};

export function isPluginAgent(agent: string): agent is PluginAgent {
  return (PLUGIN_AGENTS as readonly string[]).includes(agent);
}

const MARKER = 'git-ckpt-plugin: ';
const ENTRY_PLACEHOLDER = "'__GIT_CKPT_ENTRY__'";
const AGENT_PLACEHOLDER = /__GIT_CKPT_AGENT__/g;

/** Pure: the plugin file for `agent`, from the transport and the agent's adapter, calling the entry script at `script`. @public (tests use it) */
export function pluginText(transport: string, adapter: string, agent: PluginAgent, script: string): string {
  return `${transport}\n${adapter}`.replace(ENTRY_PLACEHOLDER, JSON.stringify(script)).replace(AGENT_PLACEHOLDER, agent);
}

/**
 * Pure: every file a plugin agent's wiring is, at `target` (the plugin file, or Cline's hook folder), with its
 * text: the transport and the adapter, or for Cline one shell script per event running `command(phase)`.
 */
export function pluginFiles(
  agent: PluginAgent,
  target: string,
  templates: { transport: string; adapter: (name: string) => string },
  script: string,
  command: (phase: Phase) => string,
): { file: string; event: string; text: string }[] {
  const spec = PLUGIN_SPECS[agent];
  if (spec.hookFiles)
    return spec.events.map(({ event, phase }) => ({
      file: path.join(target, event),
      event,
      text: `#!/bin/sh\n# ${MARKER}${agent}\n# git-ckpt's ${event} hook: written by \`git ckpt hooks install --agent ${agent}\`, removed by \`git ckpt hooks uninstall\`.\n${command(phase)}\n`,
    }));
  const text = pluginText(templates.transport, templates.adapter(spec.template!), agent, script);
  return [{ file: target, event: '*', text }];
}

/** Pure: whether a plugin file is one of ours (for this agent). */
export function isOurPlugin(text: string, agent: PluginAgent): boolean {
  return text.includes(`${MARKER}${agent}\n`);
}

/** Pure: the entry script an installed plugin of ours calls, or null. */
export function pluginEntry(text: string): string | null {
  // A hook file (Cline) runs it the way the config agents' commands do.
  const command = /^sh '((?:[^']|'\\'')*)' [a-z]+ [a-z-]+ /m.exec(text);
  if (command) return command[1]!.replace(/'\\''/g, "'");
  // Or the installed command, by name (looked up on PATH).
  if (/^git-ckpt-hook [a-z]+ [a-z-]+ /m.test(text)) return 'git-ckpt-hook';
  const m = /^const ENTRY = ("(?:[^"\\]|\\.)*");$/m.exec(text);
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as string;
  } catch {
    return null;
  }
}
