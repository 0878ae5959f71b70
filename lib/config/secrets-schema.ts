import * as z from 'zod/mini';

/**
 * WEBHOOK_SECRETS and the SSM parameter: a JSON object of ContextIdentifier to secrets (the key `*`
 * sets the secrets for every other context).
 */
export const SecretsJsonSchema = z.record(
  z.string().check(z.minLength(1)),
  z.array(z.string().check(z.minLength(1))),
);
