import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { neverMatching } from '../../lib/bus/never-matching.js';
import { loadSubscriptions, parseSubscriptions } from '../../lib/bus/subscriptions.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The warnings for one subscription named `s` with `pattern` (YAML flow). */
const warnings = (pattern: string) =>
  neverMatching(
    parseSubscriptions(
      `- name: s\n  pattern: ${pattern}\n  target: { queue: q }\n`,
      'subscriptions.yml',
      'aws',
    ),
  );

describe('neverMatching', () => {
  it('names a field no published event has, with the nearest one', () => {
    expect(warnings('{ detail-typ: [contact.changed] }')).toEqual([
      'subscription "s" can never match: detail-typ is no field of a published event (did you mean detail-type?)',
    ]);
    expect(warnings('{ detail: { row: { stauts: [active] } } }')).toEqual([
      'subscription "s" can never match: detail.row.stauts is no field of a published event (did you mean status?)',
    ]);
  });

  it('names a detail field close to a known one, but not a custom property the CRM may send', () => {
    expect(warnings('{ detail: { significantChange: [department] } }')).toEqual([
      'subscription "s" can never match: detail.significantChange is no field of a published event (did you mean significantChanges?)',
    ]);
    expect(warnings('{ detail: { customerTier: [gold] } }')).toEqual([]);
  });

  it('names an event the receiver never publishes and a source other than its own', () => {
    expect(warnings('{ detail-type: [contac.changed, sale.sold, y_equipment.created] }')).toEqual([
      'subscription "s" can never match: detail-type contac.changed is no event the receiver publishes (did you mean contact.changed?)',
    ]);
    expect(warnings('{ source: [crm], $or: [{ detail-typ: [x] }, { id: [y] }] }')).toEqual([
      'subscription "s" can never match: source is always crm-webhook-receiver, not crm',
      'subscription "s" can never match: detail-typ is no field of a published event (did you mean detail-type?)',
    ]);
  });

  it('says nothing of a field tested for absence, nor of the shipped example', () => {
    expect(warnings('{ detail: { significantChange: [{ exists: false }] } }')).toEqual([]);
    const example = loadSubscriptions({
      root: ROOT,
      mode: 'aws',
      env: { SUBSCRIPTIONS_FILE: 'subscriptions.example.yml' },
    });
    expect(neverMatching(example)).toEqual([]);
  });
});

describe('neverMatching: the receiver’s lifecycle events (lib/reconcile/records/lifecycle.ts)', () => {
  it('knows every lifecycle type and the fields of their detail', () => {
    expect(
      warnings(
        '{ detail-type: [receiver.gap.opened, receiver.gap.closed, receiver.webhook.reactivated, receiver.reconcile.completed, receiver.reconcile.failed] }',
      ),
    ).toEqual([]);
    expect(
      warnings(
        '{ detail-type: [receiver.reconcile.completed], detail: { context: [Cust1], webhookId: [{ numeric: [">", 0] }], rowsChanged: [{ numeric: [">", 0] }], rowsDeleted: [{ exists: true }] } }',
      ),
    ).toEqual([]);
    expect(
      warnings(
        '{ detail-type: [receiver.gap.opened], detail: { webhookName: [data], openedAt: [{ exists: true }] } }',
      ),
    ).toEqual([]);
  });

  it('names a lifecycle type or field misspelt, with the nearest one', () => {
    expect(warnings('{ detail-type: [receiver.gap.open] }')).toEqual([
      'subscription "s" can never match: detail-type receiver.gap.open is no event the receiver publishes (did you mean receiver.gap.opened?)',
    ]);
    expect(
      warnings(
        '{ detail-type: [receiver.reconcile.failed], detail: { rowsChange: [{ numeric: [">", 0] }] } }',
      ),
    ).toEqual([
      'subscription "s" can never match: detail.rowsChange is no field of a published event (did you mean rowsChanged?)',
    ]);
  });

  it('knows the tenant lifecycle events: by type and by their fields', () => {
    expect(
      warnings(
        '{ detail-type: [receiver.tenant.onboarded, receiver.tenant.state-changed], detail: { retireAt: [{ exists: true }], dataWebhookId: [1] } }',
      ),
    ).toEqual([]);
    expect(warnings('{ detail-type: [receiver.tenant.onbaorded] }')).toEqual([
      'subscription "s" can never match: detail-type receiver.tenant.onbaorded is no event the receiver publishes (did you mean receiver.tenant.onboarded?)',
    ]);
  });
});
