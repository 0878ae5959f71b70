/**
 * Every request the page makes, in one place: this list is the interface a server must answer to
 * serve the page (the local admin API does; an AWS-backed server can answer the same paths).
 *
 * GET  /source                   where the data comes from (local runtime or a deployed stage), the webhook states' names
 * GET  /entities                 the entities a row can have: the catalogue's fixed ones, the dynamic forms
 * GET  /webhooks                 every webhook, with its state transitions
 * GET  /gaps                     gap windows of every webhook
 * GET  /queues                   per queue: visible, inFlight, delayed, dlq
 * GET  /outcomes                 events per minute by outcome, last hour
 * GET  /deliveries?after=N       the ingest's answers after entry N (live list; empty on AWS)
 * GET  /rows/{c}/{e}/{pk}        a row; /events its history
 * GET  /events/{EventId}         where an event went
 * GET  /parked                   parked deliveries with their reason (on AWS a receive: asked for)
 * GET  /subscriptions            per subscription: pattern, target, counts, deliveries, failures, DLQ
 * POST /queues/{key}/redrive     moves a DLQ back (carries the page token)
 * POST /parked/replay?event=&max= decides parked deliveries again, sends what routes (carries the token)
 * POST /reconcile?context=&from=&to=&webhookId=[&entities=&full=&maxDeletes=] queues a reconcile of a gap's
 *                                window, or of an entity whose deletes were held (carries the token)
 * GET  /tenants                  each tenant: status, state in the CRM, webhooks, secret's age (local runtime)
 * POST /tenants?context=&events= onboards a tenant; POST /tenants/{c}/rotate-secret; DELETE /tenants/{c} (the token)
 */
const token = document.querySelector('meta[name="dashboard-token"]')?.getAttribute('content') ?? '';
const enc = encodeURIComponent;

/** An answer other than 2xx, with the server's reason. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

async function call(method, path) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-dashboard-token'] = token;
  const answer = await fetch(path, { method, headers });
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new ApiError(answer.status, body.error ?? body.detail ?? `${answer.status}`);
  return body;
}

export const api = {
  source: () => call('GET', '/source'),
  entities: () => call('GET', '/entities'),
  webhooks: () => call('GET', '/webhooks'),
  gaps: () => call('GET', '/gaps'),
  queues: () => call('GET', '/queues'),
  outcomes: () => call('GET', '/outcomes'),
  deliveries: (after) => call('GET', `/deliveries?after=${enc(after)}`),
  row: (context, entity, key) => call('GET', `/rows/${enc(context)}/${enc(entity)}/${enc(key)}`),
  rowEvents: (context, entity, key) => call('GET', `/rows/${enc(context)}/${enc(entity)}/${enc(key)}/events`),
  findEvent: (eventId) => call('GET', `/events/${enc(eventId)}`),
  parked: () => call('GET', '/parked'),
  subscriptions: () => call('GET', '/subscriptions'),
  redrive: (queue) => call('POST', `/queues/${enc(queue)}/redrive`),
  replayParked: ({ event, max }) => {
    const query = new URLSearchParams(Object.entries({ event, max }).filter(([, value]) => value));
    return call('POST', `/parked/replay${query.size > 0 ? `?${query}` : ''}`);
  },
  tenants: () => call('GET', '/tenants'),
  onboard: (context, events) =>
    call('POST', `/tenants?${new URLSearchParams({ context, ...(events && { events }) })}`),
  rotateSecret: (context) => call('POST', `/tenants/${enc(context)}/rotate-secret`),
  offboard: (context) => call('DELETE', `/tenants/${enc(context)}`),
  reconcile: (params) => {
    const query = new URLSearchParams(
      Object.entries(params).filter(([, value]) => value !== undefined && value !== ''),
    );
    return call('POST', `/reconcile?${query}`);
  },
};
