import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ParameterReadError, SsmParameterProvider } from '../../lib/secrets/ssm.js';
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
});
