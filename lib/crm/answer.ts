import * as z from 'zod/mini';
import { CrmApiError } from './errors.js';
import { type CrmResponse, jsonOf } from './http.js';
import { readablePart } from './scrub.js';

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

/** A refusal's JSON: its reason in Error or Message. */
const CrmErrorSchema = z.looseObject({ Error: z.optional(z.unknown()), Message: z.optional(z.unknown()) });

/** The JSON of a 200, or a one-line CrmApiError with the status and the CRM's short reason. */
export function okJson(response: CrmResponse, context: string, what: string): unknown {
  if (response.status !== 200) {
    // The first line of the CRM's reason: its JSON's Error or Message, else its text.
    let text: unknown = response.text;
    try {
      const error = z.safeParse(CrmErrorSchema, JSON.parse(response.text));
      text = error.success ? (error.data.Error ?? error.data.Message) : undefined;
    } catch {
      // not JSON: its text
    }
    // Cut by the scrub at the client's boundary, once credentials are out: one cut in two here would
    // no longer be found.
    const line =
      typeof text === 'string'
        ? (readablePart(text).trim().split('\n', 1)[0] ?? '').replace(/\s+/g, ' ').trim()
        : '';
    const reason = line === '' ? '' : `: ${line}`;
    throw new CrmApiError(`${what} answered HTTP ${response.status}${reason}`, context, {
      status: response.status,
    });
  }
  try {
    return jsonOf(response, what);
  } catch (error) {
    throw new CrmApiError((error as Error).message, context, { status: response.status });
  }
}
