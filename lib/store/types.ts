import type { EventRecord, LastAccepted, NewEventRecord, Row, RowEntity, Webhook } from '../model/types.js';
import type { WebhookRecovery } from './recovery.js';

/** What the local admin API and the tests read. */
export interface StoreReader {
  getRow(context: string, entity: RowEntity, primaryKey: number): Promise<Row | undefined>;
  /** History of a row, oldest first. (A webhook's state events live in its item, as `transitions`.) */
  listRowEvents(context: string, entity: RowEntity, primaryKey: number): Promise<EventRecord[]>;
  /** Every webhook, or those of one context (a query, not a scan). Their gaps: `gapsOf` (lib/webhook-state.ts). */
  listWebhooks(context?: string): Promise<Webhook[]>;
  /** What became of the webhooks' gaps (last reconcile, reactivation), of one context or all (lib/store/recovery.ts). */
  listRecoveries(context?: string): Promise<WebhookRecovery[]>;
}

/** A stored item with the version its conditional write must match. */
export interface Versioned<T> {
  item: T | undefined;
  /** 0 when the item does not exist. */
  version: number;
}

export interface StoreWriter {
  /** Writes a history record if it is not there yet (stamping recordedAt/expiresAt); `false` when it already was. */
  recordEvent(record: NewEventRecord): Promise<boolean>;
  /** One history record by its order key (the `seq` it was recorded under). */
  getRowEvent(
    context: string,
    entity: RowEntity,
    primaryKey: number,
    seq: string,
  ): Promise<EventRecord | undefined>;
  loadRow(context: string, entity: RowEntity, primaryKey: number): Promise<Versioned<Row>>;
  /** One conditional put; throws {@link VersionConflictError} when the item moved since `expectedVersion`. */
  saveRow(row: Row, expectedVersion: number): Promise<void>;
  /**
   * Erases the personal data of every history record of a row (lib/store/erase.ts); idempotent.
   * Returns how many records it erased.
   */
  eraseRowHistory(context: string, entity: RowEntity, primaryKey: number): Promise<number>;
  /** The keys of every stored row of a context (a scan of the rows table: for erasing a whole tenant). */
  tenantRows(context: string): Promise<Array<{ entity: RowEntity; primaryKey: number }>>;
  /** Raises the context's last-accepted marker for `webhookName` (never lowers it). */
  markAccepted(context: string, webhookName: string, accepted: LastAccepted): Promise<void>;
  getLastAccepted(context: string, webhookName: string): Promise<LastAccepted | undefined>;
  loadWebhook(context: string, webhookId: number): Promise<Versioned<Webhook>>;
  saveWebhook(webhook: Webhook, expectedVersion: number): Promise<void>;
}

export type Store = StoreReader & StoreWriter;
