/**
 * Pure: the merge that wires an agent's JSON hook config (its adapter's
 * `wiring`: file, layout, events and handler shape), one handler per event,
 * recognised by the entry script's name, keeping every other setting and hook
 * as it was.
 * Installing twice changes nothing. The daemon token Claude Code's HTTP hooks
 * send is set and cleared apart from the handlers: it lives in the user's own
 * settings only, never in a project file (hooks-install.ts decides where).
 */
import { CkptError } from '../model/errors.js';
import { shellQuoted } from '../model/text.js';
import type { Phase } from '../model/phases.js';
import { HOOK_TIMEOUT_S, type ConfigWiring, type EventWiring } from './adapter.js';
import { isObject, type Json } from './agent-config.js';
import { adapterOf, configWiring } from './registry.js';

/** The entry script's file name: how our handlers are recognised in any config. */
export const ENTRY_NAME = 'git-ckpt-hook';

/**
 * Pure: the command an agent runs. Through `sh`, so the script needs no exec
 * bit; stderr silenced and `|| true`, so even a deleted script cannot turn into
 * an error the agent acts on (Gemini denies a tool on exit 127 with stderr).
 * @public (tests use it)
 */
export function hookCommand(script: string, agent: string, phase: Phase): string {
  // A bare name is the installed command, looked up on PATH (an npm bin link carries the exec bit).
  const run = script.includes('/') ? `sh ${shellQuoted(script)}` : script;
  return `${run} ${agent} ${phase} 2>/dev/null || true`;
}

/**
 * Claude Code's HTTP hooks (2.1.63 on): tool events POSTed straight to the
 * daemon on 127.0.0.1, no process per call. The token travels in a header
 * Claude fills from the variable `GIT_CKPT_TOKEN` of its environment, which
 * only the hooks that list it in `allowedEnvVars` may read; the variable is set
 * in the `env` of the user's own Claude settings (`withToken`), never in a
 * project file. A prompt and a session start stay command hooks: they start the
 * daemon when it is down (an HTTP hook then fails open, and the next command
 * hook's capture takes what it missed).
 */
export interface HttpTransport {
  port: number;
  token: string;
}

/** @public (tests use it) */
export const TOKEN_VARIABLE = 'GIT_CKPT_TOKEN';
const TOKEN_HEADER = 'X-Ckpt-Token';
/** Whether this agent's hooks can be HTTP hooks. */
export function hasHttpHooks(agent: string): boolean {
  const wiring = adapterOf(agent).wiring;
  return wiring?.kind === 'config' && wiring.http !== undefined;
}

function httpHandler(http: HttpTransport, agent: string, phase: Phase): Record<string, unknown> {
  return {
    type: 'http',
    url: `http://127.0.0.1:${http.port}/hook/${agent}/${phase}`,
    headers: { [TOKEN_HEADER]: `$${TOKEN_VARIABLE}` },
    allowedEnvVars: [TOKEN_VARIABLE],
    timeout: HOOK_TIMEOUT_S,
  };
}

/** Pure: whether a config's `env` sets the daemon token's variable (to anything). */
export function setsToken(config: Json): boolean {
  return isObject(config.env) && TOKEN_VARIABLE in config.env;
}

/** Pure: the daemon token a config's `env` sets, if it sets one. */
export function tokenIn(config: Json): string | undefined {
  const value = isObject(config.env) ? config.env[TOKEN_VARIABLE] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Pure: the config with the daemon token in its `env` (every other variable kept). */
export function withToken(config: Json, token: string): Json {
  if (tokenIn(config) === token) return config;
  return { ...config, env: { ...(isObject(config.env) ? config.env : {}), [TOKEN_VARIABLE]: token } };
}

/** Pure: the config without the daemon token (and without `env` when it held nothing else). */
export function withoutToken(config: Json): Json {
  if (!setsToken(config)) return config;
  const { [TOKEN_VARIABLE]: _token, ...rest } = config.env as Json;
  const { env: _env, ...others } = config;
  return Object.keys(rest).length ? { ...others, env: rest } : others;
}

/** Pure: whether a config holds nothing but the keys a new file of this agent starts with (ours all gone). */
export function isEmptyConfig(config: Json, agent: string): boolean {
  return Object.keys(config).every((k) => k in configWiring(agent).skeleton);
}

function isOurs(handler: unknown, spec: ConfigWiring): boolean {
  if (!isObject(handler)) return false;
  if (handler.type === 'http') return isObject(handler.headers) && TOKEN_HEADER in handler.headers;
  return typeof handler[spec.commandKey] === 'string' && (handler[spec.commandKey] as string).includes(ENTRY_NAME);
}

/** The handlers a list item holds: the item itself (flat layout) or its `hooks` (nested). */
function handlersOf(item: unknown, spec: ConfigWiring): unknown[] {
  if (spec.layout === 'flat') return [item];
  return isObject(item) && Array.isArray(item.hooks) ? item.hooks : [];
}

/** How many of our handlers a list item holds. */
function oursIn(item: unknown, spec: ConfigWiring): number {
  return handlersOf(item, spec).filter((h) => isOurs(h, spec)).length;
}

function hooksTable(config: Json, file: string): Json {
  if (config.hooks === undefined) return {};
  if (!isObject(config.hooks)) throw new CkptError('config', `${file}: "hooks" is not an object; left untouched`);
  return config.hooks;
}

function eventList(hooks: Json, event: string, file: string): unknown[] {
  const list = hooks[event];
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new CkptError('config', `${file}: hooks.${event} is not a list; left untouched`);
  return list;
}

/**
 * Pure: the config without any of our handlers (other hooks and groups kept as they were); the
 * daemon token, which other configs' HTTP hooks may read, is `withoutToken`'s. @public (tests use it)
 */
export function removeHooks(config: Json, agent: string, file = 'config'): Json {
  const spec = configWiring(agent);
  const hooks = hooksTable(config, file);
  const next: Json = {};
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value)) {
      next[event] = value;
      continue;
    }
    let touched = false;
    const kept: unknown[] = [];
    for (const item of value) {
      if (oursIn(item, spec) === 0) {
        kept.push(item);
        continue;
      }
      touched = true;
      if (spec.layout === 'nested') {
        const rest = ((item as Json).hooks as unknown[]).filter((h) => !isOurs(h, spec));
        if (rest.length) kept.push({ ...(item as Json), hooks: rest });
      }
    }
    if (!touched || kept.length) next[event] = touched ? kept : value;
  }
  const out: Json = { ...config, hooks: next };
  if (Object.keys(next).length === 0 && config.hooks !== undefined && Object.keys(hooks).length > 0) delete out.hooks;
  if (config.hooks === undefined) delete out.hooks;
  return out;
}

function desiredEntry(spec: ConfigWiring, agent: string, wiring: EventWiring, script: string, http?: HttpTransport): unknown {
  const handler =
    http && spec.http?.events.includes(wiring.event)
      ? httpHandler(http, agent, wiring.phase)
      : spec.handler(hookCommand(script, agent, wiring.phase), wiring.phase, wiring.event);
  if (spec.layout === 'flat') return handler;
  return wiring.tools ? { matcher: spec.toolMatcher ?? '*', hooks: [handler] } : { hooks: [handler] };
}

/**
 * Pure: the config with our handlers wired for every event (idempotent); with
 * `http`, the agent's tool events as HTTP hooks to the daemon (their token is
 * `withToken`'s, in the user's settings). @public (tests use it)
 */
export function mergeHooks(config: Json, agent: string, script: string, file = 'config', http?: HttpTransport): Json {
  const spec = configWiring(agent);
  const table = hooksTable(config, file);
  for (const w of spec.events) eventList(table, w.event, file);
  const viaHttp = http && hasHttpHooks(agent) ? http : undefined;
  if (isWired(config, agent, script, viaHttp)) return config;
  const base = removeHooks(config, agent, file);
  const hooks: Json = { ...(isObject(base.hooks) ? base.hooks : {}) };
  for (const w of spec.events) hooks[w.event] = [...eventList(hooks, w.event, file), desiredEntry(spec, agent, w, script, viaHttp)];
  return { ...spec.skeleton, ...base, hooks };
}

/** Pure: how each wired event reaches git-ckpt: `http` (to the daemon) or `command`. @public (tests use it) */
export function transports(config: Json, agent: string): Record<string, 'http' | 'command'> {
  const spec = configWiring(agent);
  const out: Record<string, 'http' | 'command'> = {};
  if (!isObject(config.hooks)) return out;
  for (const w of spec.events) {
    const list = config.hooks[w.event];
    if (!Array.isArray(list)) continue;
    for (const item of list)
      for (const h of handlersOf(item, spec)) if (isOurs(h, spec)) out[w.event] = isObject(h) && h.type === 'http' ? 'http' : 'command';
  }
  return out;
}

/** Pure: the events where our handler is wired (whatever script path it names). @public (tests use it) */
export function wiredEvents(config: Json, agent: string): string[] {
  return Object.keys(transports(config, agent));
}

/** Pure: whether every event carries exactly the wanted handler, once. */
function isWired(config: Json, agent: string, script: string, http?: HttpTransport): boolean {
  const spec = configWiring(agent);
  if (!isObject(config.hooks)) return false;
  const hooks = config.hooks;
  let ours = 0;
  for (const list of Object.values(hooks)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) ours += oursIn(item, spec);
  }
  if (ours !== spec.events.length) return false;
  return spec.events.every((w) => {
    const list = hooks[w.event];
    const wanted = JSON.stringify(desiredEntry(spec, agent, w, script, http));
    return Array.isArray(list) && list.some((item) => JSON.stringify(item) === wanted);
  });
}
