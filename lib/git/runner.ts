/**
 * The one git runner. Every git process git-ckpt starts, in lib/ and in cli/
 * (the pager and colour settings too), goes through `git()`. The only other
 * processes lib/ starts are git-ckpt's own CLI, detached in the background
 * (`housekeeping.ts`: gc; `baseline.ts`: the first snapshot), whose git calls
 * come back here; cli/ also starts the user's pager (`terminal.ts`) and, for
 * `git ckpt ui`, the browser (the `open` package). For every git call:
 * - only whitelisted verbs run; anything that could rewrite a work tree or a
 *   user's history (reset, clean, stash, checkout, gc …) throws before spawning;
 *   push, fetch and bundle name only git-ckpt's own refs (`refs/ckpt/…`), never a
 *   branch or a tag, and run only from the shadow repository;
 * - positional arguments are validated object ids (or `^id`), never free text,
 *   so a tampered ledger line or a smuggled `--output=/x` cannot become an option;
 *   a remote's URL, a refspec and a bundle's path each have their own check;
 * - paths travel only after `--` or on stdin with -z, always as literal pathspecs;
 * - inherited GIT_* variables are dropped (we may run inside a user's git hook
 *   where GIT_DIR/GIT_INDEX_FILE point at their repository), system config is
 *   never read, prompts are off, and user config is read only when asked for
 *   (with it, on request, the `git -c` settings of `git -c … ckpt`).
 */
import { spawn } from 'node:child_process';
import { CkptError } from '../model/errors.js';
import { isObjectId } from '../model/oid.js';
import { decodePathBytes, displayPath, isUtf8Path, pathBytes } from '../model/paths.js';

const ALLOWED_VERBS = new Set([
  'init',
  'config',
  'ls-files',
  'add',
  'update-index',
  'write-tree',
  'read-tree',
  'commit-tree',
  'diff-tree',
  'diff-index',
  'cat-file',
  'ls-tree',
  'pack-objects',
  'prune-packed',
  'count-objects',
  'hash-object',
  'rev-list',
  'merge-tree',
  'merge-base',
  'version',
  // Carrying checkpoints (lib/share/): only to refs under refs/ckpt/ and refs/ckpt-remote/ (see REF_RE),
  // to a URL the user named, never a branch or a tag of anyone's.
  'push',
  'fetch',
  'ls-remote',
  'bundle',
  'update-ref',
  'for-each-ref',
  // Read-only questions to the user's own repository: where a remote points, what .gitignore ignores.
  'remote',
  'check-ignore',
]);

/** Verbs that take a subcommand: only these subcommands (`remote add` or `bundle unbundle` never run). */
const SUBCOMMANDS: Record<string, readonly string[]> = {
  remote: ['get-url'],
  bundle: ['create', 'verify', 'list-heads'],
};

/**
 * The refs git-ckpt names: its exports (`refs/ckpt/…`) and the refs it fetched into (`refs/ckpt-remote/…`),
 * components of letters, digits, `._-` (never `..`, never a leading dot, never `.lock`), globs for fetch's refspecs.
 */
const REF_COMPONENT = '(?:\\*|[A-Za-z0-9_][A-Za-z0-9_-]*(?:\\.[A-Za-z0-9_-]+)*)';
const REF_RE = new RegExp(`^refs/ckpt(?:-remote)?(?:/${REF_COMPONENT})+$`);

/** Whether `ref` is one git-ckpt may write or read on a remote. */
function isCkptRef(ref: string): boolean {
  return REF_RE.test(ref) && !ref.endsWith('.lock') && ref.length <= 400;
}

/**
 * A URL (or scp-like address, or absolute path) a person named as a remote: no option, no control
 * character, no space; `ext::` and `fd::` never run (see NETWORK_CONFIG).
 */
export function urlProblem(url: string): string | undefined {
  if (!url || url.length > 2048) return 'empty or too long';
  if (url.startsWith('-')) return 'starts with a dash';
  if (/[\s\0-\x1f\x7f]/.test(url)) return 'holds a space or a control character';
  if (/^(?:ext|fd)::/i.test(url)) return 'uses a transport that runs commands';
  return undefined;
}

/** GIT_CKPT_TRACE=1 prints every git call with its duration on stderr, like GIT_TRACE. */
const TRACE = process.env.GIT_CKPT_TRACE === '1';

/** Options are code literals: a dash, a name, and optionally `=value`. */
const OPTION_RE = /^--?[A-Za-z][A-Za-z0-9-]*(?:=[^\n\0]*)?$/;
/** Config keys and simple values that we pass positionally to `git config`. */
const LITERAL_RE = /^[A-Za-z0-9][A-Za-z0-9._/:-]*$/;

function assertObjectId(value: unknown, what = 'object id'): string {
  if (!isObjectId(value)) {
    throw new CkptError('refused', `invalid ${what}: ${JSON.stringify(String(value)).slice(0, 80)}`);
  }
  return value;
}

/**
 * An argument: an option literal, a validated object id, a negated id, or a config literal; for the
 * carrying verbs also a remote's URL, one of git-ckpt's refs, a refspec between an id or one of those
 * refs and one of those refs (`src` empty: a deletion), and a file's absolute path (a bundle).
 */
export type GitArg =
  | string
  | { oid: string }
  | { notOid: string }
  | { literal: string }
  | { url: string }
  | { ref: string }
  | { refspec: { src: string; dst: string } }
  | { file: string }
  | { refPrefix: string };

export interface GitCall {
  verb: string;
  args?: GitArg[];
  /** Literal pathspecs, placed after `--`. */
  paths?: string[];
  /** Shadow repository; omitted only for calls that name no repository. */
  gitDir?: string;
  workTree?: string;
  indexFile?: string;
  cwd?: string;
  input?: string | Buffer;
  /** `-c key=value` pairs placed before the verb; keys and values are code literals. */
  configOverrides?: Record<string, string>;
  /** Read the user's global config (for [ckpt] settings, and the pager and colour settings). */
  userConfig?: boolean;
  /**
   * Keep the settings of `git -c key=value ckpt …` (GIT_CONFIG_PARAMETERS, and
   * GIT_CONFIG_COUNT with its GIT_CONFIG_KEY_n/VALUE_n): the person's own config
   * for this one command. Only with userConfig; no other GIT_* variable is kept.
   * An environment instead of `true` takes them from it (a hook's, read in a daemon or a library).
   */
  commandLineConfig?: boolean | NodeJS.ProcessEnv;
  /** Extra environment (author identity for commit-tree). Keys must not start with GIT_ unless listed. */
  env?: Record<string, string>;
  /** The environment to start from instead of the process's (a library caller's, with its HOME). */
  baseEnv?: NodeJS.ProcessEnv;
  /** Exit codes other than 0 that are answers, not failures (e.g. 1 for `config --get` misses). */
  okCodes?: number[];
  signal?: AbortSignal;
  /**
   * Called with each stdout chunk as it arrives (progress, early stop, streaming).
   * Returning a promise pauses stdout until it settles (backpressure); a rejection
   * kills the child and fails the call.
   */
  onStdout?: (chunk: Buffer) => void | Promise<void>;
  /** Keep stdout for the result (default true); streaming callers turn it off to bound memory. */
  collectStdout?: boolean;
  /**
   * Write new objects here instead of the shadow repository, reading existing
   * ones from it as an alternate: a dry run hashes without changing the store.
   */
  scratchObjectDir?: string;
  /**
   * A network call (push, fetch, ls-remote): the user's own config, system config included (credential
   * helpers live there on macOS), their ssh and askpass variables, with hooks and command-running
   * transports off. A terminal prompt stays off: a missing credential is one line, not a hang.
   */
  network?: boolean;
  /** Objects read, never written, from this folder too (the user's repository at a push: what the remote already has). */
  readAlternate?: string;
}

/** What a network call keeps of the environment's GIT_* variables: how to reach a host, never where a repository is. */
const NETWORK_PASSTHROUGH_GIT = new Set(['GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_SSH_VARIANT', 'GIT_ASKPASS', 'GIT_PROXY_COMMAND']);

/**
 * Set on every network call: no hook of anyone's runs, no transport that runs a command is used, and
 * none of the user's push or fetch habits (submodules, signed pushes, tags) reaches git-ckpt's refs;
 * what another store sent is checked as it arrives.
 */
const NETWORK_CONFIG: Record<string, string> = {
  'core.hooksPath': '/dev/null',
  'protocol.ext.allow': 'never',
  'protocol.fd.allow': 'never',
  'transfer.unpackLimit': '1',
  'push.recurseSubmodules': 'no',
  'push.gpgSign': 'false',
  'push.followTags': 'false',
  'fetch.recurseSubmodules': 'no',
  'fetch.fsckObjects': 'true',
};

/** The carrying verbs write only the shadow repository, and never take an option that widens what they move or runs a program. */
const SHADOW_ONLY_VERBS = new Set(['push', 'fetch', 'update-ref', 'bundle']);
const WIDENING_OPTION_RE =
  /^--(?:force|mirror|all|tags|delete|prune-tags|receive-pack|upload-pack|exec|refmap|recurse-submodules|set-upstream)(?:=|$)|^-[fd]$/;

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

const ENV_PASSTHROUGH_GIT = new Set([
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
  'GIT_INDEX_FILE',
]);

/** @public (tests use it) */
export function buildArgv(call: GitCall): string[] {
  if (!ALLOWED_VERBS.has(call.verb)) {
    throw new CkptError('refused', `git verb not allowed: ${call.verb}`);
  }
  // check-ignore takes no pathspec magic, literal included: it reads paths, from stdin.
  const argv: string[] = call.verb === 'check-ignore' ? ['--no-pager'] : ['--no-pager', '--literal-pathspecs'];
  const overrides = call.network ? { ...call.configOverrides, ...NETWORK_CONFIG } : (call.configOverrides ?? {});
  for (const [key, value] of Object.entries(overrides)) {
    if (!LITERAL_RE.test(key) || !/^[A-Za-z0-9._/:-]*$/.test(value)) {
      throw new CkptError('refused', `config override not allowed: ${key}`);
    }
    argv.push('-c', `${key}=${value}`);
  }
  argv.push(call.verb);
  const allowedSub = SUBCOMMANDS[call.verb];
  if (allowedSub) {
    const first = call.args?.[0];
    if (!(first && typeof first === 'object' && 'literal' in first && allowedSub.includes(first.literal)))
      throw new CkptError('refused', `git ${call.verb} only as ${allowedSub.map((c) => `${call.verb} ${c}`).join(', ')}`);
  }
  if (SHADOW_ONLY_VERBS.has(call.verb) && !call.gitDir)
    throw new CkptError('refused', `git ${call.verb} runs only in the shadow repository`);
  for (const arg of call.args ?? []) {
    if (typeof arg === 'string') {
      if (!OPTION_RE.test(arg)) throw new CkptError('refused', `git argument is not an option: ${JSON.stringify(arg).slice(0, 80)}`);
      if (SHADOW_ONLY_VERBS.has(call.verb) && WIDENING_OPTION_RE.test(arg))
        throw new CkptError('refused', `git ${call.verb} never takes ${arg.split('=')[0]}`);
      argv.push(arg);
    } else if ('oid' in arg) {
      argv.push(assertObjectId(arg.oid));
    } else if ('notOid' in arg) {
      argv.push(`^${assertObjectId(arg.notOid)}`);
    } else if ('url' in arg) {
      const problem = urlProblem(arg.url);
      if (problem) throw new CkptError('refused', `not a remote URL (${problem}): ${JSON.stringify(arg.url).slice(0, 80)}`);
      argv.push(arg.url);
    } else if ('ref' in arg) {
      argv.push(assertCkptRef(arg.ref));
    } else if ('refspec' in arg) {
      const { src, dst } = arg.refspec;
      if (src !== '' && !isObjectId(src)) assertCkptRef(src);
      argv.push(`${src}:${assertCkptRef(dst)}`);
    } else if ('refPrefix' in arg) {
      // A read-only listing's prefix (for-each-ref of the user's remote-tracking refs).
      if (
        call.verb !== 'for-each-ref' ||
        !/^refs\/remotes\/[A-Za-z0-9][A-Za-z0-9._-]*\/$/.test(arg.refPrefix) ||
        arg.refPrefix.includes('..')
      )
        throw new CkptError('refused', `not a remote-tracking ref prefix: ${JSON.stringify(arg.refPrefix).slice(0, 80)}`);
      argv.push(arg.refPrefix);
    } else if ('file' in arg) {
      if (!arg.file.startsWith('/') || /[\0\n\r]/.test(arg.file))
        throw new CkptError('refused', `not an absolute file path: ${JSON.stringify(arg.file).slice(0, 80)}`);
      argv.push(arg.file);
    } else {
      if (!LITERAL_RE.test(arg.literal))
        throw new CkptError('refused', `git literal not allowed: ${JSON.stringify(arg.literal).slice(0, 80)}`);
      argv.push(arg.literal);
    }
  }
  if (call.paths) {
    argv.push('--');
    for (const p of call.paths) {
      if (p.includes('\0')) throw new CkptError('refused', 'path contains NUL');
      // argv is encoded as UTF-8: a name that is not would reach git as another name.
      if (!isUtf8Path(p)) throw new CkptError('refused', `path is not valid UTF-8: ${JSON.stringify(displayPath(p)).slice(0, 80)}`);
      argv.push(p);
    }
  }
  return argv;
}

function assertCkptRef(ref: string): string {
  if (!isCkptRef(ref)) throw new CkptError('refused', `not a git-ckpt ref: ${JSON.stringify(ref).slice(0, 80)}`);
  return ref;
}

/** What `git -c` and `git --config-env` hand a subcommand. */
const COMMAND_LINE_CONFIG_RE = /^GIT_CONFIG_(?:PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)$/;

/** The settings `git -c key=value …` handed this process, as the variables that carry them. */
export function commandLineConfigOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && COMMAND_LINE_CONFIG_RE.test(key)) found[key] = value;
  return found;
}

/** @public (tests use it) */
export function buildEnv(call: GitCall): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const base = call.baseEnv ?? process.env;
  for (const [key, value] of Object.entries(base)) {
    if (!key.startsWith('GIT_') || (call.network && NETWORK_PASSTHROUGH_GIT.has(key))) env[key] = value;
  }
  if (call.userConfig === true && call.commandLineConfig)
    Object.assign(env, commandLineConfigOf(call.commandLineConfig === true ? base : call.commandLineConfig));
  if (!call.network) env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_OPTIONAL_LOCKS = '0';
  if (call.verb !== 'check-ignore') env.GIT_LITERAL_PATHSPECS = '1';
  env.GIT_ATTR_NOSYSTEM = '1';
  env.LC_ALL = 'C';
  if (!call.userConfig && !call.network) env.GIT_CONFIG_GLOBAL = '/dev/null';
  if (call.gitDir) env.GIT_DIR = call.gitDir;
  if (call.workTree) env.GIT_WORK_TREE = call.workTree;
  if (call.indexFile) env.GIT_INDEX_FILE = call.indexFile;
  if (call.scratchObjectDir && call.gitDir) {
    env.GIT_OBJECT_DIRECTORY = call.scratchObjectDir;
    // Quoted, so a ':' in the store path cannot split the list.
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = quotedPath(`${call.gitDir}/objects`);
  } else if (call.readAlternate) env.GIT_ALTERNATE_OBJECT_DIRECTORIES = quotedPath(call.readAlternate);
  for (const [key, value] of Object.entries(call.env ?? {})) {
    if (key.startsWith('GIT_') && !ENV_PASSTHROUGH_GIT.has(key)) {
      throw new CkptError('refused', `environment variable not allowed: ${key}`);
    }
    env[key] = value;
  }
  return env;
}

/** Quoted, so a ':' in the path cannot split git's list of alternates. */
function quotedPath(p: string): string {
  return `"${p.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

class GitError extends CkptError {
  constructor(
    readonly verb: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    const firstLine = stderr.split('\n').find((l) => l.trim()) ?? '';
    super(
      'git',
      `git ${verb} failed${exitCode === null ? ' (killed)' : ` (exit ${exitCode})`}${firstLine ? `: ${firstLine.trim()}` : ''}`,
      {
        verb,
        exitCode,
      },
    );
  }
}

/** Run one git process. Rejects with GitError on an unexpected exit, or the signal's reason when aborted. */
export function git(call: GitCall): Promise<GitResult> {
  let argv: string[];
  let env: NodeJS.ProcessEnv;
  try {
    argv = buildArgv(call);
    env = buildEnv(call);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise((resolve, reject) => {
    if (call.signal?.aborted) {
      reject(call.signal.reason);
      return;
    }
    const started = TRACE ? performance.now() : 0;
    const child = spawn('git', argv, { cwd: call.cwd ?? call.workTree ?? process.cwd(), env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let settled = false;
    const onAbort = () => {
      child.kill('SIGKILL');
    };
    call.signal?.addEventListener('abort', onAbort, { once: true });
    // The last chunk's handler may still run when git exits: the result waits for it.
    let consuming: Promise<void> = Promise.resolve();
    child.stdout.on('data', (chunk: Buffer) => {
      if (call.collectStdout !== false) out.push(chunk);
      const pending = call.onStdout?.(chunk);
      if (pending) {
        child.stdout.pause();
        consuming = pending.then(
          () => undefined,
          () => undefined,
        );
        pending.then(
          () => child.stdout.resume(),
          (e: unknown) => {
            if (settled) return;
            settled = true;
            call.signal?.removeEventListener('abort', onAbort);
            child.kill('SIGKILL');
            reject(e);
          },
        );
      }
    });
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (e) => {
      if (settled) return;
      settled = true;
      call.signal?.removeEventListener('abort', onAbort);
      reject(new CkptError('git', `cannot run git: ${e.message}`, {}, { cause: e }));
    });
    child.on('close', (code) => void consuming.then(() => finish(code)));
    const finish = (code: number | null) => {
      if (TRACE)
        process.stderr.write(
          `git-ckpt trace: git ${argv.slice(2).join(' ').slice(0, 120)} -> ${code} in ${(performance.now() - started).toFixed(1)} ms\n`,
        );
      if (settled) return;
      settled = true;
      call.signal?.removeEventListener('abort', onAbort);
      const stderr = Buffer.concat(err).toString('utf8');
      if (call.signal?.aborted) {
        reject(call.signal.reason);
        return;
      }
      const exit = code ?? -1;
      if (exit !== 0 && !(call.okCodes ?? []).includes(exit)) {
        reject(new GitError(call.verb, code, stderr));
        return;
      }
      resolve({ stdout: Buffer.concat(out), stderr, code: exit });
    };
    // A child that exits before reading all of stdin raises EPIPE; its exit code tells the story.
    child.stdin.on('error', () => {});
    if (call.input !== undefined) child.stdin.end(call.input);
    else child.stdin.end();
  });
}

/** Split NUL-terminated output into strings; every byte is kept, names that are not UTF-8 included (see decodePathBytes). */
export function splitZ(buf: Buffer): string[] {
  const parts: string[] = [];
  const split = zSplitter((part) => parts.push(part));
  split(buf);
  split.end();
  return parts;
}

/**
 * The streaming form of splitZ, for `onStdout` with `collectStdout: false`:
 * each NUL-terminated part is handed on as it arrives, so a listing of a
 * million paths is never held whole. `end()` hands on an unterminated tail.
 */
export function zSplitter(onPart: (part: string) => void): ((chunk: Buffer) => void) & { end(): void } {
  let carry: Buffer | undefined;
  const split = (chunk: Buffer) => {
    const buf = carry ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let i = buf.indexOf(0); i !== -1; i = buf.indexOf(0, start)) {
      onPart(decodePathBytes(buf, start, i));
      start = i + 1;
    }
    carry = start < buf.length ? Buffer.from(buf.subarray(start)) : undefined;
  };
  return Object.assign(split, {
    end() {
      if (carry) onPart(decodePathBytes(carry, 0, carry.length));
      carry = undefined;
    },
  });
}

/** Paths for git's stdin with -z: each one's own bytes, NUL-terminated. */
export function nulTerminated(paths: readonly string[]): Buffer {
  return Buffer.concat(paths.flatMap((p) => [pathBytes(p), NUL]));
}

const NUL = Buffer.from([0]);

/** The oldest git git-ckpt runs on (`commit-tree` with trailers, `--pathspec-from-file`, `cat-file --batch` as used). */
export const MIN_GIT = '2.32';

/** Pure: whether version a (e.g. "2.39.5") is older than b ("2.32"). */
export function versionBelow(a: string, b: string): boolean {
  const x = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const y = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  }
  return false;
}

/**
 * Test-only: `GIT_CKPT_ASSUME_GIT=2.37` makes git-ckpt behave as with that git
 * (its fallbacks for older gits are tested on a new one). Read once, by git-ckpt
 * itself; like every GIT_* variable it never reaches a git child.
 */
const ASSUMED_GIT = process.env.GIT_CKPT_ASSUME_GIT;

/** The git binary's version ("2.39.5"), or the one GIT_CKPT_ASSUME_GIT names. */
export async function gitVersion(): Promise<string> {
  if (ASSUMED_GIT) return ASSUMED_GIT;
  const { stdout } = await git({ verb: 'version' });
  return /(\d+\.\d+(?:\.\d+)?)/.exec(stdout.toString('utf8'))?.[1] ?? 'unknown';
}

/** Refuse a git older than MIN_GIT, with one line naming both. */
export async function assertGitVersion(): Promise<void> {
  const version = await gitVersion();
  if (version === 'unknown' || versionBelow(version, MIN_GIT))
    throw new CkptError('git', `git-ckpt needs git ${MIN_GIT} or newer (found ${version})`);
}
