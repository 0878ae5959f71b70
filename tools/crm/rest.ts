import { type ArchiveRow, dynamicArchive } from './archive.js';
import type { CrmCore } from './crm.js';
import { type CrmAnswer, type CrmRequest, notImplemented, ok } from './http.js';
import { NEVER, type Row, TABLES, type Table } from './tables.js';
import { webhookApi } from './webhook-api.js';
import { usageRow } from './webhooks.js';

const REST_TABLES = new Map(
  [...TABLES.values()].filter((table) => table.rest).map((table) => [table.rest!.toLowerCase(), table]),
);

/**
 * The tenant's REST API (`/{context}/api/v1/...`) from the same rows and webhooks: one row by id
 * (PascalCase, `If-Modified-Since` → 304, 404 once deleted), the dynamic archive provider, and the
 * Webhook resource (tools/crm/webhook-api.ts). Anything else: 501.
 */
export async function restApi(
  core: CrmCore,
  context: string,
  path: string,
  request: CrmRequest,
): Promise<CrmAnswer> {
  const data = core.store.context(context);
  const parts = path.split('/').filter(Boolean);
  const [resource = '', id, sub] = parts;
  const method = request.method;
  if (
    method === 'GET' &&
    resource.toLowerCase() === 'archive' &&
    id?.toLowerCase() === 'dynamic' &&
    sub === undefined
  )
    return dynamicArchive(
      request.query,
      (table) => archiveRows(core, context, table),
      `${request.origin}${request.path}`,
    );
  if (resource.toLowerCase() === 'webhook') return webhookApi(core, context, method, parts.slice(1), request);
  const table = REST_TABLES.get(resource.toLowerCase());
  if (table && method === 'GET' && id !== undefined && sub === undefined) {
    const row = data.rows[table.name]?.[Number(id)];
    if (!/^\d+$/.test(id) || row === undefined)
      return { status: 404, body: { Error: `no ${table.rest} ${id}` } };
    const changed = lastModified(row);
    const since = Date.parse(String(request.headers['if-modified-since'] ?? ''));
    const headers = { 'last-modified': new Date(changed).toUTCString() };
    // HTTP dates have whole seconds: unchanged when the row's time is within the second given.
    if (Number.isFinite(since) && Math.floor(changed / 1000) * 1000 <= since) return { status: 304, headers };
    return ok(entityView(table, row), headers);
  }
  return notImplemented(method, request.path);
}

/** The rows the dynamic provider lists for `table`: the CRM's tables, or the webhooks' usage counters. */
function archiveRows(core: CrmCore, context: string, table: string): ArchiveRow[] | undefined {
  const data = core.store.context(context);
  if (table === 'webhook_usage')
    return data.webhooks.map((webhook) => ({ table, id: webhook.id, fields: usageRow(webhook) }));
  if (!TABLES.has(table)) return undefined;
  return Object.entries(data.rows[table] ?? {}).map(([id, fields]) => ({ table, id: Number(id), fields }));
}

/** When a row last changed: `updated`, or `registered` for a row never updated (ms since the epoch). */
function lastModified(row: Row): number {
  const when = row.updated === NEVER ? row.registered : row.updated;
  return Date.parse(`${String(when)}Z`);
}

/** A row as the REST entity shows it: PascalCase properties, `<Entity>Id`, `UpdatedDate`, `CreatedDate`. */
export function entityView(table: Table, row: Row): Record<string, unknown> {
  const named: Record<string, string> = {
    [table.key]: `${table.rest}Id`,
    updated: 'UpdatedDate',
    registered: 'CreatedDate',
  };
  return Object.fromEntries(
    Object.entries(row).map(([field, value]) => [
      named[field] ?? field.replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase()),
      value,
    ]),
  );
}
