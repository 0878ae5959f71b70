/** The API calls the simulator served for one tenant: in all, and by kind. */
export interface CallCounts {
  total: number;
  /** `state`, `authenticate`, `archive:<table>` (the first table of `$select`), or the REST resource lower-cased (`contact`, `webhook`). */
  byKind: Record<string, number>;
}

/**
 * Counts the calls a receiver makes to the tenant's API (refused ones included: a 401, 429 or 503
 * costs a call too), so a test can say what a reconcile cost in calls, as the CRM would bill it.
 */
export function createCallCounter() {
  const counts = new Map<string, CallCounts>();
  return {
    count(context: string, kind: string): void {
      const entry = counts.get(context) ?? { total: 0, byKind: {} };
      entry.total++;
      entry.byKind[kind] = (entry.byKind[kind] ?? 0) + 1;
      counts.set(context, entry);
    },
    /** A copy of one tenant's counts (zero when it had no call). */
    of(context: string): CallCounts {
      const entry = counts.get(context);
      return { total: entry?.total ?? 0, byKind: { ...entry?.byKind } };
    },
  };
}

export type CallCounter = ReturnType<typeof createCallCounter>;

/** The kind of a call to `/{context}/api/v1/<rest>`: its resource, and for the archive the table it lists. */
export function callKind(rest: string, query: URLSearchParams): string {
  const resource = (rest.split('/').find(Boolean) ?? '').toLowerCase();
  if (resource !== 'archive') return resource;
  const table = /^\s*([^.,\s]+)\./.exec(query.get('$select') ?? '')?.[1];
  return `archive:${table ?? '?'}`;
}
