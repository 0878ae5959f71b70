import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { afterEach, describe, expect, it } from 'vitest';
import {
  LOCAL_SECRETS_PARAMETER,
  type LocalSsm,
  startLocalSsm,
  tenantSecrets,
} from '../../local/emulators/ssm-endpoint.js';

let dir: string;
let ssm: LocalSsm;
let client: SSMClient;

afterEach(async () => {
  client?.destroy();
  await ssm?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(fallback: string | undefined) {
  dir = mkdtempSync(join(tmpdir(), 'local-ssm-'));
  ssm = await startLocalSsm(dir, () => fallback);
  client = new SSMClient({
    region: 'us-east-1',
    endpoint: ssm.endpoint,
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
}
const read = async (name = LOCAL_SECRETS_PARAMETER) =>
  (await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter?.Value;

describe('the local SSM endpoint', () => {
  it('serves the secrets parameter as WEBHOOK_SECRETS with what was written over it, context by context, kept in DATA_DIR (0600)', async () => {
    await start('{"Cust1":["from-env"],"Cust2":["env-2"]}');
    expect(JSON.parse((await read())!)).toEqual({ Cust1: ['from-env'], Cust2: ['env-2'] });
    await client.send(
      new PutParameterCommand({
        Name: LOCAL_SECRETS_PARAMETER,
        Value: '{"Cust1":["onboarded"]}',
        Type: 'SecureString',
        Overwrite: true,
      }),
    );
    expect(JSON.parse((await read())!)).toEqual({ Cust1: ['onboarded'], Cust2: ['env-2'] });
    expect(tenantSecrets(dir, 'Cust1')).toEqual(['onboarded']);
    expect(statSync(join(dir, 'ssm-parameters.json')).mode & 0o777).toBe(0o600);
  });

  it('answers an empty set without WEBHOOK_SECRETS, and ParameterNotFound for another name', async () => {
    await start(undefined);
    expect(await read()).toBe('{}');
    await expect(read('/other')).rejects.toMatchObject({ name: 'ParameterNotFound' });
  });
});
