import { isKnownEntity } from '../events/index.js';
import type { ErasureTarget } from './request.js';

/** An erasure request that names no row or tenant the receiver can erase; the message says what is accepted. */
export class ErasureTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ErasureTargetError';
  }
}

/**
 * The target of `POST /erase?context=C&entity=E&id=N` and `ops erase --context C --entity E --id N`:
 * one row with all three, a whole tenant with `context` alone. Throws {@link ErasureTargetError}
 * naming the parameter and what is accepted.
 *
 * @example erasureTarget({ context: 'Cust12345', entity: 'person', id: '77' })
 */
export function erasureTarget(input: {
  context?: string | undefined;
  entity?: string | undefined;
  id?: string | undefined;
}): ErasureTarget {
  const context = input.context?.trim() ?? '';
  if (context === '' || context.length > 200)
    throw new ErasureTargetError('context: the ContextIdentifier (1 to 200 characters) is required');
  const { entity, id } = input;
  if (entity === undefined && id === undefined) return { context };
  if (entity === undefined || id === undefined)
    throw new ErasureTargetError('entity and id: both for one row, neither for the whole tenant');
  if (!isKnownEntity(entity))
    throw new ErasureTargetError(
      `entity ${entity.slice(0, 64)}: an entity of the catalogue (person, contact, …)`,
    );
  const primaryKey = Number(id);
  if (!/^-?\d+$/.test(id) || !Number.isSafeInteger(primaryKey))
    throw new ErasureTargetError(`id ${id.slice(0, 64)}: the row's primary key, an integer`);
  return { context, entity, primaryKey };
}
