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

/**
 * The policy the ingest applies now. With WEBHOOK_SECRETS_PARAMETER (`config.secretsParameter`) and a
 * reader, secrets come from that parameter (read through a cache of `secretsMaxAgeSeconds`, 5 minutes), and the policy is rebuilt
 * only when its value changes; otherwise the policy of the environment's secrets, built once. A refresh
 * that fails (SSM throttled, or slow past the read's budget) keeps the secrets read before and calls
 * `onStale`: only a cold start that has none throws (the ingest answers 503).
 */
export function createPolicySource(
  config: IngestConfig,
  parameters: ParameterReader | undefined,
  onStale: (error: unknown) => void = () => {},
): () => Promise<DeliveryPolicy> {
  let policy = deliveryPolicy(config);
  let parameterValue: string | undefined;
  const name = config.secretsParameter;
  return async () => {
    if (parameters === undefined || name === undefined) return policy;
    let value: string | undefined;
    try {
      value = (await parameters.get(name, { maxAge: config.secretsMaxAgeSeconds })) as string | undefined;
    } catch (error) {
      if (parameterValue === undefined) throw error;
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
  };
}
