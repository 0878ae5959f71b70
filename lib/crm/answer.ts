import * as z from 'zod/mini';
import { CrmApiError } from './errors.js';

/**
 * The CRM's answer to `what` (`GET /Cust1/api/v1/Webhook/3`) read through `schema`; an answer of
 * another shape is a one-line CrmApiError naming the call and what it should have been (`shape`),
 * never quoting the answer (it may carry personal data).
 *
 * @example const state = parseAnswer(TenantStateSchema, body, context, `GET ${url.pathname}`, 'a state');
 */
export function parseAnswer<T>(
  schema: z.ZodMiniType<T>,
  body: unknown,
  context: string,
  what: string,
  shape: string,
): T {
  const parsed = z.safeParse(schema, body);
  if (!parsed.success) throw new CrmApiError(`${what}: the answer is not ${shape}`, context);
  return parsed.data;
}
