import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATA_WEBHOOK_NAME, STATE_WEBHOOK_NAME, TenantError } from '../../lib/tenants/deps.js';
import { wantedEvents } from '../../lib/tenants/events.js';
import { onboard } from '../../lib/tenants/onboard.js';
import { fingerprint } from '../../lib/tenants/secret-set.js';
import { startTenantWorld, type TenantWorld } from './support.js';

let world: TenantWorld;
const CONTEXT = 'Cust1';
const events = wantedEvents(undefined);

beforeEach(async () => {
  world = await startTenantWorld();
});
afterEach(async () => {
  await world.close();
});

const webhooks = () => world.crm.core.store.context(CONTEXT).webhooks;
const createContact = async () => {
  world.crm.core.change(CONTEXT, { op: 'create', table: 'contact', fields: { name: 'A' } } as never);
  await world.crm.core.dispatcher.idle();
};

describe('onboarding a tenant', () => {
  it('accepts a fresh secret, creates the data and state webhooks after their test deliveries, records the tenant, and the first delivery arrives signed', async () => {
    const { record, changes } = await onboard(world.deps, CONTEXT, {
      events,
      errorsEmail: 'ops@example.com',
    });

    const [data, state] = webhooks();
    expect(webhooks()).toHaveLength(2);
    expect(data).toMatchObject({
      name: DATA_WEBHOOK_NAME,
      targetUrl: world.targetUrl,
      state: 'Active',
      errorsEmail: 'ops@example.com',
    });
    expect(data!.events).toEqual(events);
    expect(data!.events).toContain('sale.sold');
    expect(state).toMatchObject({
      name: STATE_WEBHOOK_NAME,
      events: [`webhook${data!.id}.started`, `webhook${data!.id}.stopped`, `webhook${data!.id}.errors`],
    });
    // The CRM's secret is the one the set holds for the context, and the record names it by fingerprint only.
    const set = await world.deps.secrets.read();
    expect(set[CONTEXT]).toEqual([data!.secret]);
    expect(data!.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({
      status: 'active',
      dataWebhookId: data!.id,
      stateWebhookId: state!.id,
      tenantState: 'Running',
    });
    expect(record.secrets.map((entry) => entry.fingerprint)).toEqual([fingerprint(data!.secret!)]);
    expect(JSON.stringify(record)).not.toContain(data!.secret);
    expect(changes).toEqual([
      'a new secret accepted',
      `data webhook ${data!.id} created`,
      `state webhook ${state!.id} created`,
    ]);
    expect(world.answered.filter((a) => a.event === 'test').map((a) => a.status)).toEqual([200, 200]);

    await createContact();
    expect(world.answered.at(-1)).toMatchObject({ event: 'contact.created', status: 200 });
    expect(world.events('receiver.tenant.onboarded')).toEqual([
      expect.objectContaining({ context: CONTEXT, dataWebhookId: data!.id, stateWebhookId: state!.id }),
    ]);
    expect(JSON.stringify(world.published)).not.toContain(data!.secret);
  });

  it('twice at once: one webhook pair, one secret; a third run changes nothing', async () => {
    const both = await Promise.all([
      onboard(world.deps, CONTEXT, { events }),
      onboard({ ...world.deps, owner: 'second operator' }, CONTEXT, { events }),
    ]);
    expect(webhooks()).toHaveLength(2);
    expect(both.map((result) => result.changes.length).sort()).toEqual([0, 3]);
    expect((await world.deps.secrets.read())[CONTEXT]).toHaveLength(1);
    const again = await onboard(world.deps, CONTEXT, { events });
    expect(again.changes).toEqual([]);
    expect(webhooks()).toHaveLength(2);
  });

  it('after a crash between creating the data webhook and recording it, the next run finishes with one pair and the new Events', async () => {
    const createWebhook = world.deps.crm.createWebhook;
    let created = 0;
    const crashing = {
      ...world.deps,
      crm: {
        ...world.deps.crm,
        createWebhook: async (...args: Parameters<typeof createWebhook>) => {
          const webhook = await createWebhook(...args);
          if (++created === 1) throw new Error('killed');
          return webhook;
        },
      },
    };
    await expect(onboard(crashing, CONTEXT, { events })).rejects.toThrow('killed');
    expect(webhooks()).toHaveLength(1);
    expect((await world.deps.tenants.get(CONTEXT))?.status).toBe('onboarding');

    const fewer = events.filter((name) => name.startsWith('contact.'));
    const { record, changes } = await onboard(world.deps, CONTEXT, { events: fewer });
    const [data, state] = webhooks();
    expect(webhooks()).toHaveLength(2);
    expect(data!.events).toEqual(fewer);
    expect(record).toMatchObject({ status: 'active', dataWebhookId: data!.id, stateWebhookId: state!.id });
    // Not sure which secret the webhook it did not record signs with, the run gives it a fresh one.
    expect(changes).toEqual([
      'a new secret accepted',
      `data webhook ${data!.id}: Events, Secret changed`,
      `state webhook ${state!.id} created`,
    ]);
    expect(record.secrets.map((entry) => entry.retireAt === undefined)).toEqual([true, false]);
    await createContact();
    expect(world.answered.at(-1)).toMatchObject({ event: 'contact.created', status: 200 });
  });

  it('reports a webhook of the same TargetUrl that a person made, and changes nothing', async () => {
    const person = await world.crm.core.register(CONTEXT, {
      name: 'made by hand',
      events: ['contact.created'],
      targetUrl: world.targetUrl,
    });
    const refused = await onboard(world.deps, CONTEXT, { events }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TenantError);
    expect((refused as TenantError).kind).toBe('conflict');
    expect((refused as Error).message).toContain(
      `webhook ${person.id} ("made by hand") delivers to ${world.targetUrl} too`,
    );
    expect(webhooks()).toEqual([person]);
    expect(await world.deps.secrets.read()).toEqual({});
  });

  it('is refused while the tenant is not Running; refused by the CRM, it keeps the recorded secret for the next run', async () => {
    world.crm.core.store.context(CONTEXT).tenant = { state: 'Suspended' };
    const suspended = await onboard(world.deps, CONTEXT, { events }).catch((error: unknown) => error);
    expect((suspended as TenantError).kind).toBe('not-running');
    expect((suspended as Error).message).toBe('Cust1 is Suspended in the CRM: onboard it once it is Running');

    world.crm.core.store.context(CONTEXT).tenant = { state: 'Running' };
    const unreachable = { ...world.deps, targetUrl: 'http://127.0.0.1:1/webhook' };
    await expect(onboard(unreachable, CONTEXT, { events })).rejects.toThrow(
      /POST \/Cust1\/api\/v1\/Webhook answered HTTP 400: the target URL .* answered the test delivery with no answer, not 200/,
    );
    expect(webhooks()).toEqual([]);
    const record = await world.deps.tenants.get(CONTEXT);
    expect(record?.status).toBe('onboarding');
    const [secret] = (await world.deps.secrets.read())[CONTEXT]!;
    expect(record?.secrets.map((entry) => entry.fingerprint)).toEqual([fingerprint(secret!)]);

    const { changes } = await onboard(world.deps, CONTEXT, { events });
    expect(changes).not.toContain('a new secret accepted');
    expect(webhooks().map((webhook) => webhook.secret)).toEqual([secret, secret]);
  });
});
