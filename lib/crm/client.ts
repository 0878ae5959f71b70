import * as z from 'zod/mini';
import { CONTEXT_PLACEHOLDER, type CrmCredentials } from '../config/crm.js';
import { CONTEXT_PATTERN } from '../events/primitives.js';
import { okJson, parseAnswer } from './answer.js';
import { type Authorizer, createAuthorizer, credentialsLookup } from './auth/index.js';
import { type CallRequest, type CrmLimits, createCaller, DEFAULT_CRM_LIMITS } from './call.js';
import { isCrmApiHost } from './endpoints.js';
import { CrmApiError, CrmRetryLater } from './errors.js';
import { type CrmResponse, ExchangeError, exchange, jsonOf } from './http.js';
import { type AskKeyRange, type KeyPage, keyRange, pageAfterKey, wholeNumber } from './key-pages.js';
import { createTenantLimiter } from './limiter.js';
import { createSecretSet, remembering, scrubbing } from './scrub.js';
import type { CrmTable } from './tables.js';
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

/** A row of the archive: its primary key and its fields by database name, values as the CRM wrote them. */
export interface ArchiveRow {
  id: string;
  values: Record<string, unknown>;
}

/** One page of a listing; `continuation` (absent on the last page) resumes it, also in another run. */
export interface Page<T> {
  items: T[];
  continuation: string | undefined;
  /** The CRM's clock when it answered (its Date header), ms since the epoch. */
  crmTime: number;
  /** Paging by key: the key the next page starts after, absent on the last page. */
  nextKey?: number | undefined;
}

/** An archive page: its rows (checked one by one: a row that is no object is named) and where the next starts. */
const ArchivePageSchema = z.looseObject({
  'odata.nextLink': z.optional(z.unknown()),
  value: z.array(z.unknown()),
});
/** A REST entity's row: its properties by name, kept as the CRM wrote them. */
const RowSchema = z.record(z.string(), z.unknown());
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

/** `2026-11-27T12:05:00`: the CRM's UTC time without offset, to the second (rounded down: a wider window). */
export function crmWindowTime(date: Date): string {
  return date.toISOString().slice(0, 19);
}

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

  /** One archive page: the first from `query`, the next from a continuation this client gave. */
  const archivePage = async (context: string, query: Record<string, string>, continuation?: string) => {
    const first = new URL(`${base(context)}/archive/dynamic`);
    // A continuation (odata.nextLink, absolute or relative) may only lead to this tenant's archive.
    const url = continuation === undefined ? first : urlOf(continuation, first);
    if (url === null || `${url.origin}${url.pathname}`.toLowerCase() !== first.href.toLowerCase())
      throw new CrmApiError(`the continuation is not a page of ${context}'s archive: refused`, context);
    if (continuation === undefined)
      for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const { body, response } = await getJson(context, url);
    const what = `GET ${url.pathname}`;
    const page = parseAnswer(ArchivePageSchema, body, context, what, 'a page with a value array');
    if (page.value.some((row) => typeof row !== 'object' || row === null || Array.isArray(row)))
      throw new CrmApiError(`${what}: the answer's value holds a row that is no object`, context);
    const next = page['odata.nextLink'];
    return {
      rows: page.value as Array<Record<string, unknown>>,
      continuation: typeof next === 'string' ? next : undefined,
      crmTime: crmTimeOf(response),
    };
  };

  /**
   * The page of `table`'s rows (`select`ed, in `window` if given) after `afterKey`, its keys checked
   * rather than trusted (lib/crm/key-pages.ts); or, from a continuation this client gave, its page.
   */
  const keyPaged = async (
    context: string,
    table: CrmTable,
    query: { select: string[]; window?: string },
    afterKey: number | undefined,
    continuation: string | undefined,
  ): Promise<KeyPage> => {
    if (continuation !== undefined)
      return { ...(await archivePage(context, {}, continuation)), nextKey: undefined };
    const key = `${table.table}.${table.key}`;
    const ask: AskKeyRange = (after, upTo, top) => {
      const filter = [query.window, keyRange(key, after, upTo)].filter((part) => part !== undefined);
      return archivePage(context, {
        $select: query.select.join(','),
        ...(filter.length > 0 && { $filter: filter.map((part) => `(${part})`).join(' and ') }),
        $orderBy: key,
        $top: String(top),
      });
    };
    return pageAfterKey(ask, afterKey, limits.pageSize, { context, what: `the archive's ${table.table}` });
  };

  /**
   * One row by id through the REST entity (PascalCase properties): `deleted` on 404, `unchanged` on
   * 304 when `ifModifiedSince` is given.
   */
  const getRow = async (context: string, table: CrmTable, id: string | number, ifModifiedSince?: Date) => {
    if (!table.rest)
      throw new CrmApiError(`${table.table} has no REST entity: read it from the archive`, context);
    const url = new URL(`${base(context)}/${table.rest}/${encodeURIComponent(String(id))}`);
    const headers: Record<string, string> = ifModifiedSince
      ? { 'if-modified-since': ifModifiedSince.toUTCString() }
      : {};
    const response = await call(context, url, { headers });
    const crmTime = crmTimeOf(response);
    if (response.status === 404) return { status: 'deleted' as const, crmTime };
    if (response.status === 304) return { status: 'unchanged' as const, crmTime };
    const what = `GET ${url.pathname}`;
    const row = parseAnswer(RowSchema, okJson(response, context, what), context, what, 'a row');
    return { status: 'found' as const, row, crmTime };
  };

  return scrubbing(
    {
      /** `GET /api/state/{ctx}`: whether the tenant's API runs (states such as OfflineMaintenance do not). */
      tenantState: readState,

      /**
       * The rows of `table` created or updated after `since`, one page: `fields` are the FieldValues'
       * database names (the key, `updated` and `registered` are always selected). A row created and never
       * updated has `updated` at the minimum date, so `registered` is filtered too. Rows deleted meanwhile
       * are not listed: find them with `listIds` or `getRow`. With `afterKey` (and no continuation) the
       * page starts after that primary key: paging by key, a row deleted meanwhile shifts no later page
       * (a continuation pages by offset, `$skip`).
       */
      async listChanged(
        context: string,
        table: CrmTable,
        fields: readonly string[],
        since: Date,
        continuation?: string,
        afterKey?: number,
      ): Promise<Page<ArchiveRow>> {
        const t = table.table;
        const select = [...new Set([table.key, ...fields, 'updated', 'registered'])].map(
          (field) => `${t}.${field}`,
        );
        const at = crmWindowTime(since);
        const window = `${t}.updated afterTime '${at}' or ${t}.registered afterTime '${at}'`;
        const page = await keyPaged(context, table, { select, window }, afterKey, continuation);
        const items = page.rows.map((row) => archiveRow(row, t));
        return { items, continuation: page.continuation, nextKey: page.nextKey, crmTime: page.crmTime };
      },

      /**
       * The primary keys of every row of `table`, one page (to find the rows deleted since they were
       * stored); with `afterKey` (and no continuation) those after that key.
       */
      async listIds(
        context: string,
        table: CrmTable,
        continuation?: string,
        afterKey?: number,
      ): Promise<Page<string>> {
        const select = [`${table.table}.${table.key}`];
        const page = await keyPaged(context, table, { select }, afterKey, continuation);
        const items = page.rows.map((row) => String(row.PrimaryKey));
        return { items, continuation: page.continuation, nextKey: page.nextKey, crmTime: page.crmTime };
      },

      getRow,

      /**
       * Whether the row `id` of `table` is gone from the CRM, each candidate delete confirmed by one call:
       * its REST entity's 404 where it has one (crm-rest-api.md), else the archive's answer to
       * `$filter=<table>.<key> eq <id>` being empty. `crmTime` is that answer's.
       */
      async isDeleted(
        context: string,
        table: CrmTable,
        id: number,
      ): Promise<{ deleted: boolean; crmTime: number }> {
        if (table.rest !== undefined) {
          const answer = await getRow(context, table, id);
          return { deleted: answer.status === 'deleted', crmTime: answer.crmTime };
        }
        const field = `${table.table}.${table.key}`;
        const page = await archivePage(context, {
          $select: field,
          $filter: `${field} eq ${wholeNumber(id)}`,
        });
        return { deleted: page.rows.length === 0, crmTime: page.crmTime };
      },

      ...createWebhookApi({ base, getJson, scrub: secrets.scrub }),
      ...createWebhookAdmin({ base, call, okJson }),
    },
    secrets,
  );
}

export type CrmClient = ReturnType<typeof createCrmClient>;

/** The archive row with its fields by database name (the `table.` prefix dropped), values untouched. */
function archiveRow(row: Record<string, unknown>, table: string): ArchiveRow {
  const prefix = `${table}.`;
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row))
    if (name.startsWith(prefix)) values[name.slice(prefix.length)] = value;
  return { id: String(row.PrimaryKey), values };
}

function urlOf(text: string, base: URL): URL | null {
  try {
    return new URL(text, base);
  } catch {
    return null;
  }
}

function crmTimeOf(response: CrmResponse): number {
  const date = Date.parse(response.headers.get('date') ?? '');
  return Number.isFinite(date) ? date : Date.now();
}
