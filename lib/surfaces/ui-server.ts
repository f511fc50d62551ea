/**
 * `git ckpt ui`: the web timeline's server, on node:http (a dozen routes whose
 * every security check must be explicit: a framework would add surface, not
 * safety). Loopback only; a random token per run on every request (the URL the
 * CLI prints carries it once, then an HttpOnly SameSite=Strict cookie does);
 * the Host header must name this server (DNS rebinding); writes must come from
 * the page's own origin as JSON; no CORS; a strict Content-Security-Policy;
 * assets only from the package. Writes go through the same tools as the
 * agent's (agent-tools.ts), so through the lock door and the journaled engine.
 */
import { withArticle } from '../model/text.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { checkpointRestore, checkpointUndo } from './agent-tools.js';
import { asCkptError, CkptError, type ErrorCode } from '../model/errors.js';
import { packageRoot } from '../store/layout.js';
import { userPath } from '../model/paths.js';
import { listStores, storeWorkspace } from '../store/stores.js';
import { storePaths } from '../store/store.js';
import { Workspace } from '../workspace.js';
import { checkpointView, resumeView } from './views.js';
import { resumeWithRestore } from '../agents/resume.js';
import { pendingRewinds } from '../model/rewind-plan.js';

export interface UiServerOptions {
  /** The workspace shown first (the one `git ckpt ui` was started in), if any. */
  cwd: string;
  /** 0 for a free port. */
  port?: number;
  env?: NodeJS.ProcessEnv;
  /** Where the built page is (dist/ui); the package's by default. */
  assetsDir?: string;
}

export interface UiServer {
  /** The URL to open: it carries the token once. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/** Request bodies larger than this are refused (413). */
const BODY_MAX_BYTES = 64 * 1024;
/** One page of the timeline. */
const PAGE_DEFAULT = 200;
const PAGE_MAX = 1000;
/** A file's diff larger than this is cut (the page says so). */
const FILE_DIFF_MAX_BYTES = 512 * 1024;
/** How often a live page's ledger is looked at (a stat). */
const LEDGER_POLL_MS = 500;

const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** An API failure: its HTTP status and one sentence. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Pure: the HTTP status of a library error. @public (tests use it) */
export function statusFor(code: ErrorCode, data: Record<string, unknown> = {}): number {
  if (data.notFound || code === 'nothing') return 404;
  if (code === 'bad-address' || code === 'usage' || code === 'path' || code === 'config') return 400;
  if (code === 'lock-timeout' || code === 'pending' || code === 'stale' || code === 'degraded' || code === 'budget') return 409;
  return 500;
}

/** Pure: whether two secrets are equal, in constant time. */
function sameSecret(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The cookie's name: per port, since browsers scope cookies by host only and several servers may run at once. */
const cookieName = (port: number) => `ckpt_ui_${port}`;

function cookieToken(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function send(res: http.ServerResponse, status: number, body: string | Buffer, type: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body), ...extra });
  res.end(body);
}

function sendJson(res: http.ServerResponse, status: number, value: unknown) {
  send(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_MAX_BYTES && !refused) {
        refused = true;
        reject(new HttpError(413, `the request body is larger than ${BODY_MAX_BYTES / 1024} KiB`));
        req.resume();
      }
      if (!refused) chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'));
      } catch {
        reject(new HttpError(400, 'the request body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** What the timeline shows of a record. */
/** Pure: git's `--name-status` lines as { status, path }. */
function nameStatusFiles(text: string): { status: string; path: string }[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [status, ...rest] = line.split('\t');
      return { status: status!, path: rest.join('\t') };
    });
}

/** Pure: a query or body field checked against a schema, as a 400 with the field's name. */
function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = `${what}${issue?.path.length ? `.${issue.path.join('.')}` : ''}`;
  throw new HttpError(400, issue ? issueSentence(field, issue, value) : `${field} is not valid`);
}

/** Pure: a validation problem as a sentence a person reads, not zod's wording. */
function issueSentence(field: string, issue: z.core.$ZodIssue, root: unknown): string {
  const at = issue.path.reduce<unknown>(
    (v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined),
    root,
  );
  switch (issue.code) {
    case 'invalid_type':
      return at === undefined || at === null
        ? `${field} is missing`
        : `${field} must be ${withArticle(issue.expected)}, not ${describe(at)}`;
    case 'too_small':
      return issue.origin === 'string' && Number(issue.minimum) <= 1
        ? `${field} must not be empty`
        : `${field} is too small (at least ${issue.minimum})`;
    case 'too_big':
      return `${field} is too ${issue.origin === 'string' || issue.origin === 'array' ? 'long' : 'large'} (at most ${issue.maximum})`;
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `${field} has ${issue.keys.length === 1 ? 'a field' : 'fields'} it does not take: ${issue.keys.join(', ')}`;
    default:
      return `${field} is not valid (${issue.message})`;
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${JSON.stringify(value).slice(0, 40)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

const rollbackBody = z
  .object({
    ws: z.string().min(1).max(200).optional(),
    target: z.string().min(1).max(200),
    mode: z.enum(['asof', 'revert']).optional(),
    paths: z.array(z.string().min(1).max(4096)).max(1000).optional(),
    deleteNew: z.boolean().optional(),
    dryRun: z.boolean().optional(),
    apply: z.boolean().optional(),
    planId: z.string().max(64).optional(),
  })
  .strict();
const undoBody = z
  .object({
    ws: z.string().min(1).max(200).optional(),
    dryRun: z.boolean().optional(),
    apply: z.boolean().optional(),
    force: z.boolean().optional(),
    planId: z.string().max(64).optional(),
  })
  .strict();

/**
 * Pure: whether a write request applies. `dryRun: true` plans; without it the request applies, and only
 * with the planId of the preview the user saw (the tool refuses an apply without one, writing nothing);
 * `apply: true|false` says the same as `dryRun: false|true`.
 */
function applies(dryRun: boolean | undefined, body: { apply?: boolean; planId?: string }): boolean {
  if (dryRun !== undefined && body.apply !== undefined && dryRun === body.apply)
    throw new CkptError('usage', 'dryRun and apply say opposite things: give one of them');
  if (dryRun !== undefined) return !dryRun;
  return body.apply ?? true;
}

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const env = options.env ?? process.env;
  const assetsDir = options.assetsDir ?? path.join(packageRoot(), 'dist', 'ui');
  const token = randomBytes(24).toString('base64url');
  let port = 0;
  let current: string | undefined;
  try {
    current = path.basename(Workspace.open(options.cwd, { env }).storeDirPath());
  } catch {
    current = undefined; // not in a usable workspace: every store is still listed
  }

  /** The workspaces under the store root, the current one first. */
  const workspaces = () => {
    const stores = listStores(env).map((s) => ({
      id: path.basename(s.dir),
      path: s.workspace,
      checkpoints: s.checkpoints,
      bytes: s.bytes,
      lastUsed: s.lastUsed,
      missing: s.missing,
      current: path.basename(s.dir) === current,
    }));
    return stores.sort((a, b) => Number(b.current) - Number(a.current) || b.lastUsed - a.lastUsed);
  };

  /**
   * The workspace a request names by its store id (`ws`), or without one the
   * workspace `git ckpt ui` was started in. Only that store's `workspace` file
   * is read: a request never walks every store.
   */
  const workspaceOf = (id: unknown): Workspace => {
    if (id === null || id === undefined || id === '') {
      if (!current) throw new HttpError(400, 'ws: name a workspace (git ckpt ui was not started in one; /api/summary lists them)');
      id = current;
    }
    const wsId = checked(z.string().min(1).max(200), id, 'ws');
    const found = storeWorkspace(wsId, env);
    if (!found) throw new HttpError(404, `unknown workspace: ${JSON.stringify(wsId).slice(0, 80)}`);
    if (found.missing) throw new HttpError(404, `the workspace ${found.workspace} no longer exists`);
    return Workspace.open(found.workspace, { env });
  };

  const api: Record<string, (q: URLSearchParams, body: unknown, req: http.IncomingMessage, res: http.ServerResponse) => Promise<unknown>> =
    {
      'GET /api/summary': async () => {
        const list = workspaces();
        return { workspaces: list, current: list.find((w) => w.current)?.id ?? list[0]?.id ?? null };
      },
      'GET /api/timeline': async (q) => {
        const ws = workspaceOf(q.get('ws'));
        const offset = checked(z.coerce.number().int().min(0), q.get('offset') ?? '0', 'offset');
        const limit = checked(z.coerce.number().int().min(1).max(PAGE_MAX), q.get('limit') ?? String(PAGE_DEFAULT), 'limit');
        const all = await ws.list();
        const degraded = await ws.degraded(false);
        const page = all.records.slice(offset, offset + limit);
        const sessions = new Map<
          string,
          { id: string; agent: string | null; started: number; last: number; turns: Set<number>; checkpoints: number }
        >();
        for (const r of all.records) {
          if (r.session === null) continue;
          const s = sessions.get(r.session) ?? {
            id: r.session,
            agent: r.agent ?? null,
            started: r.time,
            last: r.time,
            turns: new Set(),
            checkpoints: 0,
          };
          s.started = Math.min(s.started, r.time);
          s.last = Math.max(s.last, r.time);
          s.agent ??= r.agent ?? null;
          if (r.turn !== null) s.turns.add(r.turn);
          s.checkpoints++;
          sessions.set(r.session, s);
        }
        return {
          total: all.total,
          offset,
          records: page.map((r) => checkpointView(r, all, Boolean(degraded[r.id]))),
          sessions: [...sessions.values()].map((s) => ({ ...s, turns: s.turns.size })),
          // Rewinds inside an agent whose turns left behind still show in the workspace, as status tells them.
          rewinds: pendingRewinds([...all.records].reverse(), Date.now()),
          warnings: all.warnings,
        };
      },
      'GET /api/checkpoint': async (q) => {
        const ws = workspaceOf(q.get('ws'));
        const id = checked(z.string().min(1).max(200), q.get('id'), 'id');
        const { record, diff, base } = await ws.show(id, { format: 'name-status' });
        const files = nameStatusFiles(diff);
        return { record: checkpointView(record, await ws.list({ limit: 0 })), files, base: base ?? null };
      },
      // What `git ckpt resume` would do for a turn: a dry run and the commands; the page starts no agent.
      'GET /api/resume': async (q) => {
        const ws = workspaceOf(q.get('ws'));
        const turn = checked(z.string().min(1).max(200), q.get('turn'), 'turn');
        return resumeView(turn, await resumeWithRestore(ws, turn, { dryRun: true }));
      },
      'GET /api/file-diff': async (q) => {
        const ws = workspaceOf(q.get('ws'));
        // Through the one path gate: the diff API is the only way the page sees workspace content.
        const file = userPath(ws.root, ws.root, checked(z.string().min(1).max(4096), q.get('path'), 'path'));
        const from = q.get('from') ?? undefined;
        const to = q.get('to') ?? undefined;
        let diff: string;
        // A checkpoint's own change (from its base), or between two points; `to` absent is the live workspace.
        if (from === undefined && to !== undefined) diff = (await ws.show(to, { format: 'patch', paths: [file] })).diff;
        else diff = await ws.diff({ from, to, format: 'patch', paths: [file] });
        const bytes = Buffer.byteLength(diff);
        return bytes > FILE_DIFF_MAX_BYTES
          ? {
              diff: '',
              truncated: true,
              bytes,
              note: `this file's diff is ${Math.round(bytes / 1024)} KiB: too large to show here (git ckpt diff shows it)`,
            }
          : { diff, truncated: false, bytes };
      },
      'GET /api/compare': async (q) => {
        const ws = workspaceOf(q.get('ws'));
        const from = q.get('from') ?? undefined;
        const to = q.get('to') ?? undefined;
        const text = await ws.diff({ from, to, format: 'name-status' });
        return { files: nameStatusFiles(text) };
      },
      'POST /api/preview-diff': async (_q, body) => {
        const { dryRun, ws, ...b } = checked(rollbackBody, body, 'body');
        if (dryRun === false || b.apply) throw new CkptError('usage', 'preview-diff only previews: POST /api/rollback applies');
        return (await checkpointRestore.run(workspaceOf(ws), { ...b, apply: false })).structured;
      },
      'POST /api/rollback': async (_q, body) => {
        const { dryRun, ws, ...b } = checked(rollbackBody, body, 'body');
        return (await checkpointRestore.run(workspaceOf(ws), { ...b, apply: applies(dryRun, b) })).structured;
      },
      'POST /api/rollback-undo': async (_q, body) => {
        const { dryRun, ws, ...b } = checked(undoBody, body, 'body');
        return (await checkpointUndo.run(workspaceOf(ws), { apply: applies(dryRun, b), force: b.force, planId: b.planId })).structured;
      },
    };

  /**
   * One stat poller per ledger, shared by every open event stream: node:fs adds a
   * listener to one watcher per file and warns past ten (two tabs that reconnect).
   */
  const ledgerListeners = new Map<string, Set<() => void>>();
  const startWatching = (ledger: string): Set<() => void> => {
    const listeners = new Set<() => void>();
    ledgerListeners.set(ledger, listeners);
    watchFile(ledger, { interval: LEDGER_POLL_MS, persistent: false }, () => {
      for (const listener of listeners) listener();
    });
    return listeners;
  };
  const watchLedger = (ledger: string, onChange: () => void): (() => void) => {
    const listeners = ledgerListeners.get(ledger) ?? startWatching(ledger);
    listeners.add(onChange);
    return () => {
      listeners.delete(onChange);
      if (listeners.size > 0) return;
      ledgerListeners.delete(ledger);
      unwatchFile(ledger);
    };
  };

  /** Server-sent events: `ledger` whenever the workspace's ledger changes (a stat every half second). */
  const events = (q: URLSearchParams, req: http.IncomingMessage, res: http.ServerResponse) => {
    const ws = workspaceOf(q.get('ws'));
    const ledger = storePaths(ws.storeDirPath()).ledger;
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    const stamp = () => {
      try {
        const st = statSync(ledger);
        return `${st.size}:${st.mtimeMs}`;
      } catch {
        return 'none';
      }
    };
    let last = stamp();
    res.write(`event: hello\ndata: ${JSON.stringify({ stamp: last })}\n\n`);
    const onChange = () => {
      const now = stamp();
      if (now === last) return;
      last = now;
      res.write(`event: ledger\ndata: ${JSON.stringify({ stamp: now })}\n\n`);
    };
    const unwatch = watchLedger(ledger, onChange);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    keepAlive.unref();
    req.on('close', () => {
      clearInterval(keepAlive);
      unwatch();
    });
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = req.headers.host ?? '';
    // DNS rebinding: a page on another name that resolves to 127.0.0.1 must not reach us.
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return send(res, 421, 'wrong host\n', 'text/plain; charset=utf-8');
    const url = new URL(req.url ?? '/', `http://${host}`);
    const given = req.headers['x-ckpt-token'];
    const presented = (typeof given === 'string' ? given : undefined) ?? cookieToken(req.headers.cookie, cookieName(port));
    // The printed URL carries the token once: it becomes a cookie, and the address bar loses it.
    if (req.method === 'GET' && url.pathname === '/' && url.searchParams.has('token')) {
      if (!sameSecret(url.searchParams.get('token') ?? undefined, token))
        return send(res, 403, 'wrong token\n', 'text/plain; charset=utf-8');
      return send(res, 303, '', 'text/plain; charset=utf-8', {
        location: '/',
        'set-cookie': `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`,
      });
    }
    if (!sameSecret(presented, token)) {
      if (url.pathname.startsWith('/api/'))
        return sendJson(res, 403, { ok: false, error: 'missing or wrong token: open the URL git ckpt ui printed' });
      return send(res, 403, 'Open the URL that `git ckpt ui` printed (it carries this run’s token).\n', 'text/plain; charset=utf-8');
    }
    if (req.method === 'POST') {
      // Writes only from our own page: its origin, as JSON (a form or another site cannot send that).
      if (req.headers.origin !== `http://${host}`) return sendJson(res, 403, { ok: false, error: 'cross-origin request refused' });
      if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
        return sendJson(res, 415, { ok: false, error: 'send JSON (content-type: application/json)' });
    }
    const asset = req.method === 'GET' ? ASSETS[url.pathname] : undefined;
    if (asset) return send(res, 200, readFileSync(path.join(assetsDir, asset.file)), asset.type);
    if (req.method === 'GET' && url.pathname === '/api/events') return events(url.searchParams, req, res);
    const route = api[`${req.method} ${url.pathname}`];
    if (!route) return sendJson(res, 404, { ok: false, error: `no such endpoint: ${req.method} ${url.pathname}` });
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const result = await route(url.searchParams, body, req, res);
    return sendJson(res, 200, { ok: true, ...(result as object) });
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((caught: unknown) => {
      if (res.headersSent) return res.end();
      if (caught instanceof HttpError) return sendJson(res, caught.status, { ok: false, error: caught.message });
      const err = asCkptError(caught);
      const status = statusFor(err.code, err.data);
      sendJson(res, status, {
        ok: false,
        error: status === 500 && err.code === 'internal' ? `internal error: ${err.message}` : err.message,
        code: err.code,
      });
    });
  });
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why = { EADDRINUSE: 'is in use', EACCES: 'is not allowed for this user' }[err.code ?? ''];
      reject(
        why
          ? new CkptError(
              'refused',
              `port ${options.port} on 127.0.0.1 ${why} (choose another with --port, or leave it out for a free one)`,
            )
          : err,
      );
    });
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
