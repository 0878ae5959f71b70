import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LocalSecret {
  /**
   * How the webhook secret was set: from the environment, generated (now, or earlier by a start that
   * never got to show it), or generated and shown by an earlier start.
   */
  source: 'environment' | 'generated' | 'data-dir' | 'unsigned';
  value?: string;
  path?: string;
}

/**
 * The secret the local ingest checks: the configured one, or one generated into
 * DATA_DIR/webhook-secret. It counts as `generated` (to be shown) until `markSecretShown` records that
 * a successful start printed it, so a first start that fails after generating it does not hide it.
 */
export function ensureSecret(env: NodeJS.ProcessEnv, dataDir: string): LocalSecret {
  if (env.WEBHOOK_SECRET?.trim() || env.WEBHOOK_SECRETS?.trim()) return { source: 'environment' };
  if (env.ALLOW_UNSIGNED?.trim().toLowerCase() === 'true') return { source: 'unsigned' };
  const path = secretFile(dataDir);
  if (existsSync(path)) {
    env.WEBHOOK_SECRET = readFileSync(path, 'utf8').trim();
    const source = existsSync(shownMarker(path)) ? 'data-dir' : 'generated';
    return { source, value: env.WEBHOOK_SECRET, path };
  }
  const value = randomBytes(32).toString('base64url');
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  env.WEBHOOK_SECRET = value;
  return { source: 'generated', value, path };
}

/** Where `npm start` keeps the secret it generated: what a local sender signs with too. */
export function secretFile(dataDir: string): string {
  return join(dataDir, 'webhook-secret');
}

/** Records that the generated secret at `path` was shown by a start that succeeded. */
export function markSecretShown(path: string): void {
  writeFileSync(shownMarker(path), '');
}

const shownMarker = (path: string) => `${path}.shown`;
