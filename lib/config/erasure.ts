import { ConfigError, optionalEnv } from './env.js';

type Env = Record<string, string | undefined>;

/** The entities erased on the CRM's hard delete by default: the one the CRM erases for privacy. */
export const DEFAULT_ERASE_ON_DELETE = 'person';

/**
 * ERASE_ON_DELETE, read once: which entities' rows lose their personal data when the CRM deletes them
 * for good (`<entity>.deleted`, or a snapshot saying the row is gone). A comma-separated list of
 * entity names, `*` for every entity, or `none`; default {@link DEFAULT_ERASE_ON_DELETE}.
 *
 * @example erasesOnDelete({ ERASE_ON_DELETE: 'person,contact' })('contact') === true
 */
export function erasesOnDelete(env: Env = process.env): (entity: string) => boolean {
  const raw = (optionalEnv('ERASE_ON_DELETE', env) ?? DEFAULT_ERASE_ON_DELETE).trim();
  if (raw === '*') return () => true;
  if (raw === 'none') return () => false;
  const names = raw.split(',').map((name) => name.trim());
  if (names.some((name) => !/^[A-Za-z][\w.]*$/.test(name)))
    throw new ConfigError(
      'ERASE_ON_DELETE must be comma-separated entity names (person,contact), * for every entity, or none',
      'ERASE_ON_DELETE',
    );
  const set = new Set(names);
  return (entity) => set.has(entity);
}
