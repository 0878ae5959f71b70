import { mkdirSync, readFileSync } from 'node:fs';
import { listEnv } from '../lib/config/env.js';
import { parseSecretsJson, secretConfig } from '../lib/config/ingest.js';
import { tenantSecrets } from '../local/emulators/ssm-endpoint.js';
import { readLocalConfig } from '../local/local-config.js';
import { ensureSecret, secretFile } from '../local/webhook-secret.js';

const fromEnvironment = () => 'in the environment';

/**
 * The secret a local sender signs with for `context`, read by the runtime's own readers: the newest
 * secret the tenant commands gave it (DATA_DIR's secrets parameter), else the context's first secret
 * of WEBHOOK_SECRETS (its `*` entry for any other context), else the first of WEBHOOK_SECRET, else the secret `npm start` generated under DATA_DIR. `undefined` when there is
 * none (unsigned). A malformed setting is the runtime's one-line error.
 */
export function senderSecret(context: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const [onboarded] = tenantSecrets(readLocalConfig(env, fromEnvironment).dataDir, context);
  if (onboarded) return onboarded;
  const json = env.WEBHOOK_SECRETS?.trim();
  const secrets = secretConfig(
    listEnv('WEBHOOK_SECRET', env),
    json ? parseSecretsJson(json, 'WEBHOOK_SECRETS') : {},
  );
  const configured = (secrets.byContext[context] ?? secrets.fallback)[0];
  if (configured) return configured;
  try {
    const { dataDir } = readLocalConfig(env, fromEnvironment);
    return readFileSync(secretFile(dataDir), 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The secret a webhook registered for the local receiver signs with: {@link senderSecret}, else the one
 * `npm start` will generate, generated now into DATA_DIR the way it does (so `npm run crm` may start
 * first); undefined only with ALLOW_UNSIGNED=true.
 */
export function receiverSecret(context: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = senderSecret(context, env);
  if (configured !== undefined) return configured;
  const { dataDir } = readLocalConfig(env, fromEnvironment);
  mkdirSync(dataDir, { recursive: true });
  return ensureSecret({ ...env }, dataDir).value;
}

/** Where `npm start` listens for deliveries: PORT and HOST as the runtime reads them. */
export function localWebhookUrl(env: NodeJS.ProcessEnv = process.env): string {
  const { host, port } = readLocalConfig(env, fromEnvironment);
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/webhook`;
}

/** Where `npm start`'s admin API listens: ADMIN_PORT as the runtime reads it. */
export function localAdminUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `http://127.0.0.1:${readLocalConfig(env, fromEnvironment).adminPort}`;
}
