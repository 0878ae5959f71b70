import { describe, expect, it } from 'vitest';
import { apiSkewMs, rowWrittenAt, snapshotTime } from '../../lib/reconcile/run/clock.js';

const at = (iso: string) => Date.parse(iso);
const exchange = { requestedAt: at('2026-12-06T10:00:00.000Z'), answeredAt: at('2026-12-06T10:00:01.500Z') };

describe('a snapshot’s time (F): never the answer’s Date', () => {
  it('is the request’s start for a row last written before it, on the sender’s clock', () => {
    const values = { updated: '2026-12-01T08:00:00.1234567', registered: '2026-11-01T08:00:00' };
    expect(snapshotTime(values, exchange).toISOString()).toBe('2026-12-06T10:00:00.000Z');
    // The sender's clock 2 s behind the receiver's: its start on that clock.
    expect(snapshotTime(values, exchange, -2_000).toISOString()).toBe('2026-12-06T09:59:58.000Z');
  });

  it('is the row’s own updated (else registered) when it was written during the request, never after the answer', () => {
    expect(snapshotTime({ updated: '2026-12-06T10:00:00.7000000' }, exchange).toISOString()).toBe(
      '2026-12-06T10:00:00.700Z',
    );
    const never = { updated: '0001-01-01T00:00:00', registered: '2026-12-06T10:00:01.2+00:00' };
    expect(snapshotTime(never, exchange).toISOString()).toBe('2026-12-06T10:00:01.200Z');
    // A `updated` in the future orders nothing after the answer's arrival; one far in the future is
    // no time of a read: the request's start.
    expect(snapshotTime({ updated: '2026-12-06T10:00:30Z' }, exchange).toISOString()).toBe(
      '2026-12-06T10:00:01.500Z',
    );
    expect(snapshotTime({ updated: '2027-01-01T00:00:00Z' }, exchange).toISOString()).toBe(
      '2026-12-06T10:00:00.000Z',
    );
  });

  it('reads UTC without an offset, a custom table’s [DT:…], and nothing from a minimum date or no time', () => {
    expect(rowWrittenAt({ updated: '2026-12-06T10:00:00' })).toBe(at('2026-12-06T10:00:00Z'));
    expect(rowWrittenAt({ updated: '2026-12-06T12:00:00+02:00' })).toBe(at('2026-12-06T10:00:00Z'));
    expect(rowWrittenAt({ updated: '[DT:12/06/2026 10:00:00]' })).toBe(at('2026-12-06T10:00:00Z'));
    expect(rowWrittenAt({ updated: '0001-01-01T00:00:00', registered: 'soon' })).toBeUndefined();
    expect(snapshotTime({}, exchange).toISOString()).toBe('2026-12-06T10:00:00.000Z');
  });

  it('measures the API clock’s skew against the events’ clock', () => {
    const tenAhead = exchange.answeredAt + 600_000;
    expect(apiSkewMs(tenAhead, exchange)).toBe(600_000);
    // The sender's clock itself 1 s behind the receiver's: the API is 1 s more ahead of it.
    expect(apiSkewMs(tenAhead, exchange, -1_000)).toBe(601_000);
  });
});
