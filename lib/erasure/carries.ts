import type { ErasureTarget } from './request.js';

/**
 * Whether a queued message's body (a delivery as received, text or bytes, or a bus event whose detail
 * holds one) is an event of the target:
 * its ContextIdentifier, and for one row its Entity (or the Event's entity) and PrimaryKey. A body
 * that is not a JSON object names no row and is never matched.
 */
export function carriesRow(target: ErasureTarget): (body: string | Uint8Array) => boolean {
  return (body) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    } catch {
      return false;
    }
    if (typeof parsed !== 'object' || parsed === null) return false;
    // A bus event (a subscription's dead letter) carries the delivery's members in its detail.
    const { detail } = parsed as { detail?: unknown };
    const event = (typeof detail === 'object' && detail !== null ? detail : parsed) as Record<
      string,
      unknown
    >;
    if (event.ContextIdentifier !== target.context) return false;
    if (target.entity === undefined || target.primaryKey === undefined) return true;
    const entity = event.Entity ?? String(event.Event ?? '').replace(/\.[^.]*$/, '');
    return entity === target.entity && event.PrimaryKey === target.primaryKey;
  };
}
