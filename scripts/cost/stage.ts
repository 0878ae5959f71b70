import { METRICS_NAMESPACE } from '../../lib/metrics.js';

/** The stage's environment the measured handlers run with (fake queues and tables, the stage's names). */
export const STAGE_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'cost-model',
  AWS_SECRET_ACCESS_KEY: 'cost-model',
  POWERTOOLS_SERVICE_NAME: 'crm-webhook-receiver',
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
  CONTACT_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/contact.fifo',
  ACTIVITY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/activity.fifo',
  WEBHOOK_STATE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/webhook-state.fifo',
  ENTITIES_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/entities.fifo',
  PARKED_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/parked.fifo',
  WEBHOOK_SECRET: 'cost-model-secret',
  ROWS_TABLE: 'rows',
  EVENTS_TABLE: 'events',
  WEBHOOKS_TABLE: 'webhooks',
};

/** What serverless.yml sets on the workers when subscriptions.yml has any. */
export const PUBLISH_ENV = {
  PUBLISH_EVENTS: 'true',
  EVENT_BUS_NAME: 'crm-webhook-receiver-prod',
};

/** The log settings a deployed function runs with. */
export const LOG_SETUPS = {
  /** serverless.yml on AWS: JSON format, so Lambda sets AWS_LAMBDA_LOG_LEVEL, which Powertools obeys. */
  deployed: { POWERTOOLS_LOG_LEVEL: 'WARN', AWS_LAMBDA_LOG_LEVEL: 'INFO', AWS_LAMBDA_LOG_FORMAT: 'JSON' },
  /** The Text format (before advanced logging) with the prod stage's POWERTOOLS_LOG_LEVEL. */
  textWarn: { POWERTOOLS_LOG_LEVEL: 'WARN' },
} as const;
