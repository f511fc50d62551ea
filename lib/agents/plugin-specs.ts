/**
 * Pure: the files of agents whose hooks are in-process plugins (an adapter's
 * `plugin` wiring) or a folder of hook files (`hook-files`). A plugin is one
 * file of ours in the agent's plugin folder, made from two shipped templates
 * (hooks/plugin-transport.js, then the agent's own) with the entry script's
 * path written in: a copy, not an import, so the agent still starts when
 * git-ckpt is gone (the plugin then says so once). Hook files are one shell
 * script per event. Both are recognised by their marker line; a file there
 * without it is the user's, never overwritten or removed.
 */
import path from 'node:path';
import type { Phase } from '../model/phases.js';
import type { Wiring } from './adapter.js';
import { wiringOf } from './registry.js';

/** The template every plugin starts with: the marker, and the hand-over to the entry script. */
export const PLUGIN_TRANSPORT = 'plugin-transport.js';

/** The wiring of an agent whose hooks are a plugin file or hook files of ours. */
export type FileWiring = Exclude<Wiring, { kind: 'config' }>;

/** The plugin or hook-files wiring of an agent, or null when its hooks are in a config file. */
export function fileWiring(agent: string): FileWiring | null {
  const wiring = wiringOf(agent);
  return wiring.kind === 'config' ? null : wiring;
}

const MARKER = 'git-ckpt-plugin: ';
const ENTRY_PLACEHOLDER = "'__GIT_CKPT_ENTRY__'";
const AGENT_PLACEHOLDER = /__GIT_CKPT_AGENT__/g;

/** Pure: the plugin file for `agent`, from the transport and the agent's adapter, calling the entry script at `script`. @public (tests use it) */
export function pluginText(transport: string, adapter: string, agent: string, script: string): string {
  return `${transport}\n${adapter}`.replace(ENTRY_PLACEHOLDER, JSON.stringify(script)).replace(AGENT_PLACEHOLDER, agent);
}

/**
 * Pure: every file a plugin agent's wiring is, at `target` (the plugin file, or Cline's hook folder), with its
 * text: the transport and the adapter, or for Cline one shell script per event running `command(phase)`.
 */
export function pluginFiles(
  agent: string,
  target: string,
  templates: { transport: string; adapter: (name: string) => string },
  script: string,
  command: (phase: Phase) => string,
): { file: string; event: string; text: string }[] {
  const spec = fileWiring(agent);
  if (!spec) return [];
  if (spec.kind === 'hook-files')
    return spec.events.map(({ event, phase }) => ({
      file: path.join(target, event),
      event,
      text: `#!/bin/sh\n# ${MARKER}${agent}\n# git-ckpt's ${event} hook: written by \`git ckpt hooks install --agent ${agent}\`, removed by \`git ckpt hooks uninstall\`.\n${command(phase)}\n`,
    }));
  const text = pluginText(templates.transport, templates.adapter(spec.template), agent, script);
  return [{ file: target, event: '*', text }];
}

/** Pure: whether a plugin file is one of ours (for this agent). */
export function isOurPlugin(text: string, agent: string): boolean {
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
