import type { Server } from 'node:http';
import { type AdminRoute, createRouteServer, HttpError } from '../../dashboard/route-server.js';
import { sourceRoutes } from '../../dashboard/routes.js';
import type { Dashboard } from '../../dashboard/server.js';
import type { DashboardSource } from '../../dashboard/source.js';
import { tenantRoutes } from '../../dashboard/tenant-routes.js';
import { toMessageView } from '../../dashboard/views.js';
import type { TenantService } from '../../lib/tenants/service.js';
import type { LocalQueue } from '../emulators/resources.js';
import type { StoredMessage } from '../emulators/sqs-message.js';
import { queueByName } from './dashboard-source.js';

export interface AdminApiDeps {
  /** Rows, webhooks, queues, parked deliveries, subscriptions, redrive and replay: what the dashboard uses too. */
  source: DashboardSource;
  queues: readonly LocalQueue[];
  /** Reads a queue's messages without receiving them (see SqsEmulator.peek). */
  peek(queueName: string, limit?: number): StoredMessage[];
  /** True once every component is up; /health answers 503 before. */
  isReady(): boolean;
  /** Served at GET /info: endpoints, queue and table names (and, locally, the CPU the process has used). */
  info?: () => Record<string, unknown>;
  /** The dashboard page at `/` and the token a browser's POST must carry. */
  dashboard?: Dashboard;
  /** The tenant commands (`/tenants`); absent or off, their routes answer 409 saying why. */
  tenants?: { service: TenantService | undefined; off: string };
  /** Where a request that could not be answered is logged; default stderr. */
  log?: (line: string) => void;
}

/**
 * The local admin API (JSON): rows, their history, webhooks, gaps, queue depths, parked deliveries,
 * dead-letter contents and redrive, and the local bus's subscriptions. Meant to be bound to 127.0.0.1 only; requests that name another
 * host or come from a web page of another origin are refused (see `guardPort` in port-guard.js).
 */
export function createAdminServer(deps: AdminApiDeps): Server {
  return createRouteServer({
    name: 'admin',
    routes: adminRoutes(deps),
    ...(deps.dashboard && { intercept: deps.dashboard.intercept }),
    ...(deps.log && { log: deps.log }),
  });
}

/** The admin API's routes (the README's table lists each); `GET /` is the dashboard's page besides them. */
export function adminRoutes(deps: AdminApiDeps): AdminRoute[] {
  return [
    {
      method: 'GET',
      pattern: /^\/health$/,
      handle: async () => {
        if (!deps.isReady()) throw new HttpError(503, 'starting');
        return { status: 'ok' };
      },
    },
    { method: 'GET', pattern: /^\/info$/, handle: async () => deps.info?.() ?? {} },
    {
      method: 'GET',
      pattern: /^\/queues\/([^/]+)\/dlq$/,
      handle: async ([name], query) =>
        deps.peek(queueByName(deps.queues, name!).dlq.name, limit(query)).map(toMessageView),
    },
    {
      method: 'GET',
      pattern: /^\/queues\/([^/]+)\/messages$/,
      handle: async ([name], query) =>
        deps.peek(queueByName(deps.queues, name!).name, limit(query)).map(toMessageView),
    },
    ...sourceRoutes(deps.source),
    ...tenantRoutes(deps.tenants?.service, deps.tenants?.off ?? 'no tenant commands here'),
  ];
}

function limit(query: URLSearchParams): number {
  const value = Number(query.get('limit') ?? 100);
  return Number.isSafeInteger(value) && value > 0 ? value : 100;
}
