/**
 * A CRM API call that did not succeed; the message names the call, and whatever text of the CRM's it
 * quotes is scrubbed of credentials at the client's boundary (lib/crm/scrub.ts).
 */
export class CrmApiError extends Error {
  constructor(
    message: string,
    /** The tenant called. */
    readonly context: string,
    options?: { cause?: unknown; status?: number | undefined },
  ) {
    super(message, options);
    this.name = 'CrmApiError';
    this.status = options?.status;
  }

  /** The HTTP status the CRM answered, when it answered. */
  readonly status: number | undefined;
}

/** Why a tenant cannot be served now: none of these is a failure of the reconciliation. */
export type RetryLaterReason = 'throttled' | 'unavailable' | 'budget';

/**
 * The tenant cannot be served now (it throttles or answers 503 past the attempts allowed, or the
 * caller's time budget is spent): try again after `retryAfterMs`, and do not
 * count it as a failure. Whatever was fetched before it is still valid.
 */
export class CrmRetryLater extends CrmApiError {
  constructor(
    message: string,
    context: string,
    readonly reason: RetryLaterReason,
    readonly retryAfterMs: number,
    options?: { cause?: unknown; status?: number | undefined },
  ) {
    super(message, context, options);
    this.name = 'CrmRetryLater';
  }
}

/** The CRM refused the credentials of a tenant (after one fresh authentication for a ticket). */
export class CrmAuthError extends CrmApiError {
  constructor(message: string, context: string, options?: { cause?: unknown; status?: number | undefined }) {
    super(message, context, options);
    this.name = 'CrmAuthError';
  }
}
