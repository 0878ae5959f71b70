import { DEFAULT_BOOKKEEPING_FIELDS } from '../bus/entry.js';
import { boolEnv, ConfigError, listEnv, optionalEnv } from './env.js';

type Env = Record<string, string | undefined>;

/** What the workers need to publish applied events. */
export interface BusConfig {
  /** EVENT_BUS_NAME; required when `publish` is true. */
  eventBusName: string | undefined;
  /** PUBLISH_EVENTS (serverless.yml sets it true when subscriptions.yml has any). */
  publish: boolean;
  /** PUBLISH_ECHOES: publish the changes of IGNORE_ASSOCIATE_IDS too. */
  publishEchoes: boolean;
  /** BOOKKEEPING_FIELDS (comma-separated, `prefix*` allowed) replaces the default list. */
  bookkeepingFields: readonly string[];
  /** PUBLISH_DETAIL_TYPES: the event names subscriptions can match (lib/bus/publish-filter.ts); empty, every change. */
  publishDetailTypes: readonly string[];
}

/** Reads the bus settings once, strictly: PUBLISH_EVENTS=true without EVENT_BUS_NAME is an error. */
export function readBusConfig(env: Env = process.env): BusConfig {
  const publish = boolEnv('PUBLISH_EVENTS', false, env);
  const fields = listEnv('BOOKKEEPING_FIELDS', env);
  return {
    eventBusName: publish ? requireBusName(env) : optionalEnv('EVENT_BUS_NAME', env),
    publish,
    publishEchoes: boolEnv('PUBLISH_ECHOES', false, env),
    bookkeepingFields: fields.length > 0 ? fields : DEFAULT_BOOKKEEPING_FIELDS,
    publishDetailTypes: listEnv('PUBLISH_DETAIL_TYPES', env),
  };
}

function requireBusName(env: Env): string {
  const name = optionalEnv('EVENT_BUS_NAME', env);
  if (name === undefined) {
    throw new ConfigError('EVENT_BUS_NAME must be set when PUBLISH_EVENTS is true', 'EVENT_BUS_NAME');
  }
  return name;
}
