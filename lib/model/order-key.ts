import { normaliseTimestamp } from '../events/index.js';

/**
 * Order key of an event: the Timestamp normalised to 7 fractional digits, then the EventId, so that
 * string order is event order and two events at the same tick still have a fixed order.
 *
 * @example eventSeq({ Timestamp: '2018-04-24T08:18:42.089895Z', EventId: 'a…' }) === '2018-04-24T08:18:42.0898950Z#a…'
 */
export function eventSeq(event: { Timestamp: string; EventId: string }): string {
  return `${normaliseTimestamp(event.Timestamp)}#${event.EventId}`;
}
