/**
 * git-ckpt as a library: the `Workspace` class and what its methods return,
 * the errors they reject with, and the pure functions a harness may want on
 * their own (addresses, retention, restore planning). Everything else in lib/
 * is internal and may change. docs/library.md shows each method.
 *
 *   import { Workspace } from 'git-ckpt';
 *   const ws = Workspace.open(process.cwd());
 *   const { created, id } = await ws.snapshot({ kind: 'post', tool: 'Bash', session });
 */
export {
  Workspace,
  type OpenOptions,
  type SnapshotRequest,
  type DiffFormat,
  type ListOptions,
  type ListResult,
  type StatusReport,
} from './workspace.js';
export type { SnapshotResult, SnapshotProgress } from './capture/snapshot.js';
export type {
  OperationReport,
  RecoveryReport,
  RestoreOptions,
  RevertOptions,
  UndoOptions,
  OperationOptions,
  InterruptedOperation,
} from './restore/restore.js';
export type { RevertSelection } from './model/address.js';
export type { GcReport, GcOptions } from './retain/gc.js';
export type { ForgetReport, ForgetOptions } from './retain/forget.js';
export type { ForgetInput, ForgetRequest, ForgetSelection, DropReason } from './retain/forget-plan.js';
export type { FsckReport, RebuildReport } from './retain/fsck.js';
export type {
  ShareInitOptions,
  ShareInitReport,
  PushOptions,
  PushReport,
  PushedSession,
  SessionExport,
  FetchOptions,
  FetchReport,
  RemoteSession,
  BundleCreateOptions,
  BundleReport,
  BundleVerifyReport,
  UnpushReport,
} from './share/share.js';
export type {
  CheckpointRecord,
  CheckpointKind,
  CheckpointOrigin,
  UserKind,
  SkippedPath,
  ChangedPath,
  OperationInfo,
} from './model/ledger.js';
export { USER_KINDS } from './model/ledger.js';
export { CkptError, isCkptError, type ErrorCode } from './model/errors.js';
export { parseAddress, resolveAddress, resolveInView, revertSelection, type Address, type LedgerView } from './model/address.js';
export { planRetention, retentionPolicy, type RetentionPolicy, type RetentionPlan } from './model/retention.js';
export { reconcile, restoreWants, revertWants, staleUndoPaths, type Plan, type PlannedFile } from './restore/restore-plan.js';
export type { TreeEntry } from './model/tree.js';
