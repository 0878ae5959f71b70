import * as z from 'zod/mini';
import { okJson, parseAnswer } from './answer.js';
import type { CallRequest } from './call.js';
import { CrmApiError } from './errors.js';
import type { CrmResponse } from './http.js';
import { type AskKeyRange, type KeyPage, keyRange, pageAfterKey, wholeNumber } from './key-pages.js';
import type { CrmTable } from './tables.js';

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

/** `2026-11-27T12:05:00`: the CRM's UTC time without offset, to the second (rounded down: a wider window). */
export function crmWindowTime(date: Date): string {
  return date.toISOString().slice(0, 19);
}

interface Deps {
  base: (context: string) => string;
  call: (context: string, url: URL, request?: CallRequest) => Promise<CrmResponse>;
  getJson: (
    context: string,
    url: URL,
    request?: CallRequest,
  ) => Promise<{ body: unknown; response: CrmResponse }>;
  /** Rows per page of the archive (the client's limits). */
  pageSize: number;
}

/**
 * A tenant's rows: those changed since a time and the ids of a table through the dynamic archive
 * provider (paged by key, resumable), one row by id through its REST entity, and whether a row is gone.
 */
export function createRowsApi({ base, call, getJson, pageSize }: Deps) {
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
    return pageAfterKey(ask, afterKey, pageSize, { context, what: `the archive's ${table.table}` });
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

  return {
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
  };
}

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
