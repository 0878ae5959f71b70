/**
 * EventBridge's PutEvents on a loopback port, for `npm start`: the workers' real EventBridge client
 * reaches it through AWS_ENDPOINT_URL_EVENTBRIDGE, as their SQS and DynamoDB clients reach the
 * emulators. It speaks the service's JSON 1.1 protocol (POST, `X-Amz-Target: AWSEvents.PutEvents`),
 * checks each entry as EventBridge does and hands the valid ones to the local bus. Like the emulators'
 * ports, it answers only SDK requests signed with the runtime's access key id (port-guard.js; the
 * signature itself is not verified). Other operations are answered `UnknownOperationException`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BusEntry, entrySize, MAX_ENTRY_BYTES } from '../../lib/bus/entry.js';
import { MAX_DETAIL_DEPTH, nestingDepth } from '../../lib/bus/limits.js';
import type { EventPublisher } from '../../lib/bus/publisher.js';
import { guardRequests } from '../http/guard-requests.js';
import { guardEmulator } from '../http/port-guard.js';

export interface EventBridgeEndpointOptions {
  bus: EventPublisher;
  /** The only bus this endpoint knows, by name or by its ARN. */
  busName: string;
  /** Loopback only; default 127.0.0.1. Port 0 picks a free one. */
  host?: string;
  port: number;
  log?: (line: string) => void;
}

export interface EventBridgeEndpoint {
  /** The value for AWS_ENDPOINT_URL_EVENTBRIDGE. */
  endpoint: string;
  port: number;
  close(): Promise<void>;
}

/** One PutEventsResultEntry. */
export type ResultEntry = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

const TARGET = 'AWSEvents.PutEvents';
const CONTENT_TYPE = 'application/x-amz-json-1.1';
/** PutEvents takes 1 to 10 entries of at most 256 KB in all; a body this size is far beyond them. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_ENTRIES = 10;

/** Starts the endpoint; a busy port rejects with the listen error (the runtime names its variable). */
export async function startEventBridgeEndpoint(
  options: EventBridgeEndpointOptions,
): Promise<EventBridgeEndpoint> {
  const host = options.host ?? '127.0.0.1';
  const server: Server = createServer(
    guardEmulator(guardRequests('eventbridge', (req, res) => answer(req, res, options), options.log)),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, options: EventBridgeEndpointOptions) {
  const body = await readBody(req);
  if (req.method !== 'POST' || req.headers['x-amz-target'] !== TARGET) {
    const operation = String(req.headers['x-amz-target'] ?? `${req.method} ${req.url}`);
    return fail(
      res,
      'UnknownOperationException',
      `${operation}: the local EventBridge serves ${TARGET} only`,
    );
  }
  if (body === undefined) {
    return fail(res, 'ValidationException', `the request body is over ${MAX_BODY_BYTES} bytes`);
  }
  let request: unknown;
  try {
    request = JSON.parse(body);
  } catch {
    return fail(res, 'SerializationException', 'the request body is not JSON');
  }
  const entries = (request as { Entries?: unknown } | null)?.Entries;
  if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES) {
    return fail(
      res,
      'ValidationException',
      `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${MAX_ENTRIES}`,
    );
  }
  const checked = entries.map((entry: unknown) => checkEntry(entry, options.busName));
  const valid = checked.filter((entry): entry is BusEntry => !('ErrorCode' in entry));
  if (valid.reduce((sum, entry) => sum + entrySize(entry), 0) > MAX_ENTRY_BYTES) {
    return fail(res, 'ValidationException', 'Total size of the entries in the request is over the limit.');
  }
  const published = await options.bus.publish(valid);
  let next = 0;
  const results: ResultEntry[] = checked.map((entry) => {
    if ('ErrorCode' in entry) return entry;
    const result = published[next++];
    if (result?.ok) return { EventId: result.eventId };
    return {
      ErrorCode: result?.errorCode ?? 'InternalFailure',
      ErrorMessage: result?.errorMessage ?? 'the local bus returned no result for this entry',
    };
  });
  send(res, 200, {
    FailedEntryCount: results.filter((entry) => 'ErrorCode' in entry).length,
    Entries: results,
  });
}

/**
 * A PutEvents entry as the bus takes it, or its per-entry error: Source, DetailType and Detail are
 * required, Detail must be a JSON object nested at most 1100 levels deep, and the bus must be this one
 * (EventBridge may accept an unknown bus silently; here it fails, so a wrong EVENT_BUS_NAME shows).
 */
export function checkEntry(entry: unknown, busName: string): BusEntry | ResultEntry {
  const fields = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
  const missing = ['Source', 'DetailType', 'Detail'].filter(
    (name) => typeof fields[name] !== 'string' || fields[name] === '',
  );
  if (missing.length > 0) {
    return {
      ErrorCode: 'InvalidArgument',
      ErrorMessage: `Parameter(s) ${missing.join(', ')} could not be found for this event.`,
    };
  }
  const { Source, DetailType, Detail, EventBusName } = fields as Record<string, string>;
  if (!isJsonObject(Detail!)) return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
  const depth = nestingDepth(Detail!);
  if (depth > MAX_DETAIL_DEPTH) {
    return {
      ErrorCode: 'MalformedDetail',
      ErrorMessage: `Detail nests ${depth} levels deep; PutEvents processes nested JSON up to ${MAX_DETAIL_DEPTH} levels.`,
    };
  }
  const bus = typeof EventBusName === 'string' && EventBusName !== '' ? EventBusName : 'default';
  if (bus !== busName && bus.replace(/^arn:aws[a-z-]*:events:[^:]*:\d*:event-bus\//, '') !== busName) {
    return {
      ErrorCode: 'InvalidArgument',
      ErrorMessage: `Event bus ${bus} does not exist: the local runtime has the bus ${busName}.`,
    };
  }
  return { Source: Source!, DetailType: DetailType!, Detail: Detail! };
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** The body as text, or undefined when it is over {@link MAX_BODY_BYTES} (the rest is drained). */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  return bytes > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8');
}

/** An error of the JSON 1.1 protocol: the SDK throws it as an exception named `type`. */
function fail(res: ServerResponse, type: string, message: string): void {
  send(res, 400, { __type: type, message }, { 'x-amzn-errortype': type });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}
