/**
 * Pure: what the daemon's endpoint accepts. It only records hook events: it
 * never restores, reverts, deletes or reads file contents back, and nothing in
 * a request chooses a file, an environment variable, a store root or a command.
 * Over the Unix socket (mode 0600 in a 0700 folder) the file system vouches for
 * the caller, who may forward the agent's variables that attribution reads
 * (AGENT_ENV) and its working directory; over HTTP on 127.0.0.1 the per-install
 * token does, with the Host checked, and only hook events are taken there while
 * the socket serves (Claude Code's HTTP hooks send the payload alone).
 * docs/design.md, "The daemon's endpoint", lists each route.
 */
import { timingSafeEqual } from 'node:crypto';
import { AGENT_ENV } from '../agents/registry.js';

/** A hook payload is a few KiB; Claude Code's HTTP hooks send the same JSON as its command hooks. */
export const BODY_MAX_BYTES = 64 * 1024;

/** Events waiting per workspace past which new ones are refused (the hook then falls back or fails open). */
export const QUEUE_MAX = 64;

/** `git ckpt watch --quiet-ms`: shorter would checkpoint half-written saves; longer than an hour is not a watch. */
const WATCH_QUIET_MIN_MS = 100;
const WATCH_QUIET_MAX_MS = 3_600_000;

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
  /** The daemon listens on its socket too: the CLI's routes are served there only. */
  socketServed: boolean;
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
  const pathname = requestPath(facts.url);
  if (pathname === null)
    return { kind: 'refused', status: 400, reason: `malformed request target ${JSON.stringify(facts.url.slice(0, 60))}` };
  const parts = pathname.split('/').filter(Boolean);
  if (facts.method === 'POST' && parts[0] === 'hook' && parts.length === 3 && NAME_RE.test(parts[1]!) && NAME_RE.test(parts[2]!))
    return { kind: 'hook', agent: parts[1]!, phase: parts[2]! };
  // The CLI's routes (status, stop, flush, watch) go through the socket; HTTP serves them only when there is none.
  if (!facts.viaSocket && facts.socketServed)
    return { kind: 'refused', status: 404, reason: `no such endpoint over HTTP: ${facts.method} ${pathname.slice(0, 60)}` };
  if (facts.method === 'GET' && pathname === '/status') return { kind: 'status' };
  if (facts.method === 'POST' && pathname === '/stop') return { kind: 'stop' };
  if (facts.method === 'POST' && pathname === '/watch') {
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
  if (facts.method === 'POST' && pathname === '/flush') {
    return { kind: 'flush', root: utf8Header(facts.headers, ROOT_HEADER) ?? null };
  }
  return { kind: 'refused', status: 404, reason: `no such endpoint: ${facts.method} ${pathname.slice(0, 60)}` };
}

/**
 * The path of a request target (origin form, or the absolute form a proxy sends), or null when it is
 * none (`//`, `http://[`): never an exception, which would reach no handler.
 */
function requestPath(target: string): string | null {
  if (!target.startsWith('/') && !/^https?:\/\//i.test(target)) return null;
  try {
    return new URL(target, 'http://daemon').pathname;
  } catch {
    return null;
  }
}

/**
 * The agent's variables as its entry script forwarded them: only through the socket (whose caller is
 * this user), only AGENT_ENV's, and only those that can be a value (no control character).
 */
export function forwardedEnv(facts: Pick<RequestFacts, 'headers' | 'viaSocket'>): Record<string, string> {
  const env: Record<string, string> = {};
  if (!facts.viaSocket) return env;
  for (const key of AGENT_ENV) {
    const value = utf8Header(facts.headers, `${ENV_HEADER_PREFIX}${key.toLowerCase()}`);
    if (value && !/[\0-\x1f\x7f]/.test(value)) env[key] = value;
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
