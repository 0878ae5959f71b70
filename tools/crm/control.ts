import type { CallCounter } from './calls.js';
import { parseChange } from './changes.js';
import type { CrmCore } from './crm.js';
import { CrmError } from './errors.js';
import type { FaultGate, Faults } from './faults.js';
import { type CrmAnswer, type CrmRequest, notImplemented, objectBody, ok } from './http.js';
import { tableOf } from './tables.js';
import { setTenantStatus } from './tenant-state.js';
import { publicWebhook, type WebhookState } from './webhooks.js';

/**
 * The simulator's own control API (`/sim/...`, no CRM authentication; loopback only), what the
 * command line drives: changes, rows, webhook states, faults and a status with the counters.
 */
export async function controlApi(
  core: CrmCore,
  faults: FaultGate,
  request: CrmRequest,
  calls: CallCounter,
): Promise<CrmAnswer> {
  const [, context, resource, id, action] = request.path.split('/').filter(Boolean);
  const method = request.method;
  if (context === 'status' && method === 'GET') return ok(status(core, faults.current, calls));
  if (context === 'faults' && method === 'PUT') {
    const body = objectBody(request.body, 'rateLimitPerSecond, unavailableForMs, slowMs');
    const number = (name: string) => {
      const value = body[name];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'number' || value < 0) throw new CrmError(`${name} must be a number >= 0`);
      return value;
    };
    const unavailable = number('unavailableForMs');
    const next: Faults = {
      rateLimitPerSecond: number('rateLimitPerSecond'),
      unavailableUntil: unavailable ? Date.now() + unavailable : undefined,
      slowMs: number('slowMs'),
    };
    faults.set(next);
    return ok(faults.current);
  }
  if (context === undefined) return notImplemented(method, request.path);
  if (resource === 'changes' && method === 'POST' && id === undefined) {
    const body = objectBody(request.body, '{"op": "change", "table": "contact", "id": 42, "fields": {...}}');
    const associateId = typeof body.associateId === 'number' ? body.associateId : undefined;
    const applied = core.change(context, parseChange(body), associateId);
    return ok({
      table: applied.table,
      id: applied.id,
      row: applied.row ?? null,
      event: applied.event?.name ?? null,
      webhooks: applied.webhooks,
    });
  }
  if (resource === 'rows' && method === 'GET' && id !== undefined) {
    const rows = core.store.context(context).rows[tableOf(id).name] ?? {};
    if (action === undefined) return ok(rows);
    const row = rows[action];
    return row === undefined ? { status: 404, body: { Error: `no ${id} ${action}` } } : ok(row);
  }
  if (resource === 'tenant' && method === 'PUT' && id === undefined) {
    const body = objectBody(request.body, '{"state": "Suspended", "move": true}');
    const tenant = setTenantStatus(core.store.context(context), body.state, body.move === true);
    core.store.save(context);
    return ok(tenant);
  }
  if (resource === 'webhooks' && method === 'POST' && id === undefined) {
    const body = objectBody(request.body, 'name, events, targetUrl, secret, headers, properties');
    return ok(publicWebhook(await core.register(context, body as never)));
  }
  if (resource === 'webhooks' && method === 'PUT' && id !== undefined && action === 'state') {
    const state = objectBody(request.body, '{"state": "Active"|"Stopped"}').state as WebhookState;
    if (state !== 'Active' && state !== 'Stopped') throw new CrmError('state must be Active or Stopped');
    return ok(publicWebhook(await core.setState(context, Number(id), state)));
  }
  return notImplemented(method, request.path);
}

/** Every context's webhooks with their counters, its discarded events and the API calls it was served. */
function status(core: CrmCore, faults: Faults, calls: CallCounter) {
  return {
    faults,
    contexts: Object.fromEntries(
      core.store.names().map((name) => {
        const data = core.store.context(name);
        const rows = Object.fromEntries(
          Object.entries(data.rows).map(([table, byId]) => [table, Object.keys(byId).length]),
        );
        const webhooks = data.webhooks.map(publicWebhook);
        return [name, { rows, discarded: data.discarded, webhooks, apiCalls: calls.of(name) }];
      }),
    ),
  };
}
