import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Answer, DeliveryRequest } from './index.js';

/** True for the API Gateway HTTP API (payload 2.0) event shape. */
export function isProxyEventV2(event: unknown): event is APIGatewayProxyEventV2 {
  if (typeof event !== 'object' || event === null) return false;
  const candidate = event as Partial<APIGatewayProxyEventV2>;
  return candidate.version === '2.0' && typeof candidate.requestContext?.http?.method === 'string';
}

/**
 * The raw request inside an HTTP API event: a base64 body is decoded to its exact bytes; a text
 * body stays the string API Gateway decoded (its UTF-8 bytes are the bytes received).
 */
export function toDeliveryRequest(event: APIGatewayProxyEventV2, receivedAt = new Date()): DeliveryRequest {
  const body =
    event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
  return {
    method: event.requestContext.http.method,
    headers: event.headers ?? {},
    query: event.queryStringParameters ?? {},
    body,
    receivedAt,
  };
}

export function toProxyResult(response: Answer): APIGatewayProxyStructuredResultV2 {
  return { statusCode: response.status, headers: response.headers, body: response.body };
}
