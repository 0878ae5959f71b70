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
import type { Outcome } from '../hooks.js';
import { JsonText } from '../json-text.js';
import { METRIC } from '../metrics.js';
import type { Row, Webhook } from '../model/types.js';
import { gapsOf } from '../webhook-state.js';
import { WorkerError } from './errors.js';
import type { DeliveryMeta } from './record.js';

/** How a worker publishes applied changes to the bus; absent when publishing is off. */
export interface Publication {
  publisher: EventPublisher;
  /** PUBLISH_ECHOES: publish the changes of IGNORE_ASSOCIATE_IDS too. */
  publishEchoes: boolean;
  isBookkeeping: FieldFilter;
  /**
   * Whether some subscription can match an entry (PUBLISH_DETAIL_TYPES, lib/bus/publish-filter.ts): an
   * entry none can is not put on the bus. Absent: every change is published.
   */
  matches?: ((entry: BusEntry) => boolean) | undefined;
}

/** A bus entry that PutEvents refused (or a call that failed): its record is retried. */
export class PublishError extends WorkerError {
  constructor(messageId: string, errorCode: string, errorMessage: string) {
    super(`event not published: ${errorCode}: ${errorMessage}`, messageId);
    this.name = 'PublishError';
  }
}

/** What the worker knows once an event was handled, whether it was merged or found already there. */
export interface Handled {
  meta: DeliveryMeta;
  seq: string;
  echo: boolean;
  outcome: Outcome | 'conflict' | 'resend' | 'unchanged';
  /**
   * Whether its change still awaits publication, as the row's history records it; undefined for a
   * state event (no history record), which then goes by the SQS receive count.
   */
  unpublished?: boolean;
  /** Of a snapshot: the fields it changed, its `significantChanges` (its body's Changes is empty). */
  changes?: readonly string[];
}

/**
 * The bus entry of a handled event, or undefined when it publishes nothing. Once per change: an
 * event merged now (`applied`, `late`) publishes; one already merged (`duplicate`) publishes only when
 * an earlier attempt wrote the row and did not publish it: its history record is still `unpublished`
 * (cleared once published), which also holds for a message redriven from the DLQ, whose receive count
 * starts again. A state event has no history record: its duplicate publishes when the SQS message is
 * a redelivery (ApproximateReceiveCount > 1). A resend, a conflict and (unless PUBLISH_ECHOES) an echo
 * never publish, nor does an entry no subscription matches (`publication.matches`). Built from the
 * delivery text, so its digits reach the bus as sent.
 */
export function entryOf(
  publication: Publication,
  handled: Handled,
  stored: { row: Row } | { webhook: Webhook },
): BusEntry | undefined {
  const { meta, seq, echo, outcome } = handled;
  if (outcome === 'conflict' || outcome === 'resend' || outcome === 'unchanged') return undefined;
  if (echo && !publication.publishEchoes) return undefined;
  if (outcome === 'duplicate' && !(handled.unpublished ?? (meta.receiveCount ?? 1) > 1)) return undefined;
  const lastSeq = 'row' in stored ? stored.row.lastSeq : stored.webhook.lastSeq;
  const applied: Omit<AppliedEvent, 'row' | 'webhook'> = {
    body: meta.rawBody ?? '',
    seq,
    outcome: outcome === 'duplicate' ? (lastSeq === seq ? 'applied' : 'late') : outcome,
    echo,
    ...(handled.changes !== undefined && { changes: handled.changes }),
  };
  const snapshot =
    'row' in stored
      ? { row: { ...rowSnapshot(stored.row), fieldValues: exactFieldValues(stored.row) } }
      : { webhook: webhookSnapshot(stored.webhook, openGap(stored.webhook)) };
  const entry = buildEntry({ ...applied, ...snapshot }, publication.isBookkeeping);
  // No subscription wants it: EventBridge would bill the entry and deliver it nowhere.
  return publication.matches === undefined || publication.matches(entry) ? entry : undefined;
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
