/** DynamoDB's item size: attribute names plus values (UTF-8 strings, ~1 byte per 2 digits of numbers). */
export function itemBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'number') return Math.ceil(String(value).replace(/[-.]/g, '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + itemBytes(v), 0);
  return (
    3 +
    Object.entries(value as Record<string, unknown>).reduce(
      (sum, [name, v]) => sum + Buffer.byteLength(name) + itemBytes(v),
      0,
    )
  );
}

/** Capacity units of `bytes` at `per` bytes a unit (at least one). */
export const units = (bytes: number, per: number) => Math.max(1, Math.ceil(bytes / per));
