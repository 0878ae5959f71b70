import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TenantError } from '../../lib/tenants/deps.js';
import { wantedEvents } from '../../lib/tenants/events.js';
import { offboard } from '../../lib/tenants/offboard.js';
import { onboard } from '../../lib/tenants/onboard.js';
import { rotateSecret } from '../../lib/tenants/rotate.js';
import { retireDueSecrets } from '../../lib/tenants/secrets.js';
import { httpRequest } from '../../tools/http-client.js';
import { buildSampleBody, buildSampleDelivery } from '../../tools/samples.js';
import { startTenantWorld, type TenantWorld } from './support.js';

const CONTEXT = 'Cust1';
const GRACE_MS = 4000;
let world: TenantWorld;

beforeEach(async () => {
  world = await startTenantWorld({ graceMs: GRACE_MS });
  await onboard(world.deps, CONTEXT, { events: wantedEvents(undefined) });
});
afterEach(async () => {
  await world.close();
});

/** A contact.changed of the tenant signed with `secret`, POSTed to the ingest: its status. */
const deliverSigned = async (secret: string) => {
  const delivery = buildSampleDelivery(buildSampleBody('contact.changed', { context: CONTEXT }), {
    secret,
    prefix: 'X-SuperOffice',
  });
  return (await httpRequest('POST', world.targetUrl, delivery.headers, delivery.body)).status;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The ingest caches the secrets parameter 1 s: a change is in force everywhere after this long. */
const CACHE_MS = 1200;

describe('rotating a tenant secret', () => {
  it('refuses no delivery of a stream through the rotation; the old secret is taken until the grace period ends, then refused with 401', async () => {
    const [old] = (await world.deps.secrets.read())[CONTEXT]!;
    let streaming = true;
    let changes = 0;
    const stream = (async () => {
      for (let id = 1; streaming; id++) {
        world.crm.core.change(CONTEXT, {
          op: 'create',
          table: 'contact',
          fields: { name: `C${id}` },
        } as never);
        changes++;
        await sleep(25);
      }
    })();
    const { retireAt } = await rotateSecret(world.deps, CONTEXT);
    await sleep(300);
    streaming = false;
    await stream;
    await world.crm.core.dispatcher.idle();

    const created = world.answered.filter((answer) => answer.event === 'contact.created');
    expect(changes).toBeGreaterThan(40);
    expect(created).toHaveLength(changes);
    expect(world.answered.filter((answer) => answer.status !== 200)).toEqual([]);
    const [current, previous] = (await world.deps.secrets.read())[CONTEXT]!;
    expect(previous).toBe(old);
    expect(world.crm.core.webhook(CONTEXT, 1).secret).toBe(current);
    expect(world.crm.core.webhook(CONTEXT, 2).secret).toBe(current);
    expect(world.events('receiver.tenant.rotated')).toEqual([
      { context: CONTEXT, webhookIds: [1, 2], retireAt },
    ]);

    // Before the grace period ends: the sweep retires nothing, an old-secret delivery is taken.
    expect(await retireDueSecrets(world.deps)).toBe(0);
    await sleep(CACHE_MS);
    expect(await deliverSigned(old!)).toBe(200);
    await sleep(Date.parse(retireAt) - Date.now() + 50);
    expect(await retireDueSecrets(world.deps)).toBe(1);
    await sleep(CACHE_MS);
    expect(await deliverSigned(old!)).toBe(401);
    expect(await deliverSigned(current!)).toBe(200);
    expect(JSON.stringify(world.published)).not.toContain(current);
  }, 30_000);

  it('keeps every secret accepted when a PATCH of the Secret fails, and the next rotation converges', async () => {
    const [old] = (await world.deps.secrets.read())[CONTEXT]!;
    const patch = world.deps.crm.patchWebhook;
    const failing = {
      ...world.deps,
      crm: {
        ...world.deps.crm,
        patchWebhook: (...args: Parameters<typeof patch>) => patch(args[0], 999, args[2]),
      },
    };
    // The CRM answers 404 (the PATCH goes to a webhook it does not have): said as a webhook deleted meanwhile.
    await expect(rotateSecret(failing, CONTEXT)).rejects.toThrow(
      'Cust1: webhook 1 was deleted in the CRM meanwhile, so nothing was set on it (Secret): run onboard again to create it again',
    );
    const record = await world.deps.tenants.get(CONTEXT);
    expect(record?.secrets.map((entry) => entry.retireAt)).toEqual([undefined, undefined]);
    expect((await world.deps.secrets.read())[CONTEXT]).toContain(old);
    expect(world.crm.core.webhook(CONTEXT, 1).secret).toBe(old);
    // The next rotation converges: the webhooks on the newest secret, both older ones retiring.
    await rotateSecret(world.deps, CONTEXT);
    const after = await world.deps.tenants.get(CONTEXT);
    expect(after?.secrets.map((entry) => entry.retireAt === undefined)).toEqual([true, false, false]);
  });

  it('is refused for a tenant never onboarded', async () => {
    const refused = await rotateSecret(world.deps, 'Other').catch((error: unknown) => error);
    expect((refused as TenantError).kind).toBe('not-onboarded');
    expect((refused as Error).message).toBe('Other is not onboarded: onboard it first');
  });
});

describe('offboarding a tenant', () => {
  it('deletes its webhooks, forgets its delivery markers, and refuses its deliveries with 401 after the grace period, never before', async () => {
    const [secret] = (await world.deps.secrets.read())[CONTEXT]!;
    world.crm.core.change(CONTEXT, { op: 'create', table: 'contact', fields: { name: 'A' } } as never);
    await world.crm.core.dispatcher.idle();
    await world.dynamo.doc.send(
      // What the webhook-state worker and the ingest leave behind for the poll: a marker of the context.
      new (await import('@aws-sdk/lib-dynamodb')).PutCommand({
        TableName: world.tables.webhooks,
        Item: { context: CONTEXT, sk: 'accepted#crm-webhook-receiver', webhookName: 'crm-webhook-receiver' },
      }),
    );
    const result = await offboard(world.deps, CONTEXT, { erase: true });
    expect(result.deleted).toEqual([1, 2]);
    expect(world.crm.core.store.context(CONTEXT).webhooks).toEqual([]);
    expect(result.record).toMatchObject({ status: 'offboarded' });
    expect(result.record.dataWebhookId).toBeUndefined();
    expect(result.notes).toEqual([
      "Cust1's rows and history are not erased: no whole-tenant erasure is wired here",
    ]);
    const { Items } = await world.dynamo.doc.send(
      new (await import('@aws-sdk/lib-dynamodb')).QueryCommand({
        TableName: world.tables.webhooks,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: { '#c': 'context' },
        ExpressionAttributeValues: { ':c': CONTEXT },
      }),
    );
    expect(Items?.map((item) => item.sk)).toEqual(['tenant']);
    expect(world.events('receiver.tenant.offboarded')).toEqual([
      { context: CONTEXT, webhooksDeleted: [1, 2], retireAt: result.retireAt, erased: false },
    ]);

    expect(await retireDueSecrets(world.deps)).toBe(0);
    expect(await deliverSigned(secret!)).toBe(200);
    await sleep(Date.parse(result.retireAt) - Date.now() + 50);
    expect(await retireDueSecrets(world.deps)).toBe(1);
    await sleep(CACHE_MS);
    expect(await deliverSigned(secret!)).toBe(401);
    expect(await world.deps.secrets.read()).toEqual({});
  }, 30_000);

  it('names a webhook of the same URL that a person made and leaves it', async () => {
    const person = await world.crm.core.register(CONTEXT, {
      name: 'by hand',
      events: ['contact.created'],
      targetUrl: world.targetUrl,
    });
    const result = await offboard(world.deps, CONTEXT);
    expect(world.crm.core.store.context(CONTEXT).webhooks.map((webhook) => webhook.id)).toEqual([person.id]);
    expect(result.notes[0]).toContain(
      `webhook ${person.id} ("by hand") delivers to ${world.targetUrl} but was not made by the receiver`,
    );
  });
});
