/** A backoff's first ceiling and its largest, in ms. */
export interface Backoff {
  baseMs: number;
  capMs: number;
}

/**
 * The wait before attempt `attempt + 1`: "full jitter", a random time up to an exponential ceiling
 * (`baseMs · 2^(attempt - 1)`, at most `capMs`), so that callers that failed together do not come back together.
 *
 * @example fullJitterMs(3, { baseMs: 250, capMs: 8_000 }) // 0 to 999
 */
export function fullJitterMs(
  attempt: number,
  { baseMs, capMs }: Backoff,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** (attempt - 1)));
}
