import * as z from 'zod/mini';
import { CONTEXT_PLACEHOLDER, type CrmCredentials } from '../config/crm.js';
import { CONTEXT_PATTERN } from '../events/primitives.js';
import { okJson, parseAnswer } from './answer.js';
import { type Authorizer, createAuthorizer, credentialsLookup } from './auth/index.js';
import { type CallRequest, type CrmLimits, createCaller, DEFAULT_CRM_LIMITS } from './call.js';
import { isCrmApiHost } from './endpoints.js';
import { CrmApiError, CrmRetryLater } from './errors.js';
import { ExchangeError, exchange, jsonOf } from './http.js';
import { createTenantLimiter } from './limiter.js';
import { createRowsApi } from './rows.js';
import { createSecretSet, remembering, scrubbing } from './scrub.js';
import { createWebhookAdmin } from './webhook-admin.js';
import { createWebhookApi } from './webhooks.js';

export interface CrmClientOptions {
  /** CRM_API_URL: the API base with `{ContextIdentifier}` in it. */
  apiUrl: string;
  /** ContextIdentifier (or `*`) to credentials (CRM_CREDENTIALS or its SSM parameter). */
  credentials: Record<string, CrmCredentials>;
  fetch?: typeof fetch;
  limits?: Partial<CrmLimits>;
  /** Milliseconds the caller may still spend; unbounded by default. */
  timeLeftMs?: () => number;
  /**
   * A tenant's API base when it is not CRM_API_URL's (`https://sod3.../Cust1/api/v1`, from its state's
   * `Api`: the tenant moved); undefined for CRM_API_URL's.
   */
  apiBaseOf?: (context: string) => string | undefined;
  /**
   * Given, the client follows a tenant that moves (lib/crm/endpoints.ts, with `apiBaseOf`): every state
   * read (`tenantState`) of a running tenant hands on its `Api`, and a 421 (the host called is one the
   * tenant left) reads the state again and is a CrmRetryLater ('moved'): the next try calls the new host.
   */
  follow?: (context: string, api: string) => void;
  /** The current invocation's stop signal (the local runtime's, as it stops): aborts calls in flight and their waits. */
  signal?: () => AbortSignal | undefined;
  /** Replaces the credential step (OAuth client credentials, later). */
  authorizer?: Authorizer;
  random?: () => number;
}

/** A tenant's API state: running, or not (maintenance, suspended): then retry later, it is no failure. */
export type TenantState =
  | { running: true; state: string; endpoint: string | undefined }
  | { running: false; state: string; retryAfterMs: number };

/** `GET /api/state/{ctx}`: the fields read of `{ContextIdentifier, Endpoint, State, IsRunning, ValidUntil, Api}`. */
const TenantStateSchema = z.looseObject({
  State: z.optional(z.nullable(z.string())),
  IsRunning: z.optional(z.nullable(z.boolean())),
  Api: z.optional(z.nullable(z.string())),
});

/** How long a tenant whose API is not running is left alone before it is asked again. */
const NOT_RUNNING_RETRY_MS = 60_000;
/** How long after a 421 the call is tried again at the tenant's new host: its state may lag the move a little. */
const MOVED_RETRY_MS = 5_000;

/**
 * The receiver's side of the CRM's REST API (crm-rest-api.md): a tenant's state, the rows changed
 * since a time and the ids of a table through the dynamic archive provider (paged, resumable), one
 * row by id, and the webhooks. Every call is bounded per tenant, retried as the CRM asks, and stops
 * at the time budget with CrmRetryLater.
 *
 * Made once per process (module level in a Lambda), so that tickets and limits outlive an invocation;
 * `timeLeftMs` reads the current invocation's remaining time.
 *
 * @example
 * let invocation: Context | undefined; // set by the handler
 * const crm = createCrmClient({ apiUrl, credentials, timeLeftMs: () => (invocation?.getRemainingTimeInMillis() ?? 0) - 5000 });
 * const page = await crm.listChanged('Cust1', CRM_TABLES.contact!, ['name', 'department'], openedAt, continuation);
 */
export function createCrmClient(options: CrmClientOptions) {
  const limits = { ...DEFAULT_CRM_LIMITS, ...options.limits };
  const send = options.fetch ?? fetch;
  const timeLeftMs = options.timeLeftMs ?? (() => Number.POSITIVE_INFINITY);
  const origin = new URL(options.apiUrl.replace(CONTEXT_PLACEHOLDER, 'x')).origin;
  const base = (context: string) => {
    if (!CONTEXT_PATTERN.test(context))
      throw new CrmApiError(
        `${JSON.stringify(context)} is not a ContextIdentifier (letters, digits, _ and -)`,
        context,
      );
    return options.apiBaseOf?.(context) ?? options.apiUrl.replace(CONTEXT_PLACEHOLDER, context);
  };
  // Every credential known or seen in use, removed from whatever the client throws or hands on.
  const secrets = createSecretSet(options.credentials);
  const authorizing =
    options.authorizer ??
    createAuthorizer({
      credentialsFor: credentialsLookup(options.credentials),
      loginUrl: new URL('/Login/api/PartnerSystemUser/Authenticate', origin),
      async postJson(url, body) {
        const what = `POST ${url.pathname}`;
        const signed = (body as { SignedSystemToken?: unknown }).SignedSystemToken;
        if (typeof signed === 'string') secrets.add(signed);
        const response = await exchange(url, {
          method: 'POST',
          headers: { accept: 'application/json', 'content-type': 'application/json' },
          body: JSON.stringify(body),
          timeoutMs: Math.max(1, Math.min(limits.timeoutMs, timeLeftMs())),
          maxBodyBytes: limits.maxBodyBytes,
          fetch: send,
          signal: options.signal?.(),
        });
        if (response.status !== 200) throw new ExchangeError(`${what}: HTTP ${response.status}`);
        return jsonOf(response, what);
      },
    });
  const authorizer = remembering(authorizing, secrets);
  const caller = createCaller({
    fetch: send,
    limits,
    limiter: createTenantLimiter(limits),
    authorizer,
    timeLeftMs,
    signal: options.signal,
    random: options.random ?? Math.random,
  });

  /** `GET /api/state/{ctx}` (on the CRM's origin, never a tenant's host), its `Api` followed when running. */
  const readState = async (context: string): Promise<TenantState> => {
    base(context);
    const url = new URL(`/api/state/${context}`, origin);
    const what = `GET ${url.pathname}`;
    const body = okJson(await caller(context, url, { authorize: false }), context, what);
    const { State, IsRunning, Api } = parseAnswer(TenantStateSchema, body, context, what, 'a state');
    const state = State ?? 'Unknown';
    if (IsRunning !== true) return { running: false, state, retryAfterMs: NOT_RUNNING_RETRY_MS };
    const endpoint = Api ?? undefined;
    // The endpoint is called with the tenant's credentials (here, or by a tenant command that follows it).
    if (endpoint !== undefined && !isCrmApiHost(options.apiUrl, endpoint))
      throw new CrmApiError(`${what}: its Api is not an https host of CRM_API_URL's domain`, context);
    if (endpoint !== undefined) options.follow?.(context, endpoint);
    return { running: true, state, endpoint };
  };
  const call: typeof caller = async (context, url, request) => {
    const response = await caller(context, url, request);
    if (response.status !== 421 || options.follow === undefined) return response;
    const state = await readState(context);
    throw new CrmRetryLater(
      `${request?.method ?? 'GET'} ${url.pathname}: HTTP 421, ${context} is no longer served there (its state: ${state.state}); the next try calls where its state says`,
      context,
      'moved',
      MOVED_RETRY_MS,
      { status: 421 },
    );
  };

  /** A call whose answer must be 200 JSON; anything else is a CrmApiError naming the call. */
  const getJson = async (context: string, url: URL, request?: CallRequest) => {
    const response = await call(context, url, request);
    return { body: okJson(response, context, `${request?.method ?? 'GET'} ${url.pathname}`), response };
  };

  return scrubbing(
    {
      /** `GET /api/state/{ctx}`: whether the tenant's API runs (states such as OfflineMaintenance do not). */
      tenantState: readState,
      ...createRowsApi({ base, call, getJson, pageSize: limits.pageSize }),
      ...createWebhookApi({ base, getJson, scrub: secrets.scrub }),
      ...createWebhookAdmin({ base, call, okJson }),
    },
    secrets,
  );
}

export type CrmClient = ReturnType<typeof createCrmClient>;
