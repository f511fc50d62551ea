/**
 * Pure: what the daemon's endpoint accepts. It only records hook events: it
 * never restores, reverts, deletes or reads file contents back. Over the Unix
 * socket (mode 0600 in a 0700 folder) the file system vouches for the caller;
 * over HTTP on 127.0.0.1 the per-install token does, with the Host checked.
 */
import { timingSafeEqual } from 'node:crypto';

/** A hook payload is a few KiB; Claude Code's HTTP hooks send the same JSON as its command hooks. */
export const BODY_MAX_BYTES = 64 * 1024;

/** Events waiting per workspace past which new ones are refused (the hook then falls back or fails open). */
export const QUEUE_MAX = 64;

/** `git ckpt watch --quiet-ms`: shorter would checkpoint half-written saves; longer than an hour is not a watch. */
const WATCH_QUIET_MIN_MS = 100;
const WATCH_QUIET_MAX_MS = 3_600_000;

/** The environment of the agent that a hook's answer depends on, forwarded by the entry script as headers. */
const FORWARDED_ENV = [
  'CLAUDE_PROJECT_DIR',
  'CLAUDE_CODE_SESSION_ID',
  'GEMINI_PROJECT_DIR',
  'GEMINI_SESSION_ID',
  'COPILOT_CLI_BINARY_VERSION',
  'COPILOT_HOOK_DIR',
  'COPILOT_PROJECT_DIR',
  'CURSOR_VERSION',
  'CURSOR_PROJECT_DIR',
  'QWEN_PROJECT_DIR',
  'FACTORY_PROJECT_DIR',
  'GIT_CKPT_HOOK_TRACE',
] as const;

const ENV_HEADER_PREFIX = 'x-ckpt-env-';
const CWD_HEADER = 'x-ckpt-cwd';
/** The same, percent-encoded: what an in-process client sends, since runtimes differ in how they write non-ASCII headers. */
const CWD_URI_HEADER = 'x-ckpt-cwd-uri';
const TOKEN_HEADER = 'x-ckpt-token';
const ROOT_HEADER = 'x-ckpt-root';

export type Route =
  | { kind: 'hook'; agent: string; phase: string }
  | { kind: 'status' }
  | { kind: 'stop' }
  | { kind: 'flush'; root: string | null }
  | { kind: 'watch'; root: string; quietMs: number | null }
  | { kind: 'refused'; status: number; reason: string };

const NAME_RE = /^[a-z][a-z0-9-]{0,31}$/;

export interface RequestFacts {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Through the Unix socket (vouched for by its mode), not TCP. */
  viaSocket: boolean;
  token: string;
  port: number | null;
}

function firstValue(headers: RequestFacts['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function header(facts: RequestFacts, name: string): string | undefined {
  return firstValue(facts.headers, name);
}

/** A header carrying a path or a variable: Latin-1 on the wire, its bytes UTF-8. */
function utf8Header(headers: RequestFacts['headers'], name: string): string | undefined {
  const text = firstValue(headers, name);
  return text ? Buffer.from(text, 'latin1').toString('utf8') : undefined;
}

function tokenMatches(given: string | undefined, expected: string): boolean {
  if (!given || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** Which request this is, or why it is refused. */
export function route(facts: RequestFacts): Route {
  if (!facts.viaSocket) {
    const host = header(facts, 'host');
    if (host !== `127.0.0.1:${facts.port}` && host !== `localhost:${facts.port}`)
      return { kind: 'refused', status: 403, reason: `foreign Host ${JSON.stringify(String(host)).slice(0, 60)}` };
    const bearer = header(facts, 'authorization')?.replace(/^Bearer\s+/i, '');
    if (!tokenMatches(header(facts, TOKEN_HEADER) ?? bearer, facts.token))
      return { kind: 'refused', status: 401, reason: header(facts, TOKEN_HEADER) || bearer ? 'wrong token' : 'no token' };
  }
  const length = Number(header(facts, 'content-length') ?? 0);
  if (length > BODY_MAX_BYTES) return { kind: 'refused', status: 413, reason: `body of ${length} bytes (at most ${BODY_MAX_BYTES})` };
  const url = new URL(facts.url, 'http://daemon');
  const parts = url.pathname.split('/').filter(Boolean);
  if (facts.method === 'POST' && parts[0] === 'hook' && parts.length === 3 && NAME_RE.test(parts[1]!) && NAME_RE.test(parts[2]!))
    return { kind: 'hook', agent: parts[1]!, phase: parts[2]! };
  if (facts.method === 'GET' && url.pathname === '/status') return { kind: 'status' };
  if (facts.method === 'POST' && url.pathname === '/stop') return { kind: 'stop' };
  if (facts.method === 'POST' && url.pathname === '/watch') {
    const root = utf8Header(facts.headers, ROOT_HEADER);
    const quiet = header(facts, 'x-ckpt-quiet-ms');
    const quietMs = quiet === 'off' ? null : Number(quiet);
    if (!root || (quietMs !== null && !(Number.isInteger(quietMs) && quietMs >= WATCH_QUIET_MIN_MS && quietMs <= WATCH_QUIET_MAX_MS)))
      return {
        kind: 'refused',
        status: 400,
        reason: `watch needs ${ROOT_HEADER} and a quiet period of ${WATCH_QUIET_MIN_MS} to ${WATCH_QUIET_MAX_MS} ms, or off`,
      };
    return { kind: 'watch', root, quietMs };
  }
  if (facts.method === 'POST' && url.pathname === '/flush') {
    return { kind: 'flush', root: utf8Header(facts.headers, ROOT_HEADER) ?? null };
  }
  return { kind: 'refused', status: 404, reason: `no such endpoint: ${facts.method} ${url.pathname.slice(0, 60)}` };
}

/** The agent's environment as its entry script forwarded it. */
export function forwardedEnv(headers: RequestFacts['headers']): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of FORWARDED_ENV) {
    const value = utf8Header(headers, `${ENV_HEADER_PREFIX}${key.toLowerCase()}`);
    if (value) env[key] = value;
  }
  return env;
}

/** The hook process's working directory as forwarded (the entry script's $PWD), or null. */
export function forwardedCwd(headers: RequestFacts['headers']): string | null {
  const encoded = firstValue(headers, CWD_URI_HEADER);
  if (encoded !== undefined) {
    try {
      return decodeURIComponent(encoded) || null;
    } catch {
      return null;
    }
  }
  return utf8Header(headers, CWD_HEADER) ?? null;
}
