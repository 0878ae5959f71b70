import type { SQSRecord } from 'aws-lambda';
import { type DeliveryEvent, parseDeliveryEvent } from '../events/index.js';
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
 * Turns an SQS record from the ingest back into a typed event: the body is the raw delivery (base64
 * of the raw bytes when the `bodyEncoding` attribute says so), validated with the ingest's schemas.
 * Throws {@link InvalidRecordError} for anything else.
 */
export function decodeRecord(record: SQSRecord): DecodedRecord {
  const attributes = record.messageAttributes ?? {};
  const attribute = (name: string): string | undefined => attributes[name]?.stringValue;
  const raw =
    attribute('bodyEncoding') === 'base64'
      ? Buffer.from(record.body, 'base64').toString('utf8')
      : record.body;
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
  const verified = attribute('signatureVerified');
  const receivedAt = attribute('receivedAt');
  const userAgentVersion = attribute('userAgentVersion');
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
