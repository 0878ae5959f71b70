import { beforeAll, describe, expect, it } from 'vitest';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { RowStatus } from '../../lib/model/types.js';
import { createEntitiesWorker, createRowWorker, type SqsBatchHandler } from '../../lib/workers/index.js';
import { ALL_SAMPLE_EVENTS, buildSampleBody } from '../../tools/samples.js';
import { policy, RecordingQueue, request } from '../support/delivery.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { at, lambdaContext, rowWorkerDeps, sqsEvent, sqsRecord } from '../support/workers.js';

/**
 * Every family of the catalogue, through the ingest (route) and its worker against dynalite (row
 * status and history): a valid delivery, invalid ones, and the older shape without FieldValues.
 */
const db = dynamoStoreForFile();
const workers = new Map<string, SqsBatchHandler>();

beforeAll(() => {
  const deps = rowWorkerDeps(db.store);
  workers.set('contact', createRowWorker({ ...deps, entity: 'contact' }));
  workers.set('activity', createRowWorker({ ...deps, entity: 'activity' }));
  workers.set('entities', createEntitiesWorker(deps));
});

/** What each verb does to the status of a row that was created first (an action changes nothing). */
const STATUS_AFTER: Record<string, RowStatus> = {
  created: 'active',
  changed: 'active',
  softdeleted: 'softdeleted',
  deleted: 'deleted',
};

const ROW_EVENTS = ALL_SAMPLE_EVENTS.filter((name) => !name.startsWith('webhook.'));
const entityOf = (name: string) => name.slice(0, name.lastIndexOf('.'));
const verbOf = (name: string) => name.slice(name.lastIndexOf('.') + 1);
const queueOf = (entity: string) => (entity === 'contact' || entity === 'activity' ? entity : 'entities');
let nextKey = 5000;
const START = Date.now() - 60_000;
const when = (seconds: number) => at(seconds, START);

/** Delivers `body` through the ingest and, when routed, through its queue's worker. */
async function deliver(body: Record<string, unknown>) {
  const queue = new RecordingQueue();
  const response = await handleDelivery(request(body), policy(), queue);
  const message = queue.sent[0];
  if (response.decision.kind === 'accept' && message !== undefined) {
    const worker = workers.get(message.queue);
    const result = await worker!(sqsEvent([sqsRecord(body, { raw: message.body })]), lambdaContext);
    expect(result.batchItemFailures).toEqual([]);
  }
  return { response, message };
}

describe('every family of the catalogue', () => {
  it('covers the spec, the fixed catalogue, lists and custom tables', () => {
    expect(ROW_EVENTS).toEqual(
      expect.arrayContaining([
        'contact.softdeleted',
        'person.created',
        'person.softdeleted',
        'person.consented',
        'sale.sold',
        'quote.ordered',
        'chatsession.message',
        'document.edited',
        'ticket.changed',
        'list.category.softdeleted',
        'y_equipment.created',
      ]),
    );
    // The spec's seven row events, the catalogue's 40 fixed names, 3 list and 3 custom table examples.
    expect(ROW_EVENTS).toHaveLength(7 + 40 + 6);
  });

  it.each(ROW_EVENTS)(
    '%s: routed per row, recorded in the history, the row in the expected status',
    async (name) => {
      const entity = entityOf(name);
      const context = 'CustCat';
      const primaryKey = nextKey++;
      const created = `${entity}.created`;
      const lifecycle = ROW_EVENTS.includes(created) && name !== created ? [created, name] : [name];

      for (const [i, event] of lifecycle.entries()) {
        const { response, message } = await deliver(
          buildSampleBody(event, { context, primaryKey, timestamp: when(i + 1) }),
        );
        expect(response.status).toBe(200);
        expect(message).toMatchObject({
          queue: queueOf(entity),
          groupId: `${context}:${entity}:${primaryKey}`,
        });
      }

      const row = await db.store.getRow(context, entity, primaryKey);
      expect(row).toMatchObject({
        entity,
        status: STATUS_AFTER[verbOf(name)] ?? 'active',
        lastEvent: name,
        eventCount: lifecycle.length,
      });
      const history = await db.store.listRowEvents(context, entity, primaryKey);
      expect(history.map((record) => record.eventName)).toEqual(lifecycle);
    },
  );

  it.each(ROW_EVENTS)(
    '%s: a body that breaks the envelope, or names another Entity, is parked',
    async (name) => {
      const body = buildSampleBody(name);
      const broken = [
        { ...body, PrimaryKey: 1.5 },
        { ...body, Changes: [1] },
        { ...body, Entity: 'somethingelse' },
        { ...body, FieldValues: 'x' },
      ];
      for (const invalid of broken) {
        const { response, message } = await deliver(invalid);
        expect(response.status).toBe(200);
        expect(message).toMatchObject({ queue: 'parked', attributes: { reason: 'invalid-event' } });
      }
    },
  );

  it.each(ROW_EVENTS.filter((name) => verbOf(name) === 'created'))(
    '%s without FieldValues (older CRM versions): applied, a row without fieldValues',
    async (name) => {
      const context = 'CustOld';
      const primaryKey = nextKey++;
      const { FieldValues: _, ...body } = buildSampleBody(name, { context, primaryKey });
      const { response } = await deliver(body);
      expect(response.decision).toMatchObject({ kind: 'accept', olderShape: true });
      const row = await db.store.getRow(context, entityOf(name), primaryKey);
      expect(row).toMatchObject({ status: 'active', createdAt: body.Timestamp });
      expect(row?.fieldValues).toBeUndefined();
    },
  );

  it.each(['webhook.started', 'webhook.stopped', 'webhook.errors'])(
    '%s without FieldValues (older CRM versions): accepted for the webhook-state queue, unsigned',
    async (name) => {
      const { FieldValues: _, ...body } = buildSampleBody(name, { primaryKey: 77 });
      const queue = new RecordingQueue();
      const response = await handleDelivery(request(body, { secret: null }), policy(), queue);
      expect(response.status).toBe(200);
      expect(response.decision).toMatchObject({ kind: 'accept', olderShape: true });
      expect(queue.sent[0]?.queue).toBe('webhookState');
    },
  );

  it('keeps a custom table’s typed strings exactly as delivered', async () => {
    const context = 'CustTyped';
    const primaryKey = nextKey++;
    const body = buildSampleBody('y_equipment.created', { context, primaryKey });
    await deliver(body);
    const row = await db.store.getRow(context, 'y_equipment', primaryKey);
    expect(row?.fieldValues).toEqual(body.FieldValues);
    expect(row?.fieldValuesJson).toContain('"x_bought":"[DT:09/16/2025 10:11:12]"');
  });

  it('an action after a soft delete leaves the row softdeleted; a change restores it', async () => {
    const context = 'CustStatus';
    const primaryKey = nextKey++;
    const events = ['person.created', 'person.softdeleted', 'person.consented'];
    for (const [i, event] of events.entries())
      await deliver(buildSampleBody(event, { context, primaryKey, timestamp: when(i + 1) }));
    expect(await db.store.getRow(context, 'person', primaryKey)).toMatchObject({
      status: 'softdeleted',
      lastEvent: 'person.consented',
    });
    await deliver(buildSampleBody('person.changed', { context, primaryKey, timestamp: when(4) }));
    expect((await db.store.getRow(context, 'person', primaryKey))?.status).toBe('active');
  });

  it('parks names outside the catalogue and its grammar, typos included', async () => {
    for (const [event, entity] of [
      ['contac.created', 'contac'],
      ['invoice.created', 'invoice'],
      ['list.category.deleted', 'list.category'],
      ['y_equipment.softdeleted', 'y_equipment'],
      ['Y_EQUIPMENT.created', 'Y_EQUIPMENT'],
    ]) {
      const body = { ...buildSampleBody('contact.changed'), Event: event, Entity: entity };
      const { message } = await deliver(body);
      expect(message).toMatchObject({ queue: 'parked', attributes: { reason: 'unknown-event' } });
    }
  });

  it('ENTITIES: events of another entity are parked as entity-not-enabled, answered 200; state events never', async () => {
    const only = policy({ entities: (entity) => entity === 'contact' || entity === 'activity' });
    const queue = new RecordingQueue();
    const person = await handleDelivery(request(buildSampleBody('person.created')), only, queue);
    const contact = await handleDelivery(request(buildSampleBody('contact.created')), only, queue);
    const state = await handleDelivery(
      request(buildSampleBody('webhook.started'), { secret: null }),
      only,
      queue,
    );
    expect([person.status, contact.status, state.status]).toEqual([200, 200, 200]);
    expect(queue.sent.map((message) => [message.queue, message.attributes.reason])).toEqual([
      ['parked', 'entity-not-enabled'],
      ['contact', undefined],
      ['webhookState', undefined],
    ]);
    expect(queue.sent[0]?.attributes.detail).toBe('ENTITIES does not include person');
  });
});
