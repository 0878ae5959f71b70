import { decodeTyped, type PlainValue } from '../../crm/typed-values.js';

/**
 * A difference between the CRM API's clock (its `Date` header) and the clock of the live events'
 * Timestamps beyond this is a skew worth saying (logged, counted, shown on the gap's card). The Date
 * has whole seconds and is stamped somewhere in the request, and a live event's arrival includes its
 * delivery: a minute is far above both.
 */
export const CLOCK_SKEW_BOUND_MS = 60_000;

/** An ISO time as the CRM writes a datetime field: to the second, a fraction and an offset optional. */
const CRM_INSTANT = /^(\d{4})-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(Z|[+-]\d\d:\d\d)?$/;

/** When a request to the CRM was sent and answered, on the receiver's clock (ms since the epoch). */
export interface Exchange {
  requestedAt: number;
  answeredAt: number;
}

/**
 * When the CRM last wrote an archive row: its own `updated`, else `registered` (a row never updated
 * has `updated` at the minimum date), the time the live events of that write carry (a Timestamp on the
 * sender's clock); undefined when the row has neither.
 */
export function rowWrittenAt(values: Readonly<Record<string, unknown>>): number | undefined {
  const [updated, registered] = [instant(values.updated), instant(values.registered)];
  if (updated === undefined || registered === undefined) return updated ?? registered;
  return Math.max(updated, registered);
}

/**
 * F, the order key time of a snapshot: never later than the moment the CRM read the row, on the
 * sender's clock, and never earlier than the row's last write. The CRM read the row after the request
 * started, so its start on the sender's clock (`senderAheadMs`: how far the sender's clock is ahead of
 * the receiver's, 0 when unknown) bounds it; a row written after that (during the request) is ordered
 * at its own `updated`/`registered` ({@link rowWrittenAt}), but never after the answer arrived; one
 * dated further in the future than the clocks' error ({@link CLOCK_SKEW_BOUND_MS}) is no time of a read
 * (ordered at the answer, it would beat a live change made while the answer was on its way). Never the answer's
 * `Date`: a server may stamp it late, or run fast or slow.
 *
 * So a live change after the read wins, and a change the receiver lost (its `updated` later than the
 * stored row's events) is newer than the events the receiver has.
 */
export function snapshotTime(
  values: Readonly<Record<string, unknown>>,
  exchange: Exchange,
  senderAheadMs = 0,
): Date {
  const started = exchange.requestedAt + senderAheadMs;
  const answered = exchange.answeredAt + senderAheadMs;
  let written = rowWrittenAt(values);
  // Dated past the answer by more than the clocks can be off (a row the CRM dates in the future): no
  // time the CRM read it at, so the request's start, as for a row without one.
  if (written !== undefined && written > answered + CLOCK_SKEW_BOUND_MS) written = undefined;
  return new Date(Math.min(Math.max(written ?? started, started), answered));
}

/**
 * How far the CRM API's clock is ahead of the live events' clock (negative: behind), from one answer:
 * its `Date` against the receiver's clock at the answer, less how far the sender's clock is ahead of
 * the receiver's.
 */
export function apiSkewMs(crmTime: number, exchange: Exchange, senderAheadMs = 0): number {
  return crmTime - exchange.answeredAt - senderAheadMs;
}

/** A CRM datetime value (ISO, no offset: UTC; or a custom table's `[DT:...]`) as ms since the epoch; undefined for "never" or no time. */
function instant(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = String(decodeTyped(value as PlainValue));
  const parts = CRM_INSTANT.exec(text);
  if (parts === null || parts[1] === '0001') return undefined;
  const ms = Date.parse(parts[2] === undefined ? `${text}Z` : text);
  return Number.isFinite(ms) ? ms : undefined;
}
