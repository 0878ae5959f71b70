import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const { customDomain } = require('../../infra/custom-domain.cjs') as {
  customDomain: (settings: Record<string, string>) => Record<string, string>;
};

const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d';
const none = { domainName: '', certificateArn: '', hostedZoneId: '', region: 'eu-west-1' };

describe('infra/custom-domain.cjs', () => {
  it('passes a domain with a certificate of the stack’s region, with or without a hosted zone', () => {
    const settings = { ...none, domainName: 'hooks.example.com', certificateArn: CERTIFICATE };
    expect(customDomain(settings)).toEqual({
      domainName: 'hooks.example.com',
      certificateArn: CERTIFICATE,
      hostedZoneId: '',
    });
    expect(customDomain({ ...settings, hostedZoneId: 'Z0123456789ABC' }).hostedZoneId).toBe('Z0123456789ABC');
    expect(customDomain(none)).toEqual({ domainName: '', certificateArn: '', hostedZoneId: '' });
  });

  it.each([
    [{ certificateArn: CERTIFICATE }, 'the stage params certificateArn and hostedZoneId need domainName'],
    [
      { domainName: 'Hooks.Example.com', certificateArn: CERTIFICATE },
      'domainName must be a lower-case host name',
    ],
    [
      { domainName: 'hooks.example.com' },
      'the custom domain hooks.example.com needs the stage param certificateArn',
    ],
    [
      { domainName: 'hooks.example.com', certificateArn: CERTIFICATE.replace('eu-west-1', 'us-east-1') },
      'the certificate of hooks.example.com is in us-east-1, the stack in eu-west-1: a regional custom domain needs a certificate of ACM in eu-west-1',
    ],
    [
      { domainName: 'hooks.example.com', certificateArn: CERTIFICATE, hostedZoneId: 'example.com' },
      'hostedZoneId must be a Route 53 hosted zone id',
    ],
  ])('refuses %o in one line naming the param', (settings, message) => {
    let error: Error | undefined;
    try {
      customDomain({ ...none, ...settings });
    } catch (caught) {
      error = caught as Error;
    }
    expect(error?.message).toContain(`serverless.yml: `);
    expect(error?.message).toContain(message);
    expect(error?.message).not.toContain('\n');
  });
});
