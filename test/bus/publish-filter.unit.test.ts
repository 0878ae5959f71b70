import { describe, expect, it } from 'vitest';
import { createPublishFilter, publishDetailTypes } from '../../lib/bus/publish-filter.js';

describe('PUBLISH_DETAIL_TYPES: the event names subscriptions can match', () => {
  it('is the detail-type values the patterns list, once each, sorted', () => {
    const patterns = [
      { 'detail-type': ['contact.changed'], detail: { significantChanges: ['department'] } },
      { 'detail-type': ['sale.sold', 'contact.changed'] },
    ];
    expect(publishDetailTypes(patterns, '')).toBe('contact.changed,sale.sold');
  });

  it('is "" (publish every change) when publishEvents forces publishing, or there is no subscription', () => {
    expect(publishDetailTypes([{ 'detail-type': ['contact.changed'] }], 'true')).toBe('');
    expect(publishDetailTypes([], undefined)).toBe('');
  });

  it('is "" when a pattern could match other event names: no detail-type, an operator, a $or', () => {
    const changed = { 'detail-type': ['contact.changed'] };
    expect(publishDetailTypes([changed, { source: ['crm-webhook-receiver'] }], undefined)).toBe('');
    expect(publishDetailTypes([changed, { 'detail-type': [{ prefix: 'sale.' }] }], undefined)).toBe('');
    expect(publishDetailTypes([{ $or: [changed, { detail: { Event: ['x'] } }] }], undefined)).toBe('');
    expect(publishDetailTypes([{ 'detail-type': 'contact.changed' }], undefined)).toBe('');
  });
});

describe('the workers’ filter', () => {
  it('keeps the listed event names only', () => {
    const matches = createPublishFilter(['contact.changed', 'sale.sold'])!;
    expect(matches('contact.changed')).toBe(true);
    expect(matches('sale.sold')).toBe(true);
    expect(matches('contact.created')).toBe(false);
  });

  it('is absent (publish every change) without a list', () => {
    expect(createPublishFilter([])).toBeUndefined();
  });
});
