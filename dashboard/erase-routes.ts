import { ErasureTargetError, erasureTarget } from '../lib/erasure/target.js';
import { ReplayBusyError } from '../lib/ingest/index.js';
import { type AdminRoute, HttpError } from './route-server.js';
import type { DashboardSource } from './source.js';

/**
 * `POST /erase?context=C&entity=E&id=N` (one row) or `?context=C` (a whole tenant): the erasure on
 * request (lib/erasure/request.ts), answered with what it erased where. A wrong parameter is a 400
 * naming it, nothing erased; a source that cannot erase (404) says what to run instead.
 */
export function eraseRoutes(source: DashboardSource): AdminRoute[] {
  return [
    {
      method: 'POST',
      pattern: /^\/erase$/,
      handle: async (_, query) => {
        if (source.erase === undefined)
          throw new HttpError(404, `${source.info.name} cannot erase; use npm run ops -- erase`);
        const param = (name: string) => query.get(name) ?? undefined;
        try {
          return await source.erase(
            erasureTarget({ context: param('context'), entity: param('entity'), id: param('id') }),
          );
        } catch (error) {
          if (error instanceof ErasureTargetError) throw new HttpError(400, error.message);
          // A replay of the parked queue under way: the erasure waits for it (run it again).
          if (error instanceof ReplayBusyError) throw new HttpError(409, error.message);
          throw error;
        }
      },
    },
  ];
}
