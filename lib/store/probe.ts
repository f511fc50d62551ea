/**
 * The degraded probe: which checkpoints have lost their commit or root tree
 * (deleted by hand, an aggressive gc, a damaged or partly copied store). One
 * `git cat-file --batch-check` for the whole ledger, cached in the store
 * against the ledger and the object folders' stat data, so `log` on thousands
 * of checkpoints stays fast. `fsck` goes deeper (every object of every tree).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { CheckpointRecord } from '../model/ledger.js';
import { git } from '../git/runner.js';
import { stampedCache, statStamp, type StorePaths } from './store.js';

/** Checkpoint id → what is missing ("commit", "tree"). */
export type DegradedMap = Record<string, string>;

/** Stat data that changes when objects come or go: the ledger, the pack folder, every fan-out folder. */
function objectsStamp(paths: StorePaths): string {
  const objects = paths.objectsDir;
  const parts = [statStamp(paths.ledger), statStamp(paths.packDir), statStamp(objects)];
  let fanout: string[] = [];
  try {
    fanout = readdirSync(objects).filter((n) => /^[0-9a-f]{2}$/.test(n));
  } catch {
    /* no objects yet */
  }
  for (const dir of fanout.sort()) parts.push(`${dir}=${statStamp(path.join(objects, dir))}`);
  return parts.join('|');
}

/** Pure: read `cat-file --batch-check` output for ids asked in order. */
function missingFromBatchCheck(output: string): Set<string> {
  const missing = new Set<string>();
  for (const line of output.split('\n')) {
    const m = /^(\S+) missing$/.exec(line);
    if (m) missing.add(m[1]!);
  }
  return missing;
}

/** Pure: the degraded map from the set of missing object ids. */
function degradedFrom(records: readonly CheckpointRecord[], missing: Set<string>): DegradedMap {
  const out: DegradedMap = {};
  for (const r of records) {
    if (missing.has(r.id)) out[r.id] = 'commit';
    else if (missing.has(r.tree)) out[r.id] = 'tree';
  }
  return out;
}

/** `writeCache: false` for dry runs, which must leave the store byte-identical. */
export async function probeDegraded(paths: StorePaths, records: readonly CheckpointRecord[], writeCache = true): Promise<DegradedMap> {
  if (records.length === 0) return {};
  const isMap = (v: unknown): v is DegradedMap => typeof v === 'object' && v !== null && !Array.isArray(v);
  return stampedCache(
    paths.probeCache,
    objectsStamp(paths),
    isMap,
    async () => {
      const ids = new Set<string>();
      for (const r of records) {
        ids.add(r.id);
        ids.add(r.tree);
      }
      const { stdout } = await git({
        verb: 'cat-file',
        args: ['--batch-check=%(objectname)'],
        gitDir: paths.gitDir,
        cwd: paths.dir,
        input: `${[...ids].join('\n')}\n`,
      });
      return degradedFrom(records, missingFromBatchCheck(stdout.toString('utf8')));
    },
    writeCache,
  );
}
