import type { DeliveryPolicy, DeliveryRequest } from '../../lib/ingest/index.js';
import { createSignatureVerifier, type SecretConfig } from '../../lib/ingest/signature.js';
import type { OutboundMessage, QueueSender } from '../../lib/queue/port.js';
import { encodeSqsMessage, type SqsMessage } from '../../lib/queue/sqs-message.js';
import {
  buildSampleBody,
  buildSampleDelivery,
  type SampleEventName,
  type SampleOptions,
  signBody,
} from '../../tools/samples.js';

export const SECRET = 'test-secret-0123456789';

/**
 * A queue that keeps what it was sent, in order, encoded as the SQS adapter sends it (so a test sees
 * the body and attributes SQS would hold), like a real one would acknowledge it.
 */
export class RecordingQueue implements QueueSender {
  readonly sent: SqsMessage[] = [];
  async send(message: OutboundMessage): Promise<void> {
    this.sent.push(encodeSqsMessage(message));
  }
}

export function policy(overrides: Partial<DeliveryPolicy> & { secrets?: SecretConfig } = {}): DeliveryPolicy {
  const { secrets, ...rest } = overrides;
  return {
    verifier: createSignatureVerifier(secrets ?? { fallback: [SECRET], byContext: {} }),
    allowUnsigned: false,
    maxEventAgeSeconds: 7 * 24 * 3600,
    maxBodyBytes: 1_048_576,
    ...rest,
  };
}

export interface RequestOptions {
  /** Secret that signs row events; `null` sends no signature header. */
  secret?: string | null;
  prefix?: string;
  headers?: Record<string, string | undefined>;
  query?: Record<string, string>;
  method?: string;
  receivedAt?: Date;
}

/** A request carrying `body` with every header of the spec, signed with `secret` for row events. */
export function request(body: Record<string, unknown>, options: RequestOptions = {}): DeliveryRequest {
  const secret = options.secret === undefined ? SECRET : (options.secret ?? undefined);
  const delivery = buildSampleDelivery(body, {
    ...(secret !== undefined && { secret }),
    ...(options.prefix !== undefined && { prefix: options.prefix }),
  });
  return {
    method: options.method ?? 'POST',
    headers: { ...delivery.headers, ...options.headers },
    query: options.query ?? {},
    body: Buffer.from(delivery.body),
    receivedAt: options.receivedAt ?? new Date(),
  };
}

/** The same request with other body bytes, signed with `secret` (the signature header is replaced). */
export function withRawBody(
  base: DeliveryRequest,
  raw: string | Buffer,
  secret: string | null = SECRET,
): DeliveryRequest {
  const headers = { ...base.headers };
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase().endsWith('-signature')) delete headers[name];
  }
  if (secret !== null) headers['X-SuperOffice-Signature'] = signBody(raw, secret);
  return { ...base, headers, body: Buffer.from(raw) };
}

export function sample(event: SampleEventName, options: SampleOptions = {}): Record<string, unknown> {
  return buildSampleBody(event, options);
}
