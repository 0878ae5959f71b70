import { createHmac } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import type { DeliveryRequest } from '../../lib/ingest/index.js';
import {
  buildRegistrationTestBody,
  buildSampleBody,
  dotNetTimestamp,
  SAMPLE_EVENTS,
} from '../../tools/samples.js';

/**
 * Generated deliveries for the security suite, each with what the generator knows about it: which
 * secret (if any) signed the exact bytes, whether the headers are well-formed, whether the state
 * token is right. The oracle in {@link expectations} decides from these facts alone, never from the
 * code under test.
 */

export const FUZZ_SECRETS = {
  old: 'fuzz-fallback-old-secret-7d1f',
  new: 'fuzz-fallback-new-secret-92ab',
  special: 'fuzz-special-context-secret-c3e0',
  unknown: 'fuzz-nobody-configured-this-55aa',
} as const;
export const FUZZ_TOKEN = 'fuzz-state-token-0b7e41';
export const FUZZ_MAX_BODY = 16_384;

export type SecretName = keyof typeof FUZZ_SECRETS;

/** The three configurations the fuzz runs against, as plain facts (the oracle's own table). */
export const FUZZ_POLICIES = {
  /** WEBHOOK_SECRET=old,new and WEBHOOK_SECRETS={"Special":[special]}. */
  signed: { fallback: ['old', 'new'], special: ['special'], token: false, allowUnsigned: false },
  /** The same, plus STATE_EVENT_TOKEN. */
  token: { fallback: ['old', 'new'], special: ['special'], token: true, allowUnsigned: false },
  /** Only Special has a secret; ALLOW_UNSIGNED=true for the others. */
  open: { fallback: [], special: ['special'], token: false, allowUnsigned: true },
} as const satisfies Record<
  string,
  { fallback: SecretName[]; special: SecretName[]; token: boolean; allowUnsigned: boolean }
>;
export type PolicyName = keyof typeof FUZZ_POLICIES;

export function secretConfigOf(name: PolicyName) {
  const facts = FUZZ_POLICIES[name];
  return {
    fallback: facts.fallback.map((s) => FUZZ_SECRETS[s]),
    byContext: { Special: facts.special.map((s) => FUZZ_SECRETS[s]) },
  };
}

/** The secrets the oracle says are valid for a context under a policy. */
function secretsFor(policy: PolicyName, context: string): readonly SecretName[] {
  const facts = FUZZ_POLICIES[policy];
  return context === 'Special' ? facts.special : facts.fallback;
}

const CONTEXTS = ['Cust1', 'Special', 'Cust Ünïcödé ✓'] as const;
// 'test': the CRM's registration check; 'invoice.created': an event the spec does not cover.
const EVENTS = [...SAMPLE_EVENTS, 'invoice.created', 'test'] as const;
const VALID_CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/json',
  'Application/JSON; Charset="UTF-8"',
  'application/json;charset=utf8',
  'application/vnd.crm+json',
];
const INVALID_CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonp',
  'json',
  '',
];
const PREFIXES = ['X-Service', 'X-SuperOffice', 'X-Superoffice', 'x-superoffice', 'X-SUPEROFFICE'];

/** Values of the wrong type (or the right type and wrong shape) for any field. */
export const wrongValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constant('x'.repeat(5000)),
  fc.constant('2018-04-24T08:18:42.089895Z'),
  fc.constant('00000000-0000-0000-0000-000000000000'),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
  fc.constant(-1),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.integer(), { maxKeys: 3 }),
  fc.constant({ ['k'.repeat(3000)]: 'v', associate_id: 'x' }),
);

export type BodyPlan =
  | { kind: 'valid' }
  | { kind: 'set'; path: readonly string[]; value: unknown }
  | { kind: 'delete'; path: readonly string[] }
  | { kind: 'truncated'; at: number }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'invalidUtf8'; at: number; bytes: readonly number[] }
  | { kind: 'nested'; depth: number; shape: 'array' | 'object'; where: 'top' | 'custom' | 'fieldValues' }
  | { kind: 'huge'; size: number }
  | { kind: 'duplicateKey'; key: string; value: unknown; first: boolean }
  | { kind: 'empty' }
  | { kind: 'scalarJson'; text: string }
  | { kind: 'pretty' };

export type SignaturePlan =
  | { kind: 'none' }
  | { kind: 'valid'; secret: SecretName; padding: '' | ' ' | '\t'; unpadded: boolean }
  | { kind: 'duplicated'; secret: SecretName }
  | { kind: 'otherBytes'; secret: SecretName }
  | { kind: 'truncated'; secret: SecretName; length: number }
  | { kind: 'hex'; secret: SecretName }
  | { kind: 'urlSafe'; secret: SecretName }
  | { kind: 'garbage'; value: string };

export interface FuzzCase {
  policy: PolicyName;
  method: string;
  event: (typeof EVENTS)[number];
  context: (typeof CONTEXTS)[number];
  primaryKey: number;
  body: BodyPlan;
  contentType: { valid: boolean; value: string | undefined };
  prefix: string;
  eventIdName: 'EventId' | 'Eventid' | 'EVENTID';
  headerEvent: 'matching' | 'other' | 'dressedAsState' | 'dressedAsRow';
  headerEventId: 'matching' | 'other' | 'garbage';
  duplicate: 'none' | 'event' | 'eventId' | 'signature' | 'contentType';
  missing: 'none' | 'event' | 'eventId';
  secondPrefix: boolean;
  /** A custom header of the webhook ending in -Event: ignored. */
  customHeader: boolean;
  signature: SignaturePlan;
  token: 'none' | 'header' | 'query' | 'wrong';
  userAgent: string | undefined;
  transport: 'bytes' | 'text' | 'base64';
  queueFails: boolean;
}

const pathArb = fc.constantFrom<readonly string[]>(
  ['EventId'],
  ['Timestamp'],
  ['Changes'],
  ['Event'],
  ['PrimaryKey'],
  ['Entity'],
  ['ContextIdentifier'],
  ['ChangedByAssociateId'],
  ['WebhookName'],
  ['FieldValues'],
  ['Values'],
  ['FieldValues', 'state'],
  ['FieldValues', 'registered'],
  ['FieldValues', 'updated'],
  ['FieldValues', 'associate_id'],
  ['Values', 'contact_id'],
  ['Changes', '0'],
  ['Custom'],
);

const bodyArb: fc.Arbitrary<BodyPlan> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'pretty' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('set' as const), path: pathArb, value: wrongValueArb }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), path: pathArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncated' as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('text' as const),
      text: fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.json()),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 200 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('invalidUtf8' as const),
      at: fc.nat(),
      bytes: fc.constantFrom(
        [0xff],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xe2, 0x82],
        [0xf4, 0x90, 0x80, 0x80],
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('nested' as const),
      depth: fc.integer({ min: 100, max: 5000 }),
      shape: fc.constantFrom('array' as const, 'object' as const),
      where: fc.constantFrom('top' as const, 'custom' as const, 'fieldValues' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge' as const),
      size: fc.integer({ min: FUZZ_MAX_BODY - 600, max: FUZZ_MAX_BODY + 600 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('duplicateKey' as const),
      key: fc.constantFrom('ContextIdentifier', 'EventId', 'Event', 'PrimaryKey', 'Entity', 'Timestamp'),
      value: fc.oneof(
        fc.constantFrom('Cust1', 'Special', 'contact.changed', 'webhook.errors', 'activity', 7, 1234),
        wrongValueArb,
      ),
      first: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('scalarJson' as const),
      text: fc.constantFrom('[]', '{}', 'null', '1', '"x"', 'true', '[{}]', ' {} '),
    }),
  },
);

/** `usual` most of the time (six in seven), else one of `others`: realistic requests dominate. */
function mostly<T>(usual: T, ...others: T[]): fc.Arbitrary<T> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(usual) },
    { weight: 1, arbitrary: fc.constantFrom(...others) },
  );
}

const secretNameArb = fc.constantFrom<SecretName>('old', 'new', 'special', 'unknown');

const signatureArb: fc.Arbitrary<SignaturePlan> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('valid' as const),
      secret: secretNameArb,
      padding: fc.constantFrom('' as const, '' as const, ' ' as const, '\t' as const),
      unpadded: fc.constantFrom(false, false, false, true),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('duplicated' as const), secret: secretNameArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('otherBytes' as const), secret: secretNameArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('truncated' as const),
      secret: secretNameArb,
      // 43 characters is the whole value without its '=' padding: the same bytes, so a valid signature.
      length: fc.integer({ min: 0, max: 42 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hex' as const), secret: secretNameArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('urlSafe' as const), secret: secretNameArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('garbage' as const),
      value: fc.oneof(fc.string(), fc.base64String({ minLength: 44, maxLength: 44 }), fc.constant('')),
    }),
  },
);

export function fuzzCaseArb(
  policies: readonly PolicyName[] = ['signed', 'token', 'open'],
): fc.Arbitrary<FuzzCase> {
  return fc.record({
    policy: fc.constantFrom(...policies),
    method: fc.oneof(
      { weight: 12, arbitrary: fc.constant('POST') },
      { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'post', 'OPTIONS', 'HEAD') },
    ),
    event: fc.constantFrom(...EVENTS),
    context: fc.constantFrom(...CONTEXTS),
    primaryKey: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.constant(0)),
    body: bodyArb,
    contentType: fc.oneof(
      {
        weight: 8,
        arbitrary: fc.constantFrom(...VALID_CONTENT_TYPES).map((value) => ({ valid: true, value })),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom<string | undefined>(...INVALID_CONTENT_TYPES, undefined)
          .map((value) => ({ valid: false, value })),
      },
    ),
    prefix: fc.constantFrom(...PREFIXES),
    eventIdName: fc.constantFrom('EventId' as const, 'Eventid' as const, 'EVENTID' as const),
    headerEvent: mostly(
      'matching' as const,
      'other' as const,
      'dressedAsState' as const,
      'dressedAsRow' as const,
    ),
    headerEventId: mostly('matching' as const, 'other' as const, 'garbage' as const),
    duplicate: mostly(
      'none' as const,
      'event' as const,
      'eventId' as const,
      'signature' as const,
      'contentType' as const,
    ),
    missing: mostly('none' as const, 'event' as const, 'eventId' as const),
    secondPrefix: mostly(false, true),
    customHeader: mostly(false, true),
    signature: signatureArb,
    token: fc.constantFrom('none' as const, 'header' as const, 'query' as const, 'wrong' as const),
    userAgent: fc.constantFrom('NetServer-Webhook/10.3.5', undefined, 'curl/8.0', 'X-Webhook/\u0000'),
    transport: fc.constantFrom('bytes' as const, 'text' as const, 'base64' as const),
    queueFails: mostly(false, true),
  });
}

/** A built delivery: the exact bytes, the headers (name → values, before any joining) and the query. */
export interface BuiltDelivery {
  raw: Buffer;
  headers: Array<[string, string]>;
  query: Record<string, string>;
  /** The body as the generator wrote it, for reference (undefined when it is not an object). */
  sample: Record<string, unknown>;
  headerEventValue: string | undefined;
}

function setPath(
  target: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
  remove: boolean,
): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return;
    const next = (node as Record<string, unknown>)[key];
    if (typeof next !== 'object' || next === null) return;
    node = next;
  }
  if (typeof node !== 'object' || node === null) return;
  const last = path[path.length - 1]!;
  if (remove) delete (node as Record<string, unknown>)[last];
  else (node as Record<string, unknown>)[last] = value;
}

function nestedJson(depth: number, shape: 'array' | 'object'): string {
  return shape === 'array'
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function bodyBytes(plan: BodyPlan, sample: Record<string, unknown>): Buffer {
  const json = JSON.stringify(sample);
  switch (plan.kind) {
    case 'valid':
      return Buffer.from(json);
    case 'pretty':
      return Buffer.from(JSON.stringify(sample, null, 2));
    case 'set':
    case 'delete': {
      const copy = structuredClone(sample);
      setPath(copy, plan.path, plan.kind === 'set' ? plan.value : undefined, plan.kind === 'delete');
      return Buffer.from(JSON.stringify(copy));
    }
    case 'truncated': {
      const bytes = Buffer.from(json);
      return bytes.subarray(0, plan.at % bytes.length);
    }
    case 'text':
      return Buffer.from(plan.text);
    case 'bytes':
      return Buffer.from(plan.bytes);
    case 'invalidUtf8': {
      const bytes = Buffer.from(json);
      const at = plan.at % bytes.length;
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(plan.bytes), bytes.subarray(at)]);
    }
    case 'nested': {
      const nested = nestedJson(plan.depth, plan.shape);
      if (plan.where === 'top') return Buffer.from(nested);
      const marker = '"__NESTED__"';
      const copy = structuredClone(sample);
      if (plan.where === 'custom') copy.Custom = '__NESTED__';
      else copy.FieldValues = { ...((copy.FieldValues as object | undefined) ?? {}), deep: '__NESTED__' };
      return Buffer.from(JSON.stringify(copy).replace(marker, nested));
    }
    case 'huge': {
      const copy = { ...sample, Custom: '' };
      const overhead = Buffer.byteLength(JSON.stringify(copy));
      copy.Custom = 'x'.repeat(Math.max(0, plan.size - overhead));
      return Buffer.from(JSON.stringify(copy));
    }
    case 'duplicateKey': {
      const extra = `"${plan.key}":${JSON.stringify(plan.value) ?? 'null'}`;
      return Buffer.from(plan.first ? `{${extra},${json.slice(1)}` : `${json.slice(0, -1)},${extra}}`);
    }
    case 'empty':
      return Buffer.alloc(0);
    case 'scalarJson':
      return Buffer.from(plan.text);
  }
}

export function hmac(secret: string, bytes: Uint8Array): string {
  return createHmac('sha256', secret).update(bytes).digest('base64');
}

function signatureValue(plan: SignaturePlan, raw: Buffer): string | undefined {
  switch (plan.kind) {
    case 'none':
      return undefined;
    case 'valid': {
      const value = hmac(FUZZ_SECRETS[plan.secret], raw);
      return `${plan.padding}${plan.unpadded ? value.replace(/=+$/, '') : value}${plan.padding}`;
    }
    case 'duplicated': {
      const value = hmac(FUZZ_SECRETS[plan.secret], raw);
      return `${value},${value}`;
    }
    case 'otherBytes':
      return hmac(FUZZ_SECRETS[plan.secret], Buffer.concat([raw, Buffer.from(' ')]));
    case 'truncated':
      return hmac(FUZZ_SECRETS[plan.secret], raw).slice(0, plan.length);
    case 'hex':
      return createHmac('sha256', FUZZ_SECRETS[plan.secret]).update(raw).digest('hex');
    case 'urlSafe': {
      const value = createHmac('sha256', FUZZ_SECRETS[plan.secret]).update(raw).digest('base64url');
      // A base64url value that happens to use neither '-' nor '_' is plain base64 minus the '=': make it differ.
      return /[-_]/.test(value) ? value : `${value}-`;
    }
    case 'garbage':
      return plan.value;
  }
}

export function buildDelivery(c: FuzzCase): BuiltDelivery {
  const options = { context: c.context, primaryKey: c.primaryKey, timestamp: dotNetTimestamp() };
  const sample =
    c.event === 'test'
      ? buildRegistrationTestBody(options)
      : buildSampleBody(c.event === 'invoice.created' ? 'contact.changed' : c.event, options);
  if (c.event === 'invoice.created') Object.assign(sample, { Event: 'invoice.created', Entity: 'invoice' });
  const raw = bodyBytes(c.body, sample);
  const stateForm = `webhook${c.primaryKey}.${String(sample.Event).split('.')[1]}`;
  const eventValue =
    c.headerEvent === 'matching'
      ? String(sample.Event).startsWith('webhook.')
        ? stateForm
        : String(sample.Event)
      : c.headerEvent === 'other'
        ? 'activity.changed'
        : c.headerEvent === 'dressedAsState'
          ? `webhook${c.primaryKey}.errors`
          : 'contact.changed';
  const eventIdValue =
    c.headerEventId === 'matching'
      ? String(sample.EventId)
      : c.headerEventId === 'other'
        ? '11111111-2222-4333-8444-555555555555'
        : 'not-a-uuid';
  const headers: Array<[string, string]> = [];
  if (c.contentType.value !== undefined) {
    headers.push(['Content-Type', c.contentType.value]);
    if (c.duplicate === 'contentType') headers.push(['content-type', c.contentType.value]);
  }
  if (c.userAgent !== undefined) headers.push(['User-Agent', c.userAgent]);
  if (c.missing !== 'event') {
    headers.push([`${c.prefix}-Event`, eventValue]);
    if (c.duplicate === 'event') headers.push([`${c.prefix.toLowerCase()}-event`, eventValue]);
  }
  if (c.missing !== 'eventId') {
    headers.push([`${c.prefix}-${c.eventIdName}`, eventIdValue]);
    if (c.duplicate === 'eventId') headers.push([`${c.prefix.toLowerCase()}-eventid`, eventIdValue]);
  }
  const signature = signatureValue(c.signature, raw);
  if (signature !== undefined) {
    headers.push([`${c.prefix}-Signature`, signature]);
    if (c.duplicate === 'signature') headers.push([`${c.prefix.toLowerCase()}-signature`, signature]);
  }
  if (c.secondPrefix) {
    // A second complete set that disagrees is refused; alone, a -Event header is a custom one (ignored).
    headers.push(['X-Other-Event', 'contact.changed']);
    if (c.missing === 'none') headers.push(['X-Other-EventId', '99999999-2222-4333-8444-555555555555']);
  }
  if (c.customHeader) headers.push(['X-Tenant-Event', 'tenant-42']);
  const query: Record<string, string> = {};
  if (c.token === 'header') headers.push(['X-Receiver-Token', FUZZ_TOKEN]);
  if (c.token === 'query') query.token = FUZZ_TOKEN;
  if (c.token === 'wrong') headers.push(['X-Receiver-Token', `${FUZZ_TOKEN}x`]);
  return {
    raw,
    headers,
    query,
    sample,
    // What a reader of the joined headers sees (a repeated header arrives comma-joined).
    headerEventValue:
      c.missing === 'event'
        ? undefined
        : c.duplicate === 'event'
          ? `${eventValue},${eventValue}`
          : eventValue,
  };
}

/** Headers as a record in the given names, duplicates (same name in any case) joined by commas. */
function joinHeaders(headers: Array<[string, string]>, lowerCase: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  const nameOf = new Map<string, string>();
  for (const [name, value] of headers) {
    const key = name.toLowerCase();
    const existing = nameOf.get(key);
    if (existing === undefined) {
      const use = lowerCase ? key : name;
      nameOf.set(key, use);
      out[use] = value;
    } else out[existing] = `${out[existing]},${value}`;
  }
  return out;
}

export function isUtf8Text(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The request `handleDelivery` gets, with the body as bytes or (for valid UTF-8) as text. */
export function toRequest(c: FuzzCase, built: BuiltDelivery, receivedAt: Date): DeliveryRequest {
  const asText = c.transport === 'text' && isUtf8Text(built.raw);
  return {
    method: c.method,
    headers: joinHeaders(built.headers, false),
    query: built.query,
    body: asText ? built.raw.toString('utf8') : built.raw,
    receivedAt,
  };
}

/** An API Gateway HTTP API (payload 2.0) event: lower-cased names, duplicates comma-joined, base64 for binary. */
export function toHttpApiEvent(c: FuzzCase, built: BuiltDelivery): APIGatewayProxyEventV2 {
  const base64 = c.transport === 'base64' || !isUtf8Text(built.raw);
  const query = new URLSearchParams(built.query).toString();
  return {
    version: '2.0',
    routeKey: 'POST /webhook',
    rawPath: '/webhook',
    rawQueryString: query,
    headers: joinHeaders(built.headers, true),
    ...(Object.keys(built.query).length > 0 && { queryStringParameters: built.query }),
    ...(built.raw.length > 0 && { body: base64 ? built.raw.toString('base64') : built.raw.toString('utf8') }),
    isBase64Encoded: base64,
    requestContext: {
      http: {
        method: c.method,
        path: '/webhook',
        protocol: 'HTTP/1.1',
        sourceIp: '198.51.100.7',
        userAgent: '',
      },
    },
  } as unknown as APIGatewayProxyEventV2;
}

export interface Expectations {
  /** The request is authentic: signed over its exact bytes with a secret valid for its context, or carries the state token. */
  authentic: boolean;
  /** A signature header is present and is not a valid signature of these bytes for this body's context. */
  badSignature: boolean;
  /** A valid signature (any configured secret) over the exact bytes: what `signatureVerified` must say. */
  signedByConfigured: boolean;
  /** Method, size, content type and headers are all as the sender sends them. */
  wellFormed: boolean;
  /** Unsigned, but the documented exceptions may let it through (state event without token, ALLOW_UNSIGNED). */
  unsignedAllowance: 'state' | 'allowUnsigned' | undefined;
  /** The body's Timestamp (as a JSON reader sees it) is a date older than the replay window. */
  tooOld: boolean;
  /** The CRM's registration check: `test` in the Event header and as the body's Event. */
  registrationTest: boolean;
  /** Every secret, the token and every expected signature of these bytes: none may appear in an answer or a log. */
  forbidden: string[];
}

const STATE_HEADER = /^webhook(\d+)\.(started|stopped|errors)$/;

/** The oracle: what must happen to a case, from the generator's facts only. */
export function expectations(c: FuzzCase, built: BuiltDelivery): Expectations {
  const facts = FUZZ_POLICIES[c.policy];
  const configured = new Set<SecretName>([...facts.fallback, ...facts.special]);
  const context = contextOf(built.raw);
  const sigPresent = c.signature.kind !== 'none';
  const signerValid =
    c.signature.kind === 'valid' && c.duplicate !== 'signature' && configured.has(c.signature.secret);
  const contextOk =
    signerValid &&
    c.signature.kind === 'valid' &&
    (context === undefined || secretsFor(c.policy, context).includes(c.signature.secret));
  const stateHeader = built.headerEventValue !== undefined && STATE_HEADER.test(built.headerEventValue);
  const tokenRight = c.token === 'header' || c.token === 'query';
  const tokenOk = stateHeader && facts.token && tokenRight;
  const tokenNeeded = stateHeader && facts.token;
  const authentic = (contextOk && (!tokenNeeded || tokenRight)) || (tokenOk && !sigPresent);
  const size = built.raw.length;
  const wellFormed =
    c.method === 'POST' &&
    size > 0 &&
    size <= FUZZ_MAX_BODY &&
    c.contentType.valid &&
    c.duplicate !== 'contentType' &&
    c.missing === 'none' &&
    !c.secondPrefix;
  let unsignedAllowance: Expectations['unsignedAllowance'];
  if (!sigPresent && stateHeader && !facts.token) unsignedAllowance = 'state';
  else if (!sigPresent && !stateHeader && facts.allowUnsigned && context !== undefined) {
    if (secretsFor(c.policy, context).length === 0) unsignedAllowance = 'allowUnsigned';
  }
  const forbidden = [
    ...Object.values(FUZZ_SECRETS),
    FUZZ_TOKEN,
    ...Object.values(FUZZ_SECRETS).map((secret) => hmac(secret, built.raw)),
  ];
  return {
    authentic,
    badSignature: sigPresent && !contextOk,
    signedByConfigured: signerValid,
    wellFormed,
    unsignedAllowance,
    tooOld: isOlderThan(built.raw, MAX_AGE_SECONDS),
    registrationTest: built.headerEventValue === 'test' && fieldOf(built.raw, 'Event') === 'test',
    forbidden,
  };
}

export const MAX_AGE_SECONDS = 7 * 24 * 3600;

function isOlderThan(raw: Uint8Array, seconds: number): boolean {
  const timestamp = fieldOf(raw, 'Timestamp');
  if (typeof timestamp !== 'string') return false;
  const time = Date.parse(timestamp);
  return Number.isFinite(time) && time < Date.now() - seconds * 1000;
}

/** The ContextIdentifier the body carries as an ECMAScript JSON reader (the workers') sees it. */
export function contextOf(raw: Uint8Array): string | undefined {
  const context = fieldOf(raw, 'ContextIdentifier');
  return typeof context === 'string' ? context : undefined;
}

/** A top-level field of a JSON object body, as JSON.parse (last duplicate wins) sees it. */
export function fieldOf(raw: Uint8Array, name: string): unknown {
  if (!isUtf8Text(raw)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(raw).toString('utf8'));
    if (typeof value !== 'object' || value === null) return undefined;
    return (value as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}
