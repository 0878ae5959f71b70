import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDeliveryFeed, createOutcomeCounter } from '../../dashboard/activity.js';
import type { DashboardSource } from '../../dashboard/source.js';
import { createLocalSource, type LocalSourceDeps } from '../../local/admin/dashboard-source.js';

/**
 * The local runtime's dashboard source for an admin API under test: empty taps and, unless given, a
 * DynamoDB client that fails if a test searches the events table.
 */
export function testSource(
  deps: Pick<LocalSourceDeps, 'store' | 'queues' | 'peek'> & Partial<LocalSourceDeps>,
): DashboardSource {
  return createLocalSource({
    sqs: {} as SQSClient,
    doc: {} as DynamoDBDocumentClient,
    eventsTable: 'events',
    webhooksTable: 'webhooks',
    env: {},
    outcomes: createOutcomeCounter(),
    deliveries: createDeliveryFeed(),
    ...deps,
  });
}
