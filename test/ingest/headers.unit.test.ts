import { describe, expect, it } from 'vitest';
import { readDeliveryHeaders } from '../../lib/ingest/headers.js';

const ID = '0a6c5bb8-2a9f-4c55-9e7a-4bfc0d1e2f30';
const OTHER_ID = '11111111-2222-4333-8444-555555555555';
const delivery = {
  'x-superoffice-event': 'contact.changed',
  'x-superoffice-eventid': ID,
  'x-superoffice-signature': 'c2ln',
};

describe('header prefix detection', () => {
  it.each([
    ['the delivery alone', {}],
    ['a custom header ending in -Event', { 'x-tenant-event': 'tenant-42' }],
    ['a custom header ending in -EventId', { 'x-tenant-eventid': 'abc' }],
    ['a custom header ending in -Signature', { 'x-tenant-signature': 'abc' }],
    ['custom -Event and -Signature headers', { 'x-tenant-event': 'a', 'x-tenant-signature': 'b' }],
    ['an empty custom -EventId next to a custom -Event', { 'x-tenant-event': 'a', 'x-tenant-eventid': '' }],
    ['a second set that says the same', { 'x-service-event': 'contact.changed', 'x-service-eventid': ID }],
  ] as const)('reads the delivery set next to %s', (_label, extra) => {
    const read = readDeliveryHeaders({ ...delivery, ...extra });

    expect(read).toMatchObject({
      ok: true,
      headers: { prefix: 'x-superoffice', event: 'contact.changed', eventId: ID, signature: 'c2ln' },
    });
  });

  it.each([
    ['another event id', { 'x-service-event': 'contact.changed', 'x-service-eventid': OTHER_ID }],
    ['another event', { 'x-service-event': 'contact.created', 'x-service-eventid': ID }],
    [
      'another signature',
      { 'x-service-event': 'contact.changed', 'x-service-eventid': ID, 'x-service-signature': 'b3RoZXI=' },
    ],
  ] as const)('refuses two complete sets that disagree: %s', (_label, extra) => {
    expect(readDeliveryHeaders({ ...delivery, ...extra })).toEqual({
      ok: false,
      detail: 'two header sets disagree on the delivery (x-service, x-superoffice)',
    });
  });

  it.each([
    ['no -EventId', { 'x-superoffice-event': 'contact.changed' }, 'header x-superoffice-eventid is missing'],
    ['no -Event', { 'x-superoffice-eventid': ID }, 'header x-superoffice-event is missing'],
    ['nothing', { 'x-tenant-signature': 'abc' }, 'the -Event and -EventId headers are missing'],
  ] as const)('names what is missing when no prefix carries both: %s', (_label, headers, detail) => {
    expect(readDeliveryHeaders(headers)).toEqual({ ok: false, detail });
  });

  it('uses the pinned prefix alone when one is set', () => {
    const read = readDeliveryHeaders(
      { ...delivery, 'x-service-event': 'contact.created', 'x-service-eventid': OTHER_ID },
      'X-SuperOffice',
    );

    expect(read).toMatchObject({ ok: true, headers: { prefix: 'x-superoffice', eventId: ID } });
  });
});
