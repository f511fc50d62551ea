/**
 * The restore journal: written and fsync'd before the first write to the
 * workspace, removed after the operation's record is in the ledger. While it
 * exists, a restore is interrupted: `restore --continue` brings every journaled
 * path to its wanted state, `restore --abort` to the state the guard captured,
 * each but the paths changed since the interruption (restore.ts).
 *
 * A journal is data an attacker could edit, so reading one validates every id,
 * mode and path before anything acts on it: a tampered journal is refused
 * whole, and never becomes a write primitive.
 */
import { readFileSync, rmSync } from 'node:fs';
import { CkptError } from '../model/errors.js';
import { OPERATION_KINDS, type OperationKind } from '../model/ledger.js';
import { unsafePathReason } from '../model/paths.js';
import { fileEntryProblem, type ActionCounts, type TreeEntry } from '../model/tree.js';
import { isObjectId } from '../model/oid.js';
import { fsyncFolder, storePaths, writeFileDurable } from './store.js';

const JOURNAL_SCHEMA = 1;

/** One journaled path: its wanted entry and the guard's entry (null = absent). */
export type JournalEntry = [path: string, want: TreeEntry | null, from: TreeEntry | null];

export interface Journal {
  v: number;
  id: string;
  op: OperationKind;
  started: number;
  target: string;
  guard: string;
  /** Counts the plan had, for the record written on completion. */
  counts: ActionCounts;
  leftovers: number;
  paths?: string[];
  /** A revert: the checkpoints it reverted, newest first. */
  reverted?: string[];
  /** A restore that follows a rewind inside the agent: the end of the turns left behind (OperationInfo.rewound). */
  rewound?: string;
  entries: JournalEntry[];
}

function journalFile(storeDir: string): string {
  return storePaths(storeDir).journal;
}

const entryProblem = (e: unknown) => fileEntryProblem(e, isObjectId);

/** Pure: validate a parsed journal; returns the reason it is unusable, or undefined. */
function journalProblem(j: Partial<Journal>): string | undefined {
  if (typeof j !== 'object' || j === null) return 'not an object';
  if (j.v !== JOURNAL_SCHEMA) return `unknown journal version ${JSON.stringify(j.v)}`;
  if (typeof j.id !== 'string' || !/^[0-9a-f]{1,64}$/.test(j.id)) return 'bad journal id';
  if (!OPERATION_KINDS.includes(j.op as OperationKind)) return 'bad operation';
  if (!isObjectId(j.target) || !isObjectId(j.guard)) return 'bad checkpoint id';
  if (!Number.isFinite(j.started)) return 'bad start time';
  if (typeof j.counts !== 'object' || j.counts === null) return 'bad counts';
  if (
    j.paths !== undefined &&
    (!Array.isArray(j.paths) || j.paths.some((p) => typeof p !== 'string' || (p !== '.' && unsafePathReason(p))))
  )
    return 'bad path selection';
  if (j.reverted !== undefined && (!Array.isArray(j.reverted) || !j.reverted.every(isObjectId))) return 'bad reverted checkpoints';
  if (j.rewound !== undefined && !isObjectId(j.rewound)) return 'bad rewound checkpoint';
  if (!Array.isArray(j.entries)) return 'no entries';
  for (const e of j.entries) {
    if (!Array.isArray(e) || e.length !== 3 || typeof e[0] !== 'string') return 'bad entry';
    const unsafe = unsafePathReason(e[0]);
    if (unsafe) return `unsafe path ${JSON.stringify(e[0]).slice(0, 80)}: ${unsafe}`;
    const problem = entryProblem(e[1]) ?? entryProblem(e[2]);
    if (problem) return `${problem} for ${JSON.stringify(e[0]).slice(0, 80)}`;
  }
  return undefined;
}

/** The open journal, if any. A journal that fails validation is an error, never acted on. */
export function readJournal(storeDir: string): Journal | undefined {
  const file = journalFile(storeDir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CkptError('store', `cannot read restore journal ${file}: ${(err as Error).message}`);
  }
  let parsed: Partial<Journal>;
  try {
    parsed = JSON.parse(text) as Partial<Journal>;
  } catch {
    throw new CkptError(
      'store',
      `restore journal ${file} is not valid JSON; nothing was changed (inspect it, or delete it to give up the interrupted restore)`,
    );
  }
  const problem = journalProblem(parsed);
  if (problem)
    throw new CkptError(
      'store',
      `restore journal ${file} is invalid (${problem}); nothing was changed (inspect it, or delete it to give up the interrupted restore)`,
    );
  return parsed as Journal;
}

/** Write the journal durably: temp file, fsync, rename, fsync of the folder. */
export function writeJournal(storeDir: string, journal: Journal): void {
  writeFileDurable(journalFile(storeDir), JSON.stringify(journal));
}

export function removeJournal(storeDir: string): void {
  rmSync(journalFile(storeDir), { force: true });
  fsyncFolder(storeDir);
}

/** Every blob a journal names, wanted and previous: a revert's merged blobs are in no checkpoint until it finishes. */
export function journalBlobs(journal: Journal | undefined): string[] {
  const ids = new Set<string>();
  for (const [, want, from] of journal?.entries ?? []) {
    if (want) ids.add(want.oid);
    if (from) ids.add(from.oid);
  }
  return [...ids];
}
