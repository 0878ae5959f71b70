import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type AlertPublisher, processStateEvent, type StateWorkerDeps } from '../../lib/workers/index.js';
import { dynamoStoreForFile, gapsIn } from '../support/dynamo.js';
import {
  at,
  contactWorker,
  lambdaContext,
  quietObservability,
  rowEvent,
  sqsEvent,
  sqsRecord,
  stateEvent,
} from '../support/workers.js';

const db = dynamoStoreForFile();
let deps: StateWorkerDeps;
let alerts: AlertPublisher & { webhookTooManyErrors: ReturnType<typeof vi.fn> };

beforeEach(() => {
  alerts = { webhookTooManyErrors: vi.fn().mockResolvedValue(undefined) };
  deps = { store: db.store, hooks: {}, alerts, ...quietObservability() };
});

const meta = { messageId: 'm-1' };

describe('webhook-state worker against dynalite', () => {
  it('takes the state from the event name, not from FieldValues.state', async () => {
    const started = {
      ...stateEvent('webhook.started', { primaryKey: 1, context: 'CustA', timestamp: at(1) }),
    };
    started.FieldValues = { ...started.FieldValues!, state: 2 }; // as in the spec's samples
    const { webhook } = await processStateEvent(deps, started, meta);
    expect(webhook).toMatchObject({
      context: 'CustA',
      webhookId: 1,
      webhookName: 'crm-webhook-receiver',
      state: 0,
      stateName: 'Active',
      reportedState: 2,
      events: 42,
      registered: '2018-04-24T10:18:40.4930000+02:00',
      registeredAssociateId: 5,
      updated: '0001-01-01T00:00:00',
      updatedAssociateId: 0,
      lastEventId: started.EventId,
      lastTimestamp: started.Timestamp,
      stateChangedAt: started.Timestamp,
    });
    expect(alerts.webhookTooManyErrors).not.toHaveBeenCalled();
  });

  it('counts each state event by outcome under the metrics the dashboard charts', async () => {
    const addMetric = vi.spyOn(deps.metrics, 'addMetric');
    const started = stateEvent('webhook.started', { primaryKey: 2, context: 'CustM', timestamp: at(2) });
    const older = stateEvent('webhook.stopped', { primaryKey: 2, context: 'CustM', timestamp: at(1) });

    await processStateEvent(deps, started, meta);
    await processStateEvent(deps, started, meta); // redelivered
    await processStateEvent(deps, older, meta);

    expect(addMetric.mock.calls).toEqual([
      ['EventsApplied', 'Count', 1],
      ['EventsDuplicate', 'Count', 1],
      ['EventsLate', 'Count', 1],
    ]);
  });

  it('opens a gap from the last accepted event, alerts once on TooManyErrors, closes the gap on started', async () => {
    const context = 'CustGap';
    const lastRow = rowEvent('contact.changed', { context, primaryKey: 5, timestamp: at(10) });
    await contactWorker(db.store)(sqsEvent([sqsRecord(lastRow)]), lambdaContext); // writes the marker

    const started = stateEvent('webhook.started', { context, primaryKey: 7, timestamp: at(1) });
    const stopped = stateEvent('webhook.stopped', { context, primaryKey: 7, timestamp: at(20) });
    const errors = stateEvent('webhook.errors', { context, primaryKey: 7, timestamp: at(30) });
    const restarted = stateEvent('webhook.started', { context, primaryKey: 7, timestamp: at(40) });
    const { metrics } = deps;
    const addMetric = vi.spyOn(metrics, 'addMetric');

    await processStateEvent(deps, started, meta);
    await processStateEvent(deps, stopped, meta);
    expect(await gapsIn(db.store, context)).toEqual([
      {
        context,
        webhookId: 7,
        webhookName: 'crm-webhook-receiver',
        openedAt: lastRow.Timestamp,
        openedByEventId: stopped.EventId,
      },
    ]);

    const entered = await processStateEvent(deps, errors, meta);
    expect(entered).toMatchObject({
      enteredTooManyErrors: true,
      webhook: { state: 2, stateChangedAt: errors.Timestamp },
    });
    expect(alerts.webhookTooManyErrors).toHaveBeenCalledTimes(1);
    expect(addMetric).toHaveBeenCalledWith('WebhookTooManyErrors', 'Count', 1);
    await processStateEvent(deps, errors, meta); // redelivery: no second alert
    expect(alerts.webhookTooManyErrors).toHaveBeenCalledTimes(1);
    expect((await gapsIn(db.store, context))[0]!.openedByEventId).toBe(stopped.EventId);

    const { webhook } = await processStateEvent(deps, restarted, meta);
    expect(webhook).toMatchObject({
      state: 0,
      stateName: 'Active',
      stateChangedAt: restarted.Timestamp,
      eventCount: 4,
    });
    expect(await gapsIn(db.store, context)).toEqual([
      {
        context,
        webhookId: 7,
        webhookName: 'crm-webhook-receiver',
        openedAt: lastRow.Timestamp,
        openedByEventId: stopped.EventId,
        closedAt: restarted.Timestamp,
        closedByEventId: restarted.EventId,
      },
    ]);
    expect((await db.store.listWebhooks()).map((hook) => [hook.context, hook.webhookId])).toContainEqual([
      context,
      7,
    ]);
    expect(await gapsIn(db.store)).toEqual(expect.arrayContaining(await gapsIn(db.store, context)));
  });

  it('a late stopped does not move the state back but still records the closed gap it implies', async () => {
    const context = 'CustLate';
    const started = stateEvent('webhook.started', { context, primaryKey: 3, timestamp: at(1) });
    const stopped = stateEvent('webhook.stopped', { context, primaryKey: 3, timestamp: at(2) });
    const restarted = stateEvent('webhook.started', { context, primaryKey: 3, timestamp: at(3) });
    await processStateEvent(deps, started, meta);
    await processStateEvent(deps, restarted, meta);
    const late = await processStateEvent(deps, stopped, meta);

    expect(late.outcome).toBe('late');
    expect(late.webhook).toMatchObject({
      state: 0,
      lastEventId: restarted.EventId,
      stateChangedAt: restarted.Timestamp,
    });
    expect(await gapsIn(db.store, context)).toEqual([
      expect.objectContaining({
        openedAt: stopped.Timestamp, // nothing accepted for the context: the state event's own Timestamp
        openedByEventId: stopped.EventId,
        closedByEventId: restarted.EventId,
      }),
    ]);
  });

  it('errors for a webhook first seen: alert and an open gap; without an alert publisher it still logs', async () => {
    const errors = stateEvent('webhook.errors', { context: 'CustNew', primaryKey: 11, timestamp: at(5) });
    const { logger } = deps;
    const error = vi.spyOn(logger, 'error');
    const result = await processStateEvent({ ...deps, alerts: undefined }, errors, meta);
    expect(result.enteredTooManyErrors).toBe(true);
    expect(error).toHaveBeenCalledWith(
      expect.stringContaining('TooManyErrors'),
      expect.objectContaining({ webhookId: 11 }),
    );
    expect(await gapsIn(db.store, 'CustNew')).toEqual([
      expect.objectContaining({ openedByEventId: errors.EventId, openedAt: errors.Timestamp }),
    ]);
  });

  it('a failing alert publish fails the record and nothing is written, so the retry alerts again', async () => {
    const errors = stateEvent('webhook.errors', { context: 'CustSnsDown', primaryKey: 12, timestamp: at(5) });
    alerts.webhookTooManyErrors.mockRejectedValueOnce(new Error('SNS down'));
    await expect(processStateEvent(deps, errors, meta)).rejects.toThrow('SNS down');
    expect((await db.store.loadWebhook('CustSnsDown', 12)).item).toBeUndefined();
    await processStateEvent(deps, errors, meta);
    expect(alerts.webhookTooManyErrors).toHaveBeenCalledTimes(2);
  });
});
