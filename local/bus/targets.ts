/**
 * How the local bus (local-bus.ts) hands one event to a subscription's target: a POST to a `url`, as an
 * API destination does, or a SendMessage to a `queue` of the SQS emulator. `lambda` targets have no
 * sender locally (delivered on AWS only).
 */
import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { CreateQueueCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { BusError } from '../../lib/bus/errors.js';
import type { Subscription } from '../../lib/bus/subscriptions.js';

export type Attempt = { ok: true } | { ok: false; retryable: boolean; error: string };

/** One attempt at delivering an event's JSON text; `signal` aborts it (the bus is stopping). */
export type Send = (text: string, signal: AbortSignal) => Promise<Attempt>;

/** A target's sender, and what releases its connections when the bus stops. */
export interface Target {
  send: Send;
  close(): void;
}

export interface TargetOptions {
  /** The SQS emulator's client; needed when a subscription has a `queue` target. */
  sqs?: SQSClient;
  /** `<service>-<stage>`, the queue name's prefix. */
  prefix: string;
  /** Where `auth.env` is read. */
  env: Record<string, string | undefined>;
  /** How long a POST may take, answer included, as for an API destination. */
  timeoutMs: number;
  /** Connections a `url` target may hold (the bus has at most this many deliveries under way per target). */
  maxInFlight: number;
}

/**
 * How much of a target's answer is read: the status decides, the body is drained only so that the
 * connection can serve the next POST. The rest of a longer (or endless) body is never read: the
 * connection is destroyed instead.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The 4xx answers an API destination retries (with every 5xx and network error); others go to the DLQ. */
const RETRIED = new Set([401, 407, 409, 429]);

/**
 * The subscription's target, or undefined for a lambda target. Checks its `auth.env` variable and
 * creates the queue of a `queue` target; a problem is a one-line {@link BusError}.
 */
export async function startTarget(
  subscription: Subscription,
  options: TargetOptions,
): Promise<Target | undefined> {
  const { name, target, auth } = subscription;
  if (target.kind === 'lambda') return undefined;
  if (target.kind === 'queue') {
    const { sqs } = options;
    if (sqs === undefined)
      throw new BusError(`subscription "${name}": a queue target needs the local SQS client`);
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: `${options.prefix}-${target.queue}` }),
    );
    const send: Send = async (text, signal) => {
      try {
        await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: text }), { abortSignal: signal });
        return { ok: true };
      } catch (error) {
        return { ok: false, retryable: true, error: `SendMessage: ${(error as Error).message}` };
      }
    };
    return { send, close: () => undefined };
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Amazon/EventBridge/ApiDestinations',
  };
  if (auth !== undefined) {
    const value = options.env[auth.env];
    if (value === undefined || value === '') {
      throw new BusError(
        `subscription "${name}": set ${auth.env}, the value of its ${auth.header} header locally`,
      );
    }
    headers[auth.header] = value;
  }
  return postTo(new URL(target.url), headers, options);
}

/**
 * POSTs through node:http rather than fetch: a request that is aborted or times out destroys its
 * socket at once (fetch left the connection of an aborted request open: a target that never answers
 * piled up one file descriptor per attempt), and the agent holds at most `maxInFlight` connections.
 */
function postTo(url: URL, headers: Record<string, string>, options: TargetOptions): Target {
  const https = url.protocol === 'https:';
  const agent = new (https ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: options.maxInFlight });
  const send: Send = async (text, stopping) => {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    try {
      const status = await post(url, { headers, agent, signal: AbortSignal.any([stopping, timeout]) }, text);
      if (status >= 200 && status < 300) return { ok: true };
      return { ok: false, retryable: RETRIED.has(status) || status >= 500, error: `HTTP ${status}` };
    } catch (error) {
      if (timeout.aborted)
        return { ok: false, retryable: true, error: `no answer within ${options.timeoutMs} ms` };
      const { code, message } = error as NodeJS.ErrnoException;
      return { ok: false, retryable: true, error: code ?? message };
    }
  };
  return { send, close: () => agent.destroy() };
}

/**
 * One POST; resolves with the answer's status once its body has ended, or once MAX_ANSWER_BYTES of
 * it were read: the rest is never read, the connection is destroyed instead.
 */
function post(url: URL, options: RequestOptions, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        ...options,
        method: 'POST',
        headers: { ...options.headers, 'content-length': Buffer.byteLength(text) },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes <= MAX_ANSWER_BYTES) return;
          resolve(status);
          response.destroy();
        });
        response.on('end', () => resolve(status));
        response.on('error', reject);
        // Without effect once it ended; otherwise the connection went before the answer was whole.
        response.on('close', () => reject(new Error('the answer was cut off')));
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}
