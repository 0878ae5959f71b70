import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CrmApiError } from '../../lib/crm/index.js';
import { wantedEvents } from '../../lib/tenants/events.js';
import { offboard } from '../../lib/tenants/offboard.js';
import { onboard } from '../../lib/tenants/onboard.js';
import { rotateSecret } from '../../lib/tenants/rotate.js';
import { retireDueSecrets } from '../../lib/tenants/secrets.js';
import { startTenantWorld, type TenantWorld } from './support.js';

const CONTEXT = 'Cust1';
const events = wantedEvents((entity) => entity === 'contact' || entity === 'sale');
let world: TenantWorld;

beforeEach(async () => {
  world = await startTenantWorld();
  await onboard(world.deps, CONTEXT, { events });
});
afterEach(async () => {
  await world.close();
});

const webhooks = () => world.crm.core.store.context(CONTEXT).webhooks;

describe('a CRM and people that do not cooperate', () => {
  it('tries a PATCH the CRM answers 409 (another change under way) again, and the rotation goes through', async () => {
    const patch = world.deps.crm.patchWebhook;
    let calls = 0;
    const busy = {
      ...world.deps,
      crm: {
        ...world.deps.crm,
        patchWebhook: async (...args: Parameters<typeof patch>) => {
          if (calls++ === 0)
            throw new CrmApiError('PATCH /Cust1/api/v1/Webhook/1 answered HTTP 409: being changed', CONTEXT, {
              status: 409,
            });
          return patch(...args);
        },
      },
    };
    await rotateSecret(busy, CONTEXT);
    expect(calls).toBe(3);
    const [current] = (await world.deps.secrets.read())[CONTEXT]!;
    expect(webhooks().map((webhook) => webhook.secret)).toEqual([current, current]);
  });

  it('a person who edited the Events, stopped the webhook, or deleted it: onboarding again restores the Events, leaves Stopped alone, and recreates the pair', async () => {
    await world.crm.core.update(CONTEXT, 1, { events: ['contact.created'] });
    await world.crm.core.setState(CONTEXT, 1, 'Stopped');
    const restored = await onboard(world.deps, CONTEXT, { events });
    expect(restored.changes).toEqual(['data webhook 1: Events changed']);
    expect(webhooks()[0]).toMatchObject({ events, state: 'Stopped' });

    world.crm.core.remove(CONTEXT, 1);
    const recreated = await onboard(world.deps, CONTEXT, { events });
    expect(recreated.changes).toEqual(['data webhook 3 created', 'state webhook 2: Events changed']);
    expect(webhooks().map((webhook) => [webhook.id, webhook.events.length])).toEqual([
      [2, 3],
      [3, events.length],
    ]);
    expect(webhooks()[0]!.events).toEqual(['webhook3.started', 'webhook3.stopped', 'webhook3.errors']);
    expect(recreated.record).toMatchObject({ dataWebhookId: 3, stateWebhookId: 2 });
  });

  it('a rotation and an offboarding by two operators at once take turns: the tenant ends offboarded, every secret retiring', async () => {
    const results = await Promise.allSettled([
      rotateSecret(world.deps, CONTEXT),
      offboard({ ...world.deps, owner: 'other operator' }, CONTEXT),
    ]);
    expect(results[1].status).toBe('fulfilled');
    // Whichever came second found the other's work: a rotation after the offboarding is refused in one line.
    if (results[0].status === 'rejected')
      expect(String(results[0].reason)).toContain('Cust1 is not onboarded');
    expect(webhooks()).toEqual([]);
    const record = await world.deps.tenants.get(CONTEXT);
    expect(record?.status).toBe('offboarded');
    expect(record?.secrets.every((entry) => entry.retireAt !== undefined)).toBe(true);
    expect((await world.deps.secrets.read())[CONTEXT]).toHaveLength(record!.secrets.length);
  });
});

describe('a secret set edited by hand', () => {
  it('a tenant whose secret was removed from the set gets a new one on both webhooks by onboarding again, and its deliveries are taken', async () => {
    await world.deps.secrets.write({});
    const { changes } = await onboard(world.deps, CONTEXT, { events });
    expect(changes).toEqual([
      'a new secret accepted',
      'data webhook 1: Secret changed',
      'state webhook 2: Secret changed',
    ]);
    const [secret] = (await world.deps.secrets.read())[CONTEXT]!;
    expect(webhooks().map((webhook) => webhook.secret)).toEqual([secret, secret]);
    world.crm.core.change(CONTEXT, { op: 'create', table: 'contact', fields: { name: 'A' } } as never);
    await world.crm.core.dispatcher.idle();
    expect(world.answered.at(-1)).toMatchObject({ event: 'contact.created', status: 200 });
  });
});

describe('the sweep and a command at once', () => {
  it('leaves a tenant a command is changing for the next sweep, and retires its due secret after', async () => {
    const short = { ...world.deps, graceMs: 0 };
    await rotateSecret(short, CONTEXT);
    expect(await world.deps.tenants.lease(CONTEXT, 'a command under way', 30_000)).toBe(true);
    expect(await retireDueSecrets(world.deps)).toBe(0);
    expect((await world.deps.secrets.read())[CONTEXT]).toHaveLength(2);
    await world.deps.tenants.release(CONTEXT, 'a command under way');
    expect(await retireDueSecrets(world.deps)).toBe(1);
    expect((await world.deps.secrets.read())[CONTEXT]).toHaveLength(1);
  });
});
