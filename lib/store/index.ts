export {
  createDynamoStore,
  createWebhookStore,
  type DynamoStoreConfig,
  type WebhookStoreConfig,
  type WebhookTableStore,
} from './dynamo.js';
export { InvalidItemError, StoreError, VersionConflictError } from './errors.js';
export { acceptedSk, eventSeq, rowKey, webhookSk } from './keys.js';
export type * from './types.js';
