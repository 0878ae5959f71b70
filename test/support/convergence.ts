import { isDeepStrictEqual } from 'node:util';
import type { QueueView } from '../../dashboard/views.js';
import { decodeTyped, type PlainValue } from '../../lib/crm/typed-values.js';
import type { Row as CrmRow } from '../../tools/crm/tables.js';
import { startRecorder } from './http-server.js';

/** A POST a subscription target received: its path and the EventBridge event it carried. */
export interface Posted {
  path: string;
  event: { id: string; 'detail-type': string; detail: Record<string, unknown> };
}

/** A local HTTP target for URL subscriptions: answers 200 to every POST and keeps it. */
export async function startSubscriber() {
  return startRecorder(({ path, body }): Posted => ({ path, event: JSON.parse(body) as Posted['event'] }));
}

/** What a reader of `GET /rows/{context}/{entity}/{pk}` sees of a row: what convergence is judged on. */
export interface RowState {
  status: string;
  fieldValues: Record<string, unknown> | null;
  changedFields: string[];
}

/** The receiver's row through the admin API, or undefined when it has none (404). */
export async function readRow(
  adminUrl: string,
  context: string,
  entity: string,
  primaryKey: number,
): Promise<RowState | undefined> {
  const answer = await fetch(`${adminUrl}/rows/${context}/${entity}/${primaryKey}`);
  if (answer.status === 404) {
    await answer.arrayBuffer();
    return undefined;
  }
  if (answer.status !== 200) throw new Error(`GET /rows answered ${answer.status}: ${await answer.text()}`);
  const view = (await answer.json()) as RowState;
  return { status: view.status, fieldValues: view.fieldValues, changedFields: view.changedFields };
}

/**
 * How the receiver's row differs from the CRM's (empty: equal). A row the CRM still has must be
 * `active` (`softdeleted` when the CRM's `deleted` is 1), with no stale field, and every field it holds (those of the webhooks' FieldValues,
 * `updated` among them where they carry it) equal to the CRM's value as the CRM writes it (a custom
 * table's typed string, `[F:1.5]`, read as its value); a row the
 * CRM no longer has must be `deleted` (or absent, when the receiver never heard of it).
 */
export function rowDifferences(row: RowState | undefined, crm: CrmRow | undefined): string[] {
  if (crm === undefined)
    return row === undefined || row.status === 'deleted' ? [] : [`status ${row.status}, not deleted`];
  if (row === undefined) return ['missing'];
  const differences: string[] = [];
  const status = crm.deleted === 1 ? 'softdeleted' : 'active';
  if (row.status !== status) differences.push(`status ${row.status}, not ${status}`);
  if (row.changedFields.length > 0) differences.push(`stale ${row.changedFields.join(',')}`);
  const values = row.fieldValues ?? {};
  if (Object.keys(values).length === 0) differences.push('no fieldValues');
  for (const [field, value] of Object.entries(values))
    if (!isDeepStrictEqual(decodeTyped(value as PlainValue), crm[field]))
      differences.push(`${field} ${JSON.stringify(value)} ≠ ${JSON.stringify(crm[field])}`);
  return differences;
}

/** Whether a reader sees two states of a row as the same (status, FieldValues, stale fields). */
export const sameRow = (a: RowState | undefined, b: RowState | undefined): boolean => isDeepStrictEqual(a, b);

/** The runtime's queues as `GET /queues` shows them. */
export async function queues(adminUrl: string): Promise<QueueView[]> {
  return (await (await fetch(`${adminUrl}/queues`)).json()) as QueueView[];
}

/**
 * True when no queue of the runtime but the parked one (which never drains by itself) holds a
 * message visible, in flight or delayed, and no subscription delivery is under way.
 */
export async function settled(adminUrl: string): Promise<boolean> {
  const subscriptions = (await (await fetch(`${adminUrl}/subscriptions`)).json()) as Array<{
    inFlight: number;
  }>;
  return (
    (await queues(adminUrl)).every(
      (queue) => queue.key === 'parked' || queue.visible + queue.inFlight + queue.delayed === 0,
    ) && subscriptions.every((subscription) => subscription.inFlight === 0)
  );
}
