/**
 * The functions' CloudWatch namespace, written once: the functions emit under it; the alarms
 * (infra/alarms.ts), ops and the cost model read it here. (serverless.yml and infra/alarms.yml, being
 * YAML, spell it too; test/deploy/alarms.unit.test.ts holds them to this value.)
 */
export const METRICS_NAMESPACE = 'CrmWebhookReceiver';

/**
 * Every metric the functions emit, by name: the one list the code writes them from (the ingest, the
 * workers, the alarms, the dashboard's chart and ops).
 */
export const METRIC = {
  Accepted: 'Accepted',
  Refused: 'Refused',
  RefusedByReason: 'RefusedByReason',
  Parked: 'Parked',
  RegistrationTests: 'RegistrationTests',
  OlderPayloadShape: 'OlderPayloadShape',
  EnqueueLatency: 'EnqueueLatency',
  EnqueueFailures: 'EnqueueFailures',
  IngestErrors: 'IngestErrors',
  EventsApplied: 'EventsApplied',
  EventsLate: 'EventsLate',
  EventsDuplicate: 'EventsDuplicate',
  EventIdConflicts: 'EventIdConflicts',
  EventsResent: 'EventsResent',
  EchoEvents: 'EchoEvents',
  RecordsFailed: 'RecordsFailed',
  WebhookTooManyErrors: 'WebhookTooManyErrors',
  PublishFailures: 'PublishFailures',
  EventsPublished: 'EventsPublished',
  SnapshotsUnchanged: 'SnapshotsUnchanged',
  ReconcilesRequested: 'ReconcilesRequested',
  WebhookPollFailures: 'WebhookPollFailures',
  WebhooksReactivated: 'WebhooksReactivated',
  ReactivationFailures: 'ReactivationFailures',
  /** A webhook not Active, or not staying Active, after 3 re-activations in a row (once until it lasts); the alarm webhook-not-reactivated watches it. */
  WebhookNotReactivated: 'WebhookNotReactivated',
  /** A reconcile run ended: its counters are in its receiver.reconcile.completed event. */
  ReconcileCompleted: 'ReconcileCompleted',
  /** A reconcile run gave up (receiver.reconcile.failed); the alarm reconcile-failed watches it. */
  ReconcileFailed: 'ReconcileFailed',
  /** A reconcile run met the CRM API's Date skewed beyond a minute from its events' Timestamps (logged, on the gap's card). */
  CrmClockSkew: 'CrmClockSkew',
  /** A reconcile run held an entity's deletes back: more of its stored rows than RECONCILE_MAX_DELETES allows were not in the CRM's list of ids. */
  ReconcileDeletesHeld: 'ReconcileDeletesHeld',
} as const;

/** The metric a merge outcome is counted by, in the row and the state workers alike. */
export const OUTCOME_METRIC = {
  applied: METRIC.EventsApplied,
  late: METRIC.EventsLate,
  duplicate: METRIC.EventsDuplicate,
} as const;
