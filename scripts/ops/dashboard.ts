import type { AddressInfo } from 'node:net';
import { createRouteServer } from '../../dashboard/route-server.js';
import { sourceRoutes } from '../../dashboard/routes.js';
import { createDashboard } from '../../dashboard/server.js';
import type { DashboardSource } from '../../dashboard/source.js';
import { tenantRoutes } from '../../dashboard/tenant-routes.js';

export interface ServedDashboard {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the dashboard's page and endpoints from `source` on 127.0.0.1:`port` (0 picks a free one),
 * with the local admin API's Host and Origin checks and a token generated for this start.
 */
export async function serveDashboard(
  source: DashboardSource,
  port: number,
  token?: string,
): Promise<ServedDashboard> {
  const dashboard = createDashboard(token);
  const server = createRouteServer({
    name: 'ops dashboard',
    routes: [
      ...sourceRoutes(source),
      ...tenantRoutes(
        undefined,
        'on a stage, tenants are managed by npm run ops -- tenants|onboard|rotate-secret|offboard',
      ),
    ],
    intercept: dashboard.intercept,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
