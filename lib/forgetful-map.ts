/** How many entries a process's memory keeps before it starts over. */
export const MEMORY_ENTRIES = 10_000;

/**
 * A Map of at most `max` entries that forgets them all when a new key would take it past that: a memory of one
 * process that may lose what it knew (a write or a publication once more, never a loss), bounded without an
 * LRU's bookkeeping.
 *
 * @example const written = new ForgetfulMap<string, number>(); written.set(key, Date.now());
 */
export class ForgetfulMap<K, V> extends Map<K, V> {
  constructor(private readonly max = MEMORY_ENTRIES) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.clear();
    return super.set(key, value);
  }
}
