import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import type { RowEvent } from '../../lib/events/index.js';
import type { Row } from '../../lib/model/types.js';
import { apply } from '../../lib/projection.js';
import { compressBody, decompressBody } from '../../lib/store/body-codec.js';
import { createDynamoStore, InvalidItemError } from '../../lib/store/index.js';
import { fromRowItem, toRowItem } from '../../lib/store/row-item.js';
import { itemBytes } from '../../scripts/cost/item-bytes.js';
import { buildSampleBody } from '../../tools/samples.js';
import { at, rowEvent } from '../support/workers.js';

const dynamo = mockClient(DynamoDBDocumentClient);
afterEach(() => dynamo.reset());

const store = () =>
  createDynamoStore({
    client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
    tables: { rows: 'rows', events: 'events', webhooks: 'webhooks' },
    retentionDays: 30,
    now: () => new Date('2025-05-14T12:00:00.000Z'),
  });

/** A contact.created of about 2 KB: the spec's body with a FieldValues selection of every created field. */
function largeCreated(): Record<string, unknown> {
  const body = buildSampleBody('contact.created', { primaryKey: 418_233 });
  const names = body.Changes as string[];
  const extra = Object.fromEntries(
    names.map((name, i) => [
      name,
      i % 2 === 0 ? `${name} ${(i * 7919).toString(36)} Nordlys Maskin og Verktøy AS` : i * 100_003,
    ]),
  );
  return { ...body, FieldValues: { ...extra, ...(body.FieldValues as object) } };
}

describe('stored items', () => {
  it('a 2 KB contact.created makes a history item under 1 KB, listed back exactly as before', async () => {
    dynamo.on(PutCommand).resolves({});
    const body = largeCreated();
    const raw = JSON.stringify(body);
    expect(raw.length).toBeGreaterThan(2000);
    const event = body as unknown as RowEvent;

    await store().recordEvent({
      context: event.ContextIdentifier,
      entity: 'contact',
      primaryKey: event.PrimaryKey,
      seq: 's',
      eventId: event.EventId,
      eventName: event.Event,
      timestamp: event.Timestamp,
      changedByAssociateId: event.ChangedByAssociateId,
      echo: false,
      signatureVerified: true,
      receivedAt: '2025-05-14T12:00:01.000Z',
      payload: body,
      body: raw,
    });
    const put = dynamo.commandCalls(PutCommand)[0]!.args[0].input;
    expect(itemBytes(put.Item)).toBeLessThanOrEqual(1024);
    expect(put.ConditionExpression).toBe('attribute_not_exists(rowKey)');
    expect(put.Item).toMatchObject({
      expiresAt: Date.parse('2025-05-14T12:00:00Z') / 1000 + 30 * 86_400,
      // The key of the events table's EventId index.
      eventId: event.EventId,
    });

    dynamo.on(QueryCommand).resolves({ Items: [put.Item!] });
    expect(await store().listRowEvents(event.ContextIdentifier, 'contact', event.PrimaryKey)).toEqual([
      {
        context: event.ContextIdentifier,
        entity: 'contact',
        primaryKey: event.PrimaryKey,
        seq: 's',
        eventId: event.EventId,
        eventName: 'contact.created',
        timestamp: event.Timestamp,
        changedByAssociateId: event.ChangedByAssociateId,
        echo: false,
        signatureVerified: true,
        receivedAt: '2025-05-14T12:00:01.000Z',
        recordedAt: '2025-05-14T12:00:00.000Z',
        expiresAt: put.Item!.expiresAt,
        payload: body,
        body: raw,
      },
    ]);
  });

  it('the body codec gives back the exact bytes', () => {
    const raw = `${JSON.stringify(largeCreated(), null, 2)} \u00e6\u00f8\u00e5 \u{1f600}`;
    expect(decompressBody(compressBody(raw))).toBe(raw);
  });

  it('a row after a created and nine changed events is an item under 1 KB and reads back equal', () => {
    const key = { primaryKey: 418_233 };
    const events = [
      rowEvent('contact.created', { ...key, timestamp: at(0) }),
      ...Array.from({ length: 9 }, (_, i) => rowEvent('contact.changed', { ...key, timestamp: at(i + 1) })),
    ];
    const row = events.reduce<Row | undefined>((current, event) => apply(current, event), undefined)!;
    const item = toRowItem(row, 10);
    expect(itemBytes(item)).toBeLessThanOrEqual(1024);
    expect(fromRowItem(structuredClone(item))).toEqual(row);
  });

  it('a row read back keys its changed fields by name only: `constructor` is there when named, else absent', () => {
    const change = {
      ...rowEvent('contact.changed', { primaryKey: 9, timestamp: at(1) }),
      Changes: ['__proto__'],
    };
    const row = fromRowItem(structuredClone(toRowItem(apply(undefined, change), 1)));

    expect(row.changedFields).toEqual(['__proto__']);
    expect(Object.keys(row.changedFieldSeqs)).toEqual(['__proto__']);
    for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
      expect(row.changedFieldSeqs[name]).toBeUndefined();
    }
  });

  it('an item in a format the store never wrote is refused by name, not read through a cast', async () => {
    const row = apply(undefined, rowEvent('contact.created', { primaryKey: 7, timestamp: at(0) }));
    const { merge: _merge, ...unpacked } = toRowItem(row, 1);
    expect(() => fromRowItem(unpacked)).toThrow(InvalidItemError);
    expect(() => fromRowItem(unpacked)).toThrow(/rows item contact#7#.* is not in a stored format \(merge\)/);

    const { body: _body, ...unbodied } = { rowKey: 'contact#7#Cust', seq: 's', body: compressBody('{}') };
    dynamo.on(QueryCommand).resolves({ Items: [{ ...unbodied, payload: '{}', echo: false }] });
    await expect(store().listRowEvents('Cust', 'contact', 7)).rejects.toThrow(InvalidItemError);
  });
});
