export { type Authorizer, createAuthorizer, credentialsCover, credentialsLookup } from './auth/index.js';
export { signSystemToken } from './auth/system-user.js';
export { type CrmLimits, DEFAULT_CRM_LIMITS } from './call.js';
export { type CrmClient, createCrmClient, type TenantState } from './client.js';
export { crmCredentials } from './credentials.js';
export { tenantEndpoints } from './endpoints.js';
export {
  CrmApiError,
  CrmAuthError,
  CrmPagingError,
  CrmRetryLater,
  isRefusal,
  type RetryLaterReason,
} from './errors.js';
export { type ArchiveRow, crmWindowTime, type Page } from './rows.js';
export { MAX_CRM_TEXT_CHARS } from './scrub.js';
export { CRM_TABLES, type CrmTable, crmTableOf, whyNotInCrm } from './tables.js';
export {
  decodeTyped,
  encodeTyped,
  numeralValue,
  plainTag,
  type TypedTag,
  typedTagOf,
} from './typed-values.js';
export type { WebhookFields } from './webhook-admin.js';
export { type CrmWebhook, type CrmWebhookState, WEBHOOK_STATES, type WebhookUsage } from './webhooks.js';
