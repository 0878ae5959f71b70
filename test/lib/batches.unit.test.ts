import { describe, expect, it } from 'vitest';
import { batches } from '../../lib/batches.js';

const limits = { count: 3, bytes: 10, size: (item: number) => item };

describe('batches', () => {
  it('splits in order at the count', () => {
    expect(batches([1, 1, 1, 1, 1, 1, 1], limits)).toEqual([[1, 1, 1], [1, 1, 1], [1]]);
  });

  it('splits in order before the bytes would pass the limit, and sends an oversized item alone', () => {
    expect(batches([4, 6, 1, 12, 2, 9], limits)).toEqual([[4, 6], [1], [12], [2], [9]]);
  });

  it('gives no batch for no items', () => {
    expect(batches([], limits)).toEqual([]);
  });
});
