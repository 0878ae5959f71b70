/**
 * Runs `task` for every item with at most `limit` running at once (a fixed pool of runners taking the
 * next item as one finishes), and resolves once all have ended; `task` handles its own errors.
 *
 * @example await eachLimited(contexts, 64, (context) => pollContext(context));
 */
export async function eachLimited<T>(
  items: Iterable<T>,
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const queue = items[Symbol.iterator]();
  const runner = async () => {
    for (let next = queue.next(); !next.done; next = queue.next()) await task(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, runner));
}
