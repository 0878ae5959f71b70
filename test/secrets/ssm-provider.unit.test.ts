import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fullJitterMs } from '../../lib/backoff.js';
import { ParameterReadError, SSM_BACKOFF, SsmParameterProvider } from '../../lib/secrets/ssm.js';
import { type FakeSsm, startFakeSsm } from '../support/fake-ssm.js';

describe('SsmParameterProvider', () => {
  let ssm: FakeSsm;
  const credentials = async () => ({
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalr',
    sessionToken: 'tok',
  });

  beforeEach(async () => {
    ssm = await startFakeSsm();
  });
  afterEach(async () => ssm.close());

  it('sends one SigV4-signed GetParameter with decryption and caches the value for maxAge', async () => {
    ssm.parameters.set('/app/secrets', '{"Cust1":["s1"]}');
    const provider = new SsmParameterProvider({ region: 'eu-west-1', endpoint: ssm.endpoint, credentials });

    const first = await provider.get('/app/secrets', { maxAge: 300 });
    const second = await provider.get('/app/secrets', { maxAge: 300 });

    expect([first, second]).toEqual(['{"Cust1":["s1"]}', '{"Cust1":["s1"]}']);
    expect(ssm.requests).toHaveLength(1);
    const [request] = ssm.requests;
    expect(JSON.parse(request!.body)).toEqual({ Name: '/app/secrets', WithDecryption: true });
    expect(request!.headers['x-amz-target']).toBe('AmazonSSM.GetParameter');
    expect(request!.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(request!.headers['x-amz-security-token']).toBe('tok');
    expect(request!.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ssm\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*x-amz-target[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
  });

  it('fetches again once the cached value expired (forceFetch)', async () => {
    ssm.parameters.set('/p', 'a');
    const provider = new SsmParameterProvider({ region: 'eu-west-1', endpoint: ssm.endpoint, credentials });

    await provider.get('/p');
    ssm.parameters.set('/p', 'b');
    const fresh = await provider.get('/p', { forceFetch: true });

    expect(fresh).toBe('b');
    expect(ssm.requests).toHaveLength(2);
  });

  it('reports an SSM error by its type only (ParameterReadError as the cause)', async () => {
    const provider = new SsmParameterProvider({ region: 'eu-west-1', endpoint: ssm.endpoint, credentials });

    const error = await provider.get('/missing').catch((e: unknown) => e);

    // Powertools wraps provider errors in its GetParameterError and keeps ours as the cause.
    expect((error as Error).name).toBe('GetParameterError');
    expect((error as Error).cause).toBeInstanceOf(ParameterReadError);
    expect(((error as Error).cause as Error).message).toBe('GetParameter /missing failed: ParameterNotFound');
  });

  describe('a burst of cold starts: throttled reads are tried again within the budget', () => {
    const throttle = (count: number) => {
      for (let i = 0; i < count; i++) ssm.faults.push({ type: 'ThrottlingException', status: 400 });
    };

    it('a read throttled twice gets its value on the third attempt', async () => {
      ssm.parameters.set('/p', 'v');
      throttle(2);
      const provider = new SsmParameterProvider({ region: 'eu-west-1', endpoint: ssm.endpoint, credentials });

      expect(await provider.get('/p')).toBe('v');
      expect(ssm.requests).toHaveLength(3);
    });

    it('so do a server error and a 503', async () => {
      ssm.parameters.set('/p', 'v');
      ssm.faults.push(
        { type: 'InternalServerError', status: 500 },
        { type: 'ServiceUnavailable', status: 503 },
      );
      const provider = new SsmParameterProvider({ region: 'eu-west-1', endpoint: ssm.endpoint, credentials });

      expect(await provider.get('/p')).toBe('v');
      expect(ssm.requests).toHaveLength(3);
    });

    it('200 cold starts at once, the first 150 reads throttled: every one gets the secrets', async () => {
      ssm.parameters.set('/p', 'v');
      throttle(150);
      // A generous budget: this is about the retries, not about this machine's speed.
      const reads = Array.from({ length: 200 }, () =>
        new SsmParameterProvider({
          region: 'eu-west-1',
          endpoint: ssm.endpoint,
          credentials,
          budgetMs: 10_000,
        }).get('/p'),
      );

      expect(await Promise.all(reads)).toEqual(Array(200).fill('v'));
      expect(ssm.requests).toHaveLength(350);
    });

    it('gives up once the budget is spent, naming the throttle and the attempts', async () => {
      throttle(1000);
      const provider = new SsmParameterProvider({
        region: 'eu-west-1',
        endpoint: ssm.endpoint,
        credentials,
        budgetMs: 300,
      });

      const error = (await provider.get('/p').catch((e: unknown) => e)) as Error;

      const cause = error.cause as ParameterReadError;
      expect(cause).toBeInstanceOf(ParameterReadError);
      expect(cause.message).toMatch(
        /^GetParameter \/p failed: ThrottlingException \(\d+ attempts within 300 ms\)$/,
      );
      expect(ssm.requests.length).toBeGreaterThan(1);
      expect(ssm.faults.length).toBe(1000 - ssm.requests.length);
    });

    it('does not try again what another attempt would not change (ParameterNotFound, AccessDenied)', async () => {
      ssm.faults.push({ type: 'AccessDeniedException', status: 400 });
      const provider = new SsmParameterProvider({ region: 'eu-west-1', endpoint: ssm.endpoint, credentials });

      const denied = (await provider.get('/p').catch((e: unknown) => e)) as Error;
      const missing = (await provider.get('/missing').catch((e: unknown) => e)) as Error;

      expect((denied.cause as Error).message).toBe('GetParameter /p failed: AccessDeniedException');
      expect((missing.cause as Error).message).toBe('GetParameter /missing failed: ParameterNotFound');
      expect(ssm.requests).toHaveLength(2);
    });

    it('a peer that never answers: the read ends at its budget', async () => {
      const silent = createServer(() => {});
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = silent.address() as AddressInfo;
        const provider = new SsmParameterProvider({
          region: 'eu-west-1',
          endpoint: `http://127.0.0.1:${port}/`,
          credentials,
          budgetMs: 300,
        });

        const error = (await provider.get('/p').catch((e: unknown) => e)) as Error;

        expect((error.cause as Error).message).toBe(
          'GetParameter /p failed: no answer within 300 ms (1 attempt within 300 ms)',
        );
      } finally {
        silent.closeAllConnections();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    it('waits a random time up to an exponential ceiling (25, 50, 100, then 200 ms)', () => {
      expect([1, 2, 3, 4, 5, 9].map((attempt) => fullJitterMs(attempt, SSM_BACKOFF, () => 0.999))).toEqual([
        24, 49, 99, 199, 199, 199,
      ]);
      expect(fullJitterMs(3, SSM_BACKOFF, () => 0)).toBe(0);
      expect(fullJitterMs(2, SSM_BACKOFF, () => 0.5)).toBe(25);
    });
  });
});
