import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { DeliveryPolicy } from '../../lib/ingest/index.js';
import { createSignatureVerifier } from '../../lib/ingest/signature.js';
import { buildSampleBody, buildSampleDelivery, sampleHttpApiEvent } from '../../tools/samples.js';

export const BENCH_SECRET = 'bench-secret-0123456789abcdef';

/** The ingest's checks as deployed by default: one secret, signed deliveries only, the default limits. */
export function benchPolicy(): DeliveryPolicy {
  return {
    verifier: createSignatureVerifier({ fallback: [BENCH_SECRET], byContext: {} }),
    allowUnsigned: false,
    maxEventAgeSeconds: 7 * 24 * 3600,
    maxBodyBytes: 1_048_576,
  };
}

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
  const delivery = buildSampleDelivery(body, { secret: BENCH_SECRET });
  const event = sampleHttpApiEvent(delivery);
  return { event, body: delivery.body };
}
