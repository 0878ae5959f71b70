import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmRetryLater, createCrmClient } from '../../lib/crm/index.js';
import { startServer } from '../support/http-server.js';
import { BASIC } from './support.js';

let silent: Awaited<ReturnType<typeof startServer>>;
let down: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  silent = await startServer(() => {}); // accepts, never answers
  down = await startServer((_, res) => {
    res.statusCode = 503;
    res.end();
  });
});
afterAll(async () => {
  await silent?.close();
  await down?.close();
});

/** A client whose calls may take a minute each, stopped by `signal`. */
const clientOf = (url: string, signal: AbortSignal) =>
  createCrmClient({
    apiUrl: `${url}/{ContextIdentifier}/api/v1`,
    credentials: { '*': BASIC },
    limits: { timeoutMs: 60_000, maxAttempts: 50 },
    signal: () => signal,
  });

describe('the CRM client’s stop signal', () => {
  it.each([
    ['a call in flight to a CRM that never answers', () => silent.url],
    ['the waits between retries of a CRM that answers 503', () => down.url],
  ])('ends %s at once, as a retry later', async (_, url) => {
    const stop = new AbortController();
    const client = clientOf(url(), stop.signal);
    setTimeout(() => stop.abort(), 200);
    const started = performance.now();

    const error = await client.listWebhooks('Cust1').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmRetryLater);
    expect((error as Error).message).toMatch(/stopped \(the runtime is stopping\)/);
    expect(performance.now() - started).toBeLessThan(1_500);
  });
});
