/**
 * PUBLISH_DETAIL_TYPES for the workers: the event names (`detail-type`) some subscription can match, so a
 * worker puts on the bus only the changes of those (EventBridge bills every entry put, matched or not).
 * Sound by construction: a rule matches an event only if its `detail-type` list does, so
 * nothing a rule would deliver is left out; EventBridge's rules stay the filter that delivers. "" (publish
 * every change) when the `publishEvents` param forces publishing (a consumer outside subscriptions.yml may
 * listen), when there is no subscription, or when a pattern does not list its `detail-type` values as
 * plain strings at its top level (no `$or`, no operator).
 */
export function publishDetailTypes(
  patterns: readonly Record<string, unknown>[],
  param: string | undefined,
): string {
  if (param === 'true' || patterns.length === 0) return '';
  const names = new Set<string>();
  for (const pattern of patterns) {
    const listed = pattern['detail-type'];
    if ('$or' in pattern || !Array.isArray(listed) || listed.length === 0) return '';
    if (!listed.every((name) => typeof name === 'string' && name !== '' && !name.includes(','))) return '';
    for (const name of listed) names.add(name);
  }
  return [...names].sort().join(',');
}

/**
 * Whether some subscription can match an event of this name, its entry's `detail-type`
 * (PUBLISH_DETAIL_TYPES, read as a list); undefined (publish every change) when the list is empty.
 */
export function createPublishFilter(
  detailTypes: readonly string[],
): ((detailType: string) => boolean) | undefined {
  if (detailTypes.length === 0) return undefined;
  const wanted = new Set(detailTypes);
  return (detailType) => wanted.has(detailType);
}
