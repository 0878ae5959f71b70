import { type IngestConfig, parseSecretsJson, secretConfig } from '../config/ingest.js';
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

/** Reads a parameter's current value (Powertools' SSM provider, cached for `maxAge` seconds). */
export interface ParameterReader {
  get(name: string, options: { maxAge: number }): Promise<unknown>;
}

/** At most this long between two attempts to refresh the secrets after one failed (the cache's age if shorter). */
export const STALE_RETRY_MS = 5_000;

/**
 * The policy the ingest applies now. With WEBHOOK_SECRETS_PARAMETER (`config.secretsParameter`) and a
 * reader, secrets come from that parameter (read through a cache of `secretsMaxAgeSeconds`, 5 minutes), and the policy is rebuilt
 * only when its value changes; otherwise the policy of the environment's secrets, built once. Deliveries
 * that arrive together share one read. A refresh that fails (SSM throttled, or slow past the read's
 * budget) keeps the secrets read before and calls `onStale`, and the next attempt waits
 * {@link STALE_RETRY_MS} (or the cache's age, if shorter): a parameter store that stops answering costs
 * one wait and one warning per period, not one per delivery. Only a cold start that has no secrets yet
 * throws (the ingest answers 503).
 */
export function createPolicySource(
  config: IngestConfig,
  parameters: ParameterReader | undefined,
  onStale: (error: unknown) => void = () => {},
): () => Promise<DeliveryPolicy> {
  let policy = deliveryPolicy(config);
  let parameterValue: string | undefined;
  let reading: Promise<DeliveryPolicy> | undefined;
  let quietUntil = 0;
  const name = config.secretsParameter;
  const quietMs = Math.min(STALE_RETRY_MS, config.secretsMaxAgeSeconds * 1000);

  async function refresh(parameterName: string, reader: ParameterReader): Promise<DeliveryPolicy> {
    let value: string | undefined;
    try {
      value = (await reader.get(parameterName, { maxAge: config.secretsMaxAgeSeconds })) as
        | string
        | undefined;
    } catch (error) {
      if (parameterValue === undefined) throw error;
      quietUntil = Date.now() + quietMs;
      onStale(error);
      return policy;
    }
    if (value !== undefined && value !== parameterValue) {
      const byContext = parseSecretsJson(value, 'WEBHOOK_SECRETS_PARAMETER');
      policy = deliveryPolicy(
        config,
        createSignatureVerifier(secretConfig(config.secrets.fallback.slice(), byContext)),
      );
      parameterValue = value;
    }
    return policy;
  }

  return async () => {
    if (parameters === undefined || name === undefined || Date.now() < quietUntil) return policy;
    reading ??= refresh(name, parameters).finally(() => {
      reading = undefined;
    });
    return reading;
  };
}
