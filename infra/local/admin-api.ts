import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type QueueAttributeName,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { isKnownEntity } from '../../lib/events/index.js';
import type { ReplayReport } from '../../lib/ingest/index.js';
import { JsonText, stringifyExact } from '../../lib/json-text.js';
import type { EventRecord, Gap, Row, RowEntity, StoreReader, Webhook } from '../../lib/store/types.js';
import type { Dashboard } from './dashboard/server.js';
import { guardRequests } from './guard-requests.js';
import type { LocalQueue } from './resources.js';
import type { StoredMessage } from './sqs-emulator.js';

export interface AdminApiDeps {
  store: StoreReader;
  sqs: SQSClient;
  queues: readonly LocalQueue[];
  /** Reads a queue's messages without receiving them (see SqsEmulator.peek). */
  peek(queueName: string, limit?: number): StoredMessage[];
  /** True once every component is up; /health answers 503 before. */
  isReady(): boolean;
  /** Served at GET /info: endpoints, queue and table names. */
  info?: () => Record<string, unknown>;
  /** How long POST /queues/{name}/redrive waits for the move task to finish. */
  redriveTimeoutMs?: number;
  /** The dashboard page at `/`, its read routes, and the token a browser's POST must carry. */
  dashboard?: Dashboard;
  /** POST /parked/replay: decides every parked delivery again with today's code and configuration. */
  replayParked?: (options: {
    eventPattern?: string | undefined;
    max?: number | undefined;
  }) => Promise<ReplayReport>;
  /** Where a request that could not be answered is logged; default stderr. */
  log?: (line: string) => void;
}

/** A JSON route: the path's captured parts and the query in, the answer's body out. */
export interface AdminRoute {
  method: string;
  pattern: RegExp;
  handle: (params: string[], query: URLSearchParams) => Promise<unknown>;
}

/** The admin view of a row: what a person or a test wants to see, without the order bookkeeping. */
export interface RowView {
  context: string;
  entity: RowEntity;
  primaryKey: number;
  status: Row['status'];
  /** Exactly as delivered (every digit): {@link JsonText} when the row kept the text. */
  fieldValues: JsonText | Record<string, unknown> | null;
  values: JsonText | Record<string, unknown> | null;
  changedFields: string[];
  lastEventId: string;
  lastEvent: string;
  lastTimestamp: string;
  changedByAssociateId: number;
  eventCount: number;
}

export function toRowView(row: Row): RowView {
  return {
    context: row.context,
    entity: row.entity,
    primaryKey: row.primaryKey,
    status: row.status,
    fieldValues:
      row.fieldValuesJson !== undefined ? new JsonText(row.fieldValuesJson) : (row.fieldValues ?? null),
    values: row.valuesJson !== undefined ? new JsonText(row.valuesJson) : (row.values ?? null),
    changedFields: row.changedFields,
    lastEventId: row.lastEventId,
    lastEvent: row.lastEvent,
    lastTimestamp: row.lastTimestamp,
    changedByAssociateId: row.changedByAssociateId,
    eventCount: row.eventCount,
  };
}

/** A history record with its payload as the exact body received. */
export function toEventView({ body, ...record }: EventRecord) {
  return { ...record, payload: new JsonText(body) };
}

export function toWebhookView(webhook: Webhook) {
  return {
    context: webhook.context,
    webhookId: webhook.webhookId,
    webhookName: webhook.webhookName,
    state: webhook.state,
    stateName: webhook.stateName,
    reportedState: webhook.reportedState,
    events: webhook.events,
    registered: webhook.registered,
    registeredAssociateId: webhook.registeredAssociateId,
    updated: webhook.updated,
    updatedAssociateId: webhook.updatedAssociateId,
    lastEventId: webhook.lastEventId,
    lastTimestamp: webhook.lastTimestamp,
    stateChangedAt: webhook.stateChangedAt,
    transitions: webhook.transitions,
  };
}

export interface QueueView {
  key: string;
  name: string;
  visible: number;
  inFlight: number;
  delayed: number;
  dlq: number;
  dlqName: string;
}

export interface MessageView {
  messageId: string;
  groupId: string | undefined;
  deduplicationId: string | undefined;
  receiveCount: number;
  sentAt: string | undefined;
  inFlight: boolean;
  attributes: Record<string, string>;
  body: string;
}

/** A parked delivery: why it was parked and the exact body received. */
export interface ParkedView extends MessageView {
  reason: string | undefined;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * The local admin API (JSON): rows, their history, webhooks, gaps, queue depths, parked deliveries,
 * dead-letter contents and redrive. Meant to be bound to 127.0.0.1 only; requests that name another
 * host or come from a web page of another origin are refused (see `refuseForeign`).
 */
export function createAdminServer(deps: AdminApiDeps): Server {
  const queueByName = (name: string): LocalQueue => {
    const normalised = name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
    const queue = deps.queues.find((candidate) => candidate.key === normalised || candidate.name === name);
    if (!queue)
      throw new HttpError(404, `no queue ${name}; queues: ${deps.queues.map((q) => q.key).join(', ')}`);
    return queue;
  };

  const routes: AdminRoute[] = [
    {
      method: 'GET',
      pattern: /^\/health$/,
      handle: async () => {
        if (!deps.isReady()) throw new HttpError(503, 'starting');
        return { status: 'ok' };
      },
    },
    { method: 'GET', pattern: /^\/info$/, handle: async () => deps.info?.() ?? {} },
    {
      method: 'GET',
      pattern: /^\/rows\/([^/]+)\/([^/]+)\/([^/]+)$/,
      handle: async ([context, entity, primaryKey]) => {
        const row = await deps.store.getRow(context!, rowEntity(entity!), integer(primaryKey!));
        if (!row) throw new HttpError(404, 'no such row');
        return toRowView(row);
      },
    },
    {
      method: 'GET',
      pattern: /^\/rows\/([^/]+)\/([^/]+)\/([^/]+)\/events$/,
      handle: async ([context, entity, primaryKey]) =>
        (await deps.store.listRowEvents(context!, rowEntity(entity!), integer(primaryKey!))).map(toEventView),
    },
    {
      method: 'GET',
      pattern: /^\/webhooks$/,
      handle: async () => (await deps.store.listWebhooks()).map(toWebhookView),
    },
    {
      method: 'GET',
      pattern: /^\/gaps$/,
      handle: async (_, query): Promise<Gap[]> => deps.store.listGaps(query.get('context') ?? undefined),
    },
    {
      method: 'GET',
      pattern: /^\/queues$/,
      handle: async () => Promise.all(deps.queues.map((queue) => queueView(deps.sqs, queue))),
    },
    {
      method: 'GET',
      pattern: /^\/queues\/([^/]+)\/dlq$/,
      handle: async ([name], query) =>
        deps.peek(queueByName(name!).dlq.name, limit(query)).map(toMessageView),
    },
    {
      method: 'GET',
      pattern: /^\/queues\/([^/]+)\/messages$/,
      handle: async ([name], query) => deps.peek(queueByName(name!).name, limit(query)).map(toMessageView),
    },
    {
      method: 'POST',
      pattern: /^\/queues\/([^/]+)\/redrive$/,
      handle: async ([name]) => redrive(deps.sqs, queueByName(name!), deps.redriveTimeoutMs ?? 15_000),
    },
    {
      method: 'GET',
      pattern: /^\/parked$/,
      handle: async (_, query): Promise<ParkedView[]> =>
        deps.peek(queueByName('parked').name, limit(query)).map((message) => ({
          ...toMessageView(message),
          reason: message.messageAttributes.reason?.StringValue,
        })),
    },
    {
      method: 'POST',
      pattern: /^\/parked\/replay$/,
      handle: async (_, query): Promise<ReplayReport> => {
        if (deps.replayParked === undefined) throw new HttpError(404, 'no replay in this runtime');
        const max = query.get('max');
        return deps.replayParked({
          eventPattern: query.get('event') ?? undefined,
          max: max === null ? undefined : positive(max, 'max'),
        });
      },
    },
    ...(deps.dashboard?.routes ?? []),
  ];

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const refused = refuseForeign(req);
    if (refused) {
      req.resume();
      return send(res, 403, { error: refused });
    }
    const url = new URL(req.url ?? '/', 'http://admin.local');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (deps.dashboard?.intercept(req, res, path)) return;
    const matches = routes
      .map((route) => ({ route, match: route.pattern.exec(path) }))
      .filter((candidate) => candidate.match !== null);
    const found = matches.find((candidate) => candidate.route.method === req.method);
    req.resume();
    if (!found) {
      if (matches.length > 0) return send(res, 405, { error: `method ${req.method} not allowed on ${path}` });
      return send(res, 404, { error: `no route ${req.method} ${path}` });
    }
    let params: string[];
    try {
      params = found.match!.slice(1).map((part) => decodeURIComponent(part));
    } catch {
      return send(res, 400, { error: 'malformed path' });
    }
    let body: unknown;
    try {
      body = await found.route.handle(params, url.searchParams);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return send(
        res,
        error.status,
        error.status === 503 ? { status: error.message } : { error: error.message },
      );
    }
    // Serialising can fail too (a value nested too deep): guardRequests answers 500 then.
    send(res, 200, body);
  };
  return createServer(guardRequests('admin', answer, deps.log));
}

/**
 * Why a request is refused, or undefined. The Host must be the loopback address and port the request
 * arrived on (127.0.0.1 or localhost): a DNS-rebound name pointing at 127.0.0.1 carries its own name.
 * A request with an Origin header must come from this very origin: a browser adds Origin to
 * cross-site POSTs and fetches, so another site's page can neither redrive nor read. Tools (curl,
 * fetch in Node) send no Origin.
 */
export function refuseForeign(req: IncomingMessage): string | undefined {
  const port = req.socket.localPort;
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (!hosts.includes(req.headers.host?.toLowerCase() ?? ''))
    return `Host must be 127.0.0.1:${port} or localhost:${port}`;
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.some((host) => origin.toLowerCase() === `http://${host}`))
    return 'cross-origin requests are refused';
  return undefined;
}

async function queueView(sqs: SQSClient, queue: LocalQueue): Promise<QueueView> {
  const names: QueueAttributeName[] = [
    'ApproximateNumberOfMessages',
    'ApproximateNumberOfMessagesNotVisible',
    'ApproximateNumberOfMessagesDelayed',
  ];
  const [main, dlq] = await Promise.all(
    [queue.url, queue.dlq.url].map(async (QueueUrl) => {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: names }),
      );
      return {
        visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
        inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
        delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
      };
    }),
  );
  return {
    key: queue.key,
    name: queue.name,
    visible: main!.visible,
    inFlight: main!.inFlight,
    delayed: main!.delayed,
    dlq: dlq!.visible + dlq!.inFlight,
    dlqName: queue.dlq.name,
  };
}

/** Moves a queue's dead-letter messages back to it with SQS's own StartMessageMoveTask, and waits. */
async function redrive(sqs: SQSClient, queue: LocalQueue, timeoutMs: number) {
  await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: queue.dlq.arn, DestinationArn: queue.arn }));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Results = [] } = await sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: queue.dlq.arn, MaxResults: 1 }),
    );
    const task = Results[0];
    if (task && task.Status !== 'RUNNING') {
      return {
        queue: queue.key,
        status: task.Status,
        moved: task.ApproximateNumberOfMessagesMoved ?? 0,
        ...(task.FailureReason ? { failureReason: task.FailureReason } : {}),
      };
    }
    if (Date.now() > deadline) {
      return { queue: queue.key, status: 'RUNNING', moved: task?.ApproximateNumberOfMessagesMoved ?? 0 };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function toMessageView(message: StoredMessage): MessageView {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.messageAttributes)) {
    attributes[name] = value.StringValue ?? value.BinaryValue ?? '';
  }
  const sent = Number(message.attributes.SentTimestamp);
  return {
    messageId: message.messageId,
    groupId: message.attributes.MessageGroupId,
    deduplicationId: message.attributes.MessageDeduplicationId,
    receiveCount: Number(message.attributes.ApproximateReceiveCount ?? 0),
    sentAt: Number.isFinite(sent) && sent > 0 ? new Date(sent).toISOString() : undefined,
    inFlight: message.inFlight,
    attributes,
    body: message.body,
  };
}

/** An entity the registry accepts: a fixed one of the catalogue, a list (`list.<name>`) or a custom table (`y_<name>`). */
function rowEntity(value: string): RowEntity {
  if (!isKnownEntity(value))
    throw new HttpError(
      400,
      'entity must be an entity of the catalogue (contact, person, ...), list.<name> or y_<table>',
    );
  return value;
}

function positive(value: string, name: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number <= 0)
    throw new HttpError(400, `${name} must be a positive integer`);
  return number;
}

function integer(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new HttpError(400, 'primaryKey must be an integer');
  return number;
}

function limit(query: URLSearchParams): number {
  const value = Number(query.get('limit') ?? 100);
  return Number.isSafeInteger(value) && value > 0 ? value : 100;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${stringifyExact(body, 2)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
