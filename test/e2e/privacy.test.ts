import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleBody } from '../../tools/samples.js';
import { foundUnder } from '../support/data-dir.js';
import {
  adminJson,
  freePort,
  postDelivery,
  type RuntimeProcess,
  spawnLocalRuntime,
} from '../support/local-runtime.js';

/**
 * A person's data through `npm start` (logging at DEBUG, the most a stage logs) and out again: created,
 * changed, withdrawn consent, parked once, dead-lettered once, published to a subscriber that is down
 * (so in the bus's dead letters); then erased with POST /erase. No API
 * answers any of its strings afterwards, no file under DATA_DIR holds them after a restart, and no log
 * line of either run ever printed one.
 */
const SECRET = 'e2e-privacy-secret';
const CONTEXT = 'CustPrivacy';
const PERSONAL = {
  firstname: 'Yhnujm-Firstname',
  lastname: 'Ikolp-Lastname',
  birthDate: '1958-11-30-Rfvtgb',
};
const CONSENT_FIELD = 'Wsxcde-consent-field';
const STRINGS = [...Object.values(PERSONAL), CONSENT_FIELD];
/** Person 78's (a row and a parked message): never erased, so the greps below are seen to find what is there. */
const KEPT = 'Kept-Person-78-Okmijn';
const env: Record<string, string> = {
  WEBHOOK_SECRET: SECRET,
  LOCAL_VISIBILITY_TIMEOUT: '1',
  POWERTOOLS_LOG_LEVEL: 'DEBUG',
  LOCAL_BUS_BACKOFF_MS: '20',
};

let dataDir: string;
let subscriptionsDir: string;
let runtime: RuntimeProcess;
/** The output of the runs that ended. */
const outputs: string[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-privacy-e2e-'));
  // Published once: to a subscriber that is down, so every person event ends in the bus's dead letters.
  subscriptionsDir = mkdtempSync(join(tmpdir(), 'crm-privacy-subscriptions-'));
  env.SUBSCRIPTIONS_FILE = join(subscriptionsDir, 'subscriptions.yml');
  writeFileSync(
    env.SUBSCRIPTIONS_FILE,
    `- name: people-down
  pattern: { detail-type: [{ prefix: "person." }] }
  target: { url: "http://127.0.0.1:${await freePort()}/down" }
  retry: { attempts: 0, maxAgeSeconds: 60 }
`,
  );
  runtime = await spawnLocalRuntime({ dataDir, env });
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(subscriptionsDir, { recursive: true, force: true });
}, 30_000);

async function deliver(body: Record<string, unknown>): Promise<number> {
  const answer = await postDelivery(runtime.webhookUrl, body, SECRET);
  await answer.text();
  return answer.status;
}

const admin = <T = unknown>(path: string, init?: RequestInit) => adminJson<T>(runtime.adminUrl, path, init);

const person = (event: string, primaryKey: number, extra: Record<string, unknown> = {}) => ({
  ...buildSampleBody(event, { context: CONTEXT, primaryKey }),
  ...extra,
});

/** Every read API's answer about the context, as one text. */
async function everythingShown(eventIds: string[]): Promise<string> {
  const paths = [
    `/rows/${CONTEXT}/person/77`,
    `/rows/${CONTEXT}/person/77/events`,
    '/parked',
    '/queues/entities/dlq',
    '/queues/entities/messages',
    '/subscriptions',
    ...eventIds.map((id) => `/events/${id}`),
  ];
  const answers = await Promise.all(
    paths.map(async (path) => (await fetch(`${runtime.adminUrl}${path}`)).text()),
  );
  return answers.join('\n');
}

interface Info {
  urls: { sqs: string; dynamodb: string };
  queues: Array<{ key: string; url: string }>;
  tables: Record<string, string>;
}

/** The stored form of the row's and its history's data (deflated, then base64 in dynalite's JSON). */
async function storedForms(info: Info, primaryKey: number): Promise<string[]> {
  const client = new DynamoDBClient({
    endpoint: info.urls.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const rowKey = { S: `person#${primaryKey}#${CONTEXT}` };
    const { Item } = await client.send(new GetItemCommand({ TableName: info.tables.rows, Key: { rowKey } }));
    const { Items = [] } = await client.send(
      new QueryCommand({
        TableName: info.tables.events,
        KeyConditionExpression: 'rowKey = :k',
        ExpressionAttributeValues: { ':k': rowKey },
      }),
    );
    return [Item?.fieldValuesJson?.B, ...Items.map((item) => item.body?.B)]
      .filter((bytes) => bytes !== undefined)
      .map((bytes) => Buffer.from(bytes).toString('base64'));
  } finally {
    client.destroy();
  }
}

const shown = (text: string, needles: readonly string[]) => needles.filter((needle) => text.includes(needle));

describe('personal data through npm start', () => {
  it('is erased from every API, from DATA_DIR after a restart, and never reaches a log line', async () => {
    const created = person('person.created', 77, { FieldValues: { person_id: 77, ...PERSONAL } });
    const events = [
      created,
      person('person.changed', 77, { Changes: ['firstname', 'updated'] }),
      person('person.unconsented', 77, { Changes: ['legalBase', CONSENT_FIELD] }),
      person('person.created', 78, { FieldValues: { person_id: 78, firstname: KEPT } }),
    ];
    for (const body of events) expect(await deliver(body)).toBe(200);
    // Parked once: authentic, but its Changes is no list.
    const broken = person('person.changed', 77, { Changes: PERSONAL.lastname, FieldValues: PERSONAL });
    expect(await deliver(broken)).toBe(200);
    expect(await deliver(person('person.changed', 78, { Changes: KEPT }))).toBe(200);
    // Dead-lettered once: a message on the person's queue the worker can never handle.
    const { body: info } = await admin<Info>('/info');
    const sqs = new SQSClient({
      endpoint: info.urls.sqs,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: info.queues.find((queue) => queue.key === 'entities')!.url,
        MessageBody: JSON.stringify({
          ContextIdentifier: CONTEXT,
          Entity: 'person',
          PrimaryKey: 77,
          FieldValues: PERSONAL,
        }),
        MessageGroupId: `${CONTEXT}:person:77`,
        MessageDeduplicationId: 'poison-77',
      }),
    );
    sqs.destroy();
    await expect
      .poll(
        async () =>
          (await admin<Array<{ key: string; dlq: number }>>('/queues')).body.find((q) => q.key === 'entities')
            ?.dlq,
        {
          timeout: 30_000,
          interval: 250,
        },
      )
      .toBe(1);
    await expect
      .poll(
        async () => (await admin<{ eventCount?: number }>(`/rows/${CONTEXT}/person/77`)).body.eventCount,
        { timeout: 10_000 },
      )
      .toBe(3);
    // The bus's dead letters of the person's three events (and 78's, which stays).
    await expect
      .poll(async () => (await admin<Array<{ dlq: unknown[] }>>('/subscriptions')).body[0]?.dlq.length, {
        timeout: 10_000,
      })
      .toBe(4);
    const eventIds = [...events, broken].map((body) => String(body.EventId));
    const stored = await storedForms(info, 77);
    const kept = await storedForms(info, 78);
    expect(stored.length).toBeGreaterThan(3);
    expect(shown(await everythingShown(eventIds), STRINGS)).toEqual(STRINGS);

    const { status, body: report } = await admin(`/erase?context=${CONTEXT}&entity=person&id=77`, {
      method: 'POST',
    });

    expect(status).toBe(200);
    expect(report).toMatchObject({ rows: 1, historyRecords: 3, published: 1, complete: true });
    expect((report as { messages: Record<string, number> }).messages).toMatchObject({ bus: 3 });
    expect(shown(await everythingShown(eventIds), STRINGS)).toEqual([]);
    expect(JSON.stringify((await admin(`/rows/${CONTEXT}/person/78`)).body)).toContain(KEPT);

    outputs.push(runtime.output());
    await runtime.stop();
    runtime = await spawnLocalRuntime({ dataDir, env });
    expect(shown(await everythingShown(eventIds), STRINGS)).toEqual([]);
    outputs.push(runtime.output());

    // Every file: the SQS journal, the bus journal, LevelDB's (uncompressed) tables and logs. The
    // parked and dead-letter messages are plain text there; the row and history as base64 of deflate.
    const found = foundUnder(dataDir, [...STRINGS, ...stored, KEPT, ...kept]);
    expect(Object.keys(found).sort()).toEqual([KEPT, ...kept].sort());
    // The logs of both runs, at DEBUG: not one of the strings, on any line.
    const lines = outputs.join('\n').split('\n');
    // They did log: each event processed (DEBUG), the poison message's failures (ERROR), the erasure (INFO).
    expect(lines.filter((line) => line.includes('row event processed')).length).toBeGreaterThanOrEqual(4);
    expect(lines.some((line) => line.includes('record failed'))).toBe(true);
    expect(lines.filter((line) => shown(line, STRINGS).length > 0)).toEqual([]);
  }, 120_000);
  it('the CRM’s hard delete (person.deleted) erases the row and its history from the tables and their files', async () => {
    const deletedPerson = { firstname: 'Qscwdv-Deleted', lastname: 'Efvrgb-Deleted' };
    const created = person('person.created', 90, { FieldValues: { person_id: 90, ...deletedPerson } });
    expect(await deliver(created)).toBe(200);
    await expect
      .poll(
        async () => (await admin<{ eventCount?: number }>(`/rows/${CONTEXT}/person/90`)).body.eventCount,
        {
          timeout: 10_000,
        },
      )
      .toBe(1);
    const { body: info } = await admin<Info>('/info');
    const stored = await storedForms(info, 90);
    const strings = [...Object.values(deletedPerson), ...stored];
    expect(Object.keys(foundUnder(join(dataDir, 'dynamodb'), strings)).length).toBeGreaterThan(0);

    expect(await deliver(person('person.deleted', 90, { Values: { person_id: 90, contact_id: 1234 } }))).toBe(
      200,
    );
    await expect
      .poll(async () => (await admin<{ status?: string }>(`/rows/${CONTEXT}/person/90`)).body.status, {
        timeout: 10_000,
      })
      .toBe('deleted');
    const answers = await Promise.all(
      [
        `/rows/${CONTEXT}/person/90`,
        `/rows/${CONTEXT}/person/90/events`,
        `/events/${String(created.EventId)}`,
      ].map(async (path) => (await fetch(`${runtime.adminUrl}${path}`)).text()),
    );
    expect(shown(answers.join('\n'), Object.values(deletedPerson))).toEqual([]);

    outputs.push(runtime.output());
    await runtime.stop();
    runtime = await spawnLocalRuntime({ dataDir, env });
    // The tables' files only: the copies in the queues and the bus (here its dead letters) are the
    // erasure on request's to remove (docs/privacy.md).
    expect(foundUnder(join(dataDir, 'dynamodb'), strings)).toEqual({});
  }, 60_000);
});
