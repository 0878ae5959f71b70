import { type ArchiveRow, dynamicArchive } from './archive.js';
import type { CrmCore } from './crm.js';
import { CrmError } from './errors.js';
import { type CrmAnswer, type CrmRequest, notImplemented, objectBody, ok } from './http.js';
import { NEVER, type Row, TABLES, type Table } from './tables.js';
import { usageRow, type WebhookState, webhookResource } from './webhooks.js';

const STATES: readonly WebhookState[] = ['Active', 'Stopped', 'TooManyErrors'];
const REST_TABLES = new Map(
  [...TABLES.values()].filter((table) => table.rest).map((table) => [table.rest!.toLowerCase(), table]),
);

/**
 * The tenant's REST API (`/{context}/api/v1/...`) from the same rows and webhooks: one row by id
 * (PascalCase, `If-Modified-Since` → 304, 404 once deleted), the dynamic archive provider, and the
 * Webhook resource (list with statusFilter, get, LastError, POST, PATCH of State). Anything else: 501.
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

async function webhookApi(
  core: CrmCore,
  context: string,
  method: string,
  parts: string[],
  request: CrmRequest,
) {
  const data = core.store.context(context);
  const [id, sub] = parts;
  if (id === undefined) {
    if (method === 'GET') {
      const filter = request.query.get('statusFilter');
      if (filter !== null && !STATES.includes(filter as WebhookState))
        throw new CrmError(`statusFilter must be one of ${STATES.join(', ')}`);
      return ok(
        data.webhooks.filter((hook) => filter === null || hook.state === filter).map(webhookResource),
      );
    }
    if (method === 'POST') {
      const body = objectBody(request.body, 'Name, Events, TargetUrl, Secret, Headers, Properties');
      const webhook = await core.register(
        context,
        {
          name: String(body.Name ?? ''),
          events: Array.isArray(body.Events) ? body.Events.map(String) : [],
          targetUrl: String(body.TargetUrl ?? ''),
          secret: typeof body.Secret === 'string' ? body.Secret : undefined,
          headers: (body.Headers ?? {}) as Record<string, string>,
          properties: (body.Properties ?? {}) as Record<string, unknown>,
        },
        true,
      );
      return { status: 201, body: webhookResource(webhook) };
    }
  } else if (/^\d+$/.test(id)) {
    const webhook = core.webhook(context, Number(id));
    if (method === 'GET' && sub === undefined) return ok(webhookResource(webhook));
    if (method === 'GET' && sub === 'LastError') return ok(webhook.lastError);
    if (method === 'PATCH' && sub === undefined) {
      const state = patchedState(request.body);
      return ok(webhookResource(await core.setState(context, webhook.id, state)));
    }
  }
  return notImplemented(method, request.path);
}

/** The State a PATCH sets: a JSON merge patch `{"State": ...}` or a JSON Patch `replace /State`. */
function patchedState(body: unknown): WebhookState {
  const operations = Array.isArray(body) ? body : undefined;
  const fields = operations
    ? Object.fromEntries(
        operations.map((operation: { op?: string; path?: string; value?: unknown }) => {
          if (operation.op !== 'replace' || typeof operation.path !== 'string')
            throw new CrmError('a JSON Patch of a webhook must be replace operations');
          return [operation.path.replace(/^\//, ''), operation.value];
        }),
      )
    : objectBody(body, '{"State": "Active"} or [{"op":"replace","path":"/State","value":"Active"}]');
  const others = Object.keys(fields).filter((field) => field !== 'State');
  if (others.length > 0)
    throw new CrmError(`PATCH of ${others.join(', ')} is not implemented by the simulator: State only`, 501);
  if (!STATES.includes(fields.State as WebhookState) || fields.State === 'TooManyErrors')
    throw new CrmError('State must be Active or Stopped');
  return fields.State as WebhookState;
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
