/**
 * Will the agent actually run the hooks we wired? Each agent has a gate of its
 * own that leaves hooks silently unrun (a trust dialog, per-hook trust, folder
 * trust, a kill switch): its adapter names the files where the agent keeps
 * that state and gives the pure verdict; this reads them. Where the agent keeps
 * none we can read, its verdict says so. Nothing here throws: a file that
 * cannot be read is absent to the verdict, or `unknown` with the reason.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isObject, type Json, type Scope } from './agent-config.js';
import type { RunVerdict, TrustQuestion } from './adapter.js';
import { adapterOf } from './registry.js';

export type { RunVerdict } from './adapter.js';

/** A file as JSON or TOML: the object, undefined when absent or not an object, or why a TOML file cannot be parsed. */
async function readAs(file: string, format: 'json' | 'toml'): Promise<{ config?: Json; unreadable?: string }> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed: unknown = format === 'toml' ? (await import('smol-toml')).parse(text) : JSON.parse(text);
    return isObject(parsed) ? { config: parsed } : {};
  } catch (err) {
    // A JSON file the agent cannot parse either holds no setting of its; an unparsable TOML file makes the verdict unknown.
    return format === 'toml' ? { unreadable: (err as Error).message.split('\n')[0] } : {};
  }
}

/** Whether `agent` will run our hooks wired in `hooksFile` at `scope`. */
export async function willRunHooks(
  agent: string,
  scope: Scope,
  projectRoot: string | null,
  hooksFile: string,
  env: NodeJS.ProcessEnv,
  isOurs: (command: string) => boolean,
): Promise<RunVerdict> {
  const adapter = adapterOf(agent);
  if (!adapter.trust) return { runs: 'unknown', reason: `git-ckpt cannot tell whether ${adapter.title} runs the hooks wired for it` };
  const question: TrustQuestion = { scope, projectRoot, hooksFile, env, home: env.HOME ?? homedir() };
  const config: Record<string, Json | undefined> = {};
  const where: Record<string, string> = {};
  const unreadable: Record<string, string> = {};
  for (const [name, { file, format }] of Object.entries(adapter.trust.files(question))) {
    where[name] = file;
    const read = await readAs(file, format ?? 'json');
    config[name] = read.config;
    if (read.unreadable !== undefined) unreadable[name] = read.unreadable;
  }
  return adapter.trust.verdict({ ...question, config, path: where, unreadable, isOurs });
}
