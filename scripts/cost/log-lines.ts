import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ASSUMPTIONS } from './prices.js';

/** The log lines a delivery costs besides the handlers' own: Lambda's platform lines and the access log. */

/**
 * Lambda's own START, END and REPORT lines of one invocation in the Text log format. With the JSON
 * format and `SystemLogLevel: WARN` (serverless.yml) they are not written at all.
 */
export function platformLines(): string[] {
  const id = randomUUID();
  return [
    `START RequestId: ${id} Version: $LATEST`,
    `END RequestId: ${id}`,
    `REPORT RequestId: ${id}\tDuration: 23.61 ms\tBilled Duration: 24 ms\tMemory Size: 256 MB\tMax Memory Used: 94 MB\t`,
  ];
}

/**
 * One access log line as API Gateway writes it: `format` (serverless.yml) with each `$context` variable
 * replaced by its value in `values`. Throws on a variable without a value, so a field added to the format
 * is priced too.
 */
export function accessLogLine(format: string, values: Record<string, string>): string {
  return format.replace(/\$context\.[A-Za-z]+(?:\.[A-Za-z]+)*/g, (variable) => {
    const value = values[variable];
    if (value === undefined)
      throw new Error(`scripts/cost/log-lines.ts (accessLogValues) has no sample value for ${variable}`);
    return value;
  });
}

/**
 * The `$context` values of one delivery: what the request and the ingest's answer say, and what API
 * Gateway adds (a 16-character request id, its time stamp, the latencies the cost model assumes).
 */
export function accessLogValues(
  event: APIGatewayProxyEventV2,
  answer: { statusCode: number; body?: string },
): Record<string, string> {
  const { http } = event.requestContext;
  return {
    '$context.requestId': 'Jr0aUhcpDoEEM7Q=',
    '$context.requestTime': '14/May/2025:10:12:32 +0000',
    '$context.identity.sourceIp': http.sourceIp,
    '$context.identity.userAgent': event.headers['user-agent'] ?? '-',
    '$context.httpMethod': http.method,
    '$context.routeKey': event.routeKey,
    '$context.protocol': http.protocol,
    '$context.status': String(answer.statusCode),
    '$context.responseLength': String(Buffer.byteLength(answer.body ?? '')),
    '$context.responseLatency': String(ASSUMPTIONS.ingestMs + 4),
    // Lambda's own answer to the invoke, not the function's status.
    '$context.integrationStatus': '200',
    '$context.integrationLatency': String(ASSUMPTIONS.ingestMs),
    '$context.integrationErrorMessage': '-',
    '$context.error.message': '-',
  };
}
