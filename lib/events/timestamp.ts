/**
 * Sort key for an envelope Timestamp: the fraction padded to 7 digits, so that `...42.089895Z` and
 * `...42.0898950Z` compare equal and string order is time order.
 *
 * @example normaliseTimestamp('2018-04-24T08:18:42.089895Z') === '2018-04-24T08:18:42.0898950Z'
 */
export function normaliseTimestamp(timestamp: string): string {
  const dot = timestamp.lastIndexOf('.');
  if (dot < 0) return `${timestamp.slice(0, -1)}.0000000Z`;
  const fraction = timestamp.slice(dot + 1, -1);
  return `${timestamp.slice(0, dot + 1)}${fraction.padEnd(7, '0')}Z`;
}
