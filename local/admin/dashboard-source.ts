import type { SQSClient } from '@aws-sdk/client-sqs';
import { type DeliveryFeed, OUTCOMES, type OutcomeCounter } from '../../dashboard/activity.js';
import { queueView } from '../../dashboard/queue-view.js';
import { HttpError } from '../../dashboard/route-server.js';
import type { DashboardSource, Reconciliation } from '../../dashboard/source.js';
import { toMessageView, toParkedView } from '../../dashboard/views.js';
import { moveBack } from '../../lib/queue/sqs-move-back.js';
import type { SubscriptionView } from '../bus/views.js';
import type { LocalQueue } from '../emulators/resources.js';
import { eraseLocal, type LocalErasureDeps } from './erase.js';
import { type FindEventDeps, findEvent } from './find-event.js';
import { replayLocalParked } from './replay.js';

export interface LocalSourceDeps extends FindEventDeps {
  sqs: SQSClient;
  outcomes: OutcomeCounter;
  deliveries: DeliveryFeed;
  /** The local bus's subscriptions (LocalBus.view). */
  subscriptions?: () => SubscriptionView[];
  /** The functions' environment: the settings a replay decides with (ENTITIES, secrets, queue URLs). */
  env: NodeJS.ProcessEnv;
  /** The webhooks table, where a replay holds its lock. */
  webhooksTable: string;
  /** How long a redrive waits for its move task to finish. */
  redriveTimeoutMs?: number;
  /** Whether gaps can be recovered, and how a reconcile is queued (local/admin/reconciliation.ts). */
  reconciliation?: Reconciliation;
  /** What an erasure on request writes to (local/admin/erase.ts); absent: `POST /erase` is 404. */
  erasure?: LocalErasureDeps;
}

/**
 * The dashboard's data in the local runtime: the emulators through the SDK, parked and dead-lettered
 * messages (the parked DLQ's with the parked ones) peeked (nothing received), the outcome counts and the live feed tapped in-process.
 */
export function createLocalSource(deps: LocalSourceDeps): DashboardSource {
  return {
    info: {
      kind: 'local',
      name: 'local runtime',
      live: true,
      parkedOnRequest: false,
      parkedNote: 'Read without receiving them: looking changes nothing.',
      replayNote: "Decided with the runtime's settings as they are now (ENTITIES, ALLOW_UNSIGNED, secrets).",
      subscriptionsNote:
        'Counted by the local bus since this start, with the last 50 deliveries and failures of each; ' +
        'what is still to deliver and the dead letters are journaled in DATA_DIR and survive a restart.',
    },
    store: deps.store,
    queues: () => Promise.all(deps.queues.map((queue) => queueView(deps.sqs, queue))),
    outcomes: async () => ({ outcomes: OUTCOMES, perMinute: deps.outcomes.perMinute() }),
    deliveries: async (after) => deps.deliveries.after(after),
    findEvent: (eventId) => findEvent(deps, eventId),
    parked: async (limit) => {
      const parked = queueByName(deps.queues, 'parked');
      return [
        ...deps.peek(parked.name, limit).map((message) => toParkedView(toMessageView(message), 'parked')),
        ...deps.peek(parked.dlq.name, limit).map((message) => toParkedView(toMessageView(message), 'dlq')),
      ];
    },
    subscriptions: async () =>
      (deps.subscriptions?.() ?? []).map((view) => {
        const failed = view.dlq.length + view.dlqDropped;
        return { ...view, failed, dlqDepth: failed };
      }),
    redrive: async (name) => {
      const queue = queueByName(deps.queues, name);
      return moveBack(
        deps.sqs,
        { queue: queue.key, sourceArn: queue.dlq.arn, destinationArn: queue.arn },
        deps.redriveTimeoutMs ?? 15_000,
      );
    },
    replayParked: (request) => replayLocalParked(deps, request),
    ...(deps.reconciliation && { reconciliation: deps.reconciliation }),
    ...(deps.erasure && { erase: (target) => eraseLocal(deps.erasure!, target) }),
  };
}

/** A queue by its key (`webhookState`), its CLI spelling (`webhook-state`) or its name; else 404. */
export function queueByName(queues: readonly LocalQueue[], name: string): LocalQueue {
  const normalised = name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
  const queue = queues.find((candidate) => candidate.key === normalised || candidate.name === name);
  if (!queue) throw new HttpError(404, `no queue ${name}; queues: ${queues.map((q) => q.key).join(', ')}`);
  return queue;
}
