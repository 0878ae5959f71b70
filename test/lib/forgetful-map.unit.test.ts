import { describe, expect, it } from 'vitest';
import { ForgetfulMap, MEMORY_ENTRIES } from '../../lib/forgetful-map.js';

describe('ForgetfulMap', () => {
  it('keeps at most its entries, then starts over with the new one', () => {
    const memory = new ForgetfulMap<number, string>(3);
    for (const key of [1, 2, 3]) memory.set(key, `v${key}`);

    memory.set(4, 'v4');

    expect([...memory]).toEqual([[4, 'v4']]);
  });

  it('updates a key it holds without forgetting the others, full or not', () => {
    const memory = new ForgetfulMap<number, string>(2);
    memory.set(1, 'a').set(2, 'b');

    memory.set(1, 'c');

    expect([...memory]).toEqual([
      [1, 'c'],
      [2, 'b'],
    ]);
  });

  it('holds 10,000 entries by default', () => {
    const memory = new ForgetfulMap<number, true>();
    for (let key = 0; key < MEMORY_ENTRIES; key++) memory.set(key, true);
    expect(memory.size).toBe(10_000);

    memory.set(-1, true);

    expect(memory.size).toBe(1);
  });
});
