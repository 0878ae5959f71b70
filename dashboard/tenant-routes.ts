import { CrmApiError, CrmRetryLater } from '../lib/crm/index.js';
import { TenantError } from '../lib/tenants/deps.js';
import type { TenantService } from '../lib/tenants/service.js';
import { type AdminRoute, HttpError } from './route-server.js';

const STATUS: Record<TenantError['kind'], number> = {
  busy: 409,
  conflict: 409,
  'not-running': 409,
  'not-onboarded': 404,
  refused: 400,
};

/**
 * `GET /tenants`, `POST /tenants?context=C[&events=a,b][&errorsEmail=...]` (onboard),
 * `POST /tenants/C/rotate-secret` and `DELETE /tenants/C[?erase=true]` (offboard). Without the CRM's
 * API (`service` undefined, `off` says why) each answers 409 with that one line.
 */
export function tenantRoutes(service: TenantService | undefined, off: string): AdminRoute[] {
  const run = async <T>(work: (tenants: TenantService) => Promise<T>): Promise<T> => {
    if (service === undefined) throw new HttpError(409, off);
    try {
      return await work(service);
    } catch (error) {
      throw answerOf(error);
    }
  };
  return [
    { method: 'GET', pattern: /^\/tenants$/, handle: () => run((tenants) => tenants.list()) },
    {
      method: 'POST',
      pattern: /^\/tenants$/,
      handle: (_, query) =>
        run((tenants) => {
          const context = query.get('context')?.trim();
          if (!context)
            throw new HttpError(400, 'context is required: POST /tenants?context=<ContextIdentifier>');
          const events = query
            .get('events')
            ?.split(',')
            .map((name) => name.trim())
            .filter(Boolean);
          const errorsEmail = query.get('errorsEmail')?.trim();
          return tenants.onboard(context, { ...(events && { events }), ...(errorsEmail && { errorsEmail }) });
        }),
    },
    {
      method: 'POST',
      pattern: /^\/tenants\/([^/]+)\/rotate-secret$/,
      handle: ([context]) => run((tenants) => tenants.rotate(context!)),
    },
    {
      method: 'DELETE',
      pattern: /^\/tenants\/([^/]+)$/,
      handle: ([context], query) =>
        run((tenants) => tenants.offboard(context!, { erase: query.get('erase') === 'true' })),
    },
  ];
}

/** A tenant command's failure as the answer a caller can act on (the CRM's refusals say what it refused). */
function answerOf(error: unknown): unknown {
  if (error instanceof HttpError) return error;
  if (error instanceof TenantError) return new HttpError(STATUS[error.kind], error.message);
  if (error instanceof RangeError) return new HttpError(400, error.message);
  if (error instanceof CrmRetryLater) return new HttpError(503, error.message);
  if (error instanceof CrmApiError) return new HttpError(502, `the CRM refused: ${error.message}`);
  return error;
}
