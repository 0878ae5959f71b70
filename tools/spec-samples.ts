import type { EventName } from '../lib/events/index.js';

/** The Changes of the spec's contact.created example. */
const CONTACT_CREATED_CHANGES = [
  'contact_id',
  'activeErpLinks',
  'activeInterests',
  'associate_id',
  'business_idx',
  'category_idx',
  'country_id',
  'dbi_agent_id',
  'dbi_key',
  'dbi_last_modified',
  'dbi_last_syncronized',
  'deleted',
  'department',
  'group_id',
  'kananame',
  'mother_id',
  'name',
  'nomailing',
  'number1',
  'number2',
  'orgNr',
  'registered_associate_id',
  'registered',
  'soundEx',
  'source',
  'supportAssociateId',
  'supportLanguageId',
  'supportPersonId',
  'text_id',
  'ticketPriorityId',
  'tzLocationId',
  'updated_associate_id',
  'updated',
  'updatedCount',
  'userdef_id',
  'userdef2_id',
  'xstop',
];

/** The Changes of the spec's activity.created example. */
const ACTIVITY_CREATED_CHANGES = [
  'appointment_id',
  'suggestedDocumentId',
  'status',
  'task_idx',
  'endDate',
  'document_id',
  'activeLinks',
  'assignedBy',
  'alarm',
  'done',
  'updatedCount',
  'contact_id',
  'emailId',
  'lagTime',
  'priority_idx',
  'associate_id',
  'userdef_id',
  'group_idx',
  'recurrenceRuleId',
  'private',
  'do_by',
  'location',
  'invitedPersonId',
  'registered_associate_id',
  'preferredTZLocation',
  'updated',
  'project_id',
  'rejectReason',
  'sale_id',
  'person_id',
  'activeDate',
  'rejectCounter',
  'color_index',
  'suggestedAppointmentId',
  'leadtime',
  'registered',
  'hasAlarm',
  'alldayEvent',
  'text_id',
  'updated_associate_id',
  'type',
  'userdef2_id',
  'freeBusy',
  'source',
  'isMilestone',
  'mother_id',
];

/**
 * The fields of a spec event's body beyond the envelope (Changes, Entity, FieldValues, Values), shaped
 * like the spec's examples; the envelope is `buildSampleBody`'s (samples.ts).
 */
export function specSampleFields(event: EventName, primaryKey: number): Record<string, unknown> {
  switch (event) {
    case 'webhook.started':
    case 'webhook.stopped':
    case 'webhook.errors':
      return {
        FieldValues: {
          events: 42,
          registered: '2018-04-24T10:18:40.4930000+02:00',
          registered_associate_id: 5,
          state: { 'webhook.started': 0, 'webhook.stopped': 1, 'webhook.errors': 2 }[event],
          updated: '0001-01-01T00:00:00',
          updated_associate_id: 0,
        },
      };
    case 'contact.created':
      return {
        Changes: CONTACT_CREATED_CHANGES,
        Entity: 'contact',
        FieldValues: {
          activeInterests: 0,
          associate_id: 5,
          business_idx: 3,
          category_idx: 2,
          country_id: 578,
          deleted: 0,
          DeletedDate: '0001-01-01T00:00:00',
          registered: '2025-05-14T16:11:02.4593434+02:00',
          registered_associate_id: 5,
          source: 0,
          updated: '0001-01-01T00:00:00',
          userdef2_id: 0,
          userdef_id: 0,
        },
      };
    case 'contact.changed':
      return {
        Changes: [
          'contact_id',
          'associate_id',
          'department',
          'updated_associate_id',
          'updated',
          'updatedCount',
        ],
        Entity: 'contact',
      };
    case 'contact.softdeleted':
      return { Changes: ['deleted', 'DeletedDate'], Entity: 'contact' };
    case 'contact.deleted':
      return { Entity: 'contact', Values: { associate_id: 5, contact_id: primaryKey } };
    case 'activity.created':
      return {
        Changes: ACTIVITY_CREATED_CHANGES,
        Entity: 'activity',
        FieldValues: {
          activeDate: '2025-05-15T09:00:00',
          associate_id: 5,
          contact_id: 1234,
          do_by: '2025-05-15T09:00:00',
          document_id: 0,
          endDate: '0001-01-01T00:00:00',
          modified_appointment_fields: 0,
          mother_id: 0,
          person_id: 77,
          private: 0,
          project_id: 0,
          sale_id: 0,
          status: 1,
          task_idx: 4,
          type: 1,
          updated: '0001-01-01T00:00:00',
          userdef2_id: 0,
          userdef_id: 0,
        },
      };
    case 'activity.changed':
      return {
        Changes: ['appointment_id', 'status', 'done', 'updated', 'updated_associate_id', 'updatedCount'],
        Entity: 'activity',
      };
    case 'activity.deleted':
      return {
        Entity: 'activity',
        Values: { appointment_id: primaryKey, contact_id: 1234, person_id: 77, project_id: 0, sale_id: 0 },
      };
  }
}
