import { describe, expect, it } from 'vitest';
import { reconcileMessage } from '../../lib/reconcile/request.js';
import { ManualRequestError, manualRequest } from '../../lib/reconcile/triggers/manual.js';

const NOW = new Date('2026-11-27T12:00:00.000Z');

describe('manualRequest: a reconcile asked for by a person', () => {
  it('a window of a context: reason manual, requested now, a valid message of the reconcile queue', () => {
    const request = manualRequest({ context: 'Cust1', from: '2026-11-27T10:00:00Z' }, NOW);
    expect(request).toEqual({
      context: 'Cust1',
      reason: 'manual',
      from: '2026-11-27T10:00:00Z',
      requestedAt: '2026-11-27T12:00:00.000Z',
    });
    expect(reconcileMessage(request).groupId).toBe('Cust1');
  });

  it('the same request twice in a minute is one message (same deduplication id); a minute later, another', () => {
    const params = { context: 'Cust1', from: '2026-11-27T10:00:00Z' };
    const at = (time: string) => reconcileMessage(manualRequest(params, new Date(`2026-11-27T${time}Z`)));
    expect(at('12:00:59.999').deduplicationId).toBe(at('12:00:00.000').deduplicationId);
    expect(at('12:01:00.000').deduplicationId).not.toBe(at('12:00:59.999').deduplicationId);
    expect(at('12:00:30.000').body).toContain('"requestedAt":"2026-11-27T12:00:00.000Z"');
  });

  it('to, entities (listed once each), full', () => {
    expect(
      manualRequest(
        {
          context: 'Cust1',
          from: '2026-11-27T10:00:00+01:00',
          to: '2026-11-27T11:00:00Z',
          entities: 'contact, person,contact,list.category,y_equipment,ticket',
          full: 'false',
        },
        NOW,
      ),
    ).toMatchObject({
      to: '2026-11-27T11:00:00Z',
      entities: ['contact', 'person', 'list.category', 'y_equipment', 'ticket'],
    });
    expect(manualRequest({ context: 'Cust1', full: 'true', webhookId: '9' }, NOW).webhookId).toBe(9);
    expect(manualRequest({ context: 'Cust1', full: 'true', maxDeletes: '40' }, NOW).maxDeletes).toBe(40);
    const full = manualRequest({ context: 'Cust1', full: 'true' }, NOW);
    expect(full).toEqual({ context: 'Cust1', reason: 'manual', full: true, requestedAt: NOW.toISOString() });
  });

  it.each([
    [{}, 'context: required: a ContextIdentifier of 1 to 100 letters, digits, _ or -'],
    [{ context: 'Cust 1', from: '2026-11-27T10:00:00Z' }, 'context: required'],
    [{ context: 'Cust1' }, 'from: required unless full=true'],
    [{ context: 'Cust1', from: 'yesterday' }, 'from: yesterday: an ISO 8601 time with its offset'],
    [{ context: 'Cust1', from: '2026-11-27T10:00:00' }, 'from: 2026-11-27T10:00:00: an ISO 8601 time'],
    [{ context: 'Cust1', from: '2026-11-28T10:00:00Z' }, 'from: 2026-11-28T10:00:00Z is in the future'],
    [
      { context: 'Cust1', from: '2026-11-27T10:00:00Z', to: '2026-11-27T09:00:00Z' },
      'to: 2026-11-27T09:00:00Z is before from',
    ],
    [{ context: 'Cust1', from: '2026-11-27T10:00:00Z', to: 'now' }, 'to: now: an ISO 8601 time'],
    [{ context: 'Cust1', full: 'yes' }, 'full: yes: true or false accepted'],
    [{ context: 'Cust1', full: 'true', entities: 'contact,,person' }, 'entities: a comma-separated list'],
    [
      { context: 'Cust1', full: 'true', entities: 'contakt' },
      'entities: contakt cannot be reconciled (not an entity of the CRM): contact, person',
    ],
    [
      { context: 'Cust1', full: 'true', entities: 'contact,quote' },
      'entities: quote cannot be reconciled (its events carry no FieldValues: nothing to compare)',
    ],
    [
      { context: 'Cust1', full: 'true', entities: 'list.12' },
      'entities: list.12 cannot be reconciled (a list named by its id: its table is unknown)',
    ],
    [
      { context: 'Cust1', full: 'true', form: '2026-11-27T10:00:00Z' },
      'form: unknown; context, from, to, entities, full, webhookId, maxDeletes accepted',
    ],
    [
      { context: 'Cust1', from: '2026-11-27T10:00:00Z', webhookId: '9.5' },
      'webhookId: 9.5: a WebhookId (a whole number) accepted',
    ],
    [{ context: 'Cust1', from: '2026-11-27T10:00:00Z', webhookId: '99999999999999999' }, 'webhookId: 99999'],
    [
      { context: 'Cust1', full: 'true', maxDeletes: '-1' },
      'maxDeletes: -1: a whole number from 0 to 9999999 accepted',
    ],
  ])('%o is refused in one line naming the parameter', (params, message) => {
    const error = (() => {
      try {
        manualRequest(params, NOW);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ManualRequestError);
    expect((error as Error).message.startsWith(message)).toBe(true);
    expect((error as Error).message).not.toContain('\n');
  });
});
