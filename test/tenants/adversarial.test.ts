import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CrmApiError, createCrmClient } from '../../lib/crm/index.js';
import { CHANGE_TRIES, changeWebhook } from '../../lib/tenants/change-webhook.js';
import { DATA_WEBHOOK_NAME, type TenantDeps } from '../../lib/tenants/deps.js';
import { wantedEvents } from '../../lib/tenants/events.js';
import { offboard } from '../../lib/tenants/offboard.js';
import { onboard } from '../../lib/tenants/onboard.js';
import { rotateSecret } from '../../lib/tenants/rotate.js';
import { retireDueSecrets } from '../../lib/tenants/secrets.js';
import type { WebhookChange } from '../../tools/crm/crm.js';
import { BASIC } from '../crm-client/support.js';
import { startServer } from '../support/http-server.js';
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

/**
 * The tenant deps whose PATCHes each come after a person changed webhook `id` in the CRM (`times`
 * PATCHes, all by default): between the receiver's read and its write. Counts the PATCHes sent.
 */
function personEditsBeforeEachPatch(id: number, edit: (n: number) => WebhookChange, times = Infinity) {
  const patch = world.deps.crm.patchWebhook;
  const sent = { patches: 0 };
  const deps: TenantDeps = {
    ...world.deps,
    crm: {
      ...world.deps.crm,
      patchWebhook: async (...args: Parameters<typeof patch>) => {
        if (sent.patches < times) await world.crm.core.update(CONTEXT, id, edit(sent.patches));
        sent.patches++;
        return patch(...args);
      },
    },
  };
  return { deps, sent };
}

describe('a person changing a webhook between the receiver read it and its PATCH', () => {
  it("keeps the person's header on the state webhook and sets the receiver's token on top", async () => {
    const { deps, sent } = personEditsBeforeEachPatch(2, () => ({ headers: { 'X-Trace': 'person' } }), 1);
    const { changes } = await onboard({ ...deps, stateEventToken: 'token' }, CONTEXT, { events });
    expect(changes).toEqual(['state webhook 2: Headers changed']);
    expect(webhooks()[1]!.headers).toEqual({ 'X-Trace': 'person', 'X-Receiver-Token': 'token' });
    // The first PATCH was refused (its Headers were not as read), the second made on the webhook read again.
    expect(sent.patches).toBe(2);
  });

  it("refuses in one line to change a data webhook the person renamed: the person's name and Events stay", async () => {
    const { deps } = personEditsBeforeEachPatch(1, () => ({ name: 'my own hook' }), 1);
    const fewer = wantedEvents((entity) => entity === 'contact');
    const refused = await onboard(deps, CONTEXT, { events: fewer }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ kind: 'conflict' });
    expect(String((refused as Error).message)).toBe(
      `${CONTEXT}: webhook 1 ("my own hook") was renamed or pointed away from ${world.targetUrl} in the CRM, so it is no longer the receiver's and was left as it is: run onboard again`,
    );
    expect(webhooks()[0]).toMatchObject({ name: 'my own hook', events });
  });

  it(`gives up after ${CHANGE_TRIES} tries against a person who keeps changing the Events, with one line; the person's last Events stay`, async () => {
    const { deps, sent } = personEditsBeforeEachPatch(1, (n) => ({
      events: [`contact.created`, `sale.${n}`],
    }));
    const fewer = wantedEvents((entity) => entity === 'contact');
    const refused = await onboard({ ...deps, sleep: async () => undefined }, CONTEXT, {
      events: fewer,
    }).catch((error: unknown) => error);
    expect(String((refused as Error).message)).toBe(
      `${CONTEXT}: webhook 1 was changed in the CRM by someone else during each of ${CHANGE_TRIES} tries to set its Events, which are not set: run the command again once nobody is editing it`,
    );
    expect(sent.patches).toBe(CHANGE_TRIES);
    expect(webhooks()[0]!.events).toEqual(['contact.created', `sale.${CHANGE_TRIES - 1}`]);
  });

  it('refuses in one line to rotate the secret of a state webhook the person pointed elsewhere: its URL and secret stay, every secret stays accepted', async () => {
    const elsewhere = `${world.targetUrl}?elsewhere`;
    const before = webhooks()[1]!.secret;
    const { deps } = personEditsBeforeEachPatch(2, () => ({ targetUrl: elsewhere }));
    const refused = await rotateSecret(deps, CONTEXT).catch((error: unknown) => error);
    expect(String((refused as Error).message)).toMatch(
      /^Cust1: webhook 2 \("crm-webhook-receiver-state"\) was renamed or pointed away from .* run onboard again$/,
    );
    expect(webhooks()[1]).toMatchObject({ targetUrl: elsewhere, secret: before });
    expect((await world.deps.secrets.read())[CONTEXT]).toHaveLength(2);
    expect((await world.deps.tenants.get(CONTEXT))?.secrets.every((entry) => !entry.retireAt)).toBe(true);
  });

  it('refuses in one line to change a data webhook the person deleted meanwhile, or rotate its secret, saying to onboard again', async () => {
    const patch = world.deps.crm.patchWebhook;
    const deletes: TenantDeps = {
      ...world.deps,
      crm: {
        ...world.deps.crm,
        patchWebhook: async (...args: Parameters<typeof patch>) => {
          world.crm.core.remove(CONTEXT, args[1]);
          return patch(...args);
        },
      },
    };
    const fewer = wantedEvents((entity) => entity === 'contact');
    const refused = await onboard(deletes, CONTEXT, { events: fewer }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ kind: 'conflict' });
    expect(String((refused as Error).message)).toBe(
      `${CONTEXT}: webhook 1 was deleted in the CRM meanwhile, so nothing was set on it (Events): run onboard again to create it again`,
    );

    const rotation = await rotateSecret(world.deps, CONTEXT).catch((error: unknown) => error);
    expect(String((rotation as Error).message)).toBe(
      `${CONTEXT}: webhook 1 was deleted in the CRM meanwhile, so nothing was set on it (Secret): run onboard again to create it again`,
    );
  });

  it("rotates the secret of a webhook whose Events a person changed meanwhile (no field the rotation sets), and keeps the person's Events", async () => {
    const { deps, sent } = personEditsBeforeEachPatch(1, () => ({ events: ['contact.created'] }), 1);
    await rotateSecret(deps, CONTEXT);
    const [current] = (await world.deps.secrets.read())[CONTEXT]!;
    expect(webhooks().map((webhook) => webhook.secret)).toEqual([current, current]);
    expect(webhooks()[0]!.events).toEqual(['contact.created']);
    expect(sent.patches).toBe(2);
  });
});

describe('a CRM of the test that changes the webhook its own way', () => {
  /** A CRM with one webhook: answers GET and PATCH; `conflicts` PATCHes first answered 412, `test`s ignored. */
  async function olderCrm(conflicts: number) {
    const webhook: Record<string, unknown> = {
      WebhookId: 7,
      Name: DATA_WEBHOOK_NAME,
      Events: ['contact.created'],
      TargetUrl: 'https://receiver.example/webhook',
      State: 'Active',
    };
    const bodies: unknown[] = [];
    const server = await startServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const answer = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.method === 'PATCH') {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Array<Record<string, unknown>>;
          bodies.push(body);
          if (bodies.length <= conflicts) return answer(412, { Error: 'changed since' });
          for (const operation of body)
            if (operation.op === 'replace') webhook[String(operation.path).slice(1)] = operation.value;
        }
        answer(200, webhook);
      });
    });
    const crm = createCrmClient({
      apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
      credentials: { '*': BASIC },
    });
    const deps = { crm, targetUrl: 'https://receiver.example/webhook', sleep: async () => undefined };
    return { server, webhook, bodies, deps };
  }

  it('sends the JSON Patch that tests the name, URL and Events as read (never the secret) and is taken by a CRM that ignores tests', async () => {
    const older = await olderCrm(0);
    try {
      const read = await older.deps.crm.getWebhook(CONTEXT, 7);
      const done = await changeWebhook(older.deps, CONTEXT, read, DATA_WEBHOOK_NAME, () => ({
        Events: ['contact.changed'],
        Secret: 'new-secret',
      }));
      expect(done.changed).toEqual(['Events', 'Secret']);
      expect(older.webhook).toMatchObject({ Events: ['contact.changed'], Secret: 'new-secret' });
      expect(older.bodies).toEqual([
        [
          { op: 'test', path: '/Name', value: DATA_WEBHOOK_NAME },
          { op: 'test', path: '/TargetUrl', value: 'https://receiver.example/webhook' },
          { op: 'test', path: '/Events', value: ['contact.created'] },
          { op: 'replace', path: '/Events', value: ['contact.changed'] },
          { op: 'replace', path: '/Secret', value: 'new-secret' },
        ],
      ]);
    } finally {
      await older.server.close();
    }
  });

  it('reads again and tries again when the CRM answers 412 (changed since), and is done on the next try', async () => {
    const older = await olderCrm(1);
    try {
      const read = await older.deps.crm.getWebhook(CONTEXT, 7);
      await changeWebhook(older.deps, CONTEXT, read, DATA_WEBHOOK_NAME, () => ({ Events: ['sale.created'] }));
      expect(older.bodies).toHaveLength(2);
      expect(older.webhook.Events).toEqual(['sale.created']);
    } finally {
      await older.server.close();
    }
  });
});
