import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { queueView } from '../../dashboard/queue-view.js';
import { HttpError } from '../../dashboard/route-server.js';
import type { DashboardSource } from '../../dashboard/source.js';
import { toParkedView } from '../../dashboard/views.js';
import {
  ALL_QUEUE_KEYS,
  type AnyQueueKey,
  queueOutputs,
  SERVICE,
  tableOutput,
} from '../../infra/definitions.js';
import { moveBack } from '../../lib/queue/sqs-move-back.js';
import { findInStore } from '../../lib/store/event-lookup.js';
import {
  type OpsClients,
  output,
  parked,
  replayParkedOnStage,
  type StackOutputs,
  stageStore,
} from './commands.js';
import { outcomeSeries } from './outcome-metrics.js';
import { COUNTS_HOURS, subscriptionStatus } from './subscription-status.js';

export interface AwsSourceOptions {
  clients: OpsClients & { cloudWatch: CloudWatchClient; eventBridge: EventBridgeClient };
  outputs: StackOutputs;
  stage: string;
  region: string;
  /** How long a redrive follows its move task before answering RUNNING. */
  redriveTimeoutMs?: number;
}

/** The most parked deliveries one look receives (as `ops parked` does by default). */
const PARKED_LOOK = 10;

/**
 * The dashboard's data from a deployed stage, with the user's credentials: the tables through the
 * store, queue depths from GetQueueAttributes, the chart from CloudWatch, redrive by
 * StartMessageMoveTask, replay as `ops replay-parked`, the subscriptions from their rules and CloudWatch. SQS has no peek, so the parked queue is read only on request, as
 * `ops parked` reads it, and no other queue is received from; the live feed is local only.
 */
export function createAwsSource(options: AwsSourceOptions): DashboardSource {
  const { clients, outputs, stage } = options;
  const nameOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
  const store = stageStore(clients, outputs);
  return {
    info: {
      kind: 'aws',
      name: `stage ${stage} (${options.region})`,
      live: false,
      parkedOnRequest: true,
      parkedNote:
        'SQS cannot show a message without receiving it: each look receives up to 10 parked deliveries ' +
        '(hidden for 30 s) and counts toward their maxReceiveCount (5); after the 5th look a delivery ' +
        'moves to the parked DLQ, shown after them (up to 10, received the same way), where it can be ' +
        'redriven. A replay spends none: what it does not decide it puts back as it was.',
      replayNote:
        "Decided with the stage's IngestSettings output, as `ops replay-parked` does. The secrets stay in " +
        'SSM: an unsigned parked delivery stays parked (signature-missing).',
      subscriptionsNote:
        `Counts of the last ${COUNTS_HOURS} hours from CloudWatch (AWS/Events MatchedEvents, Invocations, ` +
        'FailedInvocations of each rule; delivered is Invocations − FailedInvocations). EventBridge keeps no ' +
        'record of single deliveries: recent deliveries, failures and events in flight cannot be shown, and ' +
        'a DLQ is counted (GetQueueAttributes), not read, since SQS cannot show a message without receiving it.',
    },
    store,
    queues: () =>
      Promise.all(
        ALL_QUEUE_KEYS.map((key) => {
          const url = output(outputs, queueOutputs(key).url);
          const dlqUrl = output(outputs, queueOutputs(key).dlqUrl);
          return queueView(clients.sqs, {
            key,
            name: nameOf(url),
            url,
            dlq: { name: nameOf(dlqUrl), url: dlqUrl },
          });
        }),
      ),
    outcomes: () => outcomeSeries(clients.cloudWatch, { service: SERVICE }),
    deliveries: async () => [],
    findEvent: async (eventId) => {
      const deps = { store, doc: clients.dynamo, eventsTable: output(outputs, tableOutput('events')) };
      const { places, by } = await findInStore(deps, eventId);
      const history =
        by === 'index'
          ? 'the events table by its EventId index (history recorded before the index was deployed is not in it)'
          : 'a parallel scan of the events table (the stage has no EventId index: eventIdIndex is not "true")';
      return {
        eventId,
        searched: `stage ${stage}: ${history}, the webhooks table; not the queues: SQS cannot be searched without receiving`,
        places,
      };
    },
    parked: async (limit) => {
      const look = async (where: 'parked' | 'dlq') =>
        (await parked(clients, outputs, Math.min(limit, PARKED_LOOK), where)).map((message) =>
          // Received by this look: hidden for 30 s.
          toParkedView({ ...message, deduplicationId: undefined, sentAt: undefined, inFlight: true }, where),
        );
      return [...(await look('parked')), ...(await look('dlq'))];
    },
    subscriptions: async () => {
      const busName = outputs.EventBusName;
      if (busName === undefined)
        throw new HttpError(404, 'the stack has no event bus: deploy this version first');
      return subscriptionStatus(clients, { busName, prefix: `${SERVICE}-${stage}` });
    },
    redrive: async (name) => {
      const key = name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
      if (!(ALL_QUEUE_KEYS as string[]).includes(key))
        throw new HttpError(404, `no queue ${name}; queues: ${ALL_QUEUE_KEYS.join(', ')}`);
      return moveBack(
        clients.sqs,
        { queue: key, sourceArn: output(outputs, queueOutputs(key as AnyQueueKey).dlqArn) },
        options.redriveTimeoutMs ?? 10_000,
      );
    },
    replayParked: (request) => replayParkedOnStage(clients, outputs, request),
  };
}
