import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_CHANGES_BYTES } from '../../lib/bus/limits.js';
import { handleDelivery } from '../../lib/ingest/index.js';
import { QueueUnavailableError } from '../../lib/queue/port.js';
import { MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES } from '../../lib/store/keys.js';
import { buildRegistrationTestBody, SAMPLE_EVENTS, signBody } from '../../tools/samples.js';
import { policy, RecordingQueue, request, SECRET, sample, withRawBody } from '../support/delivery.js';

const EXPECTED_QUEUE = {
  webhook: 'webhookState',
  contact: 'contact',
  activity: 'activity',
} as const;

describe('every event of the spec', () => {
  it.each(SAMPLE_EVENTS)('%s is accepted, routed and sent as the exact bytes received', async (name) => {
    const body = sample(name, { primaryKey: 321, context: 'Cust777' });
    const req = request(body);
    const queue = new RecordingQueue();

    const response = await handleDelivery(req, policy(), queue);

    const entity = name.split('.')[0] as keyof typeof EXPECTED_QUEUE;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      status: 'accepted',
      eventId: body.EventId,
      queue: EXPECTED_QUEUE[entity],
    });
    expect(queue.sent).toHaveLength(1);
    const message = queue.sent[0]!;
    expect(message.queue).toBe(EXPECTED_QUEUE[entity]);
    expect(message.body).toBe(Buffer.from(req.body).toString('utf8'));
    expect(message.groupId).toBe(`Cust777:${entity}:321`);
    expect(message.deduplicationId).toBe(body.EventId);
    expect(message.attributes).toEqual({
      event: name.startsWith('webhook.') ? name.replace('webhook.', 'webhook321.') : name,
      eventId: body.EventId,
      signatureVerified: String(!name.startsWith('webhook.')),
      receivedAt: req.receivedAt.toISOString(),
      userAgentVersion: '10.3.5',
    });
  });

  it('keeps unknown top-level fields, 7-digit fractions, offsets and the minimum date byte for byte', async () => {
    const raw =
      '{"EventId":"0a6c5bb8-2a9f-4c55-9e7a-4bfc0d1e2f30","Timestamp":"2018-04-24T08:18:42.0898950Z","Changes":[],' +
      '"Event":"contact.deleted","PrimaryKey":7,"Entity":"contact","ContextIdentifier":"Cust1",' +
      '"ChangedByAssociateId":5,"WebhookName":"w","Values":{"associate_id":5,"contact_id":7},' +
      '"CustomProperty":{"x":"2025-05-14T16:11:02.4593434+02:00"},"Other":"0001-01-01T00:00:00"}';
    const base = request(sample('contact.deleted', { eventId: '0a6c5bb8-2a9f-4c55-9e7a-4bfc0d1e2f30' }));
    const queue = new RecordingQueue();

    const response = await handleDelivery(
      withRawBody(base, raw),
      policy({ maxEventAgeSeconds: 1e10 }),
      queue,
    );

    expect(response.status).toBe(200);
    expect(queue.sent[0]?.body).toBe(raw);
  });
});

describe('headers', () => {
  it.each([
    ['the spec prefix', 'X-Service'],
    ['the product prefix', 'X-SuperOffice'],
    ['the samples capitalisation', 'X-Superoffice'],
    ['lower case', 'x-superoffice'],
  ])('accepts %s', async (_label, prefix) => {
    const queue = new RecordingQueue();
    const response = await handleDelivery(request(sample('contact.created'), { prefix }), policy(), queue);
    expect(response.status).toBe(200);
    expect(queue.sent).toHaveLength(1);
  });

  it('accepts the EventId header spelled -Eventid as in the published samples', async () => {
    const body = sample('contact.changed');
    const req = request(body);
    const headers = { ...req.headers };
    delete headers['X-SuperOffice-EventId'];
    headers['X-Superoffice-Eventid'] = String(body.EventId);
    const signature = headers['X-SuperOffice-Signature']!;
    delete headers['X-SuperOffice-Signature'];
    delete headers['X-SuperOffice-Event'];
    headers['X-Superoffice-Event'] = 'contact.changed';
    headers['X-Superoffice-Signature'] = signature;

    const response = await handleDelivery({ ...req, headers }, policy(), new RecordingQueue());

    expect(response.status).toBe(200);
  });

  it('refuses two complete header sets that disagree with 400', async () => {
    const req = request(sample('contact.changed'));
    req.headers['X-Other-Event'] = 'contact.changed';
    req.headers['X-Other-EventId'] = '11111111-2222-4333-8444-555555555555';
    const queue = new RecordingQueue();

    const response = await handleDelivery(req, policy(), queue);

    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).detail).toContain('two header sets disagree');
    expect(queue.sent).toHaveLength(0);
  });

  it('ignores a custom header of the webhook that ends in -Event', async () => {
    const req = request(sample('contact.changed'), { headers: { 'X-Tenant-Event': 'tenant-42' } });
    const queue = new RecordingQueue();

    const response = await handleDelivery(req, policy(), queue);

    expect(response.status).toBe(200);
    expect(queue.sent).toHaveLength(1);
  });

  it('uses only the pinned prefix when HEADER_PREFIX is set', async () => {
    const req = request(sample('contact.changed'), { prefix: 'X-Service' });
    req.headers['X-Other-EventId'] = 'noise';

    const response = await handleDelivery(req, policy({ headerPrefix: 'X-Service-' }), new RecordingQueue());

    expect(response.status).toBe(200);
  });

  it('answers 400 when the event headers are missing', async () => {
    const req = request(sample('contact.changed'));
    delete req.headers['X-SuperOffice-EventId'];
    const response = await handleDelivery(req, policy(), new RecordingQueue());
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).detail).toBe('header x-superoffice-eventid is missing');
  });
});

describe('signature', () => {
  it('accepts any of several secrets (rotation) and binds per-context secrets to their context', async () => {
    const secrets = { fallback: ['old', 'new'], byContext: { Special: ['special-secret'] } };
    const cases = [
      { context: 'Cust1', secret: 'old', status: 200 },
      { context: 'Cust1', secret: 'new', status: 200 },
      { context: 'Special', secret: 'special-secret', status: 200 },
      { context: 'Special', secret: 'old', status: 401 },
      { context: 'Cust1', secret: 'special-secret', status: 401 },
      { context: 'Cust1', secret: 'unknown', status: 401 },
    ];
    for (const { context, secret, status } of cases) {
      const queue = new RecordingQueue();
      const response = await handleDelivery(
        request(sample('contact.changed', { context }), { secret }),
        policy({ secrets }),
        queue,
      );
      expect({ context, secret, status: response.status }).toEqual({ context, secret, status });
      expect(queue.sent).toHaveLength(status === 200 ? 1 : 0);
    }
  });

  it('verifies the raw bytes, not the re-serialised JSON', async () => {
    const body = sample('contact.changed');
    const spaced = JSON.stringify(body, null, 2);
    const base = request(body);
    const signedOverCompact = signBody(JSON.stringify(body), SECRET);
    const req = withRawBody(base, spaced, null);
    req.headers['X-SuperOffice-Signature'] = signedOverCompact;

    const response = await handleDelivery(req, policy(), new RecordingQueue());

    expect(response.status).toBe(401);
    const ok = await handleDelivery(withRawBody(base, spaced), policy(), new RecordingQueue());
    expect(ok.status).toBe(200);
  });

  it('decodes a base64 body before verifying (API Gateway hands binary bodies that way)', async () => {
    const { toDeliveryRequest } = await import('../../lib/ingest/apigateway.js');
    const req = request(sample('contact.created'));
    const event = {
      version: '2.0',
      headers: req.headers as Record<string, string>,
      body: Buffer.from(req.body).toString('base64'),
      isBase64Encoded: true,
      requestContext: { http: { method: 'POST' } },
    } as unknown as import('aws-lambda').APIGatewayProxyEventV2;
    const queue = new RecordingQueue();

    const response = await handleDelivery(toDeliveryRequest(event), policy(), queue);

    expect(response.status).toBe(200);
    expect(queue.sent[0]?.body).toBe(Buffer.from(req.body).toString('utf8'));
  });

  it.each([
    ['missing', undefined],
    ['truncated', signBody('x', SECRET).slice(0, 20)],
    ['not base64', '!!!!'],
    ['for another body', signBody('{"a":1}', SECRET)],
  ])('refuses a %s signature with 401 and never echoes the expected one', async (_label, signature) => {
    const req = request(sample('activity.changed'), { secret: null });
    if (signature !== undefined) req.headers['X-SuperOffice-Signature'] = signature;
    const queue = new RecordingQueue();

    const response = await handleDelivery(req, policy(), queue);

    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(response.body).not.toContain(signBody(Buffer.from(req.body), SECRET));
    expect(response.body).not.toContain(SECRET);
    expect(queue.sent).toHaveLength(0);
  });

  it('fails closed for a context without a secret unless ALLOW_UNSIGNED is set', async () => {
    const noSecrets = { fallback: [], byContext: {} };
    const req = request(sample('contact.changed'), { secret: null });

    const closed = await handleDelivery(req, policy({ secrets: noSecrets }), new RecordingQueue());
    const queue = new RecordingQueue();
    const open = await handleDelivery(req, policy({ secrets: noSecrets, allowUnsigned: true }), queue);

    expect(closed.status).toBe(401);
    expect(open.status).toBe(200);
    expect(queue.sent[0]?.attributes.signatureVerified).toBe('false');
  });

  it('ALLOW_UNSIGNED does not open a context that has a secret', async () => {
    const req = request(sample('contact.changed'), { secret: null });
    const response = await handleDelivery(req, policy({ allowUnsigned: true }), new RecordingQueue());
    expect(response.status).toBe(401);
  });
});

describe('webhook state events', () => {
  it('are accepted unsigned when no STATE_EVENT_TOKEN is set', async () => {
    const response = await handleDelivery(request(sample('webhook.errors')), policy(), new RecordingQueue());
    expect(response.status).toBe(200);
  });

  it.each([
    ['header', { headers: { 'X-Receiver-Token': 'tok' } }, 200],
    ['query', { query: { token: 'tok' } }, 200],
    ['wrong token', { headers: { 'X-Receiver-Token': 'nope' } }, 401],
    ['no token', {}, 401],
  ])('with STATE_EVENT_TOKEN set: %s → %i', async (_label, options, status) => {
    const queue = new RecordingQueue();
    const response = await handleDelivery(
      request(sample('webhook.errors'), options),
      policy({ stateEventToken: 'tok' }),
      queue,
    );
    expect(response.status).toBe(status);
    expect(queue.sent).toHaveLength(status === 200 ? 1 : 0);
  });

  it('an unsigned contact event dressed as a state event is refused', async () => {
    const body = sample('contact.changed');
    const req = request(body, { secret: null, headers: { 'X-SuperOffice-Event': 'webhook1234.errors' } });
    const queue = new RecordingQueue();

    const response = await handleDelivery(req, policy(), queue);

    expect(response.status).toBe(400);
    expect(queue.sent).toHaveLength(0);
  });

  it('the webhook id in the header must equal PrimaryKey', async () => {
    const req = request(sample('webhook.started', { primaryKey: 5 }), {
      headers: { 'X-SuperOffice-Event': 'webhook6.started' },
    });
    const response = await handleDelivery(req, policy(), new RecordingQueue());
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).detail).toContain('PrimaryKey');
  });
});

describe('validation: unauthenticated bodies are refused, authentic ones are parked', () => {
  const breakers: Array<[string, (body: Record<string, unknown>) => void]> = [
    [
      'EventId not a UUID',
      (b) => {
        b.EventId = 'abc';
      },
    ],
    [
      'Timestamp without Z',
      (b) => {
        b.Timestamp = '2018-04-24T08:18:42.089';
      },
    ],
    [
      'Timestamp without fraction',
      (b) => {
        b.Timestamp = '2018-04-24T08:18:42Z';
      },
    ],
    [
      'PrimaryKey a string',
      (b) => {
        b.PrimaryKey = '12';
      },
    ],
    [
      'PrimaryKey a fraction',
      (b) => {
        b.PrimaryKey = 1.5;
      },
    ],
    [
      'FieldValues on a changed event',
      (b) => {
        b.FieldValues = {};
      },
    ],
    [
      'Values on a changed event',
      (b) => {
        b.Values = { contact_id: 1, associate_id: 1 };
      },
    ],
    [
      'Entity of the other kind',
      (b) => {
        b.Entity = 'activity';
      },
    ],
    [
      'Changes not an array',
      (b) => {
        b.Changes = 'x';
      },
    ],
    [
      'ContextIdentifier missing',
      (b) => {
        delete b.ContextIdentifier;
      },
    ],
  ];

  it.each(breakers)('%s: signed → 200 parked with a reason', async (_label, breakIt) => {
    const body = sample('contact.changed');
    breakIt(body);
    const queue = new RecordingQueue();

    const response = await handleDelivery(request(body), policy(), queue);

    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ status: 'parked' });
    expect(queue.sent).toHaveLength(1);
    expect(queue.sent[0]?.queue).toBe('parked');
    expect(queue.sent[0]?.attributes.reason).toMatch(/invalid-event|header-mismatch/);
  });

  it.each([
    [
      'Changes not empty on a state event',
      (b: Record<string, unknown>) => {
        b.Changes = ['x'];
      },
    ],
    [
      'Entity on a state event',
      (b: Record<string, unknown>) => {
        b.Entity = 'contact';
      },
    ],
    [
      'ChangedByAssociateId not 0',
      (b: Record<string, unknown>) => {
        b.ChangedByAssociateId = 4;
      },
    ],
    [
      'registered without offset',
      (b: Record<string, unknown>) => {
        (b.FieldValues as Record<string, unknown>).registered = '2018-04-24T10:18:40';
      },
    ],
  ])('unsigned state event with %s → 400 problem naming the field', async (_label, breakIt) => {
    const body = sample('webhook.stopped');
    breakIt(body);
    const queue = new RecordingQueue();

    const response = await handleDelivery(request(body), policy(), queue);

    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({
      status: 400,
      type: 'urn:crm-webhook-receiver:problem:invalid-event',
    });
    expect(queue.sent).toHaveLength(0);
  });

  it('accepts an unsigned state event without FieldValues (CRM versions older than FieldValues): never a 400', async () => {
    const body = sample('webhook.stopped');
    delete body.FieldValues;
    const queue = new RecordingQueue();

    const response = await handleDelivery(request(body), policy(), queue);

    expect(response.status).toBe(200);
    expect(response.decision).toMatchObject({ kind: 'accept', olderShape: true });
    expect(queue.sent[0]?.queue).toBe('webhookState');
  });

  it('a token-verified state event that breaks the spec is parked, not refused', async () => {
    const body = sample('webhook.stopped');
    body.Changes = ['x'];
    const queue = new RecordingQueue();
    const response = await handleDelivery(
      request(body, { query: { token: 't' } }),
      policy({ stateEventToken: 't' }),
      queue,
    );
    expect(response.status).toBe(200);
    expect(queue.sent[0]?.queue).toBe('parked');
  });

  it('parks an authentic event the spec does not cover (invoice.created)', async () => {
    const body = { ...sample('contact.changed'), Event: 'invoice.created', Entity: 'invoice' };
    const queue = new RecordingQueue();

    const response = await handleDelivery(
      request(body, { headers: { 'X-SuperOffice-Event': 'invoice.created' } }),
      policy(),
      queue,
    );

    expect(response.status).toBe(200);
    expect(queue.sent[0]).toMatchObject({
      queue: 'parked',
      groupId: `Cust12345:invoice:1234`,
      attributes: { reason: 'unknown-event' },
    });
  });

  it('parks a signed body whose headers disagree with it', async () => {
    const body = sample('contact.changed');
    const queue = new RecordingQueue();
    const response = await handleDelivery(
      request(body, { headers: { 'X-SuperOffice-EventId': '11111111-1111-4111-8111-111111111111' } }),
      policy(),
      queue,
    );
    expect(response.status).toBe(200);
    expect(queue.sent[0]?.attributes.reason).toBe('header-mismatch');
  });

  it('parks signed non-JSON and invalid UTF-8 (base64-encoded, bytes kept)', async () => {
    const base = request(sample('contact.changed'));
    const bad = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const queue = new RecordingQueue();

    const notJson = await handleDelivery(withRawBody(base, '{"oops"'), policy(), queue);
    const notUtf8 = await handleDelivery(withRawBody(base, bad), policy(), queue);

    expect([notJson.status, notUtf8.status]).toEqual([200, 200]);
    expect(queue.sent.map((m) => m.attributes.reason)).toEqual(['invalid-json', 'invalid-utf8']);
    expect(queue.sent[1]?.attributes.bodyEncoding).toBe('base64');
    expect(Buffer.from(queue.sent[1]!.body, 'base64')).toEqual(bad);
  });

  it('refuses unsigned non-JSON with 400', async () => {
    const response = await handleDelivery(
      withRawBody(request(sample('contact.changed')), '{"oops"', null),
      policy(),
      new RecordingQueue(),
    );
    expect(response.status).toBe(400);
  });

  it('routes a valid event whose text SQS cannot carry as base64 with bodyEncoding', async () => {
    const body = { ...sample('contact.changed'), Note: '\uFFFF' };
    const queue = new RecordingQueue();
    const req = request(body);

    const response = await handleDelivery(req, policy(), queue);

    expect(response.status).toBe(200);
    expect(queue.sent[0]).toMatchObject({ queue: 'contact', attributes: { bodyEncoding: 'base64' } });
    expect(Buffer.from(queue.sent[0]!.body, 'base64')).toEqual(Buffer.from(req.body));
  });
});

describe('the CRM registration check (event "test")', () => {
  // As the service's documentation shows it: an old Timestamp, and a header EventId other than the body's.
  const check = () =>
    buildRegistrationTestBody({
      eventId: '4b5ce038-50f2-4796-bdb2-f96908cf31c2',
      timestamp: '2018-04-24T08:52:59.0005158Z',
    });
  const headers = { 'X-SuperOffice-EventId': 'f0a473ae-6194-4701-8fd1-49caf355067a' };

  it('answers 200 to a signed check and queues nothing, whatever its Timestamp and EventIds', async () => {
    const queue = new RecordingQueue();

    const response = await handleDelivery(request(check(), { headers }), policy(), queue);

    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'test-acknowledged' });
    expect(response.decision).toMatchObject({
      kind: 'test',
      log: { event: 'test', signatureVerified: true },
    });
    expect(queue.sent).toEqual([]);
  });

  it('answers 200 when the webhook carries a custom header ending in -Event', async () => {
    const withCustom = { ...headers, 'X-Tenant-Event': 'tenant-42' };

    const response = await handleDelivery(
      request(check(), { headers: withCustom }),
      policy(),
      new RecordingQueue(),
    );

    expect(response.status).toBe(200);
    expect(response.decision.kind).toBe('test');
  });

  it('is authenticated like any delivery: a bad or missing signature is refused', async () => {
    const queue = new RecordingQueue();
    const forged = request(check(), { secret: 'not-the-secret', headers });
    const unsigned = request(check(), { secret: null, headers });

    const answers = [
      await handleDelivery(forged, policy(), queue),
      await handleDelivery(unsigned, policy(), queue),
    ];

    expect(answers.map((answer) => [answer.status, answer.decision.kind])).toEqual([
      [401, 'reject'],
      [401, 'reject'],
    ]);
    expect(queue.sent).toEqual([]);
  });

  it('answers 200 unsigned only where ALLOW_UNSIGNED admits unsigned deliveries', async () => {
    const queue = new RecordingQueue();
    const open = policy({ allowUnsigned: true, secrets: { fallback: [], byContext: { Cust1: [SECRET] } } });

    const admitted = await handleDelivery(request(check(), { secret: null }), open, queue);
    const refused = await handleDelivery(
      request({ ...check(), ContextIdentifier: 'Cust1' }, { secret: null }),
      open,
      queue,
    );

    expect([admitted.status, refused.status]).toEqual([200, 401]);
    expect(queue.sent).toEqual([]);
  });

  it('needs a signature when the body names no context: ALLOW_UNSIGNED admits only contexts it can see (found by the fuzz)', async () => {
    const queue = new RecordingQueue();
    const open = policy({ allowUnsigned: true, secrets: { fallback: [], byContext: { Cust1: [SECRET] } } });
    const { ContextIdentifier: _, ...withoutContext } = check();

    const answers = [
      await handleDelivery(request({ ...check(), ContextIdentifier: [] }, { secret: null }), open, queue),
      await handleDelivery(
        request({ ...check(), ContextIdentifier: ['Cust1'] }, { secret: null }),
        open,
        queue,
      ),
      await handleDelivery(request(withoutContext, { secret: null }), open, queue),
    ];

    expect(answers.map((answer) => [answer.status, answer.decision.kind])).toEqual([
      [401, 'reject'],
      [401, 'reject'],
      [401, 'reject'],
    ]);
    expect(JSON.parse(answers[0]!.body).detail).toContain('no ContextIdentifier string');
    expect(queue.sent).toEqual([]);
  });

  it('needs "test" in both the header and the body; otherwise an authentic body is parked', async () => {
    const queue = new RecordingQueue();
    const bodyOnly = request(check(), { headers: { 'X-SuperOffice-Event': 'contact.changed' } });
    const headerOnly = request(sample('contact.changed'), { headers: { 'X-SuperOffice-Event': 'test' } });

    const answers = [
      await handleDelivery(bodyOnly, policy(), queue),
      await handleDelivery(headerOnly, policy(), queue),
    ];

    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(queue.sent.map((message) => [message.queue, message.attributes.reason])).toEqual([
      ['parked', 'unknown-event'],
      ['parked', 'header-mismatch'],
    ]);
  });
});

describe('answers', () => {
  it.each([
    ['GET', 405],
    ['PUT', 405],
  ])('%s → %i with Allow: POST', async (method, status) => {
    const response = await handleDelivery(
      request(sample('contact.changed'), { method }),
      policy(),
      new RecordingQueue(),
    );
    expect(response.status).toBe(status);
    expect(response.headers.allow).toBe('POST');
  });

  it.each([
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['application/json; charset=iso-8859-1', 415],
    ['application/json', 200],
    ['Application/JSON; Charset="UTF-8"', 200],
  ])('Content-Type %s → %i', async (contentType, status) => {
    const response = await handleDelivery(
      request(sample('contact.changed'), { headers: { 'Content-Type': contentType } }),
      policy(),
      new RecordingQueue(),
    );
    expect(response.status).toBe(status);
  });

  it('answers 413 over MAX_BODY_BYTES and 400 for an empty body', async () => {
    const req = request(sample('contact.created'));
    const tooBig = await handleDelivery(req, policy({ maxBodyBytes: 100 }), new RecordingQueue());
    const empty = await handleDelivery(withRawBody(req, ''), policy(), new RecordingQueue());
    expect(tooBig.status).toBe(413);
    expect(empty.status).toBe(400);
  });

  it('answers 400 for a signed event older than MAX_EVENT_AGE_SECONDS', async () => {
    const old = sample('contact.changed', { timestamp: '2020-01-01T00:00:00.0000000Z' });
    const queue = new RecordingQueue();

    const response = await handleDelivery(request(old), policy({ maxEventAgeSeconds: 3600 }), queue);

    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({
      type: 'urn:crm-webhook-receiver:problem:event-too-old',
      detail: 'the event Timestamp is older than MAX_EVENT_AGE_SECONDS (3600 seconds)',
    });
    expect(queue.sent).toHaveLength(0);
  });

  it('applies the replay window to unsigned state events too', async () => {
    const old = sample('webhook.started', { timestamp: '2020-01-01T00:00:00.0000000Z' });

    const response = await handleDelivery(
      request(old, { secret: null }),
      policy({ maxEventAgeSeconds: 3600 }),
      new RecordingQueue(),
    );

    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).detail).toContain('MAX_EVENT_AGE_SECONDS');
  });

  it('answers 503 with Retry-After when the queue fails, and 200 once it recovers', async () => {
    let failing = true;
    const sent: string[] = [];
    const queue = {
      async send(message: { deduplicationId: string }) {
        if (failing) throw new QueueUnavailableError('throttled', 'contact');
        sent.push(message.deduplicationId);
      },
    };
    const req = request(sample('contact.changed'));

    const first = await handleDelivery(req, policy(), queue);
    failing = false;
    const retry = await handleDelivery(req, policy(), queue);

    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('1');
    expect(retry.status).toBe(200);
    expect(sent).toHaveLength(1);
  });
});

describe('replay window', () => {
  it('accepts an event exactly at the edge of MAX_EVENT_AGE_SECONDS and refuses one two seconds older', async () => {
    const receivedAt = new Date('2026-11-21T12:00:00.000Z');
    const atEdge = sample('contact.changed', { timestamp: '2026-11-21T11:00:00.0000000Z' });
    const beyond = sample('contact.changed', { timestamp: '2026-11-21T10:59:58.9999999Z' });

    const edge = await handleDelivery(
      request(atEdge, { receivedAt }),
      policy({ maxEventAgeSeconds: 3600 }),
      new RecordingQueue(),
    );
    const old = await handleDelivery(
      request(beyond, { receivedAt }),
      policy({ maxEventAgeSeconds: 3600 }),
      new RecordingQueue(),
    );

    expect([edge.status, old.status]).toEqual([200, 400]);
  });
});

describe('future-dated events', () => {
  const receivedAt = new Date('2026-11-21T12:00:00.000Z');
  const future = '2026-11-21T12:10:00.0000000Z';

  it('refuses an unauthenticated state event dated beyond MAX_CLOCK_SKEW_SECONDS', async () => {
    const forged = sample('webhook.errors', { timestamp: future });
    const within = sample('webhook.errors', { timestamp: '2026-11-21T12:04:59.0000000Z' });
    const queue = new RecordingQueue();

    const refused = await handleDelivery(
      request(forged, { receivedAt }),
      policy({ maxClockSkewSeconds: 300 }),
      queue,
    );
    const accepted = await handleDelivery(
      request(within, { receivedAt }),
      policy({ maxClockSkewSeconds: 300 }),
      queue,
    );

    expect([refused.status, accepted.status]).toEqual([400, 200]);
    expect(JSON.parse(refused.body).type).toContain('event-from-future');
    expect(queue.sent).toHaveLength(1);
  });

  it('keeps authentic future-dated events (signed, or state events with the token): the sender’s clock rules', async () => {
    const signed = sample('contact.changed', { timestamp: future });
    const tokened = sample('webhook.started', { timestamp: future });
    const strict = policy({ maxClockSkewSeconds: 300, stateEventToken: 't' });

    const a = await handleDelivery(request(signed, { receivedAt }), strict, new RecordingQueue());
    const b = await handleDelivery(
      request(tokened, { receivedAt, query: { token: 't' } }),
      strict,
      new RecordingQueue(),
    );

    expect([a.status, b.status]).toEqual([200, 200]);
  });
});

describe('what the store can never hold is parked at the ingest (200), never routed to a worker', () => {
  // rowKey is `contact#42#<context>`: 11 bytes before the context.
  const atLimit = 'C'.repeat(MAX_PARTITION_KEY_BYTES - 'contact#42#'.length);

  it.each([
    ['a ContextIdentifier over the partition key limit', { context: `${atLimit}C` }, 'key-too-long'],
    ['a ContextIdentifier over it in UTF-8 bytes only', { context: '€'.repeat(700) }, 'key-too-long'],
  ] as const)('%s', async (_label, options, reason) => {
    const queue = new RecordingQueue();

    const response = await handleDelivery(
      request(sample('contact.changed', { primaryKey: 42, ...options })),
      policy(),
      queue,
    );

    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ status: 'parked', reason });
    expect(queue.sent.map((message) => [message.queue, message.attributes.reason])).toEqual([
      ['parked', reason],
    ]);
  });

  it('routes keys exactly at the limits', async () => {
    const queue = new RecordingQueue();
    const body = sample('contact.changed', {
      primaryKey: 42,
      context: atLimit,
      webhookName: 'w'.repeat(MAX_SORT_KEY_BYTES - 'accepted#'.length),
    });

    const response = await handleDelivery(request(body), policy(), queue);

    expect(response.status).toBe(200);
    expect(queue.sent[0]?.queue).toBe('contact');
  });

  it('routes a WebhookName over the sort key limit: its marker is keyed by its hash (lib/store/keys.ts)', async () => {
    const queue = new RecordingQueue();

    const response = await handleDelivery(
      request(sample('contact.changed', { primaryKey: 42, webhookName: 'w'.repeat(1016) })),
      policy(),
      queue,
    );

    expect(JSON.parse(response.body)).toMatchObject({ status: 'accepted', queue: 'contact' });
  });

  it('parks a state event with the token whose ContextIdentifier is over the partition key limit; refuses it unauthenticated', async () => {
    const queue = new RecordingQueue();
    const body = sample('webhook.stopped', { context: 'C'.repeat(MAX_PARTITION_KEY_BYTES + 1) });
    const strict = policy({ stateEventToken: 't' });

    const tokened = await handleDelivery(
      request(body, { secret: null, query: { token: 't' } }),
      strict,
      queue,
    );
    const anonymous = await handleDelivery(request(body, { secret: null }), policy(), queue);

    expect([tokened.status, anonymous.status]).toEqual([200, 400]);
    expect(JSON.parse(anonymous.body).type).toBe('urn:crm-webhook-receiver:problem:key-too-long');
    expect(queue.sent.map((message) => message.attributes.reason)).toEqual(['key-too-long']);
  });

  it('parks a body that stays over MAX_STORED_BODY_BYTES deflated, and routes a large one that deflates under it', async () => {
    const noise = { ...sample('contact.created'), Custom: randomBytes(300 * 1024).toString('base64') };
    const repetitive = { ...sample('contact.created'), Custom: 'abc'.repeat(300 * 1024) };
    const queue = new RecordingQueue();

    const parked = await handleDelivery(request(noise), policy(), queue);
    const routed = await handleDelivery(request(repetitive), policy(), queue);

    expect(JSON.parse(parked.body)).toMatchObject({ status: 'parked', reason: 'too-large-for-store' });
    expect(JSON.parse(routed.body)).toMatchObject({ status: 'accepted', queue: 'contact' });
    expect(queue.sent.map((message) => message.queue)).toEqual(['parked', 'contact']);
  });

  it('parks Changes over MAX_CHANGES_BYTES as JSON (too-many-changes), routes them at the limit, refuses them unsigned', async () => {
    const fields = (bytes: number) => {
      const names = Array.from(
        { length: Math.floor(bytes / 16) - 1 },
        (_, i) => `f${String(i).padStart(12, '0')}`,
      );
      names.push('x'.repeat(bytes - Buffer.byteLength(JSON.stringify(names)) - 3));
      return names;
    };
    const atLimit = { ...sample('contact.changed'), Changes: fields(MAX_CHANGES_BYTES) };
    const over = { ...sample('contact.changed'), Changes: fields(MAX_CHANGES_BYTES + 1) };
    expect(JSON.stringify(over.Changes).length).toBe(MAX_CHANGES_BYTES + 1);
    const queue = new RecordingQueue();

    const parked = await handleDelivery(request(over), policy(), queue);
    const routed = await handleDelivery(request(atLimit), policy(), queue);
    const open = policy({ allowUnsigned: true, secrets: { fallback: [], byContext: {} } });
    const unsigned = await handleDelivery(request(over, { secret: null }), open, queue);

    expect([parked.status, routed.status, unsigned.status]).toEqual([200, 200, 400]);
    expect(JSON.parse(parked.body)).toMatchObject({ status: 'parked', reason: 'too-many-changes' });
    expect(JSON.parse(unsigned.body).type).toBe('urn:crm-webhook-receiver:problem:too-many-changes');
    expect(queue.sent.map((message) => [message.queue, message.attributes.reason])).toEqual([
      ['parked', 'too-many-changes'],
      ['contact', undefined],
    ]);
    expect(queue.sent[0]?.attributes.detail).toBe(
      `Changes is over ${MAX_CHANGES_BYTES} bytes as JSON, more than the workers publish with one event`,
    );
  });
});
