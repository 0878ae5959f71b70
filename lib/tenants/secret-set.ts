import { createHash, randomBytes } from 'node:crypto';
import { GetParameterCommand, PutParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { parseSecretsJson } from '../config/ingest.js';

/**
 * The secrets the ingest accepts, by ContextIdentifier: the JSON of WEBHOOK_SECRETS and of the
 * secrets parameter (WEBHOOK_SECRETS_PARAMETER), newest first. Several at once is what lets a secret
 * be replaced without refusing a delivery.
 */
export type SecretSet = Record<string, string[]>;

/** Where the secret set lives: the secrets parameter on a stage, the runtime's own one locally. */
export interface SecretSetStore {
  read(): Promise<SecretSet>;
  write(set: SecretSet): Promise<void>;
}

/** A fresh webhook secret: 32 random bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A secret's name in records, logs and answers (never the secret): 16 hex digits of its SHA-256. */
export function fingerprint(secret: string): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 16);
}

/** `set` with `secret` accepted for `context`, first (the one a sender signs with). */
export function withSecret(set: SecretSet, context: string, secret: string): SecretSet {
  return { ...set, [context]: [secret, ...(set[context] ?? []).filter((known) => known !== secret)] };
}

/** `set` without the secrets of `context` whose fingerprint is listed; a context left with none is dropped. */
export function withoutSecrets(set: SecretSet, context: string, fingerprints: readonly string[]): SecretSet {
  const kept = (set[context] ?? []).filter((secret) => !fingerprints.includes(fingerprint(secret)));
  const { [context]: _, ...others } = set;
  return kept.length > 0 ? { ...others, [context]: kept } : others;
}

/** The secret of `context` with this fingerprint, if the set holds it. */
export function secretOf(set: SecretSet, context: string, print: string): string | undefined {
  return (set[context] ?? []).find((secret) => fingerprint(secret) === print);
}

/**
 * The secret set in an SSM SecureString parameter (written whole, read decrypted). A parameter not
 * created yet reads as no secrets.
 */
export function ssmSecretSet({ client, name }: { client: SSMClient; name: string }): SecretSetStore {
  return {
    async read() {
      try {
        const answer = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
        return parseSecretsJson(answer.Parameter?.Value ?? '{}', name);
      } catch (error) {
        if ((error as Error).name === 'ParameterNotFound') return {};
        throw error;
      }
    },
    async write(set) {
      await client.send(
        new PutParameterCommand({
          Name: name,
          Value: JSON.stringify(set),
          Type: 'SecureString',
          Overwrite: true,
        }),
      );
    },
  };
}
