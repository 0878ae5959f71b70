import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { bookkeepingFilter } from '../lib/bus/entry.js';
import { createPublishFilter } from '../lib/bus/publish-filter.js';
import { createEventBridgePublisher } from '../lib/bus/publisher.js';
import { readBusConfig } from '../lib/config/bus.js';
import type { Publication } from '../lib/workers/index.js';

/**
 * The workers' publication to the stage's bus, from the environment (PUBLISH_EVENTS, EVENT_BUS_NAME,
 * PUBLISH_ECHOES, BOOKKEEPING_FIELDS, PUBLISH_DETAIL_TYPES), or undefined when publishing is off. The EventBridge endpoint
 * comes from the SDK's own AWS_ENDPOINT_URL_EVENTBRIDGE, so `npm start` points it at the local bus.
 */
export function publicationFromEnv(): Publication | undefined {
  const config = readBusConfig();
  if (!config.publish || config.eventBusName === undefined) return undefined;
  return {
    publisher: createEventBridgePublisher({
      client: new EventBridgeClient({}),
      eventBusName: config.eventBusName,
    }),
    publishEchoes: config.publishEchoes,
    isBookkeeping: bookkeepingFilter(config.bookkeepingFields),
    matches: createPublishFilter(config.publishDetailTypes),
  };
}
