/**
 * What every step of a capture, restore or gc works in: the workspace, its
 * store and its settings, and how git is called for them (the shadow index, or
 * a scratch index and object folder for dry runs).
 */
import type { WorkspaceLocation } from './locate.js';
import type { GitCall } from '../git/runner.js';
import type { Settings } from './settings.js';
import type { StorePaths } from './store.js';
import type { ChangeView } from '../model/change-log.js';

export interface StoreContext {
  location: WorkspaceLocation;
  paths: StorePaths;
  settings: Settings;
  /**
   * A throw-away index and object directory: the capture runs as usual but the
   * store stays byte-identical (restore --dry-run). Captures never commit there (see captureTree).
   */
  scratch?: { indexFile: string; objectDir: string };
  /** The environment the workspace was opened with: git children start from it (HOME decides git's own global ignore and attributes files). */
  env?: NodeJS.ProcessEnv;
  /** A watcher's account of what changed (the daemon's): snapshots then scan only those paths. */
  changes?: ChangeSource;
}

/**
 * What changed since the last capture, from a watcher. `view` first waits
 * until every change made before the call is recorded; `settle` marks what a
 * capture took, keeping the paths it could not take for the next one.
 */
export interface ChangeSource {
  view(signal?: AbortSignal): Promise<ChangeView>;
  settle(view: ChangeView, keep: readonly string[]): void;
}

/** A git call against the store, with the context's work tree and index. */
export function gitCall(ctx: StoreContext, call: GitCall): GitCall {
  return {
    gitDir: ctx.paths.gitDir,
    workTree: ctx.location.root,
    indexFile: ctx.scratch?.indexFile ?? ctx.paths.indexFile,
    scratchObjectDir: ctx.scratch?.objectDir,
    cwd: ctx.location.root,
    baseEnv: ctx.env,
    ...call,
  };
}
