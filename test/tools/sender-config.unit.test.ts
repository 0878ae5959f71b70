import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureSecret } from '../../local/webhook-secret.js';
import { localAdminUrl, localWebhookUrl, receiverSecret, senderSecret } from '../../tools/sender-config.js';

/** The sender tools read the receiver's settings with the runtime's own readers. */
describe('sender config', () => {
  const empty = () => mkdtempSync(join(tmpdir(), 'sender-config-'));

  it('signs with the context entry of WEBHOOK_SECRETS, its "*" entry for other contexts, then WEBHOOK_SECRET', () => {
    const env = {
      WEBHOOK_SECRETS: JSON.stringify({ Cust1: ['one', 'old'], '*': ['any'] }),
      WEBHOOK_SECRET: 'fallback',
      DATA_DIR: empty(),
    };
    expect(senderSecret('Cust1', env)).toBe('one');
    expect(senderSecret('Cust2', env)).toBe('any');
    expect(senderSecret('Cust2', { WEBHOOK_SECRET: ' first , second', DATA_DIR: empty() })).toBe('first');
  });

  it('signs an onboarded tenant with the newest secret the tenant commands gave it (DATA_DIR), before any other', () => {
    const dataDir = empty();
    const set = JSON.stringify({ Cust1: ['newest', 'replaced'] });
    writeFileSync(
      join(dataDir, 'ssm-parameters.json'),
      JSON.stringify({ '/local/webhook-secrets': { value: set, version: 2 } }),
    );
    expect(senderSecret('Cust1', { DATA_DIR: dataDir, WEBHOOK_SECRET: 'fallback' })).toBe('newest');
    expect(senderSecret('Cust2', { DATA_DIR: dataDir, WEBHOOK_SECRET: 'fallback' })).toBe('fallback');
  });

  it('falls back to the secret npm start generated in DATA_DIR, and to none', () => {
    const dataDir = empty();
    expect(senderSecret('Cust1', { DATA_DIR: dataDir })).toBeUndefined();
    writeFileSync(join(dataDir, 'webhook-secret'), 'generated\n');
    expect(senderSecret('Cust1', { DATA_DIR: dataDir })).toBe('generated');
  });

  it('a webhook registered before the first npm start gets the secret npm start will then use', () => {
    const dataDir = join(empty(), 'not-yet');
    const secret = receiverSecret('Cust1', { DATA_DIR: dataDir });
    expect(secret).toMatch(/^[\w-]{43}$/);
    expect(receiverSecret('Cust1', { DATA_DIR: dataDir })).toBe(secret);
    // npm start's own reader: the same secret, still to be shown at its first start.
    expect(ensureSecret({}, dataDir)).toMatchObject({ source: 'generated', value: secret });
    expect(receiverSecret('Cust1', { DATA_DIR: dataDir, WEBHOOK_SECRET: 'set' })).toBe('set');
  });

  it('refuses a malformed WEBHOOK_SECRETS in one line naming it, without echoing it', () => {
    const read = () => senderSecret('Cust1', { WEBHOOK_SECRETS: '{"Cust1": "s3cret-not-a-list"}' });
    expect(read).toThrow(
      /^WEBHOOK_SECRETS must be a JSON object of ContextIdentifier to an array of secrets$/,
    );
    expect(read).not.toThrow(/s3cret/);
  });

  it('finds npm start where the runtime listens, and refuses a port it would refuse', () => {
    expect(localWebhookUrl({ PORT: '4000', HOST: '0.0.0.0' })).toBe('http://127.0.0.1:4000/webhook');
    expect(localWebhookUrl({})).toBe('http://127.0.0.1:3000/webhook');
    expect(localAdminUrl({ ADMIN_PORT: '4001' })).toBe('http://127.0.0.1:4001');
    expect(() => localWebhookUrl({ PORT: '3000x' })).toThrow(
      /^PORT="3000x" in the environment is not accepted/,
    );
  });
});
