import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compressBody, fitsStore, MAX_STORED_BODY_BYTES } from '../../lib/store/body-codec.js';

describe('fitsStore', () => {
  it('holds for any body up to the bound less the deflate slack, even one deflate cannot shrink', () => {
    const ascii = randomBytes(MAX_STORED_BODY_BYTES)
      .toString('base64')
      .slice(0, MAX_STORED_BODY_BYTES - 300);

    expect(fitsStore(ascii)).toBe(true);
    expect(compressBody(ascii).length).toBeLessThanOrEqual(MAX_STORED_BODY_BYTES);
  });

  it('judges a larger body by its deflated size', () => {
    const noise = randomBytes(MAX_STORED_BODY_BYTES).toString('base64');
    const repetitive = '{"a":1}'.repeat(MAX_STORED_BODY_BYTES);

    expect([fitsStore(noise), fitsStore(repetitive)]).toEqual([false, true]);
  });
});
