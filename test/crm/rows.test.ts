import { afterEach, describe, expect, it } from 'vitest';
import { validEvent } from '../../lib/events/index.js';
import { buildSampleBody, signBody } from '../../tools/samples.js';
import { crmOnTempDir, startTarget } from './support.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup() {
  const target = await startTarget();
  const crm = crmOnTempDir();
  cleanups.push(target.close, crm.cleanup);
  const events = [
    'contact.created',
    'contact.changed',
    'contact.softdeleted',
    'contact.deleted',
    'activity.created',
    'activity.deleted',
    'sale.created',
    'sale.sold',
    'y_equipment.created',
    'list.category.softdeleted',
  ];
  await crm.core.register('Cust1', {
    name: 'receiver',
    events,
    targetUrl: target.url,
    secret: 'shh',
    headers: { 'X-Receiver-Token': 'tok' },
    properties: { Tenant: 'north' },
  });
  return { target, crm, core: crm.core };
}

describe('the CRM simulator: rows and the events their changes raise', () => {
  it('creates a contact with the created event the spec shows: full Changes, FieldValues of the row, signed', async () => {
    const { target, core } = await setup();
    core.change('Cust1', {
      op: 'create',
      table: 'contact',
      id: 42,
      fields: { name: 'Acme', department: 'Ops' },
    });
    await core.dispatcher.idle();

    const [delivery] = target.of('contact.created');
    const sample = buildSampleBody('contact.created');
    expect(delivery?.body.Changes).toEqual(sample.Changes);
    expect(Object.keys(delivery?.body.FieldValues as object).sort()).toEqual(
      Object.keys(sample.FieldValues as object).sort(),
    );
    expect(delivery?.body).toMatchObject({
      Event: 'contact.created',
      PrimaryKey: 42,
      Entity: 'contact',
      Tenant: 'north',
    });
    expect(delivery?.body.ContextIdentifier).toBe('Cust1');
    expect(delivery?.body.WebhookName).toBe('receiver');
    expect(delivery?.headers['x-superoffice-signature']).toBe(signBody(delivery!.raw, 'shh'));
    expect(delivery?.headers['x-superoffice-eventid']).toBe(delivery?.body.EventId);
    expect(delivery?.headers['x-receiver-token']).toBe('tok');
    expect(validEvent(delivery?.body)).toBeDefined();
  });

  it('changes only the fields named: Changes lists them with updated, updatedCount, updated_associate_id', async () => {
    const { target, core } = await setup();
    core.change('Cust1', { op: 'create', table: 'contact', id: 42 });
    const applied = core.change(
      'Cust1',
      { op: 'change', table: 'contact', id: 42, fields: { department: 'Sales' } },
      7,
    );
    await core.dispatcher.idle();

    const [changed] = target.of('contact.changed');
    expect(changed?.body.Changes).toEqual([
      'contact_id',
      'department',
      'updated_associate_id',
      'updated',
      'updatedCount',
    ]);
    expect(changed?.body).not.toHaveProperty('FieldValues');
    expect(changed?.body.ChangedByAssociateId).toBe(7);
    expect(applied.row).toMatchObject({ department: 'Sales', updatedCount: 1, updated_associate_id: 7 });
    expect(applied.row?.updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}$/);
    expect(validEvent(changed?.body)).toBeDefined();
  });

  it('changes a phone number silently (another table): the row moves, no event, updated stays', async () => {
    const { target, core } = await setup();
    const created = core.change('Cust1', { op: 'create', table: 'contact', id: 42 });
    const updated = created.row?.updated;
    const applied = core.change('Cust1', {
      op: 'change',
      table: 'contact',
      id: 42,
      fields: { phone: '+47 1234' },
    });
    await core.dispatcher.idle();

    expect(applied.event).toBeUndefined();
    expect(applied.webhooks).toBe(0);
    expect(applied.row).toMatchObject({ phone: '+47 1234', updated });
    expect(target.of('contact.changed')).toHaveLength(0);
  });

  it('soft-deletes, deletes with Values, and runs an action such as sale.sold', async () => {
    const { target, core } = await setup();
    core.change('Cust1', { op: 'create', table: 'contact', id: 42 });
    core.change('Cust1', { op: 'softdelete', table: 'contact', id: 42 });
    const deleted = core.change('Cust1', { op: 'delete', table: 'contact', id: 42 });
    core.change('Cust1', { op: 'create', table: 'sale', id: 9 });
    const sold = core.change('Cust1', { op: 'action', table: 'sale', id: 9, action: 'sold' });
    core.change('Cust1', { op: 'create', table: 'appointment', id: 3, fields: { contact_id: 42 } });
    core.change('Cust1', { op: 'delete', table: 'appointment', id: 3 });
    await core.dispatcher.idle();

    expect(target.of('contact.softdeleted')[0]?.body.Changes).toEqual([
      'deleted',
      'DeletedDate',
      'updated',
      'updatedCount',
    ]);
    expect(deleted.row).toBeUndefined();
    expect(target.of('contact.deleted')[0]?.body).toMatchObject({
      Changes: [],
      Values: { associate_id: 5, contact_id: 42 },
    });
    expect(sold.row).toMatchObject({ status: 2, done: 1 });
    expect(target.of('sale.sold')[0]?.body.Changes).toEqual(['status', 'done', 'updated']);
    expect(target.of('activity.deleted')[0]?.body.Values).toEqual({
      appointment_id: 3,
      contact_id: 42,
      person_id: 77,
      project_id: 0,
      sale_id: 0,
    });
    for (const request of target.received) expect(validEvent(request.body), request.raw).toBeDefined();
  });

  it('writes a custom table in typed strings and refuses what the CRM has not', async () => {
    const { target, core } = await setup();
    core.change('Cust1', {
      op: 'create',
      table: 'y_equipment',
      id: 6,
      fields: { x_price: 12.5, x_name: 'Saw' },
    });
    await core.dispatcher.idle();

    expect(target.of('y_equipment.created')[0]?.body.FieldValues).toMatchObject({
      id: '[I:6]',
      x_name: '[S:Saw]',
      x_price: '[F:12.5]',
      x_active: '[B:True]',
      x_bought: '[DT:09/16/2025 10:11:12]',
    });
    // In the column's form (its sample's tag, lib/crm/typed-values.ts), whatever the value: a whole price stays F.
    core.change('Cust1', { op: 'create', table: 'y_equipment', id: 7, fields: { x_price: 130 } });
    await core.dispatcher.idle();
    expect(target.of('y_equipment.created')[1]?.body.FieldValues).toMatchObject({ x_price: '[F:130]' });
    expect(() => core.change('Cust1', { op: 'softdelete', table: 'y_equipment', id: 6 })).toThrow(
      'y_equipment has no softdeleted: its events are created, changed, deleted',
    );
    expect(() => core.change('Cust1', { op: 'change', table: 'contact', id: 1, fields: {} })).toThrow(
      'no contact 1',
    );
    expect(() => core.change('Cust1', { op: 'create', table: 'invoice' })).toThrow('no table "invoice"');
    expect(() => core.change('Cust1', { op: 'create', table: 'contact', fields: { colour: 'red' } })).toThrow(
      'contact has no field colour',
    );
  });

  it('keeps rows and webhooks across a restart on the same data directory', async () => {
    const { crm, core } = await setup();
    core.change('Cust1', { op: 'create', table: 'contact', id: 42, fields: { name: 'Acme' } });
    core.change('Cust1', { op: 'create', table: 'contact', fields: { name: 'Next' } });
    await core.dispatcher.idle();

    const again = crm.reopen();
    const data = again.store.context('Cust1');
    expect(data.rows.contact?.[42]?.name).toBe('Acme');
    expect(data.rows.contact?.[1]?.name).toBe('Next');
    expect(data.webhooks.map((webhook) => webhook.totalCalls)).toEqual([2]);
    expect(again.change('Cust1', { op: 'create', table: 'contact' }).id).toBe(2);
    await again.dispatcher.idle();
  });
});
