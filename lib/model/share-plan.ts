/**
 * Pure: how checkpoints travel to a git remote or a bundle (lib/share/share.ts does the I/O).
 *
 * What travels is an export copy, never the store: per session and writer (one store), a chain of
 * commits whose first is the workspace before the session (its "base"), then one commit per checkpoint
 * with the checkpoint's tree after the filters, its trailers redacted again, the source id, a fixed
 * identity and the checkpoint's own time. The same inputs make the same commits, so a second push is
 * a no-op. Each chain has one ref, `refs/ckpt/v1/<workspace>/<session>/<writer>`, which only its
 * writer moves, and only forward: two machines never write the same ref.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { CHECKPOINT_AUTHOR, commitMessage, isCheckpointAuthor, readCommitText, recordFromCommit } from './trailers.js';
import { isShareId, type CheckpointRecord } from './ledger.js';
import { isObjectId } from './oid.js';
import { redact } from './redact.js';
import { oneLine, optionWords, shellWord } from './text.js';

export const SHARE_REFS = 'refs/ckpt/v1';
export const REMOTE_REFS = 'refs/ckpt-remote';

/** Over these, hosts refuse (GitHub enforces 100 MB a file and 2 GiB a push; GitLab Free 100 MiB a blob): refused before any network I/O. */
export const BLOB_CAP_BYTES = 50 * 1000 * 1000;
const PUSH_CAP_BYTES = 1.5 * 1000 ** 3;
/** Refs per push command; a host's own lower cap re-chunks (see pushRefusal). */
export const REFS_PER_PUSH = 50;

/** What names the checkpoints of no session where a session is asked for (`push`, `unpush`): their ref's part, which no session id has. */
export const NO_SESSION = '_none';

/** Pure: how a printed command line names a session (the checkpoints of no session too). */
export function sessionWords(session: string | null): string {
  return session === null ? `--session ${NO_SESSION}` : optionWords('--session', session);
}

/**
 * Pure: the command that forgets exactly this file (a path found in a tree, named in a message): anchored
 * at the root, gitignore's wildcards and leading `!`/`#` escaped, quoted for a shell.
 */
export function forgetPathCommand(path: string): string {
  return `git ckpt forget --path ${shellWord(`/${path.replace(/[*?[\]\\]/g, '\\$&')}`)}`;
}

/** A session's part of a ref: its id when git takes it as a ref component, else a hash of it. */
export function sessionRefPart(session: string | null): string {
  if (session === null) return NO_SESSION;
  if (/^[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*$/.test(session) && session.length <= 100 && !session.endsWith('.lock'))
    return session;
  return `h-${createHash('sha256').update(session).digest('hex').slice(0, 24)}`;
}

export function exportRef(ws: string, session: string | null, writer: string): string {
  return `${SHARE_REFS}/${ws}/${sessionRefPart(session)}/${writer}`;
}

export interface ShareRef {
  ref: string;
  ws: string;
  session: string;
  writer: string;
}

/** An export ref's parts (under `refs/ckpt/v1/`, or a remote's under `refs/ckpt-remote/<remote>/`), or undefined. */
export function parseShareRef(ref: string): ShareRef | undefined {
  const m = /^(?:refs\/ckpt\/v1|refs\/ckpt-remote\/[A-Za-z0-9][A-Za-z0-9_-]*)\/([0-9a-f]{12})\/([^/]+)\/([0-9a-f]{12})$/.exec(ref);
  return m ? { ref, ws: m[1]!, session: m[2]!, writer: m[3]! } : undefined;
}

/**
 * The shape every id of imported history must have (session ids, agent turn and tool-call ids, subagent
 * ids): what agents really send (UUIDs, Codex thread ids, OpenCode's `ses_…`, Cline's task numbers,
 * tool-call ids such as `toolu_…`, people's `sess-…`): a letter or digit first, then letters, digits and
 * `._:-`, at most 200 characters. Never an option (`-`), never whitespace, a quote, a `$` or a control
 * character: text another store wrote never becomes an option or a shell word here.
 */
const IMPORTED_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** Pure: why an id of imported history is refused, or undefined. @public (tests use it) */
export function importedIdProblem(id: string): string | undefined {
  if (id.startsWith('-')) return 'starts with "-", like an option';
  if (/[\s\0-\x1f\x7f]/.test(id)) return 'holds a space or a control character';
  if (id.length > 200) return 'is longer than 200 characters';
  if (!IMPORTED_ID.test(id)) return 'is not an id (a letter or digit, then letters, digits and ._:-)';
  return undefined;
}

/** An agent's name as git-ckpt records it. */
const AGENT_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * Pure: why a checkpoint record read from another store's export is refused, or undefined: each id it
 * carries (session, the agent's turn and tool-call ids, the subagent, the session it forked from) must
 * have an id's shape, its agent a name's.
 */
export function importedRecordProblem(
  r: Pick<CheckpointRecord, 'session' | 'agentTurn' | 'call' | 'agent' | 'subagent' | 'fork'>,
): string | undefined {
  const ids: [string, string | null | undefined][] = [
    ['session id', r.session],
    ["agent's turn id", r.agentTurn],
    ['tool-call id', r.call],
    ['subagent id', r.subagent?.id],
    ['forked-from session id', r.fork?.session],
  ];
  for (const [what, id] of ids) {
    if (id === null || id === undefined) continue;
    const problem = importedIdProblem(id);
    if (problem) return `its ${what} ${JSON.stringify(id).slice(0, 60)} ${problem}`;
  }
  if (r.agent !== undefined && !AGENT_NAME.test(r.agent)) return `its agent name ${JSON.stringify(r.agent).slice(0, 40)} is not one`;
  return undefined;
}

/**
 * Pure: the name a fetched session has in this store: its id and the writer (the store that pushed it),
 * `<session>@<writer>`. Another store's session never joins one of this store's, even under the same id:
 * its turns are numbered apart, and `turn:N` without a session never reaches it.
 */
export function foreignSession(session: string, writer: string): string {
  return `${session}@${writer}`;
}

/** Pure: a foreign session's name split back into the id its store gave it and its writer, or undefined for one of this store's. */
export function splitForeignSession(name: string): { session: string; writer: string } | undefined {
  const m = /^(.+)@([0-9a-f]{12})$/.exec(name);
  return m ? { session: m[1]!, writer: m[2]! } : undefined;
}

export interface ExportIdentity {
  ws: string;
  writer: string;
  /** The user's commit the chain's base is parented on (see ExportChain.root), named in every commit of the chain. */
  root?: string;
}

/** The identity and dates of an export commit: fixed, and the checkpoint's time, so exports are deterministic. */
export function exportCommitEnv(time: number): Record<string, string> {
  const date = `@${Math.floor(time / 1000)} +0000`;
  return {
    GIT_AUTHOR_NAME: CHECKPOINT_AUTHOR.name,
    GIT_AUTHOR_EMAIL: CHECKPOINT_AUTHOR.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: CHECKPOINT_AUTHOR.name,
    GIT_COMMITTER_EMAIL: CHECKPOINT_AUTHOR.email,
    GIT_COMMITTER_DATE: date,
  };
}

/**
 * An exported checkpoint's message: its trailers with every text from a payload redacted again (the
 * table may have grown since it was taken), the transcript reduced to its file name, local-only fields
 * dropped, and where it came from.
 */
export function exportMessage(record: CheckpointRecord, id: ExportIdentity): string {
  const again = (text: string | undefined) => (text === undefined ? undefined : redact(text));
  const { formerIds: _local, ...rest } = record;
  const clean: CheckpointRecord = {
    ...rest,
    message: redact(record.message),
    input: again(record.input),
    error: again(record.error),
    prompt: again(record.prompt),
    transcript: record.transcript === undefined ? undefined : path.basename(record.transcript.replace(/\\/g, '/')),
  };
  for (const key of ['input', 'error', 'prompt', 'transcript'] as const) if (clean[key] === undefined) delete clean[key];
  return `${commitMessage(clean)}Ckpt-Source: ${record.id}\n${identityTrailers(id)}`;
}

/** The message of a chain's base: the workspace as it was before the session's first checkpoint. */
export function baseMessage(session: string | null, time: number, id: ExportIdentity): string {
  const lines = ['Ckpt-Base: true', `Ckpt-Time: ${time}`];
  if (session !== null) lines.push(`Ckpt-Session: ${oneLine(session, 200)}`);
  return `the workspace before ${session === null ? 'these checkpoints' : `session ${oneLine(redact(session), 200)}`}\n\n${lines.join('\n')}\n${identityTrailers(id)}`;
}

function identityTrailers(id: ExportIdentity): string {
  return `Ckpt-Ws: ${id.ws}\nCkpt-Writer: ${id.writer}\n${id.root ? `Ckpt-Root: ${id.root}\n` : ''}`;
}

export type ExportCommit = (
  | { base: true; tree: string; session: string | null; time: number; message: string }
  | { base: false; record: CheckpointRecord; source: string }
) & { id: string; ws: string; writer: string; root: string | null };

/** Pure: an export commit read back (a fetch, a bundle's import), or undefined when it is not one. */
export function readExportCommit(id: string, raw: string): ExportCommit | undefined {
  const text = readCommitText(raw);
  const ws = text.trailers.get('Ws');
  const writer = text.trailers.get('Writer');
  if (!text.tree || !isCheckpointAuthor(text.author) || !isShareId(ws) || !isShareId(writer)) return undefined;
  const rootTrailer = text.trailers.get('Root');
  const root = isObjectId(rootTrailer) ? rootTrailer : null;
  if (text.trailers.get('Base') === 'true') {
    const time = Number(text.trailers.get('Time'));
    if (!Number.isFinite(time)) return undefined;
    return {
      base: true,
      id,
      tree: text.tree,
      session: text.trailers.get('Session') ?? null,
      time,
      message: text.subject,
      ws,
      writer,
      root,
    };
  }
  const source = text.trailers.get('Source');
  const record = recordFromCommit(id, raw);
  if (!record || !isObjectId(source)) return undefined;
  return { base: false, id, record, source, ws, writer, root };
}

/**
 * The checkpoints of one session that an export takes, in the ledger's order, and the state before the
 * first of them (the tree of the checkpoint before it in the ledger, or the one its gone parent had).
 */
export function sessionExport(
  records: readonly CheckpointRecord[],
  session: string | null,
): { steps: CheckpointRecord[]; baseTree: string | null; baseTime: number | null } {
  const steps: CheckpointRecord[] = [];
  let baseTree: string | null = null;
  let baseTime: number | null = null;
  for (const [i, r] of records.entries()) {
    if (r.session !== session || r.origin) continue;
    if (steps.length === 0) {
      const parent =
        r.parent === null
          ? undefined
          : records
              .slice(0, i)
              .reverse()
              .find((x) => x.id === r.parent);
      baseTree = r.parentTree ?? parent?.tree ?? null;
      baseTime = parent?.time ?? r.time;
    }
    steps.push(r);
  }
  return { steps, baseTree, baseTime };
}

/** A blob an export sends: where it first appears, and its size. */
export interface OutgoingBlob {
  path: string;
  size: number;
}

/** Pure: a push over the host limits, in one line with the numbers, or undefined. */
export function capProblem(blobs: readonly OutgoingBlob[], totalBytes: number): string | undefined {
  const big = blobs.filter((b) => b.size > BLOB_CAP_BYTES).sort((a, b) => b.size - a.size);
  if (big.length)
    return `${big[0]!.path} is ${megabytes(big[0]!.size)}, over the ${megabytes(BLOB_CAP_BYTES)} a pushed file may be${big.length > 1 ? ` (and ${big.length - 1} more)` : ''}: nothing was sent; ${forgetPathCommand(big[0]!.path)} drops it from the store, or push other sessions`;
  if (totalBytes > PUSH_CAP_BYTES)
    return `this push would send ${megabytes(totalBytes)}, over the ${megabytes(PUSH_CAP_BYTES)} a push may be: nothing was sent; push one session at a time (--session)`;
  return undefined;
}

function megabytes(n: number): string {
  return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)} MB`;
}

/** One line of `git push --porcelain`: a ref's outcome. */
export interface PushedRef {
  flag: string;
  ref: string;
  summary: string;
}

/** Pure: `git push --porcelain`'s ref lines (`<flag>\t<from>:<to>\t<summary>`). */
export function parsePorcelain(stdout: string): PushedRef[] {
  const refs: PushedRef[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^([ +\-*!=])\t([^\t]*):([^\t]+)\t(.*)$/.exec(line);
    if (m) refs.push({ flag: m[1]!, ref: m[3]!, summary: m[4]! });
  }
  return refs;
}

export type RefusalKind = 'hidden-ref' | 'push-protection' | 'ref-cap' | 'size' | 'non-fast-forward' | 'auth' | 'unreachable' | 'other';

/**
 * Pure: why a remote refused, in one line a person can act on, from git's stderr (what the host
 * printed after `remote:`). `refCap` is the host's limit of refs a push, when it named one.
 */
export function pushRefusal(stderr: string, rejected: readonly PushedRef[] = []): { kind: RefusalKind; line: string; refCap?: number } {
  const text = `${stderr}\n${rejected.map((r) => r.summary).join('\n')}`;
  const cap = /(?:more than|at most|limit of|maximum of)\s+(\d+)\s+(?:branches|refs|references|branches or tags)/i.exec(text);
  if (cap) return { kind: 'ref-cap', line: `the remote takes at most ${cap[1]} refs a push`, refCap: Number(cap[1]) };
  if (/deny updating a hidden ref|hidden ref/i.test(text))
    return {
      kind: 'hidden-ref',
      line: 'the remote hides refs/ckpt/ and refuses writes to it (receive.hideRefs, or a host that reserves it): share to another repository (git ckpt share init --remote <url>)',
    };
  if (/GH013|push protection|secret scanning|contains secrets?|repository rule violations/i.test(text))
    return {
      kind: 'push-protection',
      line: `the remote's push protection refused the push${hostLine(stderr)}: nothing was sent; git ckpt push --dry-run names what each session holds`,
    };
  if (/maximum allowed size|exceeds (?:the )?(?:maximum|limit)|too large|pack exceeds|unpack-objects abnormal exit|RPC failed/i.test(text))
    return { kind: 'size', line: `the remote refused the push as too large${hostLine(stderr)}: push one session at a time (--session)` };
  if (rejected.some((r) => /non-fast-forward|fetch first|stale info/.test(r.summary)) || /non-fast-forward|\(fetch first\)/.test(text))
    return {
      kind: 'non-fast-forward',
      line: "the remote's ref for this store's session has commits this store never made: a copy of this store pushed it, or its history was rewritten; nothing is forced: run git ckpt share init again to take a writer id of its own",
    };
  if (/Authentication failed|could not read (?:Username|Password)|Permission denied|terminal prompts disabled|403/i.test(text))
    return {
      kind: 'auth',
      line: `the remote refused the credentials${hostLine(stderr)}: git ckpt uses your own git credential helpers and ssh keys`,
    };
  if (
    /Could not resolve host|Connection refused|does not appear to be a git repository|not found|unable to access|Could not read from remote/i.test(
      text,
    )
  )
    return { kind: 'unreachable', line: `the remote cannot be reached${hostLine(stderr) || `: ${firstLine(stderr)}`}` };
  return { kind: 'other', line: firstLine(stderr) || rejected[0]?.summary || 'the remote refused the push' };
}

/** What the host itself said (its first `remote:` line), as a suffix. */
function hostLine(stderr: string): string {
  const said = stderr
    .split('\n')
    .map((l) => /^remote:\s*(?:error:\s*)?(.*\S)/.exec(l)?.[1])
    .find((l) => l && !/^[-=*\s]+$/.test(l));
  return said ? ` (${oneLine(said, 160)})` : '';
}

function firstLine(stderr: string): string {
  const line = stderr.split('\n').find((l) => /^(?:fatal|error):/.test(l)) ?? stderr.split('\n').find((l) => l.trim());
  return line ? oneLine(line.replace(/^(?:fatal|error):\s*/, ''), 200) : '';
}

/** Pure: `git bundle verify`'s complaint about prerequisites, as the ids it names. */
export function missingPrerequisites(stderr: string): string[] {
  const at = stderr.indexOf('lacks these prerequisite commits');
  if (at < 0) return [];
  return [...stderr.slice(at).matchAll(/\b([0-9a-f]{40}|[0-9a-f]{64})\b/g)].map((m) => m[1]!);
}
