import { type DeliveryAttributes, MessageTooLargeError, type OutboundMessage } from './port.js';

/** The SQS limit for one message: body plus attribute names, types and values. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** Characters SQS refuses in a message body or attribute (outside XML's Char production). */
const NOT_SQS_SAFE = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const NOT_SQS_SAFE_ALL = new RegExp(NOT_SQS_SAFE.source, 'gu');

/** The attribute that says a body travels base64-encoded: SQS's own, never a delivery's. */
export const BODY_ENCODING = 'bodyEncoding';

/** An {@link OutboundMessage} as SQS carries it: text body, String attributes ({@link BODY_ENCODING} among them). */
export interface SqsMessage extends Omit<OutboundMessage, 'body' | 'attributes'> {
  body: string;
  attributes: DeliveryAttributes & { [BODY_ENCODING]?: 'base64' };
}

/**
 * Encodes a message for SQS, which only carries XML characters: a body that is not such text (not
 * UTF-8, or holding U+FFFE, a control character, ...) travels base64-encoded with the attribute
 * `bodyEncoding=base64`, so its bytes are never altered. Attribute values are cut to 1,000 characters
 * with unsafe characters replaced by `?` (they are informative; the body is the delivery). Throws
 * {@link MessageTooLargeError} over {@link SQS_MAX_MESSAGE_BYTES}.
 */
export function encodeSqsMessage(message: OutboundMessage): SqsMessage {
  const attributes: SqsMessage['attributes'] = {};
  for (const [name, value] of Object.entries(message.attributes) as [keyof DeliveryAttributes, string][])
    attributes[name] = attributeValue(value);
  let body = typeof message.body === 'string' && message.body.isWellFormed() ? message.body : undefined;
  if (body === undefined || NOT_SQS_SAFE.test(body)) {
    body = Buffer.from(message.body).toString('base64');
    attributes[BODY_ENCODING] = 'base64';
  }
  const encoded = { ...message, body, attributes };
  const bytes = messageBytes(encoded);
  if (bytes > SQS_MAX_MESSAGE_BYTES)
    throw new MessageTooLargeError(message.queue, bytes, SQS_MAX_MESSAGE_BYTES);
  return encoded;
}

/** A received message's attributes: the SDK's `MessageAttributes` or Lambda's `messageAttributes`. */
export type ReceivedAttributes = Readonly<
  Record<string, { StringValue?: string | undefined } | { stringValue?: string | undefined }>
>;

/**
 * The other side of {@link encodeSqsMessage}, for a message SQS gives back (a receive, or a Lambda
 * record): the body's exact bytes when it travelled base64 ({@link BODY_ENCODING}), else its text, and
 * the String attributes as written, without the transport's own `bodyEncoding`.
 *
 * @example decodeSqsMessage('e30=', { bodyEncoding: { stringValue: 'base64' } }).body // Uint8Array of `{}`
 */
export function decodeSqsMessage(
  text: string,
  received: ReceivedAttributes = {},
): { body: string | Uint8Array; attributes: DeliveryAttributes } {
  const attributes: Record<string, string> = {};
  let base64 = false;
  for (const [name, value] of Object.entries(received)) {
    const string =
      'StringValue' in value ? value.StringValue : 'stringValue' in value ? value.stringValue : undefined;
    if (string === undefined) continue;
    if (name === BODY_ENCODING) base64 = string === 'base64';
    else attributes[name] = string;
  }
  return { body: base64 ? new Uint8Array(Buffer.from(text, 'base64')) : text, attributes };
}

function attributeValue(value: string): string {
  const clipped = value.length > 1000 ? `${value.slice(0, 1000)}…` : value;
  return clipped.replace(NOT_SQS_SAFE_ALL, '?');
}

/** Size of a message as SQS counts it: body plus attribute names, types and values, in UTF-8 bytes. */
export function messageBytes(message: SqsMessage): number {
  let size = Buffer.byteLength(message.body);
  for (const [name, value] of Object.entries(message.attributes)) {
    size += Buffer.byteLength(name) + 'String'.length + Buffer.byteLength(value);
  }
  return size;
}
