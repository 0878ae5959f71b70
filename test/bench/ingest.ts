import { createHmac } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { toDeliveryRequest } from '../../lib/apigateway.js';
import { type DeliveryPolicy, handleDelivery } from '../../lib/delivery.js';
import type { QueueSender } from '../../lib/queue/port.js';
import { buildSampleBody, buildSampleDelivery } from '../../lib/samples.js';
import { createSignatureVerifier } from '../../lib/signature.js';

const SECRET = 'bench-secret-0123456789abcdef';

/** A realistic contact.created of about 2 KB: the spec's body plus the custom properties a webhook may add. */
export function realisticContactCreated(): { event: APIGatewayProxyEventV2; body: string } {
  const body = {
    ...buildSampleBody('contact.created', { context: 'Cust26759', primaryKey: 418_233 }),
    CustomProperties: {
      integration: 'erp-sync',
      region: 'nordics',
      tenantDisplayName: 'Example Customer AS',
      pipeline: 'crm-to-erp/contacts/v2',
      correlation: '7f0c1d0e-9a3b-4b7e-8e45-6d7a2b3c4d5e',
      notes: 'Delivered through the CRM webhook; fields as selected in the webhook registration.',
      owner: { team: 'integrations', contact: 'integrations@example.com', escalation: 'on-call rotation B' },
      mappings: ['contact_id:CustomerNo', 'name:CustomerName', 'orgNr:VatNumber', 'country_id:CountryCode'],
      syncWindow: { from: '2025-05-14T00:00:00.0000000Z', to: '2025-05-15T00:00:00.0000000Z' },
      flags: { dryRun: false, sendWelcomeMail: false, exportToErp: true, retries: 3 },
      source: { system: 'crm', instance: 'online-eu', tenant: 'Cust26759', environment: 'production' },
      labels: ['customer', 'priority-b', 'nordics', 'erp-linked', 'newsletter', 'gdpr-consent'],
    },
  };
  const delivery = buildSampleDelivery(body, { secret: SECRET });
  const event = {
    version: '2.0',
    routeKey: 'POST /webhook',
    rawPath: '/webhook',
    rawQueryString: '',
    headers: Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k.toLowerCase(), v])),
    body: delivery.body,
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST', path: '/webhook' } },
  } as unknown as APIGatewayProxyEventV2;
  return { event, body: delivery.body };
}

function cpuMicros(run: () => void, iterations: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

async function cpuMicrosAsync(run: () => Promise<unknown>, iterations: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * CPU time per event of the ingest path (API Gateway event → decision → message handed to a queue
 * that acknowledges at once) next to the floor: JSON.parse plus HMAC-SHA256 of the same body.
 * Rounds alternate the two so both see the same machine state; medians are reported.
 */
export async function benchIngestCpu(
  iterations = 20_000,
  rounds = 7,
): Promise<Record<string, number | string>> {
  const { event, body } = realisticContactCreated();
  const policy: DeliveryPolicy = {
    verifier: createSignatureVerifier({ fallback: [SECRET], byContext: {} }),
    allowUnsigned: false,
    maxEventAgeSeconds: 7 * 24 * 3600,
    maxBodyBytes: 1_048_576,
  };
  let sink = 0;
  const queue: QueueSender = {
    async send(message) {
      sink += message.body.length;
    },
  };
  const floor = () => {
    const parsed = JSON.parse(body) as { EventId: string };
    const mac = createHmac('sha256', SECRET).update(body).digest('base64');
    sink += parsed.EventId.length + mac.length;
  };
  const ingest = async () => {
    const response = await handleDelivery(toDeliveryRequest(event), policy, queue);
    if (response.status !== 200)
      throw new Error(`bench delivery answered ${response.status}: ${response.body}`);
  };
  await cpuMicrosAsync(ingest, 2000);
  cpuMicros(floor, 2000);
  const ours: number[] = [];
  const floors: number[] = [];
  for (let round = 0; round < rounds; round++) {
    floors.push(cpuMicros(floor, iterations));
    ours.push(await cpuMicrosAsync(ingest, iterations));
  }
  if (sink === 0) throw new Error('unreachable');
  const oursMedian = median(ours);
  const floorMedian = median(floors);
  return {
    'ingest body bytes': Buffer.byteLength(body),
    'ingest CPU µs/event': Number(oursMedian.toFixed(2)),
    'floor (JSON.parse + HMAC) µs/event': Number(floorMedian.toFixed(2)),
    'ingest / floor': Number((oursMedian / floorMedian).toFixed(2)),
    'ingest goal': '≤ 1.5× (stretch 1.3×)',
  };
}
