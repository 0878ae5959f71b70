import * as z from 'zod/mini';
import { InvalidItemError } from './errors.js';

/**
 * `item` parsed with `schema`; throws {@link InvalidItemError} naming the table, the key and the first
 * offending attributes (never their values).
 */
export function parseItem<S extends z.ZodMiniType>(
  schema: S,
  item: unknown,
  table: string,
  key: string,
): z.infer<S> {
  const result = z.safeParse(schema, item);
  if (result.success) return result.data;
  const paths = result.error.issues.slice(0, 5).map((issue) => issue.path.join('.') || '(item)');
  throw new InvalidItemError(table, key, paths);
}
