import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  buildRegistrationTestBody,
  buildSampleBody,
  buildSampleDelivery,
  sampleHttpApiEvent,
  signBody,
} from '../../tools/samples.js';

const SECRET = 'handler-secret-abcdef';
const URLS = {
  CONTACT_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/contact.fifo',
  ACTIVITY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/activity.fifo',
  WEBHOOK_STATE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/webhook-state.fifo',
  ENTITIES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/entities.fifo',
  PARKED_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/parked.fifo',
};

const httpEvent = (headers: Record<string, string>, body: string, method = 'POST') =>
  sampleHttpApiEvent({ headers, body }, method);

describe('functions/ingest handler', () => {
  const sqs = mockClient(SQSClient);
  let output: string[];
  let handler: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

  beforeEach(async () => {
    sqs.reset();
    for (const [name, value] of Object.entries(URLS)) vi.stubEnv(name, value);
    vi.stubEnv('WEBHOOK_SECRET', SECRET);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('POWERTOOLS_DEV', 'false');
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'DEBUG');
    output = [];
    const capture = (chunk: unknown) => {
      output.push(String(chunk));
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    vi.resetModules();
    ({ handler } = await import('../../functions/ingest.js'));
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('takes a function URL invocation (payload 2.0, $default route) as it takes the HTTP API one', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm1' });
    const body = buildSampleBody('contact.changed', { context: 'Cust4', primaryKey: 9 });
    const delivery = buildSampleDelivery(body, { secret: SECRET });
    const viaUrl = httpEvent(delivery.headers, delivery.body);
    Object.assign(viaUrl, { routeKey: '$default' });
    Object.assign(viaUrl.requestContext, {
      routeKey: '$default',
      domainName: 'abcdefghij.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abcdefghij',
    });

    const result = await handler(viaUrl);

    expect(result.statusCode).toBe(200);
    const calls = sqs.commandCalls(SendMessageCommand);
    expect(calls.map((call) => call.args[0].input.MessageGroupId)).toEqual(['Cust4:contact:9']);
    expect(calls[0]?.args[0].input.MessageBody).toBe(delivery.body);
  });

  it('sends one SendMessage with the FIFO keys, the raw body and the attributes, then answers 200', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm1' });
    const body = buildSampleBody('activity.created', { context: 'Cust3', primaryKey: 8 });
    const delivery = buildSampleDelivery(body, { secret: SECRET });

    const result = await handler(httpEvent(delivery.headers, delivery.body));

    expect(result.statusCode).toBe(200);
    const calls = sqs.commandCalls(SendMessageCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      QueueUrl: URLS.ACTIVITY_QUEUE_URL,
      MessageBody: delivery.body,
      MessageGroupId: 'Cust3:activity:8',
      MessageDeduplicationId: body.EventId,
      MessageAttributes: {
        event: { DataType: 'String', StringValue: 'activity.created' },
        eventId: { DataType: 'String', StringValue: body.EventId },
        signatureVerified: { DataType: 'String', StringValue: 'true' },
        receivedAt: { DataType: 'String', StringValue: expect.stringMatching(/Z$/) },
        userAgentVersion: { DataType: 'String', StringValue: '10.3.5' },
      },
    });
    const line = output.map((chunk) => chunk.trim()).find((chunk) => chunk.includes('"accepted"'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      EventId: body.EventId,
      Event: 'activity.created',
      ContextIdentifier: 'Cust3',
    });
  });

  it.each([
    ['ThrottlingException', Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })],
    ['TimeoutError', Object.assign(new Error('socket timeout'), { name: 'TimeoutError' })],
    ['QueueDoesNotExist', Object.assign(new Error('gone'), { name: 'QueueDoesNotExist' })],
  ])('answers 503 with Retry-After on %s', async (_label, error) => {
    sqs.on(SendMessageCommand).rejects(error);
    const delivery = buildSampleDelivery(buildSampleBody('contact.changed'), { secret: SECRET });

    const started = performance.now();
    const result = await handler(httpEvent(delivery.headers, delivery.body));

    expect(result.statusCode).toBe(503);
    expect(result.headers?.['retry-after']).toBe('1');
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('answers the registration check 200 without calling SQS, with a log line and a metric', async () => {
    const delivery = buildSampleDelivery(buildRegistrationTestBody({ context: 'Cust5' }), { secret: SECRET });

    const result = await handler(httpEvent(delivery.headers, delivery.body));

    expect(result.statusCode).toBe(200);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    const lines = output.map((chunk) => chunk.trim()).filter((chunk) => chunk.startsWith('{'));
    const line = lines.find((chunk) => chunk.includes('registration test'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      level: 'INFO',
      Event: 'test',
      ContextIdentifier: 'Cust5',
    });
    const emf = lines.map((chunk) => JSON.parse(chunk)).find((entry) => '_aws' in entry);
    expect(emf).toMatchObject({ RegistrationTests: 1 });
  });

  it('never writes the secret or the expected signature to logs or answers, even on refusal', async () => {
    sqs.on(SendMessageCommand).resolves({});
    const delivery = buildSampleDelivery(buildSampleBody('contact.changed'), { secret: SECRET });
    const expected = signBody(delivery.body, SECRET);
    const forged = { ...delivery.headers, 'X-SuperOffice-Signature': signBody(delivery.body, 'guess') };

    const refused = await handler(httpEvent(forged, delivery.body));
    const accepted = await handler(httpEvent(delivery.headers, delivery.body));

    expect([refused.statusCode, accepted.statusCode]).toEqual([401, 200]);
    const everything = output.join('') + String(refused.body) + String(accepted.body);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(expected);
    expect(everything).toContain('signature-invalid');
  });

  it('answers 400 to an event that is not an HTTP API request', async () => {
    const result = await handler({} as APIGatewayProxyEventV2);
    expect(result.statusCode).toBe(400);
  });
});

describe('functions/ingest with WEBHOOK_SECRETS_PARAMETER', () => {
  const sqs = mockClient(SQSClient);

  /**
   * A fresh ingest module whose secrets come from the fake SSM at `endpoint` (parameter
   * /crm/test/webhook-secrets), SQS answering every send; its log lines are not these tests'.
   */
  async function ingestReadingSsm(endpoint: string) {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({});
    for (const [name, value] of Object.entries(URLS)) vi.stubEnv(name, value);
    vi.stubEnv('WEBHOOK_SECRET', '');
    vi.stubEnv('WEBHOOK_SECRETS_PARAMETER', '/crm/test/webhook-secrets');
    vi.stubEnv('AWS_ENDPOINT_URL_SSM', endpoint);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKID');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    vi.resetModules();
    return (await import('../../functions/ingest.js')).handler;
  }

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('verifies with the per-context secrets read from SSM, fetched once for many deliveries', async () => {
    const { startFakeSsm } = await import('../support/fake-ssm.js');
    const ssm = await startFakeSsm();
    try {
      ssm.parameters.set(
        '/crm/test/webhook-secrets',
        JSON.stringify({ CustA: ['from-ssm'], '*': ['fallback-ssm'] }),
      );
      const handler = await ingestReadingSsm(ssm.endpoint);
      const send = (context: string, secret: string) => {
        const delivery = buildSampleDelivery(buildSampleBody('contact.changed', { context }), { secret });
        return handler(httpEvent(delivery.headers, delivery.body));
      };

      const results = [
        await send('CustA', 'from-ssm'),
        await send('CustA', 'fallback-ssm'),
        await send('CustB', 'fallback-ssm'),
        await send('CustB', 'from-ssm'),
      ];

      expect(results.map((r) => r.statusCode)).toEqual([200, 401, 200, 401]);
      expect(ssm.requests).toHaveLength(1);
    } finally {
      await ssm.close();
    }
  });

  it('a warm environment whose secrets read fails once they expired keeps the secrets it read: 200, not 503', async () => {
    const { startFakeSsm } = await import('../support/fake-ssm.js');
    const ssm = await startFakeSsm();
    try {
      ssm.parameters.set('/crm/test/webhook-secrets', JSON.stringify({ CustA: ['from-ssm'] }));
      const handler = await ingestReadingSsm(ssm.endpoint);
      const send = () => {
        const delivery = buildSampleDelivery(buildSampleBody('contact.changed', { context: 'CustA' }), {
          secret: 'from-ssm',
        });
        return handler(httpEvent(delivery.headers, delivery.body));
      };
      expect((await send()).statusCode).toBe(200);

      // Five minutes later the cached value has expired, and SSM throttles every read past the budget.
      const now = Date.now();
      vi.spyOn(Date, 'now').mockReturnValue(now + 301_000);
      ssm.faults.push(...Array.from({ length: 100 }, () => ({ type: 'ThrottlingException', status: 400 })));

      expect((await send()).statusCode).toBe(200);
      expect(ssm.requests.length).toBeGreaterThan(1);
      expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(2);
    } finally {
      await ssm.close();
    }
  });

  it('a cold start whose secrets read is throttled twice answers 200, not 503', async () => {
    const { startFakeSsm } = await import('../support/fake-ssm.js');
    const ssm = await startFakeSsm();
    try {
      ssm.parameters.set('/crm/test/webhook-secrets', JSON.stringify({ CustA: ['from-ssm'] }));
      ssm.faults.push(
        { type: 'ThrottlingException', status: 400 },
        { type: 'ThrottlingException', status: 400 },
      );
      const handler = await ingestReadingSsm(ssm.endpoint);
      const delivery = buildSampleDelivery(buildSampleBody('contact.changed', { context: 'CustA' }), {
        secret: 'from-ssm',
      });

      const result = await handler(httpEvent(delivery.headers, delivery.body));

      expect(result.statusCode).toBe(200);
      expect(ssm.requests).toHaveLength(3);
      expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
    } finally {
      await ssm.close();
    }
  });
});
