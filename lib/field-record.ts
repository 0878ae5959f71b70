/**
 * A record keyed by names that come from a payload (field names): without a prototype, so `constructor`,
 * `toString`, `valueOf`, `hasOwnProperty` or `__proto__` is an own key like any other, never an
 * inherited member that a lookup finds (or, for `__proto__`, a setter that swallows the write). It stays
 * plain JSON data (`JSON.stringify`, spread, `Object.keys` work as on `{}`).
 *
 * @example fieldRecord([['constructor', 'a']]).constructor === 'a'; fieldRecord().toString === undefined
 */
export function fieldRecord<V>(entries: Iterable<readonly [string, V]> = []): Record<string, V> {
  const record: Record<string, V> = Object.create(null);
  for (const [key, value] of entries) record[key] = value;
  return record;
}
