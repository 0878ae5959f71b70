export { type Authorizer, createAuthorizer, credentialsLookup } from './auth/index.js';
export { signSystemToken } from './auth/system-user.js';
export { type CrmLimits, DEFAULT_CRM_LIMITS } from './call.js';
export {
  type ArchiveRow,
  type CrmClient,
  createCrmClient,
  crmWindowTime,
  type Page,
  type TenantState,
} from './client.js';
export { crmCredentials } from './credentials.js';
export { CrmApiError, CrmAuthError, CrmRetryLater, type RetryLaterReason } from './errors.js';
export { CRM_TABLES, type CrmTable, crmTableOf, whyNotInCrm } from './tables.js';
export { decodeTyped, encodeTyped, plainTag, type TypedTag, typedTagOf } from './typed-values.js';
export type { WebhookFields } from './webhook-admin.js';
export { type CrmWebhook, type CrmWebhookState, WEBHOOK_STATES, type WebhookUsage } from './webhooks.js';
