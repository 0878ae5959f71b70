import type { SQSRecord } from 'aws-lambda';
import { type DeliveryEvent, parseDeliveryEvent } from '../events/index.js';
import { decodeSqsMessage } from '../queue/sqs-message.js';
import { InvalidRecordError } from './errors.js';

/** What the ingest attached to the message besides the body. */
export interface DeliveryMeta {
  messageId: string;
  signatureVerified?: boolean;
  receivedAt?: string;
  userAgentVersion?: string;
  /** The delivery body exactly as received (what the history keeps). */
  rawBody?: string;
  /** SQS's ApproximateReceiveCount: above 1, an earlier attempt at this message failed somewhere. */
  receiveCount?: number;
}

export interface DecodedRecord {
  event: DeliveryEvent;
  meta: DeliveryMeta;
}

/**
 * Turns an SQS record from the ingest back into a typed event: the body is the raw delivery, decoded
 * as the queue encoded it ({@link decodeSqsMessage}), validated with the ingest's schemas.
 * Throws {@link InvalidRecordError} for anything else.
 */
export function decodeRecord(record: SQSRecord): DecodedRecord {
  const { body: received, attributes } = decodeSqsMessage(record.body, record.messageAttributes);
  const raw = typeof received === 'string' ? received : Buffer.from(received).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (cause) {
    throw new InvalidRecordError('message body is not JSON', record.messageId, { cause });
  }
  const parsed = parseDeliveryEvent(body);
  if (!parsed.ok) {
    throw new InvalidRecordError(`${parsed.reason}: ${parsed.detail}`, record.messageId);
  }
  const { signatureVerified: verified, receivedAt, userAgentVersion } = attributes;
  return {
    event: parsed.event,
    meta: {
      messageId: record.messageId,
      rawBody: raw,
      receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
      ...(verified !== undefined && { signatureVerified: verified === 'true' }),
      ...(receivedAt !== undefined && { receivedAt }),
      ...(userAgentVersion !== undefined && { userAgentVersion }),
    },
  };
}
