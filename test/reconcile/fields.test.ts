import { describe, expect, it } from 'vitest';
import { CRM_TABLES } from '../../lib/crm/index.js';
import { SNAPSHOT_FIELDS, snapshotFieldValues } from '../../lib/reconcile/fields.js';
import { buildSampleBody } from '../../tools/samples.js';

describe('the fields a snapshot selects', () => {
  it('are the FieldValues of each entity’s webhook events as the CRM’s samples show them, for every entity the CRM can list', () => {
    expect(Object.keys(SNAPSHOT_FIELDS).sort()).toEqual(Object.keys(CRM_TABLES).sort());
    for (const entity of Object.keys(CRM_TABLES)) {
      const sample = buildSampleBody(`${entity}.created`, { primaryKey: 1 });
      expect(SNAPSHOT_FIELDS[entity], entity).toEqual(Object.keys(sample.FieldValues as object));
    }
  });

  it('makes the FieldValues text from an archive row: those fields in order, the others dropped, a missing one null', () => {
    expect(
      snapshotFieldValues('project', {
        project_id: 4,
        status: 2,
        done: 0,
        name: 'not a FieldValue',
        associate_id: 9,
      }),
    ).toBe('{"project_id":4,"associate_id":9,"status":2,"done":0,"endDate":null}');
  });
});
