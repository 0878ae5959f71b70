import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { SqsMessage } from '../../lib/queue/sqs-message.js';
import { createDynamoStore } from '../../lib/store/index.js';
import type { Store } from '../../lib/store/types.js';
import { createStateWorker, decodeRecord } from '../../lib/workers/index.js';
import { signBody } from '../../tools/samples.js';
import { policy, RecordingQueue, request, sample, withRawBody } from '../support/delivery.js';
import { type LocalDynamo, startDynalite, type TableNames } from '../support/dynamo.js';
import { contactWorker, lambdaContext, quietObservability } from '../support/workers.js';

const FALLBACK = 'fallback-secret-for-every-context';
const CUST_A = 'secret-of-CustA-only';
const secrets = { fallback: [FALLBACK], byContext: { CustA: [CUST_A] } };
const TOKEN = 'state-token-from-the-webhook-custom-headers';

/** An SQS record carrying a message exactly as the ingest sent it (what the workers receive). */
function asRecord(message: SqsMessage, messageId = `m-${message.deduplicationId}`): SQSRecord {
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.attributes)) {
    messageAttributes[name] = { dataType: 'String', stringValue: value };
  }
  return {
    messageId,
    receiptHandle: messageId,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'ingest',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
      MessageGroupId: message.groupId,
      MessageDeduplicationId: message.deduplicationId,
    },
    messageAttributes,
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q.fifo',
    awsRegion: 'us-east-1',
  };
}

describe('signature attacks on the ingest', () => {
  it('refused (401): a valid signature replayed over a changed body', async () => {
    const original = request(sample('contact.changed', { context: 'CustB', primaryKey: 42 }), {
      secret: FALLBACK,
    });
    const tampered = Buffer.from(
      Buffer.from(original.body).toString('utf8').replace('"PrimaryKey":42', '"PrimaryKey":43'),
    );
    const queue = new RecordingQueue();

    const response = await handleDelivery({ ...original, body: tampered }, policy({ secrets }), queue);

    expect(tampered.equals(Buffer.from(original.body))).toBe(false);
    expect(response.status).toBe(401);
    expect(response.decision).toMatchObject({ reason: 'signature-invalid' });
    expect(queue.sent).toHaveLength(0);
  });

  it.each([
    ['CustB', CUST_A, "CustA's own secret over a CustB body"],
    ['CustA', FALLBACK, 'the fallback secret over a CustA body (CustA has its own)'],
  ])(
    'refused (401): a signature made with another context’s secret (%s signed with %s: %s)',
    async (context, secret) => {
      const queue = new RecordingQueue();

      const response = await handleDelivery(
        request(sample('contact.created', { context }), { secret }),
        policy({ secrets }),
        queue,
      );

      expect(response.status).toBe(401);
      expect(response.decision).toMatchObject({ reason: 'signature-wrong-context' });
      expect(queue.sent).toHaveLength(0);
    },
  );

  it.each([
    ['pretty-printed bytes', (body: object) => JSON.stringify(body, null, 2)],
    [
      'keys in another order',
      (body: object) => JSON.stringify(Object.fromEntries(Object.entries(body).reverse())),
    ],
    ['non-ASCII escaped as \\u', (body: object) => JSON.stringify(body).replace(/é/g, '\\u00e9')],
  ])(
    'refused (401): a signature over the re-serialised JSON instead of the raw bytes (%s)',
    async (_label, write) => {
      const body = sample('contact.changed', { context: 'CustB', webhookName: 'Café' });
      const raw = write(body);
      // The signer's own serialisation of the same object, not the bytes on the wire.
      const reserialised = JSON.stringify(body);
      const req = withRawBody(request(body), raw, null);
      req.headers['X-SuperOffice-Signature'] = signBody(reserialised, FALLBACK);
      const queue = new RecordingQueue();

      const response = await handleDelivery(req, policy({ secrets }), queue);

      expect(raw).not.toBe(reserialised);
      expect(response.status).toBe(401);
      expect(queue.sent).toHaveLength(0);
      // The same bytes signed as they are on the wire are accepted: it is the bytes that count.
      const honest = await handleDelivery(withRawBody(req, raw, FALLBACK), policy({ secrets }), queue);
      expect(honest.status).toBe(200);
    },
  );

  it('refused (400 event-too-old): a signed event replayed after MAX_EVENT_AGE_SECONDS; accepted one second inside the window', async () => {
    const timestamp = '2025-05-14T12:00:00.0000000Z';
    const eventTime = Date.parse(timestamp);
    const maxEventAgeSeconds = 3600;
    const body = sample('contact.changed', { context: 'CustB', timestamp });
    const at = (seconds: number) => new Date(eventTime + seconds * 1000);
    const queue = new RecordingQueue();

    const late = await handleDelivery(
      request(body, { secret: FALLBACK, receivedAt: at(maxEventAgeSeconds + 2) }),
      policy({ secrets, maxEventAgeSeconds }),
      queue,
    );
    const inside = await handleDelivery(
      request(body, { secret: FALLBACK, receivedAt: at(maxEventAgeSeconds - 1) }),
      policy({ secrets, maxEventAgeSeconds }),
      queue,
    );

    expect(late.status).toBe(400);
    expect(late.decision).toMatchObject({ reason: 'event-too-old' });
    expect(inside.status).toBe(200);
    expect(queue.sent).toHaveLength(1);
  });

  it('refused (400): an unsigned contact event made to look like a state event', async () => {
    const body = sample('contact.deleted', { context: 'CustB', primaryKey: 9 });
    const dressed = [
      // the header says state event, the body is the contact event
      request(body, { secret: null, headers: { 'X-SuperOffice-Event': 'webhook9.errors' } }),
      // the body's Event says state event too, but it still carries Entity and Values of a contact
      request({ ...body, Event: 'webhook.errors' }, { secret: null }),
    ];
    dressed[1]!.headers['X-SuperOffice-Event'] = 'webhook9.errors';
    const queue = new RecordingQueue();

    const responses = await Promise.all(
      dressed.map((req) => handleDelivery(req, policy({ secrets }), queue)),
    );

    expect(responses.map((r) => r.status)).toEqual([400, 400]);
    expect(queue.sent).toHaveLength(0);
  });
});

describe('duplicate JSON keys: the context binding uses the value the workers read', () => {
  /** The body with a second ContextIdentifier: `first` is what a first-key reader sees, `last` what JSON.parse sees. */
  function twoContexts(first: string, last: string): string {
    const json = JSON.stringify(sample('contact.changed', { context: last, primaryKey: 5 }));
    return `{"ContextIdentifier":${JSON.stringify(first)},${json.slice(1)}`;
  }

  it("refused (401): signed with CustA's secret, CustA first, CustB last (the workers would apply it to CustB)", async () => {
    const raw = twoContexts('CustA', 'CustB');
    const queue = new RecordingQueue();

    const response = await handleDelivery(
      withRawBody(request(JSON.parse(raw)), raw, CUST_A),
      policy({ secrets }),
      queue,
    );

    expect(response.status).toBe(401);
    expect(response.decision).toMatchObject({ reason: 'signature-wrong-context' });
    expect(queue.sent).toHaveLength(0);
  });

  it('harmless: signed with the fallback secret, CustA first, CustB last, it is routed and applied to CustB only', async () => {
    const raw = twoContexts('CustA', 'CustB');
    const queue = new RecordingQueue();

    const response = await handleDelivery(
      withRawBody(request(JSON.parse(raw)), raw, FALLBACK),
      policy({ secrets }),
      queue,
    );

    expect(response.status).toBe(200);
    const message = queue.sent[0]!;
    expect(message.body).toBe(raw);
    expect(message.groupId).toBe('CustB:contact:5');
    // What a worker reads from that message: the same ContextIdentifier the binding was checked against.
    expect(decodeRecord(asRecord(message)).event.ContextIdentifier).toBe('CustB');
  });
});

describe('forged unsigned webhook<id>.errors', () => {
  it('refused (401) when STATE_EVENT_TOKEN is set: no token, a wrong token, or the token only in the body', async () => {
    const body = sample('webhook.errors', { context: 'CustA', primaryKey: 77 });
    const attempts = [
      request(body),
      request(body, { headers: { 'X-Receiver-Token': `${TOKEN}-guess` } }),
      request(body, { query: { token: TOKEN.slice(0, -1) } }),
      request({ ...body, token: TOKEN }),
    ];
    const queue = new RecordingQueue();

    const responses = await Promise.all(
      attempts.map((req) => handleDelivery(req, policy({ secrets, stateEventToken: TOKEN }), queue)),
    );

    expect(responses.map((r) => r.status)).toEqual([401, 401, 401, 401]);
    expect(responses.map((r) => r.body).join('')).not.toContain(TOKEN);
    expect(queue.sent).toHaveLength(0);
  });

  describe('without STATE_EVENT_TOKEN, through the webhook-state worker on dynalite', () => {
    let dynamo: LocalDynamo;
    let tables: TableNames;
    let store: Store;

    beforeAll(async () => {
      dynamo = await startDynalite();
      tables = await dynamo.createTables();
      store = createDynamoStore({ client: dynamo.doc, tables, retentionDays: 30 });
    });
    afterAll(() => dynamo.close());

    async function scan(table: string): Promise<unknown[]> {
      const { Items = [] } = await dynamo.client.send(
        new ScanCommand({ TableName: table, ConsistentRead: true }),
      );
      return Items.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    }

    it('harmless: a signed event replayed inside the window is queued again but applied once', async () => {
      const body = sample('contact.changed', { context: 'CustReplay', primaryKey: 3 });
      const queue = new RecordingQueue();
      for (let i = 0; i < 3; i++) {
        expect(
          (await handleDelivery(request(body, { secret: FALLBACK }), policy({ secrets }), queue)).status,
        ).toBe(200);
      }
      const worker = contactWorker(store);

      // SQS drops the copies within its 5-minute deduplication window; later ones reach the worker.
      for (const [i, message] of queue.sent.entries()) {
        expect(await worker({ Records: [asRecord(message, `replay-${i}`)] }, lambdaContext)).toEqual({
          batchItemFailures: [],
        });
      }

      expect(new Set(queue.sent.map((m) => m.deduplicationId))).toEqual(new Set([body.EventId]));
      expect(await store.getRow('CustReplay', 'contact', 3)).toMatchObject({ eventCount: 1 });
      expect(await store.listRowEvents('CustReplay', 'contact', 3)).toHaveLength(1);
    });

    it('harmless for rows: accepted to the webhook-state queue, it changes only that webhook’s recorded state', async () => {
      // A real row, written through the ingest and the contact worker.
      const created = sample('contact.created', { context: 'CustA', primaryKey: 77 });
      const rowQueue = new RecordingQueue();
      expect(
        (await handleDelivery(request(created, { secret: CUST_A }), policy({ secrets }), rowQueue)).status,
      ).toBe(200);
      const worker = contactWorker(store);
      expect(await worker({ Records: rowQueue.sent.map((m) => asRecord(m)) }, lambdaContext)).toEqual({
        batchItemFailures: [],
      });
      const rowsBefore = await scan(tables.rows);
      const eventsBefore = await scan(tables.events);

      // The forgery: well-formed, unsigned, same context and the same number as the row.
      const forged = sample('webhook.errors', { context: 'CustA', primaryKey: 77 });
      const queue = new RecordingQueue();
      const response = await handleDelivery(request(forged), policy({ secrets }), queue);
      expect(response.status).toBe(200);
      expect(queue.sent.map((m) => [m.queue, m.attributes.signatureVerified])).toEqual([
        ['webhookState', 'false'],
      ]);
      const stateWorker = createStateWorker({ store, hooks: {}, ...quietObservability() });
      expect(await stateWorker({ Records: queue.sent.map((m) => asRecord(m)) }, lambdaContext)).toEqual({
        batchItemFailures: [],
      });

      // Rows and their history: byte for byte what they were.
      expect(await scan(tables.rows)).toEqual(rowsBefore);
      expect(await scan(tables.events)).toEqual(eventsBefore);
      // What it can change: the recorded state of webhook 77 of CustA (and so a gap window and an alert).
      expect((await store.loadWebhook('CustA', 77)).item).toMatchObject({
        state: 2,
        stateName: 'TooManyErrors',
      });
    });
  });
});

describe('the context hint the signature check starts from (read from the raw body, never trusted)', () => {
  const many = {
    fallback: [FALLBACK],
    byContext: Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`Cust${i}`, [`secret-${i}-new`, `secret-${i}-old`]]),
    ),
  };

  it.each([
    ['its own newest secret', 'Cust7', 'secret-7-new', 200, undefined],
    ['its own older secret', 'Cust7', 'secret-7-old', 200, undefined],
    [
      "another tenant's secret (found after its own were tried)",
      'Cust7',
      'secret-8-new',
      401,
      'signature-wrong-context',
    ],
    ['no secret of anyone', 'Cust7', 'not-a-secret', 401, 'signature-invalid'],
  ])('a delivery of one of 300 tenants signed with %s', async (_, context, secret, status, reason) => {
    const response = await handleDelivery(
      request(sample('contact.created', { context }), { secret }),
      policy({ secrets: many }),
      new RecordingQueue(),
    );
    expect(response.status).toBe(status);
    if (reason) expect(response.decision).toMatchObject({ reason });
  });
});
