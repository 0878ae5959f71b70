import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore } from '../../lib/store/index.js';
import type { Store } from '../../lib/store/types.js';
import { findEvent } from '../../local/admin/find-event.js';
import { createTable } from '../../local/emulators/resources.js';
import { type LocalDynamo, startDynalite } from '../support/dynamo.js';

const record = (eventId: string, primaryKey: number) => ({
  context: 'Cust#1',
  entity: 'contact' as const,
  primaryKey,
  seq: `2025-05-14T12:00:00Z#${eventId}`,
  eventId,
  eventName: 'contact.created',
  timestamp: '2025-05-14T12:00:00Z',
  changedByAssociateId: 7,
  echo: false,
  payload: {
    EventId: eventId,
    ContextIdentifier: 'Cust#1',
    Event: 'contact.created',
    Timestamp: '2025-05-14T12:00:00Z',
    ChangedByAssociateId: 7,
  },
});

describe('find an event in the local tables', () => {
  let dynamo: LocalDynamo;
  let store: Store;
  let eventsTable: string;

  beforeAll(async () => {
    dynamo = await startDynalite();
    const tables = await dynamo.createTables();
    eventsTable = tables.events;
    store = createDynamoStore({ client: dynamo.doc, tables, retentionDays: 1 });
    await store.recordEvent(record('e-42', 42));
    await store.recordEvent(record('e-43', 43));
  });

  afterAll(() => dynamo.close());

  const lookup = (table: string, eventId: string) =>
    findEvent({ store, doc: dynamo.doc, eventsTable: table, queues: [], peek: () => [] }, eventId);

  it('by the EventId index the definitions give the events table: the row it went to', async () => {
    const found = await lookup(eventsTable, 'e-42');

    expect(found.searched).toMatch(/^local: the events table by its EventId index/);
    expect(found.places).toEqual([
      expect.objectContaining({ where: 'row', context: 'Cust#1', entity: 'contact', primaryKey: 42 }),
    ]);
    expect((await lookup(eventsTable, 'e-none')).places).toEqual([]);
  });

  it('by a scan when the events table was created before the index (dynalite cannot add one)', async () => {
    const old = `${eventsTable}-old`;
    await createTable(dynamo.client, {
      TableName: old,
      AttributeDefinitions: [
        { AttributeName: 'rowKey', AttributeType: 'S' },
        { AttributeName: 'seq', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'rowKey', KeyType: 'HASH' },
        { AttributeName: 'seq', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    });
    const oldStore = createDynamoStore({
      client: dynamo.doc,
      tables: { rows: 'unused', events: old, webhooks: 'unused' },
      retentionDays: 1,
    });
    await oldStore.recordEvent(record('e-44', 44));

    const found = await findEvent(
      {
        store: { ...store, listRowEvents: oldStore.listRowEvents, listWebhooks: async () => [] },
        doc: dynamo.doc,
        eventsTable: old,
        queues: [],
        peek: () => [],
      },
      'e-44',
    );

    expect(found.searched).toMatch(/^local: a scan of the events table/);
    expect(found.places).toEqual([expect.objectContaining({ where: 'row', primaryKey: 44 })]);
  });
});
