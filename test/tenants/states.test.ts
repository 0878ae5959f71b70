import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TenantError } from '../../lib/tenants/deps.js';
import { createTenantService, type TenantService } from '../../lib/tenants/service.js';
import { setTenantStatus } from '../../tools/crm/tenant-state.js';
import { startTenantWorld, type TenantWorld } from './support.js';

const CONTEXT = 'Cust1';
let world: TenantWorld;
let service: TenantService;

beforeEach(async () => {
  world = await startTenantWorld();
  service = createTenantService(world.deps, (entity) => entity === 'contact');
  await service.onboard(CONTEXT, {});
});
afterEach(async () => {
  await world.close();
});

const tenant = () => world.crm.core.store.context(CONTEXT);

describe('tenant states', () => {
  it('follows a moved tenant to its new endpoint, also when its old host answers 421 in the middle of a command', async () => {
    setTenantStatus(tenant(), undefined, true);
    await service.rotate(CONTEXT);
    expect(world.events('receiver.tenant.state-changed')).toEqual([
      { context: CONTEXT, from: 'Running', to: 'Running', endpoint: `${world.crm.url}/h2/${CONTEXT}/api` },
    ]);
    expect(world.crm.calls.of(CONTEXT).byKind.webhook).toBeGreaterThan(0);

    // Moved again between the state read and the next call: 421 at the old host, then followed.
    const stale = {
      running: true as const,
      state: 'Running',
      endpoint: `${world.crm.url}/h2/${CONTEXT}/api`,
    };
    let reads = 0;
    const tenantState = world.deps.crm.tenantState;
    const racing = createTenantService(
      {
        ...world.deps,
        crm: { ...world.deps.crm, tenantState: async (c) => (reads++ === 0 ? stale : tenantState(c)) },
      },
      undefined,
    );
    setTenantStatus(tenant(), undefined, true);
    const result = await racing.offboard(CONTEXT, {});
    expect(result.deleted).toEqual([1, 2]);
    expect(result.record.endpoint).toBe(`${world.crm.url}/h3/${CONTEXT}/api`);
  });

  it('waits out a Suspended tenant (refused with a line, nothing changed) and proposes offboarding a Deleted one', async () => {
    setTenantStatus(tenant(), 'Suspended', false);
    const listed = await service.list();
    expect(listed[0]).toMatchObject({ context: CONTEXT, status: 'active', tenantState: 'Suspended' });
    const refused = await service.rotate(CONTEXT).catch((error: unknown) => error);
    expect((refused as TenantError).kind).toBe('not-running');
    expect((refused as Error).message).toBe(
      'Cust1 is Suspended in the CRM: rotate its secret once it is Running',
    );
    expect(world.events('receiver.tenant.state-changed')).toEqual([
      { context: CONTEXT, from: 'Running', to: 'Suspended' },
    ]);
    // Seen again, unchanged: no second event.
    await service.list();
    expect(world.events('receiver.tenant.state-changed')).toHaveLength(1);

    setTenantStatus(tenant(), 'Deleted', false);
    expect((await service.list())[0]).toMatchObject({
      tenantState: 'Deleted',
      proposal: 'Deleted in the CRM: offboard it',
    });
    const offboarded = await service.offboard(CONTEXT, {});
    expect(offboarded.deleted).toEqual([]);
    expect(offboarded.notes).toEqual(['Cust1 is Deleted in the CRM: its webhooks went with it']);
    expect(offboarded.record.secrets.every((entry) => entry.retireAt !== undefined)).toBe(true);
    expect((await service.list())[0]).not.toHaveProperty('proposal');
  });

  it('onboards with the Events of ENTITIES only', async () => {
    expect(tenant().webhooks[0]!.events).toEqual([
      'contact.created',
      'contact.changed',
      'contact.softdeleted',
      'contact.deleted',
    ]);
  });
});
