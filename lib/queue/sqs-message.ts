import { MessageTooLargeError, type OutboundMessage } from './port.js';

/** The SQS limit for one message: body plus attribute names, types and values. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** Characters SQS refuses in a message body or attribute (outside XML's Char production). */
const NOT_SQS_SAFE = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const NOT_SQS_SAFE_ALL = new RegExp(NOT_SQS_SAFE.source, 'gu');

/** An {@link OutboundMessage} as SQS carries it: text body, String attributes. */
export interface SqsMessage extends OutboundMessage {
  body: string;
}

/**
 * Encodes a message for SQS, which only carries XML characters: a body that is not such text (not
 * UTF-8, or holding U+FFFE, a control character, ...) travels base64-encoded with the attribute
 * `bodyEncoding=base64`, so its bytes are never altered. Attribute values are cut to 1,000 characters
 * with unsafe characters replaced by `?` (they are informative; the body is the delivery). Throws
 * {@link MessageTooLargeError} over {@link SQS_MAX_MESSAGE_BYTES}.
 */
export function encodeSqsMessage(message: OutboundMessage): SqsMessage {
  const attributes: Record<string, string> = {};
  for (const name in message.attributes) attributes[name] = attributeValue(message.attributes[name]!);
  let body = typeof message.body === 'string' && message.body.isWellFormed() ? message.body : undefined;
  if (body === undefined || NOT_SQS_SAFE.test(body)) {
    body = Buffer.from(message.body).toString('base64');
    attributes.bodyEncoding = 'base64';
  }
  const encoded = { ...message, body, attributes };
  const bytes = messageBytes(encoded);
  if (bytes > SQS_MAX_MESSAGE_BYTES)
    throw new MessageTooLargeError(message.queue, bytes, SQS_MAX_MESSAGE_BYTES);
  return encoded;
}

function attributeValue(value: string): string {
  const clipped = value.length > 1000 ? `${value.slice(0, 1000)}…` : value;
  return clipped.replace(NOT_SQS_SAFE_ALL, '?');
}

/** Size of a message as SQS counts it: body plus attribute names, types and values, in UTF-8 bytes. */
function messageBytes(message: SqsMessage): number {
  let size = Buffer.byteLength(message.body);
  for (const name in message.attributes) {
    size += Buffer.byteLength(name) + 'String'.length + Buffer.byteLength(message.attributes[name]!);
  }
  return size;
}
