/**
 * git-ckpt as a library. Typical use in an agent harness:
 *
 *   import { Workspace } from 'git-ckpt';
 *   const ws = Workspace.open(process.cwd());
 *   const { created, id } = await ws.snapshot({ kind: 'post', tool: 'Bash', session });
 */
export {
  Workspace,
  type SnapshotRequest,
  type DiffFormat,
  type ListOptions,
  type ListResult,
  type StatusReport,
  type OpenOptions,
} from './workspace.js';
export { parseAddress, resolveAddress, type Address } from './address.js';
export { CkptError, isCkptError, type ErrorCode } from './errors.js';
export {
  type CheckpointRecord,
  type CheckpointKind,
  type UserKind,
  type SkippedPath,
  type ChangedPath,
  CHECKPOINT_KINDS,
  USER_KINDS,
  parseLedger,
} from './ledger.js';
export type { SnapshotResult, SnapshotProgress } from './snapshot.js';
export { type Settings, DEFAULT_SETTINGS, settingsFromConfigList } from './settings.js';
export { storeRoot } from './store.js';
export { planCapture, parseScan, takeBatch, batchLimits, stageUnits, type StageUnit } from './capture-plan.js';
export type { OperationReport, RecoveryReport, RestoreOptions, UndoOptions, OperationOptions } from './restore.js';
export { reconcile, restoreWants, revertWants, staleUndoPaths, type Plan, type PlannedFile, type TreeEntry } from './restore-plan.js';
export { parseHookPayload, summarizeInput, promptTitle, type HookEvent, type Agent, type Phase } from './hook-payload.js';
export { numberEvent, emptySessionState, type SessionState, type Numbering } from './turns.js';
export { redact, REDACTION_RULES } from './redact.js';
export { runHook, recordHookEvent, type HookEventResult } from './hook.js';
export {
  installHooks,
  uninstallHooks,
  hookStatus,
  hookTarget,
  mergeHooks,
  removeHooks,
  HOOK_AGENTS,
  type HookAgent,
  type Scope,
} from './hooks-install.js';
export { planRetention, retentionPolicy, type RetentionPolicy, type RetentionPlan } from './retention.js';
export type { GcReport, GcOptions } from './gc.js';
export type { FsckReport } from './fsck.js';
export { listStores, pruneMissingStores, type StoreInfo } from './stores.js';
