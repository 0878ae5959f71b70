import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wantedEvents } from '../../lib/tenants/events.js';
import { offboard } from '../../lib/tenants/offboard.js';
import { onboard } from '../../lib/tenants/onboard.js';
import { loadSchedules, type ScheduleRunner, startSchedules } from '../../local/lambda/schedules.js';
import { httpRequest } from '../../tools/http-client.js';
import { buildSampleBody, buildSampleDelivery } from '../../tools/samples.js';
import { FAKE_AWS_ENV } from '../support/dynamo.js';
import { startTenantWorld, type TenantWorld } from './support.js';

const CONTEXT = 'Cust1';
const GRACE_MS = 3000;
/** The ingest caches the secrets parameter 1 s: a change is in force everywhere after this long. */
const CACHE_MS = 1200;
/** The schedule's period here: serverless.yml's every minute, quickened as the local runtime may. */
const TICK_MS = 300;

let world: TenantWorld;
let runner: ScheduleRunner | undefined;
let failures: string[] = [];
const saved = { ...process.env };

beforeEach(async () => {
  world = await startTenantWorld({ graceMs: GRACE_MS });
  await onboard(world.deps, CONTEXT, { events: wantedEvents(undefined) });
  failures = [];
});
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  process.env = { ...saved };
  await world.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A contact.changed of the tenant signed with `secret`, POSTed to the ingest: its status. */
const deliverSigned = async (secret: string) => {
  const delivery = buildSampleDelivery(buildSampleBody('contact.changed', { context: CONTEXT }), {
    secret,
    prefix: 'X-SuperOffice',
  });
  return (await httpRequest('POST', world.targetUrl, delivery.headers, delivery.body)).status;
};

/**
 * serverless.yml's retireSecrets function, its handler imported with a stage's environment (the
 * webhooks table of dynalite, the secrets parameter behind the local SSM endpoint), run on its own
 * schedule by the local runtime's scheduler, every TICK_MS instead of every minute.
 */
async function scheduleRetirement(): Promise<ScheduleRunner> {
  const [schedule] = loadSchedules().filter((found) => found.functionName === 'retireSecrets');
  expect(schedule).toMatchObject({ rate: 'rate(1 minute)' });
  Object.assign(process.env, FAKE_AWS_ENV, {
    WEBHOOKS_TABLE: world.tables.webhooks,
    WEBHOOK_SECRETS_PARAMETER: world.parameter,
    AWS_ENDPOINT_URL_DYNAMODB: world.dynamo.endpoint,
    AWS_ENDPOINT_URL_SSM: world.ssmEndpoint,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  const { handler } = await import('../../functions/retire-secrets.js');
  return startSchedules({
    schedules: [{ ...schedule!, everyMs: TICK_MS }],
    handlers: new Map([['retireSecrets', handler]]),
    region: FAKE_AWS_ENV.AWS_REGION,
    // A run that failed is logged here; a tick skipped while one still ran is not a failure.
    log: (line) => {
      if (!line.endsWith('tick skipped')) failures.push(line);
    },
  });
}

describe('the scheduled retirement of due secrets', () => {
  it("takes an offboarded tenant's deliveries until the grace period ends and refuses them with 401 after, with nobody running ops", async () => {
    const [secret] = (await world.deps.secrets.read())[CONTEXT]!;
    runner = await scheduleRetirement();
    const { retireAt } = await offboard(world.deps, CONTEXT);

    // Ticks of the schedule before the grace period ends retire nothing.
    await sleep(CACHE_MS + 2 * TICK_MS);
    expect(Date.now()).toBeLessThan(Date.parse(retireAt));
    expect(await deliverSigned(secret!)).toBe(200);
    expect((await world.deps.secrets.read())[CONTEXT]).toEqual([secret]);

    // After it: the next tick removed it, and once the ingest's cache expired the delivery is refused.
    await sleep(Date.parse(retireAt) - Date.now() + TICK_MS + CACHE_MS);
    expect(await world.deps.secrets.read()).toEqual({});
    expect((await world.deps.tenants.get(CONTEXT))?.secrets).toEqual([]);
    expect(await deliverSigned(secret!)).toBe(401);
    expect(runner.runs.get('retireSecrets')).toBeGreaterThan(3);
    expect(failures).toEqual([]);
  }, 30_000);
});
