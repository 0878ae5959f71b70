import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/http/port-guard.js';
import { type HttpAnswer, httpRequest } from '../../tools/http-client.js';
import { buildSampleBody } from '../../tools/samples.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * What a web page open in the developer's browser can do to `npm start`: it can find every port (a
 * page scans 1,000 loopback ports in about a second), and send what a browser sends without asking
 * (a form POST, an image's GET, a fetch with its Origin, a CORS preflight), or, through DNS
 * rebinding, anything under its own host name. Each request below is one of those, sent as the
 * browser would send it, to each port the runtime opens.
 */
const PAGE = 'https://evil.example';
/** What the AWS SDK sends, signed with the runtime's key (the signature itself is not checked). */
const SIGNED = {
  authorization: `AWS4-HMAC-SHA256 Credential=${LOCAL_CREDENTIALS.accessKeyId}/20250101/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=00`,
  'x-amz-date': '20250101T000000Z',
};

let dataDir: string;
let runtime: RuntimeProcess;
let info: {
  urls: { sqs: string; dynamodb: string; eventbridge: string; ingest: string; admin: string };
  queues: Array<{ key: string; url: string }>;
  tables: Record<string, string>;
};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-local-web-page-'));
  runtime = await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: 'web-page-secret' } });
  info = (await (await fetch(`${runtime.adminUrl}/info`)).json()) as typeof info;
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

const corsHeaders = (answer: HttpAnswer) =>
  Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'));
const queueUrl = (key: string) => info.queues.find((queue) => queue.key === key)!.url;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('a web page in the developer’s browser', () => {
  it('cannot read the tables through dynalite: its preflight and its signed Scan are refused, without CORS headers', async () => {
    const preflight = await httpRequest('OPTIONS', info.urls.dynamodb, {
      origin: PAGE,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,x-amz-date,x-amz-target',
    });
    const scan = await httpRequest(
      'POST',
      info.urls.dynamodb,
      {
        origin: PAGE,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.Scan',
        ...SIGNED,
      },
      JSON.stringify({ TableName: info.tables.rows }),
    );

    for (const answer of [preflight, scan]) {
      expect({ status: answer.status, cors: corsHeaders(answer) }).toEqual({ status: 403, cors: [] });
    }
    expect(scan.body).not.toContain('Items');
  });

  it('cannot send a forged delivery to a queue, nor hide parked ones, with a form POST (with or without Origin)', async () => {
    const forged = buildSampleBody('person.created', { context: 'CustPage', primaryKey: 66 });
    const send = form({
      Action: 'SendMessage',
      QueueUrl: queueUrl('contact'),
      MessageBody: JSON.stringify(forged),
      MessageGroupId: 'CustPage:person:66',
      MessageDeduplicationId: String(forged.EventId),
    });
    const hide = form({
      Action: 'ReceiveMessage',
      QueueUrl: queueUrl('parked'),
      VisibilityTimeout: '43200',
      MaxNumberOfMessages: '10',
    });
    const formPost = { 'content-type': 'application/x-www-form-urlencoded' };
    const answers = [
      await httpRequest('POST', info.urls.sqs, { ...formPost, origin: PAGE }, send),
      await httpRequest('POST', info.urls.sqs, { ...formPost, origin: 'null' }, send),
      await httpRequest('POST', info.urls.sqs, formPost, send), // a browser that sends no Origin
      await httpRequest('POST', info.urls.sqs, { ...formPost, origin: PAGE }, hide),
      await httpRequest('GET', `${info.urls.sqs}/?${send}`, {}), // an <img src>
    ];

    for (const answer of answers) {
      expect({ status: answer.status, cors: corsHeaders(answer) }).toEqual({ status: 403, cors: [] });
      expect(answer.body).not.toContain('MessageId');
    }
    const found = await fetch(`${runtime.adminUrl}/events/${forged.EventId}`);
    expect(((await found.json()) as { places: unknown[] }).places).toEqual([]);
  });

  it('cannot reach any emulator under a rebound host name, nor its own', async () => {
    for (const endpoint of [info.urls.sqs, info.urls.dynamodb, info.urls.eventbridge]) {
      const { port } = new URL(endpoint);
      for (const host of [`evil.example:${port}`, `evil.example`, `127.0.0.1:${Number(port) + 1}`]) {
        const answer = await httpRequest('POST', endpoint, { host, ...SIGNED }, '{}');
        expect({ endpoint, host, status: answer.status }).toEqual({ endpoint, host, status: 403 });
      }
      const fromPage = await httpRequest('POST', endpoint, { origin: `http://127.0.0.1:${port}`, ...SIGNED });
      expect({ endpoint, status: fromPage.status, cors: corsHeaders(fromPage) }).toEqual({
        endpoint,
        status: 403,
        cors: [],
      });
    }
  });

  it('gets no CORS header from the admin API or the ingest, preflight or not', async () => {
    const preflight = {
      origin: PAGE,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    };
    const admin = await httpRequest('OPTIONS', `${runtime.adminUrl}/queues/contact/redrive`, preflight);
    const ownOrigin = await httpRequest('OPTIONS', `${runtime.adminUrl}/queues`, {
      ...preflight,
      origin: runtime.adminUrl,
    });
    const ingestPreflight = await httpRequest('OPTIONS', runtime.webhookUrl, preflight);
    const ingestPost = await httpRequest(
      'POST',
      runtime.webhookUrl,
      { origin: PAGE, 'content-type': 'text/plain' },
      '{}',
    );

    expect([admin, ownOrigin].map((answer) => answer.status)).toEqual([403, 403]);
    expect(ingestPreflight.status).toBe(405); // the ingest's answer to anything but POST, without CORS
    expect(ingestPost.status).toBe(415);
    for (const answer of [admin, ownOrigin, ingestPreflight, ingestPost])
      expect(corsHeaders(answer)).toEqual([]);
  });
});

describe('the AWS SDK', () => {
  it('is served on every emulator port with the runtime’s credentials, and refused with any other key', async () => {
    const local = { region: 'us-east-1', credentials: { ...LOCAL_CREDENTIALS } };
    const other = { region: 'us-east-1', credentials: { accessKeyId: 'AKIDPAGE', secretAccessKey: 'x' } };
    const clients = (config: typeof local) => ({
      sqs: new SQSClient({ ...config, endpoint: info.urls.sqs }),
      dynamodb: new DynamoDBClient({ ...config, endpoint: info.urls.dynamodb }),
      eventbridge: new EventBridgeClient({ ...config, endpoint: info.urls.eventbridge }),
    });
    const calls = async ({ sqs, dynamodb, eventbridge }: ReturnType<typeof clients>) => {
      const settled = await Promise.allSettled([
        sqs.send(
          new GetQueueUrlCommand({ QueueName: new URL(queueUrl('contact')).pathname.split('/').pop()! }),
        ),
        dynamodb.send(new ListTablesCommand({})),
        eventbridge.send(
          new PutEventsCommand({
            Entries: [
              {
                EventBusName: 'crm-webhook-receiver-local',
                Source: 'test',
                DetailType: 't',
                Detail: '{}',
              },
            ],
          }),
        ),
      ]);
      for (const client of [sqs, dynamodb, eventbridge]) client.destroy();
      return settled.map((result) =>
        result.status === 'fulfilled' ? 'served' : (result.reason as Error).name,
      );
    };

    expect(await calls(clients(local))).toEqual(['served', 'served', 'served']);
    expect(await calls(clients(other))).toEqual([
      'AccessDeniedException',
      'AccessDeniedException',
      'AccessDeniedException',
    ]);
  });
});
