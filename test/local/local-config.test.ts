import { describe, expect, it } from 'vitest';
import { readLocalConfig } from '../../local/local-config.js';

const fromFile = (name: string) => (name === 'LOCAL_VISIBILITY_TIMEOUT' ? 'in .env' : 'in the environment');

describe('the local runtime configuration', () => {
  it('has defaults', () => {
    expect(readLocalConfig({}, fromFile)).toEqual({
      dataDir: '.data',
      host: '127.0.0.1',
      port: 3000,
      adminPort: 3001,
      sqsPort: 0,
      dynamodbPort: 0,
      eventbridgePort: 0,
      visibilityTimeout: undefined,
      maxConnections: 256,
      headersTimeoutMs: 5000,
      busBackoffMs: 1000,
    });
  });

  it.each([
    [
      'LOCAL_VISIBILITY_TIMEOUT',
      '-5',
      'LOCAL_VISIBILITY_TIMEOUT="-5" in .env is not accepted: whole seconds from 0 to 43200 (the SQS limit)',
    ],
    [
      'LOCAL_VISIBILITY_TIMEOUT',
      '50000',
      'LOCAL_VISIBILITY_TIMEOUT="50000" in .env is not accepted: whole seconds from 0 to 43200 (the SQS limit)',
    ],
    [
      'LOCAL_VISIBILITY_TIMEOUT',
      '1.5',
      'LOCAL_VISIBILITY_TIMEOUT="1.5" in .env is not accepted: whole seconds from 0 to 43200 (the SQS limit)',
    ],
    [
      'PORT',
      '70000',
      'PORT="70000" in the environment is not accepted: a port number from 0 to 65535 (0 picks a free one)',
    ],
    [
      'LOCAL_MAX_CONNECTIONS',
      '0',
      'LOCAL_MAX_CONNECTIONS="0" in the environment is not accepted: a whole number from 1 to 65535',
    ],
    [
      'LOCAL_HEADERS_TIMEOUT_MS',
      '50',
      'LOCAL_HEADERS_TIMEOUT_MS="50" in the environment is not accepted: whole milliseconds from 100 to 60000',
    ],
    [
      'LOCAL_BUS_BACKOFF_MS',
      '60001',
      'LOCAL_BUS_BACKOFF_MS="60001" in the environment is not accepted: whole milliseconds from 0 to 60000',
    ],
    [
      'LOCAL_BUS_BACKOFF_MS',
      '0.5',
      'LOCAL_BUS_BACKOFF_MS="0.5" in the environment is not accepted: whole milliseconds from 0 to 60000',
    ],
  ])(
    'refuses %s=%s in one line naming the variable, its origin and what is accepted',
    (name, value, message) => {
      expect(() => readLocalConfig({ [name]: value }, fromFile)).toThrow(message);
    },
  );

  it('accepts the SQS range', () => {
    expect(readLocalConfig({ LOCAL_VISIBILITY_TIMEOUT: '43200' }, fromFile).visibilityTimeout).toBe(43_200);
    expect(readLocalConfig({ LOCAL_VISIBILITY_TIMEOUT: '0' }, fromFile).visibilityTimeout).toBe(0);
  });

  it('takes a local bus backoff from 0 (retry at once) to 60 s', () => {
    expect(readLocalConfig({ LOCAL_BUS_BACKOFF_MS: '0' }, fromFile).busBackoffMs).toBe(0);
    expect(readLocalConfig({ LOCAL_BUS_BACKOFF_MS: '60000' }, fromFile).busBackoffMs).toBe(60_000);
  });
});
