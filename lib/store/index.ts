export { createDynamoStore, type DynamoStoreConfig } from './dynamo.js';
export { createWebhookStore, type WebhookStoreConfig, type WebhookTableStore } from './dynamo-webhooks.js';
export { InvalidItemError, StoreError, VersionConflictError } from './errors.js';
export { acceptedSk, eventSeq, rowKey, webhookSk } from './keys.js';
export type * from './types.js';
