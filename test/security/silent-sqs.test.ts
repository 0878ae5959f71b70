import { createServer, type Socket } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { QUEUE_ENV_VARS } from '../../infra/definitions.js';
import { QueueUnavailableError } from '../../lib/queue/port.js';
import { boundedSqsClientConfig, createSqsSender } from '../../lib/queue/sqs.js';
import { buildSampleBody, buildSampleDelivery, sampleHttpApiEvent } from '../../tools/samples.js';
import { FAKE_AWS_ENV } from '../support/dynamo.js';

/**
 * The 3-second answer budget, for real: the ingest handler of functions/ingest.ts with its own
 * SQSClient (no mock, no fake timers) against a TCP server on 127.0.0.1 that accepts and then never
 * answers, or answers the headers and never the body.
 */
type IngestHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

const SECRET = 'silent-sqs-secret-71c2';
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A peer on a free port that accepts connections and answers with `reply` (or nothing). */
async function silentPeer(reply?: string): Promise<{ endpoint: string; connections: () => number }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    if (reply !== undefined) socket.once('data', () => socket.write(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, connections: () => sockets.length };
}

async function loadIngest(endpoint: string): Promise<IngestHandler> {
  for (const [name, value] of Object.entries(FAKE_AWS_ENV)) vi.stubEnv(name, value);
  for (const name of Object.values(QUEUE_ENV_VARS)) vi.stubEnv(name, `${endpoint}/123456789012/${name}.fifo`);
  vi.stubEnv('AWS_ENDPOINT_URL_SQS', endpoint);
  vi.stubEnv('WEBHOOK_SECRET', SECRET);
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
  vi.resetModules();
  return (await import('../../functions/ingest.js')).handler;
}

describe('the ingest against an SQS endpoint that never answers (real SDK client, real sockets)', () => {
  it.each([
    ['accepts and never answers', undefined],
    [
      'answers the headers, never the body',
      'HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 500\r\n\r\n{',
    ],
  ])('a peer that %s: 503 with Retry-After in under 3 s', async (_label, reply) => {
    const peer = await silentPeer(reply);
    const handler = await loadIngest(peer.endpoint);
    const delivery = buildSampleDelivery(buildSampleBody('contact.changed'), { secret: SECRET });

    const started = performance.now();
    const result = await handler(sampleHttpApiEvent(delivery));
    const elapsed = performance.now() - started;

    expect(result.statusCode).toBe(503);
    expect(result.headers?.['retry-after']).toBe('1');
    expect(elapsed).toBeLessThan(3000);
    expect(peer.connections()).toBe(2); // each attempt gave up on its own connection
  });
});

describe('the SQS sender', () => {
  const message = {
    queue: 'contact' as const,
    body: '{}',
    groupId: 'g',
    deduplicationId: 'd',
    attributes: { event: 'contact.changed' },
  };

  it('gives up at its deadline whatever the client still waits for, with no per-call options', async () => {
    const peer = await silentPeer();
    const client = new SQSClient({
      ...boundedSqsClientConfig(60_000),
      endpoint: peer.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    const send = vi.spyOn(client, 'send');
    const queueUrls = {
      contact: `${peer.endpoint}/1/c.fifo`,
      activity: '',
      webhookState: '',
      entities: '',
      parked: '',
    };
    const sender = createSqsSender({ client, queueUrls, deadlineMs: 300 });

    const started = performance.now();
    const failure = await sender.send(message).catch((error: unknown) => error);
    const elapsed = performance.now() - started;
    client.destroy();

    expect(failure).toBeInstanceOf(QueueUnavailableError);
    expect((failure as Error).message).toBe('SendMessage to the contact queue failed: TimeoutError');
    expect(elapsed).toBeGreaterThanOrEqual(299);
    expect(elapsed).toBeLessThan(1000);
    // A second argument to send(), even { abortSignal: undefined }, disables the cached middleware stack.
    expect(send.mock.calls.map((call) => call.length)).toEqual([1]);
  });
});
