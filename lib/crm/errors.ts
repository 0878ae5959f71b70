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
export type RetryLaterReason = 'throttled' | 'unavailable' | 'budget' | 'moved';

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

/**
 * The CRM answered a listing that paging by primary key cannot follow without skipping rows or
 * never ending (keys out of the order asked, or not after the last key): retrying does not help.
 */
export class CrmPagingError extends CrmApiError {
  constructor(message: string, context: string) {
    super(message, context);
    this.name = 'CrmPagingError';
  }
}

/** Statuses that are no refusal: 401 (the credentials), 408 (a timeout) and 429 (throttled) pass. */
const NOT_REFUSALS = new Set([401, 408, 429]);

/**
 * Whether the CRM refused a call in a way retrying cannot fix: a 4xx other than 401, 408 and 429, a
 * 501 (a table or operator it does not have), or a listing paging cannot follow. A refusal of one
 * table is that table's alone; anything else (429, 5xx, no answer) is retried.
 */
export function isRefusal(error: unknown): error is CrmApiError {
  if (error instanceof CrmPagingError) return true;
  if (!(error instanceof CrmApiError) || error instanceof CrmRetryLater || error instanceof CrmAuthError)
    return false;
  const { status } = error;
  return (
    status === 501 || (status !== undefined && status >= 400 && status < 500 && !NOT_REFUSALS.has(status))
  );
}
