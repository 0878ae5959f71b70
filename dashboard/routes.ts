import { PatternError } from '../lib/bus/pattern/errors.js';
import { FIXED_ENTITIES, isKnownEntity, WEBHOOK_STATE_NAMES } from '../lib/events/index.js';
import {
  ReplayBusyError,
  type ReplayFilter,
  type ReplayReport,
  replayEventMatcher,
} from '../lib/ingest/index.js';
import type { RowEntity } from '../lib/model/types.js';
import { eraseRoutes } from './erase-routes.js';
import { reconcileRoutes } from './reconcile-routes.js';
import { type AdminRoute, HttpError } from './route-server.js';
import type { DashboardSource, SubscriptionStatus } from './source.js';
import { toEventView, toRowView, toWebhookView } from './views.js';

/**
 * The endpoints the page reads (page/api.js), answered from `source`: the same routes serve the local
 * admin API and `npm run ops -- dashboard`.
 */
export function sourceRoutes(source: DashboardSource): AdminRoute[] {
  const { store } = source;
  return [
    {
      method: 'GET',
      pattern: /^\/source$/,
      // With the webhook states by name, in order: the page's filter and counts list them.
      handle: async () => ({ ...source.info, webhookStates: WEBHOOK_STATE_NAMES }),
    },
    { method: 'GET', pattern: /^\/entities$/, handle: async () => ENTITIES },
    {
      method: 'GET',
      pattern: /^\/rows\/([^/]+)\/([^/]+)\/([^/]+)$/,
      handle: async ([context, entity, primaryKey]) => {
        const row = await store.getRow(context!, rowEntity(entity!), integer(primaryKey!));
        if (!row) throw new HttpError(404, 'no such row');
        return toRowView(row);
      },
    },
    {
      method: 'GET',
      pattern: /^\/rows\/([^/]+)\/([^/]+)\/([^/]+)\/events$/,
      handle: async ([context, entity, primaryKey]) =>
        (await store.listRowEvents(context!, rowEntity(entity!), integer(primaryKey!))).map(toEventView),
    },
    {
      method: 'GET',
      pattern: /^\/webhooks$/,
      handle: async () => (await store.listWebhooks()).map(toWebhookView),
    },
    ...reconcileRoutes(source),
    ...eraseRoutes(source),
    { method: 'GET', pattern: /^\/queues$/, handle: () => source.queues() },
    {
      method: 'POST',
      pattern: /^\/queues\/([^/]+)\/redrive$/,
      handle: ([name]) => source.redrive(name!),
    },
    { method: 'GET', pattern: /^\/parked$/, handle: (_, query) => source.parked(limit(query)) },
    {
      method: 'POST',
      pattern: /^\/parked\/replay$/,
      handle: (_, query) => replay(source, replayFilter(query)),
    },
    { method: 'GET', pattern: /^\/subscriptions$/, handle: () => source.subscriptions() },
    {
      method: 'GET',
      pattern: /^\/subscriptions\/([^/]+)$/,
      handle: async ([name]) => subscriptionByName(await source.subscriptions(), name!),
    },
    { method: 'GET', pattern: /^\/outcomes$/, handle: () => source.outcomes() },
    {
      method: 'GET',
      pattern: /^\/deliveries$/,
      handle: (_, query) => source.deliveries(Number(query.get('after') ?? 0) || 0),
    },
    {
      method: 'GET',
      pattern: /^\/events\/([^/]+)$/,
      handle: async ([eventId]) => {
        if (!eventId || eventId.length > 200)
          throw new HttpError(400, `EventId ${eventId?.slice(0, 64)}…: 1 to 200 characters accepted`);
        return source.findEvent(eventId);
      },
    },
  ];
}

/** The entities a row can have (`GET /entities`): the catalogue's fixed ones, and the forms of the dynamic ones. */
const ENTITIES = { fixed: FIXED_ENTITIES, dynamic: ['list.<name>', 'y_<table>'] };

/** An entity the registry accepts: a fixed one of the catalogue, a list (`list.<name>`) or a custom table (`y_<name>`). */
function rowEntity(value: string): RowEntity {
  if (!isKnownEntity(value))
    throw new HttpError(
      400,
      `entity ${value.slice(0, 64)}: one of ${[...ENTITIES.fixed, ...ENTITIES.dynamic].join(', ')} accepted`,
    );
  return value;
}

function integer(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number))
    throw new HttpError(400, `primaryKey ${value.slice(0, 64)}: an integer accepted`);
  return number;
}

/** `?event=person.*&max=N`: which parked deliveries a replay decides, refused before anything is done. */
function replayFilter(query: URLSearchParams): ReplayFilter {
  const max = query.get('max');
  const number = Number(max);
  if (max !== null && (!Number.isSafeInteger(number) || number < 1))
    throw new HttpError(400, `max ${max.slice(0, 64)}: a positive integer accepted`);
  const eventPattern = query.get('event') || undefined;
  try {
    replayEventMatcher(eventPattern);
  } catch (error) {
    if (error instanceof PatternError) throw new HttpError(400, error.message);
    throw error;
  }
  return { eventPattern, max: max === null ? undefined : number };
}

/** A replay; another one running is a 409 that says since when. */
async function replay(source: DashboardSource, filter: ReplayFilter): Promise<ReplayReport> {
  try {
    return await source.replayParked(filter);
  } catch (error) {
    if (error instanceof ReplayBusyError) throw new HttpError(409, error.message);
    throw error;
  }
}

function limit(query: URLSearchParams): number {
  const value = Number(query.get('limit') ?? 100);
  return Number.isSafeInteger(value) && value > 0 ? value : 100;
}

function subscriptionByName(subscriptions: SubscriptionStatus[], name: string): SubscriptionStatus {
  const found = subscriptions.find((candidate) => candidate.name === name);
  if (!found) {
    const names = subscriptions.map((candidate) => candidate.name).join(', ') || 'none';
    throw new HttpError(404, `no subscription ${name.slice(0, 64)}; subscriptions: ${names}`);
  }
  return found;
}
