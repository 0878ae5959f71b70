import { describe, expect, it } from 'vitest';
import { neverMatching } from '../../lib/bus/never-matching.js';
import { parseSubscriptions } from '../../lib/bus/subscriptions.js';

const warnings = (pattern: string) =>
  neverMatching(
    parseSubscriptions(
      `- name: s\n  pattern: ${pattern}\n  target: { queue: q }\n`,
      'subscriptions.yml',
      'aws',
    ),
  );

describe('the tenant lifecycle events on the bus', () => {
  it('are events a subscription can match, by type and by their fields', () => {
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
