import { setTimeout as sleep } from 'node:timers/promises';
import { type Backoff, fullJitterMs } from '../backoff.js';
import { CRM_LIMIT_DEFAULTS } from '../config/crm.js';
import type { Authorizer } from './auth/index.js';
import { CrmApiError, CrmAuthError, CrmRetryLater } from './errors.js';
import { type CrmResponse, ExchangeError, exchange, retryAfterMs } from './http.js';
import type { TenantLimiter } from './limiter.js';

/** How hard the client may press one tenant, and how long it waits. */
export interface CrmLimits {
  /** Calls in flight at once per tenant (default: CRM_LIMIT_DEFAULTS's). */
  inFlight: number;
  /** Calls started per second per tenant (default: CRM_LIMIT_DEFAULTS's). */
  perSecond: number;
  /** How long one call may take, body included, in ms (default: CRM_LIMIT_DEFAULTS's). */
  timeoutMs: number;
  /** The largest answer read (default 16 MiB). */
  maxBodyBytes: number;
  /** Attempts of one call through 429, 502-504 and no answer (default 5). */
  maxAttempts: number;
  /** Rows per page of the archive (`$top`, default 200). */
  pageSize: number;
}

export const DEFAULT_CRM_LIMITS: CrmLimits = {
  inFlight: CRM_LIMIT_DEFAULTS.maxInFlight,
  perSecond: CRM_LIMIT_DEFAULTS.maxCallsPerSecond,
  timeoutMs: CRM_LIMIT_DEFAULTS.timeoutMs,
  maxBodyBytes: 16 * 1024 * 1024,
  maxAttempts: 5,
  pageSize: 200,
};

/** Answers worth another attempt after a wait; 429 says the tenant throttles, the others that it is down. */
const RETRYABLE = new Set([429, 502, 503, 504]);
/** A call needs at least this long to be worth starting. */
const MIN_CALL_MS = 250;
/** The waits between attempts (full jitter): up to 250 ms after the first, doubling, at most 8 s. */
const BACKOFF: Backoff = { baseMs: 250, capMs: 8_000 };
/**
 * The longest Retry-After honoured: 15 minutes. A tenant that asks for longer (`Retry-After: 315360000`)
 * is asked again then; a run that cannot finish gives up at its bounds (lib/reconcile/run/bounds.ts).
 */
export const MAX_RETRY_AFTER_MS = 15 * 60_000;

const attempts = (count: number) => `${count} attempt${count === 1 ? '' : 's'}`;

export interface CallerOptions {
  fetch: typeof fetch;
  limits: CrmLimits;
  limiter: TenantLimiter;
  authorizer: Authorizer;
  /** Milliseconds the caller may still spend (a Lambda's remaining time less a margin). */
  timeLeftMs: () => number;
  /** The current invocation's stop signal, if any: aborts the call in flight and its waits. */
  signal?: (() => AbortSignal | undefined) | undefined;
  random: () => number;
}

export interface CallRequest {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Whether the call carries the tenant's Authorization (not for the public state endpoint). */
  authorize?: boolean;
}

/**
 * One API call of a tenant through its limits: retried after `Retry-After` plus a jittered backoff on
 * 429/502/503/504 and on no answer, authenticated again once on 401 (a ticket that expired), and
 * never started or waited for beyond the time budget (CrmRetryLater 'budget'). A tenant that still
 * throttles or is down after the attempts allowed is CrmRetryLater too: try again later, not a failure.
 */
export function createCaller(options: CallerOptions) {
  const { limits, timeLeftMs } = options;
  const spent = (what: string, context: string) =>
    new CrmRetryLater(`${what}: the time budget is spent, continue in another run`, context, 'budget', 0);
  const stopped = (what: string, context: string) =>
    new CrmRetryLater(
      `${what}: stopped (the runtime is stopping), continue in another run`,
      context,
      'budget',
      0,
    );

  return async function call(context: string, url: URL, request: CallRequest = {}): Promise<CrmResponse> {
    const method = request.method ?? 'GET';
    const what = `${method} ${url.pathname}`;
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    let renewed = false;
    const signal = options.signal?.();
    // A wait for a retry ends early when the invocation stops (then the loop says so).
    const wait = (ms: number) => sleep(ms, undefined, { signal }).catch(() => undefined);
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw stopped(what, context);
      const left = timeLeftMs();
      if (left < MIN_CALL_MS) throw spent(what, context);
      let response: CrmResponse;
      let auth: Record<string, string> = {};
      try {
        if (request.authorize !== false) auth = await options.authorizer.headers(context);
        response = await options.limiter.run(context, () =>
          exchange(url, {
            method,
            headers: {
              accept: 'application/json',
              ...(body !== undefined && { 'content-type': 'application/json' }),
              ...request.headers,
              ...auth,
            },
            body,
            timeoutMs: Math.max(1, Math.min(limits.timeoutMs, timeLeftMs())),
            maxBodyBytes: limits.maxBodyBytes,
            fetch: options.fetch,
            signal,
          }),
        );
      } catch (error) {
        if (!(error instanceof ExchangeError)) throw error;
        if (signal?.aborted) throw stopped(what, context);
        if (attempt >= limits.maxAttempts)
          throw new CrmApiError(`${error.message} (${attempts(attempt)})`, context, { cause: error });
        const backoff = fullJitterMs(attempt, BACKOFF, options.random);
        if (backoff > timeLeftMs() - MIN_CALL_MS) throw spent(what, context);
        await wait(backoff);
        continue;
      }
      if (response.status === 401 && request.authorize !== false) {
        if (!renewed && options.authorizer.renew(context, auth)) {
          renewed = true;
          continue;
        }
        throw new CrmAuthError(`${what}: the CRM refused the credentials of ${context} (401)`, context, {
          status: 401,
        });
      }
      if (RETRYABLE.has(response.status)) {
        const after =
          Math.min(MAX_RETRY_AFTER_MS, retryAfterMs(response.headers.get('retry-after')) ?? 0) +
          fullJitterMs(attempt, BACKOFF, options.random);
        const reason = response.status === 429 ? 'throttled' : 'unavailable';
        if (attempt >= limits.maxAttempts || after > timeLeftMs() - MIN_CALL_MS)
          throw new CrmRetryLater(
            `${what}: HTTP ${response.status} after ${attempts(attempt)}, retry in ${Math.ceil(after / 1000)} s`,
            context,
            reason,
            after,
            { status: response.status },
          );
        await wait(after);
        continue;
      }
      return response;
    }
  };
}

export type CrmCaller = ReturnType<typeof createCaller>;
