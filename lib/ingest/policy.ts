import type { IngestConfig } from '../config/ingest.js';
import type { DeliveryPolicy } from './request.js';
import { createSignatureVerifier, type SignatureVerifier } from './signature.js';

/**
 * The checks of an ingest configuration, merged once: what the ingest Lambda applies to every
 * delivery and what a replay of the parked queue applies again. `verifier` defaults to the secrets
 * of the environment (the Lambda swaps in those of the SSM parameter when they change).
 */
export function deliveryPolicy(
  config: IngestConfig,
  verifier: SignatureVerifier = createSignatureVerifier(config.secrets),
): DeliveryPolicy {
  return {
    verifier,
    headerPrefix: config.headerPrefix,
    stateEventToken: config.stateEventToken,
    allowUnsigned: config.allowUnsigned,
    maxEventAgeSeconds: config.maxEventAgeSeconds,
    maxClockSkewSeconds: config.maxClockSkewSeconds,
    maxBodyBytes: config.maxBodyBytes,
    entities: config.entities,
  };
}
