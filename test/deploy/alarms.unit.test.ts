import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUTHENTICATION_FAILURES, alarmResources } from '../../infra/alarms.js';
import { METRIC, METRICS_NAMESPACE } from '../../lib/metrics.js';

const ROOT = join(import.meta.dirname, '..', '..');
const settings = {
  service: 'crm-webhook-receiver',
  stage: 'dev',
  signatureFailureThreshold: '5',
  heartbeatHours: '',
};

describe('infra/alarms.ts', () => {
  it('the failed-authentication alarm counts every reason the ingest answers 401 for, and no other', () => {
    const checks = ['pipeline.ts', 'body-checks.ts']
      .map((file) => readFileSync(join(ROOT, 'lib', 'ingest', file), 'utf8'))
      .join('\n');
    const unauthorized = [...checks.matchAll(/reject\(\s*[\w.]+,\s*401,\s*'([a-z-]+)'/g)].map((m) => m[1]);
    expect(new Set(unauthorized)).toEqual(new Set(AUTHENTICATION_FAILURES));
  });

  it('the YAML spells the namespace and metric names of lib/metrics.ts', () => {
    const alarmsYml = readFileSync(join(ROOT, 'infra', 'alarms.yml'), 'utf8');
    const serverlessYml = readFileSync(join(ROOT, 'serverless.yml'), 'utf8');
    const own = [...alarmsYml.matchAll(/Namespace: (\S+)\n\s*MetricName: (\S+)/g)].filter(
      ([, namespace]) => !namespace!.startsWith('AWS/'),
    );
    expect(own.length).toBeGreaterThan(0);
    for (const [, namespace, name] of own) {
      expect(namespace).toBe(METRICS_NAMESPACE);
      expect(Object.values(METRIC)).toContain(name);
    }
    expect(serverlessYml).toMatch(new RegExp(`POWERTOOLS_METRICS_NAMESPACE: ${METRICS_NAMESPACE}\n`));
  });

  it.each([
    [
      { signatureFailureThreshold: '0' },
      'the stage param signatureFailureThreshold must be a positive whole number, not "0"',
    ],
    [
      { signatureFailureThreshold: 'five' },
      'the stage param signatureFailureThreshold must be a positive whole number, not "five"',
    ],
    [{ heartbeatHours: '1.5' }, 'the stage param heartbeatHours must be a positive whole number, not "1.5"'],
    [{ heartbeatHours: '25' }, 'the stage param heartbeatHours must be from 1 to 24 (hours), or ""'],
  ])('refuses %o in one line naming the param', (override, message) => {
    expect(() => alarmResources({ ...settings, ...override })).toThrow(`serverless.yml: ${message}`);
  });

  it("the alarms on the functions' own metrics filter on the service the functions emit (custom.powertoolsServiceName)", async () => {
    const bridge = createRequire(import.meta.url)('../../infra/alarms.cjs') as (args: {
      resolveVariable: (name: string) => Promise<unknown>;
    }) => Promise<{ resources: { Resources: Record<string, unknown> } }>;
    const variables: Record<string, string> = {
      'self:service': 'crm-webhook-receiver',
      'sls:stage': 'prod',
      'self:custom.powertoolsServiceName': 'crm-webhook-receiver-prod',
      'param:signatureFailureThreshold': '5',
      'param:heartbeatHours': '6',
    };
    const { Resources } = (await bridge({ resolveVariable: async (name) => variables[name] })).resources;

    const services = JSON.stringify(Resources).match(/"Name":"service","Value":"[^"]*"/g);
    expect(new Set(services)).toEqual(new Set(['"Name":"service","Value":"crm-webhook-receiver-prod"']));
  });
});
