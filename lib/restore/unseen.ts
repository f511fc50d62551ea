/**
 * What a checkpoint could see. A recovery command (restore --delete-new, revert, undo, redo, resume,
 * follow-rewind) wants a path absent when a checkpoint lacks it; that absence means something only if the
 * checkpoint's scan could have seen the path. Its ignore rules are asked the way git asked them then: its
 * own `.gitignore` files (from its tree) and the rules outside the tree it names (capture/ignore-rules.ts),
 * in a scratch repository and work tree of their own under the temporary folder, through `check-ignore`.
 * The pure verdict is `unseenReasons` (restore-plan.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { StoreContext } from '../store/context.js';
import { currentIgnoreRules, globalExcludesFile, readIgnoreRules, type IgnoreRules } from '../capture/ignore-rules.js';
import type { CheckpointRecord } from '../model/ledger.js';
import { forEachObject } from '../git/objects.js';
import { ancestorsOf, decodePathBytes, isUtf8Path } from '../model/paths.js';
import { GITLINK, type TreeEntry } from '../model/tree.js';
import { git, nulTerminated, splitZ } from '../git/runner.js';
import { shortId } from '../model/short-ids.js';
import { unseenReasons, type CheckpointSight } from './restore-plan.js';
import { repoOf } from './transaction.js';

/** A state a recovery goes back to: its checkpoint's record (absent: no checkpoint holds it, or gc dropped it), and its tree. */
export interface SeenFrom {
  record: CheckpointRecord | undefined;
  /** Its entries, when the caller has them already. */
  entries?: Map<string, TreeEntry>;
  /** How the reasons name it when there is no record. */
  label?: string;
  /** It had a record, which gc dropped (its tree kept as a base). */
  dropped?: boolean;
}

/** The rules outside the tree one of this store's checkpoints was taken with; undefined when they are not known. */
function rulesOf(ctx: StoreContext, record: CheckpointRecord): IgnoreRules | undefined {
  if (record.rules) return readIgnoreRules(ctx.paths, record.rules);
  // Recorded before records named their rules: the rules now, as near as can be told.
  return currentIgnoreRules(ctx.paths, ctx.env ?? process.env);
}

/**
 * For each path of `candidates` (paths the recovery would delete because `from` lacks them), why `from`'s
 * scan could not have seen it, when it could not.
 */
export async function unseenAt(ctx: StoreContext, from: SeenFrom, candidates: readonly string[]): Promise<Map<string, string>> {
  if (candidates.length === 0) return new Map();
  const { record } = from;
  const label = record ? shortId(record.id) : (from.label ?? 'that state');
  if (!record) return unseenReasons(candidates, { ...NOTHING_KNOWN, label, ...(from.dropped ? { dropped: true } : { none: true }) });
  // Foreign history never makes a local file go: what another store lacks says nothing of this workspace.
  if (record.origin) return unseenReasons(candidates, { ...NOTHING_KNOWN, label, foreign: true });
  const rules = rulesOf(ctx, record);
  if (!rules) return unseenReasons(candidates, { ...NOTHING_KNOWN, label, rulesUnknown: true });
  // A name that is not UTF-8 was never captured anywhere; it cannot be asked about either.
  const asked = candidates.filter(isUtf8Path);
  const dirs = new Set<string>(['']);
  for (const p of asked) for (const d of ancestorsOf(p)) dirs.add(d);
  const sight = from.entries ? sightOfEntries(from.entries, dirs) : await sightOfTree(ctx, record.tree, dirs);
  const { ignored, unreadRules } = await askIgnoreRules(ctx, sight.ruleFiles, rules, asked, dirs);
  for (const p of candidates) if (!isUtf8Path(p)) ignored.add(p);
  // A .gitignore the checkpoint listed as not captured (too large, unreadable …) held rules not known here.
  for (const s of record.skipped)
    if (path.posix.basename(s.path) === '.gitignore')
      unreadRules.push(path.posix.dirname(s.path) === '.' ? '' : path.posix.dirname(s.path));
  return unseenReasons(candidates, {
    label,
    ignored,
    unreadRules,
    skipped: record.skipped,
    skipsCut: record.skippedCount > record.skipped.length,
    gitlinks: sight.gitlinks,
  });
}

/** What a checkpoint's tree holds on the way to some paths: the `.gitignore` files of those folders, and which folders are nested repositories. */
interface TreeSight {
  /** `dir/.gitignore` (`.gitignore` at the root) → its entry, for the folders that have one. */
  ruleFiles: Map<string, TreeEntry>;
  gitlinks: string[];
}

const ruleFile = (dir: string) => (dir ? `${dir}/.gitignore` : '.gitignore');

function sightOfEntries(entries: Map<string, TreeEntry>, dirs: ReadonlySet<string>): TreeSight {
  const ruleFiles = new Map<string, TreeEntry>();
  const gitlinks: string[] = [];
  for (const d of dirs) {
    const f = entries.get(ruleFile(d));
    if (f) ruleFiles.set(ruleFile(d), f);
    if (entries.get(d)?.mode === GITLINK) gitlinks.push(d);
  }
  return { ruleFiles, gitlinks };
}

/**
 * The same, read from the tree objects themselves, one level at a time (one `cat-file --batch` a level):
 * a workspace of a million files is not listed whole for the few folders a recovery asks about.
 */
async function sightOfTree(ctx: StoreContext, root: string, dirs: ReadonlySet<string>): Promise<TreeSight> {
  const ruleFiles = new Map<string, TreeEntry>();
  const gitlinks: string[] = [];
  let level = new Map<string, string[]>([[root, ['']]]);
  while (level.size) {
    const next = new Map<string, string[]>();
    await forEachObject(repoOf(ctx), [...level.keys()], (oid, content) => {
      for (const [name, entry] of treeObjectEntries(content, oid.length / 2)) {
        for (const dir of level.get(oid) ?? []) {
          const child = dir ? `${dir}/${name}` : name;
          if (name === '.gitignore') ruleFiles.set(child, entry);
          if (!dirs.has(child)) continue;
          if (entry.mode === GITLINK) gitlinks.push(child);
          else if (entry.mode === '40000') next.set(entry.oid, [...(next.get(entry.oid) ?? []), child]);
        }
      }
    });
    level = next;
  }
  return { ruleFiles, gitlinks };
}

/** Pure: a raw tree object's entries (`<mode> <name>\0<id bytes>` each), names decoded as paths are. */
function treeObjectEntries(content: Buffer, idBytes: number): [string, TreeEntry][] {
  const out: [string, TreeEntry][] = [];
  for (let at = 0; at < content.length; ) {
    const space = content.indexOf(0x20, at);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0) break;
    const mode = content.toString('latin1', at, space);
    const name = decodePathBytes(content, space + 1, nul);
    out.push([name, { mode, oid: content.toString('hex', nul + 1, nul + 1 + idBytes) }]);
    at = nul + 1 + idBytes;
  }
  return out;
}

const NOTHING_KNOWN: Omit<CheckpointSight, 'label'> = { ignored: new Set(), unreadRules: [], skipped: [], skipsCut: false, gitlinks: [] };

/**
 * Which of `paths` the rules of a checkpoint ignore, asked of git in a scratch repository whose exclude
 * file and global excludes are the checkpoint's, over a work tree holding only its `.gitignore` files on
 * the way to those paths; and the folders on the way whose own `.gitignore` it did not capture (the file
 * was ignored itself, or skipped): what they held is not known.
 */
async function askIgnoreRules(
  ctx: StoreContext,
  entries: Map<string, TreeEntry>,
  rules: IgnoreRules,
  paths: readonly string[],
  dirs: ReadonlySet<string>,
): Promise<{ ignored: Set<string>; unreadRules: string[] }> {
  // git reads no .gitignore that is a symlink (or anything but a file): neither does this.
  const files = [...dirs].map(ruleFile).filter((f) => entries.has(f) && /^100[67]/.test(entries.get(f)!.mode));
  const scratch = mkdtempSync(path.join(tmpdir(), 'git-ckpt-rules-'));
  try {
    const gitDir = path.join(scratch, 'git');
    const workTree = path.join(scratch, 'wt');
    const home = path.join(scratch, 'home');
    await git({ verb: 'init', args: ['--bare', '--quiet', '--template='], gitDir, cwd: scratch });
    mkdirSync(path.join(gitDir, 'info'), { recursive: true });
    writeFileSync(path.join(gitDir, 'info', 'exclude'), rules.exclude);
    const global = globalExcludesFile({ HOME: home })!;
    mkdirSync(path.dirname(global), { recursive: true });
    writeFileSync(global, rules.global);
    mkdirSync(workTree);
    const byOid = new Map<string, string[]>();
    for (const f of files) byOid.set(entries.get(f)!.oid, [...(byOid.get(entries.get(f)!.oid) ?? []), f]);
    await forEachObject(repoOf(ctx), [...byOid.keys()], (oid, content) => {
      for (const f of byOid.get(oid) ?? []) {
        mkdirSync(path.dirname(path.join(workTree, f)), { recursive: true });
        writeFileSync(path.join(workTree, f), content);
      }
    });
    // The folders' own .gitignore paths are asked too: one the checkpoint lacks because its rules ignored it hid rules.
    const questions = [...new Set([...paths, ...[...dirs].map(ruleFile).filter((f) => !entries.has(f))])];
    const { stdout } = await git({
      verb: 'check-ignore',
      args: ['--stdin', '-z', '--no-index'],
      gitDir,
      workTree,
      cwd: workTree,
      // No global config (the runner's default), so git reads the default global excludes file: this one.
      env: { HOME: home, XDG_CONFIG_HOME: '' },
      // A name starting with ':' would read as pathspec magic (check-ignore takes no --literal-pathspecs): './' keeps it a name.
      input: nulTerminated(questions.map((p) => (p.startsWith(':') ? `./${p}` : p))),
      okCodes: [1],
    });
    const ignored = new Set(splitZ(stdout).map((p) => (p.startsWith('./:') ? p.slice(2) : p)));
    const unreadRules = [...dirs].filter((d) => ignored.has(ruleFile(d)) && !entries.has(ruleFile(d)));
    return { ignored, unreadRules };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
