import { createHmac, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { type EventName, familyOf, SPEC_EVENT_FAMILIES } from '../lib/events/index.js';
import { CATALOGUE_SAMPLE_EVENTS, catalogueSampleFields } from './catalogue-samples.js';
import { specSampleFields } from './spec-samples.js';

/** Every event of the spec, by its body name (state events take a webhook id in the header). */
export const SAMPLE_EVENTS = Object.keys(SPEC_EVENT_FAMILIES) as EventName[];

/** Every event `buildSampleBody` builds: the spec's, then the rest of the catalogue. */
export const ALL_SAMPLE_EVENTS: readonly string[] = [...SAMPLE_EVENTS, ...CATALOGUE_SAMPLE_EVENTS];

export { CATALOGUE_SAMPLE_EVENTS };

/** An event of the spec, or any other name of the catalogue (`person.created`, `y_equipment.deleted`, ...). */
export type SampleEventName = EventName | (string & {});

export interface SampleOptions {
  primaryKey?: number;
  context?: string;
  eventId?: string;
  /** Envelope Timestamp; defaults to now with 7 fractional digits, as .NET writes it. */
  timestamp?: string;
  changedByAssociateId?: number;
  webhookName?: string;
}

/** `new Date()` as the sender writes it: 7 fractional digits and `Z`. */
export function dotNetTimestamp(date: Date = new Date(), extraTicks = 0): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 23)}${String(extraTicks % 10_000).padStart(4, '0')}Z`;
}

/**
 * A realistic body of any event of the catalogue, shaped like the spec's examples (the spec's ten)
 * or the CRM's published samples (the others). Throws for a name the registry does not know.
 *
 * @example buildSampleBody('contact.changed', { primaryKey: 42 })
 * @example buildSampleBody('y_equipment.created') // FieldValues as typed strings: { id: '[I:1234]', ... }
 */
export function buildSampleBody(
  event: SampleEventName,
  options: SampleOptions = {},
): Record<string, unknown> {
  const primaryKey = options.primaryKey ?? 1234;
  const base = {
    EventId: options.eventId ?? randomUUID(),
    Timestamp: options.timestamp ?? dotNetTimestamp(),
    Changes: [] as string[],
    Event: event,
    PrimaryKey: primaryKey,
    ContextIdentifier: options.context ?? 'Cust12345',
    ChangedByAssociateId: options.changedByAssociateId ?? (event.startsWith('webhook.') ? 0 : 5),
    WebhookName: options.webhookName ?? 'crm-webhook-receiver',
  };
  if (isSpecEvent(event)) return { ...base, ...specSampleFields(event, primaryKey) };
  const family = familyOf(event);
  if (family === undefined) throw new Error(`no sample for ${event}: not an event of the catalogue`);
  return { ...base, ...catalogueSampleFields(event, family, primaryKey) };
}

function isSpecEvent(event: string): event is EventName {
  return Object.hasOwn(SPEC_EVENT_FAMILIES, event);
}

/**
 * The CRM's registration check, shaped like the service's published example: event `test`, Entity
 * `test`, PrimaryKey 0, no Changes. {@link buildSampleDelivery} adds the `X-Hook-Test: true` header.
 */
export function buildRegistrationTestBody(options: SampleOptions = {}): Record<string, unknown> {
  return {
    EventId: options.eventId ?? randomUUID(),
    Timestamp: options.timestamp ?? dotNetTimestamp(),
    Changes: [],
    Event: 'test',
    PrimaryKey: options.primaryKey ?? 0,
    Entity: 'test',
    ContextIdentifier: options.context ?? 'Cust12345',
    ChangedByAssociateId: options.changedByAssociateId ?? 5,
    WebhookName: options.webhookName ?? 'crm-webhook-receiver',
  };
}

/** Base64 HMAC-SHA256 of the exact body bytes, keyed with the UTF-8 bytes of the secret. */
export function signBody(body: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

export interface SampleDelivery {
  headers: Record<string, string>;
  body: string;
}

/**
 * A delivery as the service sends it: the JSON body and every header of the spec's delivery table,
 * signed when a secret is given and the event is not a webhook state event.
 */
export function buildSampleDelivery(
  body: Record<string, unknown>,
  options: { secret?: string; prefix?: string; version?: string } = {},
): SampleDelivery {
  const prefix = options.prefix ?? 'X-SuperOffice';
  const raw = JSON.stringify(body);
  const event = String(body.Event);
  const headerEvent = event.startsWith('webhook.')
    ? event.replace('webhook.', `webhook${body.PrimaryKey}.`)
    : event;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'User-Agent': `NetServer-Webhook/${options.version ?? '10.3.5'}`,
    [`${prefix}-Event`]: headerEvent,
    [`${prefix}-EventId`]: String(body.EventId),
  };
  if (event === 'test') headers['X-Hook-Test'] = 'true';
  if (options.secret !== undefined && !event.startsWith('webhook.')) {
    headers[`${prefix}-Signature`] = signBody(raw, options.secret);
  }
  return { headers, body: raw };
}

/**
 * The API Gateway HTTP API (payload 2.0) event that carries a sample delivery to the ingest Lambda:
 * header names lower-cased, the body as text.
 */
export function sampleHttpApiEvent(delivery: SampleDelivery, method = 'POST'): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /webhook',
    rawPath: '/webhook',
    rawQueryString: '',
    headers: Object.fromEntries(
      Object.entries(delivery.headers).map(([name, value]) => [name.toLowerCase(), value]),
    ),
    body: delivery.body,
    isBase64Encoded: false,
    requestContext: {
      http: { method, path: '/webhook', protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: '' },
    },
  } as unknown as APIGatewayProxyEventV2;
}
