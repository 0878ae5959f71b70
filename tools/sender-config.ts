import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The secret a local sender signs with for `context`, found the way the runtime configures it:
 * WEBHOOK_SECRETS[context] first, then WEBHOOK_SECRET (the first of a comma-separated list), then the
 * secret `npm start` generated under DATA_DIR. `undefined` when there is none (unsigned).
 */
export function senderSecret(context: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.WEBHOOK_SECRETS?.trim()) {
    const byContext = JSON.parse(env.WEBHOOK_SECRETS) as Record<string, unknown>;
    const secrets = byContext[context];
    if (Array.isArray(secrets) && typeof secrets[0] === 'string') return secrets[0];
  }
  const fallback = env.WEBHOOK_SECRET?.split(',')[0]?.trim();
  if (fallback) return fallback;
  try {
    return readFileSync(join(env.DATA_DIR?.trim() || '.data', 'webhook-secret'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Where `npm start` listens: PORT and HOST as the runtime reads them. */
export function localWebhookUrl(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.HOST?.trim() && env.HOST.trim() !== '0.0.0.0' ? env.HOST.trim() : '127.0.0.1';
  return `http://${host}:${env.PORT?.trim() || '3000'}/webhook`;
}

export function localAdminUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `http://127.0.0.1:${env.ADMIN_PORT?.trim() || '3001'}`;
}
