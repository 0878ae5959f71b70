import { describe, expect, it } from 'vitest';
import { readCrmConfig } from '../../lib/config/crm.js';
import { ConfigError } from '../../lib/config/env.js';
import { crmCredentials } from '../../lib/crm/index.js';

const URL = 'https://online.superoffice.com/{ContextIdentifier}/api/v1';
const BASIC = JSON.stringify({ '*': { type: 'basic', user: 'u', password: 'hunter2-secret' } });

/** The one-line error readCrmConfig throws for `env`. */
function refusal(env: Record<string, string>) {
  try {
    readCrmConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).not.toContain('hunter2');
    return { message: (error as Error).message, variable: (error as ConfigError).variable };
  }
  throw new Error('accepted');
}

describe('reconciliation settings', () => {
  it('are off without CRM_API_URL, a value callers test', () => {
    expect(readCrmConfig({})).toEqual({ enabled: false });
  });

  it('read the URL, per-tenant credentials of both kinds, and the limits', () => {
    const credentials = {
      Cust1: {
        type: 'systemUser',
        systemUserToken: 't',
        applicationToken: 'a',
        privateKey: '-----BEGIN PRIVATE KEY-----',
      },
      '*': { type: 'basic', user: 'u', password: 'p' },
    };
    expect(
      readCrmConfig({
        CRM_API_URL: `${URL}/`,
        CRM_CREDENTIALS: JSON.stringify(credentials),
        CRM_MAX_IN_FLIGHT: '2',
      }),
    ).toEqual({
      enabled: true,
      apiUrl: URL,
      credentials,
      credentialsParameter: undefined,
      maxInFlight: 2,
      maxCallsPerSecond: 10,
      timeoutMs: 10_000,
    });
    expect(
      readCrmConfig({
        CRM_API_URL: 'http://127.0.0.1:3100/{ContextIdentifier}/api/v1',
        CRM_CREDENTIALS_PARAMETER: '/r/crm',
      }),
    ).toMatchObject({ enabled: true, credentials: undefined, credentialsParameter: '/r/crm' });
  });

  it('refuse a URL without the placeholder, not https, or with a query, in one line', () => {
    for (const url of [
      'https://online.superoffice.com/Cust1/api/v1',
      'http://online.superoffice.com/{ContextIdentifier}/api/v1',
      'https://online.superoffice.com/{ContextIdentifier}/api/v1?x=1',
      'https://user:pw@online.superoffice.com/{ContextIdentifier}/api/v1',
      'https://{ContextIdentifier}.superoffice.com/api/v1',
      'not a url {ContextIdentifier}',
    ])
      expect(refusal({ CRM_API_URL: url, CRM_CREDENTIALS: BASIC })).toEqual({
        message:
          "CRM_API_URL must be the CRM's API base with {ContextIdentifier} in its path, https (http only to localhost), for example https://online.superoffice.com/{ContextIdentifier}/api/v1",
        variable: 'CRM_API_URL',
      });
  });

  it('refuse credentials that are not JSON or not of an accepted shape, naming where, never echoing a value', () => {
    const accepted =
      'a JSON object of ContextIdentifier (or "*" for every other) to {"type":"basic","user":…,"password":…} or {"type":"systemUser","systemUserToken":…,"applicationToken":…,"privateKey":"<PEM>"}';
    expect(refusal({ CRM_API_URL: URL, CRM_CREDENTIALS: "{'*': hunter2-secret" }).message).toBe(
      `CRM_CREDENTIALS is not JSON: it must be ${accepted}`,
    );
    expect(
      refusal({
        CRM_API_URL: URL,
        CRM_CREDENTIALS: JSON.stringify({ Cust1: { type: 'basic', user: 'u', pass: 'hunter2-secret' } }),
      }).message,
    ).toBe(`CRM_CREDENTIALS at "Cust1"."password" is not accepted: it must be ${accepted}`);
    expect(
      refusal({
        CRM_API_URL: URL,
        CRM_CREDENTIALS: JSON.stringify({ Cust1: { type: 'oauth', secret: 'hunter2-secret' } }),
      }).variable,
    ).toBe('CRM_CREDENTIALS');
  });

  it('need exactly one source of credentials with the URL, and the URL with either', () => {
    expect(refusal({ CRM_API_URL: URL })).toEqual({
      message:
        'CRM_API_URL needs exactly one of CRM_CREDENTIALS (JSON) or CRM_CREDENTIALS_PARAMETER (an SSM SecureString name)',
      variable: 'CRM_CREDENTIALS',
    });
    expect(
      refusal({ CRM_API_URL: URL, CRM_CREDENTIALS: BASIC, CRM_CREDENTIALS_PARAMETER: '/p' }).variable,
    ).toBe('CRM_CREDENTIALS_PARAMETER');
    expect(refusal({ CRM_CREDENTIALS: BASIC }).message).toBe(
      'CRM_CREDENTIALS is set but CRM_API_URL is not: set both, or neither (reconciliation off)',
    );
    expect(refusal({ CRM_API_URL: URL, CRM_CREDENTIALS: BASIC, CRM_TIMEOUT_MS: '0' }).message).toBe(
      'CRM_TIMEOUT_MS must be a positive integer',
    );
  });
});

describe('credentials from the SSM parameter', () => {
  const config = readCrmConfig({ CRM_API_URL: URL, CRM_CREDENTIALS_PARAMETER: '/r/crm' });
  if (!config.enabled) throw new Error('expected enabled');

  it('are the parameter JSON, parsed as CRM_CREDENTIALS is', async () => {
    const asked: string[] = [];
    const read = async (name: string) => {
      asked.push(name);
      return BASIC;
    };
    expect(await crmCredentials(config, read)).toEqual(JSON.parse(BASIC));
    expect(asked).toEqual(['/r/crm']);
  });

  it('refuse an empty parameter or a wrong JSON in one line, never echoing it', async () => {
    await expect(crmCredentials(config, async () => undefined)).rejects.toThrow(
      'CRM_CREDENTIALS_PARAMETER names /r/crm, which holds no value: put the CRM_CREDENTIALS JSON in it',
    );
    const wrong = await crmCredentials(
      config,
      async () => '{"*": {"type": "basic", "password": "hunter2"}}',
    ).catch((error: unknown) => error as Error);
    expect(wrong.message).toMatch(/^CRM_CREDENTIALS_PARAMETER at "\*"\."user" is not accepted/);
    expect(wrong.message).not.toContain('hunter2');
  });
});
