import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadDefinitions, QUEUE_ENV_VARS, queueEnvironment } from '../../infra/definitions.js';

const ROOT = join(import.meta.dirname, '..', '..');

type Settings = Record<string, Record<string, unknown>>;
type IngestEnvironment = (context: {
  options: Record<string, unknown>;
  resolveVariable: (variable: string) => Promise<unknown>;
}) => Promise<{ environment: Record<string, unknown>; ingestSettings: string }>;

const ingestEnvironment = createRequire(import.meta.url)(
  '../../infra/ingest-environment.cjs',
) as IngestEnvironment;

/** Calls the file variable as osls and the Framework do, with `settings` as custom.ingestEnvironment. */
function call(settings: unknown) {
  return ingestEnvironment({
    options: {},
    resolveVariable: async (variable) => {
      if (variable === 'self:custom.ingestEnvironment') return settings;
      throw new Error(`unexpected variable ${variable}`);
    },
  });
}

/** The one-line message the file variable fails with for `settings`. */
async function refusal(settings: unknown): Promise<string> {
  const error = await call(settings).then(
    () => expect.fail('expected a refusal'),
    (thrown: unknown) => thrown as Error,
  );
  expect(error.message).not.toContain('\n');
  return error.message;
}

const SETTINGS = {
  published: { ENTITIES: 'contact,sale', ALLOW_UNSIGNED: 'false', MAX_BODY_BYTES: 1000 },
  private: { STATE_EVENT_TOKEN: 'token', WEBHOOK_SECRETS_PARAMETER: '/svc/dev/webhook-secrets' },
};

describe('infra/ingest-environment.cjs', () => {
  it('the environment: every queue of QUEUE_ENV_VARS as a Ref to its queue, then both groups of settings', async () => {
    const { environment } = await call(SETTINGS);
    expect(environment).toEqual({ ...queueEnvironment(), ...SETTINGS.published, ...SETTINGS.private });
    // The logical ids are those of the local runtime's definitions, one variable per queue the ingest writes
    // to; the reconcile queue is the receiver's own (OWN_QUEUE_ENV_VARS): never in the ingest's environment.
    const { queues } = loadDefinitions({ stage: 'test' });
    const ingests = queues.filter((queue) => queue.key !== 'reconcile');
    expect(ingests.map((queue) => queue.envVar)).toEqual(Object.values(QUEUE_ENV_VARS));
    for (const queue of ingests) expect(environment[queue.envVar]).toEqual({ Ref: queue.logicalId });
    expect(environment.CONTACT_QUEUE_URL).toEqual({ Ref: 'ContactQueue' });
    expect(queues.map((queue) => queue.key)).toContain('reconcile');
    expect(environment).not.toHaveProperty('RECONCILE_QUEUE_URL');
  });

  it('ingestSettings: the published group alone, as one JSON object of strings', async () => {
    const { ingestSettings } = await call(SETTINGS);
    expect(JSON.parse(ingestSettings)).toEqual({
      ENTITIES: 'contact,sale',
      ALLOW_UNSIGNED: 'false',
      MAX_BODY_BYTES: '1000',
    });
    expect(ingestSettings).not.toContain('token');
  });

  it('refuses a setting named as a queue variable, naming both', async () => {
    expect(
      await refusal({ ...SETTINGS, private: { ...SETTINGS.private, PARKED_QUEUE_URL: 'https://elsewhere' } }),
    ).toBe(
      "serverless.yml: custom.ingestEnvironment.private.PARKED_QUEUE_URL collides with the parked queue's " +
        'PARKED_QUEUE_URL (QUEUE_ENV_VARS, lib/queue/port.ts)',
    );
  });

  it('refuses a name in both groups, naming both', async () => {
    expect(await refusal({ ...SETTINGS, private: { ...SETTINGS.private, ENTITIES: 'contact' } })).toBe(
      'serverless.yml: custom.ingestEnvironment.private.ENTITIES collides with ' +
        'custom.ingestEnvironment.published.ENTITIES',
    );
  });

  it('refuses a missing group', async () => {
    expect(await refusal({ published: SETTINGS.published })).toBe(
      'serverless.yml: custom.ingestEnvironment.private must be a map of variable names to values',
    );
  });

  it("serverless.yml's block: the ingest's other settings, none named as a queue variable", async () => {
    const { custom } = load(readFileSync(join(ROOT, 'serverless.yml'), 'utf8')) as {
      custom: { ingestEnvironment: Settings };
    };
    const { environment } = await call(custom.ingestEnvironment);
    expect(Object.keys(environment).sort()).toEqual(
      [
        ...Object.values(QUEUE_ENV_VARS),
        'ENTITIES',
        'ALLOW_UNSIGNED',
        'MAX_EVENT_AGE_SECONDS',
        'MAX_BODY_BYTES',
        'HEADER_PREFIX',
        'WEBHOOK_SECRETS_PARAMETER',
        'STATE_EVENT_TOKEN',
      ].sort(),
    );
    // The state token stays out of the output.
    expect(Object.keys(custom.ingestEnvironment.published ?? {})).not.toContain('STATE_EVENT_TOKEN');
  });
});
