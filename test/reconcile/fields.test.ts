import { describe, expect, it } from 'vitest';
import { CRM_TABLES, crmTableOf, whyNotInCrm } from '../../lib/crm/index.js';
import { FIXED_ENTITIES } from '../../lib/events/index.js';
import { fixedShape, learnedShape, snapshotFieldValues } from '../../lib/reconcile/run/fields.js';
import { SnapshotError } from '../../lib/reconcile/run/snapshot-message.js';
import { buildSampleBody } from '../../tools/samples.js';

describe('where each entity the receiver stores lives in the CRM', () => {
  it('every fixed entity has a table, or a reason why not: quote, whose events carry no FieldValues', () => {
    const without = FIXED_ENTITIES.filter((entity) => crmTableOf(entity) === undefined);
    expect(without).toEqual(['quote']);
    expect(whyNotInCrm('quote')).toBe('its events carry no FieldValues: nothing to compare');
    for (const entity of without)
      expect(buildSampleBody(`${entity}.approved`, { primaryKey: 1 }).FieldValues, entity).toBeUndefined();
  });

  it('the catalogue’s entities in the table of their name, keyed as their samples’ FieldValues; REST only where crm-rest-api.md lists it', () => {
    expect(crmTableOf('ticket')).toMatchObject({ table: 'ticket', key: 'ticket_id', rest: 'Ticket' });
    expect(crmTableOf('projectmember')).toMatchObject({
      table: 'projectmember',
      key: 'projectmember_id',
      rest: 'ProjectMember',
    });
    expect(crmTableOf('relation')).toMatchObject({ table: 'relation', key: 'relation_id' });
    expect(crmTableOf('relation')).not.toHaveProperty('rest');
    expect(crmTableOf('activity')).toMatchObject({ table: 'appointment', key: 'appointment_id' });
    // The spec's contact and activity FieldValues do not repeat their key; the others do.
    for (const [entity, table] of Object.entries(CRM_TABLES).filter(
      ([e]) => !['contact', 'activity'].includes(e),
    )) {
      const sample = buildSampleBody(`${entity}.created`, { primaryKey: 7 });
      expect((sample.FieldValues as Record<string, unknown>)[table.key], entity).toBe(7);
    }
  });

  it('a list by name in the table of its name keyed Id, a custom table keyed id; a list by id, an unknown name: none, with why', () => {
    expect(crmTableOf('list.category')).toEqual({ table: 'category', key: 'Id' });
    expect(crmTableOf('y_equipment')).toEqual({ table: 'y_equipment', key: 'id' });
    expect(crmTableOf('list.12')).toBeUndefined();
    expect(whyNotInCrm('list.12')).toBe('a list named by its id: its table is unknown');
    expect(crmTableOf('contakt')).toBeUndefined();
    expect(crmTableOf('hasOwnProperty')).toBeUndefined();
    const list = buildSampleBody('list.category.created', { primaryKey: 3 }).FieldValues as object;
    expect(list).toMatchObject({ Id: 3 });
  });
});

const ROW = { context: 'Cust1', entity: 'y_equipment', primaryKey: 5 };

describe('the fields a snapshot selects', () => {
  it('of a fixed entity: its table’s fields, its created sample’s FieldValues, for every entity the CRM can list', () => {
    for (const [entity, table] of Object.entries(CRM_TABLES)) {
      const sample = buildSampleBody(`${entity}.created`, { primaryKey: 1 });
      expect(table.fields, entity).toEqual(Object.keys(sample.FieldValues as object));
      expect(fixedShape(entity)?.fields, entity).toBe(table.fields);
    }
  });

  it('makes the FieldValues text from an archive row: those fields in order, the others dropped, a missing one null', () => {
    expect(
      snapshotFieldValues(
        fixedShape('project')!,
        { project_id: 4, status: 2, done: 0, name: 'not a FieldValue', associate_id: 9 },
        ROW,
      ),
    ).toBe('{"project_id":4,"associate_id":9,"status":2,"done":0,"endDate":null}');
    expect(fixedShape('y_equipment')).toBeUndefined();
  });

  it('of a custom table: a stored row’s fields, each value written with the tag the stored one carries, so an unchanged row is the same text', () => {
    const stored = buildSampleBody('y_equipment.created', { primaryKey: 5 }).FieldValues as Record<
      string,
      unknown
    >;
    const shape = learnedShape(stored);
    expect(shape).toMatchObject({
      fields: ['id', 'x_name', 'x_bought', 'x_price', 'x_active', 'x_contact'],
      tags: { id: 'I', x_name: 'S', x_bought: 'DT', x_price: 'F', x_active: 'B', x_contact: 'I' },
    });
    // The archive's plain values of the same row, as the simulator (and the dynamic provider) answers.
    const archive = {
      id: 5,
      x_name: 'Drill 18V',
      x_bought: '2025-09-16T10:11:12',
      x_price: 129.9,
      x_active: true,
      x_contact: 1234,
      updated: '2026-01-01T00:00:00',
    };
    expect(snapshotFieldValues(shape, archive, ROW)).toBe(JSON.stringify(stored));
    // A whole price stays a float ([F:130], not [I:130]); a field the archive did not answer is null.
    expect(
      JSON.parse(snapshotFieldValues(shape, { ...archive, x_price: 130, x_name: undefined }, ROW)),
    ).toMatchObject({
      x_price: '[F:130]',
      x_name: null,
    });
  });

  it('refuses a value its stored form cannot hold: the row cannot become a snapshot, one line naming it and the field', () => {
    const shape = learnedShape({ id: '[I:5]', x_count: '[I:2]' });
    expect(() => snapshotFieldValues(shape, { id: 5, x_count: 'many' }, ROW)).toThrow(SnapshotError);
    expect(() => snapshotFieldValues(shape, { id: 5, x_count: 'many' }, ROW)).toThrow(
      'snapshot of Cust1/y_equipment/5 not queued: x_count: "many" cannot be written as [I:...]',
    );
    // A long text (a custom field holds up to the item's 400 KB) is quoted by its start: one short line.
    const long = `notes ${'x'.repeat(400_000)}`;
    const line = (() => {
      try {
        snapshotFieldValues(shape, { id: 5, x_count: long }, ROW);
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(line).toBe(
      `snapshot of Cust1/y_equipment/5 not queued: x_count: "notes ${'x'.repeat(33)}… (400008 characters) cannot be written as [I:...]`,
    );
  });

  it('of a list: a stored row’s fields, the values as they are (lists carry plain values)', () => {
    const stored = { Id: 3, Name: 'Customer', Tooltip: '', Deleted: 0, Rank: 3 };
    const shape = learnedShape(stored);
    expect(shape).toMatchObject({ fields: ['Id', 'Name', 'Tooltip', 'Deleted', 'Rank'], tags: {} });
    expect(snapshotFieldValues(shape, { ...stored, registered: 'x' }, ROW)).toBe(JSON.stringify(stored));
  });
});

describe('a value the archive writes in another form than the live events', () => {
  it('a numeral as text where the stored row (else the entity’s stored rows) holds a number is written as the number', () => {
    const shape = fixedShape('project', { project_id: 1, associate_id: 2, status: 3, done: 0 })!;
    const archive = { project_id: '7', associate_id: '12', status: '-1.5', done: 'x', endDate: '2026-01-01' };
    const row = { ...ROW, entity: 'project' };
    expect(JSON.parse(snapshotFieldValues(shape, archive, row))).toEqual({
      project_id: 7,
      associate_id: 12,
      status: -1.5,
      done: 'x', // not a numeral: as written
      endDate: '2026-01-01',
    });
    // The row's own stored form first: a field it holds as text stays text.
    expect(JSON.parse(snapshotFieldValues(shape, archive, row, { associate_id: 'twelve' }))).toMatchObject({
      associate_id: '12',
    });
    // A whole number past 2^53 cannot be a number without losing digits; a number stays a number.
    expect(
      JSON.parse(
        snapshotFieldValues(shape, { ...archive, project_id: '12345678901234567890', status: 4 }, row),
      ),
    ).toMatchObject({ project_id: '12345678901234567890', status: 4 });
  });
});
