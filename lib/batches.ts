/** The most one call of a batch API takes: items, and bytes in all as `size` counts them. */
export interface BatchLimits<T> {
  count: number;
  bytes: number;
  size: (item: T) => number;
}

/**
 * Splits items, in order, into batches of at most `count` items and `bytes` in all; an item larger than `bytes`
 * goes alone in its batch (the call answers for it).
 *
 * @example batches(entries, { count: 10, bytes: 256 * 1024, size: entrySize }) // PutEvents calls
 */
export function batches<T>(items: Iterable<T>, { count, bytes, size }: BatchLimits<T>): T[][] {
  const result: T[][] = [];
  let current: T[] = [];
  let total = 0;
  for (const item of items) {
    const itemBytes = size(item);
    if (current.length === count || (current.length > 0 && total + itemBytes > bytes)) {
      result.push(current);
      current = [];
      total = 0;
    }
    current.push(item);
    total += itemBytes;
  }
  if (current.length > 0) result.push(current);
  return result;
}
