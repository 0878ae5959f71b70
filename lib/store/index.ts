export { createDynamoStore, type DynamoStoreConfig } from './dynamo.js';
export { createWebhookStore, type WebhookStoreConfig, type WebhookTableStore } from './dynamo-webhooks.js';
export { InvalidItemError, StoreError, VersionConflictError } from './errors.js';
export { acceptedSk, ROW_SET_INDEX, rowKey, rowSetKey, webhookSk } from './keys.js';
export {
  createRecoveryStore,
  type ReconcileOutcome,
  type RecoveryStore,
  recoverySk,
  type WebhookRecovery,
} from './recovery.js';
export {
  createDynamoReplayLock,
  type DynamoReplayLockConfig,
  REPLAY_LEASE_MS,
  replayLockKey,
} from './replay-lock.js';
export {
  type BackfillCounts,
  backfillRowIndex,
  type RowIndexBackfillConfig,
} from './row-index-backfill.js';
export { createStoredRows, type StoredRows } from './row-set.js';
export type * from './types.js';
