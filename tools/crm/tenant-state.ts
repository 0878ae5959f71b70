import { CrmError } from './errors.js';
import type { CrmAnswer } from './http.js';
import type { ContextData } from './store.js';

/** The tenant states of `GET /api/state/{ctx}` (crm-rest-api.md); only Running serves the API. */
export const TENANT_STATES = [
  'Running',
  'Suspended',
  'OfflineMaintenance',
  'MigrationPending',
  'Deleted',
] as const;
export type TenantStateName = (typeof TENANT_STATES)[number];

/** A tenant's state and, once it moved, the host segment its API is served under (`/h2/{ctx}/api`). */
export interface TenantStatus {
  state: TenantStateName;
  host?: string;
}

const statusOf = (data: ContextData): TenantStatus => data.tenant ?? { state: 'Running' };

/** Where the tenant's API is now: `<origin>/<ctx>`, or `<origin>/<host>/<ctx>` once it moved. */
export function tenantEndpoint(data: ContextData, origin: string): string {
  const { host } = statusOf(data);
  return `${origin}${host ? `/${host}` : ''}/${data.name}`;
}

/** `GET /api/state/{ctx}`: the state, whether the API runs, and the endpoint (which changes on a move). */
export function tenantStateAnswer(data: ContextData, origin: string): CrmAnswer {
  const { state } = statusOf(data);
  const endpoint = tenantEndpoint(data, origin);
  return {
    status: 200,
    body: {
      ContextIdentifier: data.name,
      Endpoint: endpoint,
      State: state,
      IsRunning: state === 'Running',
      ValidUntil: new Date(Date.now() + 3600_000).toISOString(),
      Api: `${endpoint}/api`,
    },
  };
}

/**
 * The answer for an API call reaching the tenant through `host` (undefined: the original address)
 * when the tenant cannot serve it there: 421 at a host it moved away from, 404 once Deleted, 503 with
 * Retry-After while Suspended, in maintenance or migrating.
 */
export function tenantRefusal(data: ContextData, host: string | undefined): CrmAnswer | undefined {
  const status = statusOf(data);
  if (status.host !== host)
    return {
      status: 421,
      body: { Error: `${data.name} is not served at this host: ask /api/state/${data.name}` },
    };
  if (status.state === 'Deleted')
    return { status: 404, body: { Error: `the tenant ${data.name} is deleted` } };
  if (status.state !== 'Running')
    return {
      status: 503,
      body: { Error: `the tenant ${data.name} is ${status.state}` },
      headers: { 'retry-after': '60' },
    };
  return undefined;
}

/** Sets a tenant's state (control API); `move` gives it a new host, so its old address answers 421. */
export function setTenantStatus(data: ContextData, state: unknown, move: boolean): TenantStatus {
  const current = statusOf(data);
  if (state !== undefined && !TENANT_STATES.includes(state as TenantStateName))
    throw new CrmError(`state must be one of ${TENANT_STATES.join(', ')}`);
  const moves = Number(/^h(\d+)$/.exec(current.host ?? '')?.[1] ?? 1);
  data.tenant = {
    state: (state as TenantStateName | undefined) ?? current.state,
    ...(move ? { host: `h${moves + 1}` } : current.host ? { host: current.host } : {}),
  };
  return data.tenant;
}
