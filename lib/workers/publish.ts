import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  type AppliedEvent,
  type BusEntry,
  buildEntry,
  type FieldFilter,
  rowSnapshot,
  webhookSnapshot,
} from '../bus/entry.js';
import type { EventPublisher } from '../bus/publisher.js';
import { JsonText } from '../json-text.js';
import { METRIC } from '../metrics.js';
import type { Row, Webhook } from '../model/types.js';
import { gapsOf } from '../webhook-state.js';
import type { BusRules } from './bus-decision.js';
import { WorkerError } from './errors.js';
import type { DeliveryMeta } from './record.js';

/**
 * How a worker publishes applied changes to the bus; absent when publishing is off. Which changes go
 * on it is decided in each record's result (lib/workers/bus-decision.ts); this file publishes them.
 */
export interface Publication extends BusRules {
  publisher: EventPublisher;
  isBookkeeping: FieldFilter;
}

/** A bus entry that PutEvents refused (or a call that failed): its record is retried. */
export class PublishError extends WorkerError {
  constructor(messageId: string, errorCode: string, errorMessage: string) {
    super(`event not published: ${errorCode}: ${errorMessage}`, messageId);
    this.name = 'PublishError';
  }
}

/** What a published change's entry says of its event besides the stored row or webhook. */
export interface PublishedChange {
  meta: DeliveryMeta;
  seq: string;
  echo: boolean;
  /** Of a snapshot: the fields it changed, its `significantChanges` (its body's Changes is empty). */
  changes?: readonly string[];
}

/**
 * The bus entry of a change to publish, built from the delivery text, so its digits reach the bus as
 * sent. Its outcome is `applied` when the stored row (or webhook) is at the event's order key, else `late`.
 */
export function entryOf(
  publication: Publication,
  { meta, seq, echo, changes }: PublishedChange,
  stored: { row: Row } | { webhook: Webhook },
): BusEntry {
  const lastSeq = 'row' in stored ? stored.row.lastSeq : stored.webhook.lastSeq;
  const applied: Omit<AppliedEvent, 'row' | 'webhook'> = {
    body: meta.rawBody ?? '',
    seq,
    outcome: lastSeq === seq ? 'applied' : 'late',
    echo,
    ...(changes !== undefined && { changes }),
  };
  const snapshot =
    'row' in stored
      ? { row: { ...rowSnapshot(stored.row), fieldValues: exactFieldValues(stored.row) } }
      : { webhook: webhookSnapshot(stored.webhook, openGap(stored.webhook)) };
  return buildEntry({ ...applied, ...snapshot }, publication.isBookkeeping);
}

/**
 * Publishes the batch's entries in one go (the publisher makes PutEvents calls of up to 10) and
 * returns the records whose entry failed. Counts `EventsPublished` and `PublishFailures`.
 */
export async function publishEntries(
  publication: Publication,
  entries: ReadonlyMap<string, BusEntry>,
  { logger, metrics }: { logger: Logger; metrics: Metrics },
): Promise<Map<string, Error>> {
  const failed = new Map<string, Error>();
  if (entries.size === 0) return failed;
  const messageIds = [...entries.keys()];
  const results = await publication.publisher.publish([...entries.values()]);
  for (const [i, messageId] of messageIds.entries()) {
    const result = results[i] ?? {
      ok: false,
      errorCode: 'MissingResult',
      errorMessage: 'the publisher gave no result',
    };
    if (!result.ok) failed.set(messageId, new PublishError(messageId, result.errorCode, result.errorMessage));
  }
  if (failed.size > 0) {
    metrics.addMetric(METRIC.PublishFailures, MetricUnit.Count, failed.size);
    logger.warn('bus entries not published; retrying their records', { count: failed.size });
  }
  metrics.addMetric(METRIC.EventsPublished, MetricUnit.Count, entries.size - failed.size);
  return failed;
}

/** The row's FieldValues as the exact text stored, so digits reach the bus as the sender wrote them. */
function exactFieldValues(row: Row) {
  return row.fieldValuesJson === undefined ? undefined : new JsonText(row.fieldValuesJson);
}

function openGap(webhook: Webhook) {
  return gapsOf(webhook).find((gap) => gap.closedAt === undefined);
}
