import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import { absent, DateStringSchema, EmptyChangesSchema, IntSchema } from './primitives.js';

export const ActivityFieldValuesSchema = z.looseObject({
  activeDate: DateStringSchema,
  associate_id: IntSchema,
  contact_id: IntSchema,
  do_by: DateStringSchema,
  document_id: IntSchema,
  endDate: DateStringSchema,
  modified_appointment_fields: IntSchema,
  mother_id: IntSchema,
  person_id: IntSchema,
  private: IntSchema,
  project_id: IntSchema,
  sale_id: IntSchema,
  status: IntSchema,
  task_idx: IntSchema,
  type: IntSchema,
  updated: DateStringSchema,
  userdef2_id: IntSchema,
  userdef_id: IntSchema,
});

export const ActivityDeletedValuesSchema = z.looseObject({
  appointment_id: IntSchema,
  contact_id: IntSchema,
  person_id: IntSchema,
  project_id: IntSchema,
  sale_id: IntSchema,
});

const ActivityBaseSchema = z.extend(EnvelopeSchema, { Entity: z.literal('activity') });

export const ActivityCreatedSchema = z.extend(ActivityBaseSchema, {
  Event: z.literal('activity.created'),
  // Optional: CRM versions older than FieldValues send created events without it.
  FieldValues: z.optional(ActivityFieldValuesSchema),
  Values: absent('must be absent on created events'),
});

export const ActivityChangedSchema = z.extend(ActivityBaseSchema, {
  Event: z.literal('activity.changed'),
  FieldValues: absent('must be absent on changed events'),
  Values: absent('must be absent on changed events'),
});

export const ActivityDeletedSchema = z.extend(ActivityBaseSchema, {
  Event: z.literal('activity.deleted'),
  Changes: EmptyChangesSchema,
  FieldValues: absent('must be absent on deleted events'),
  Values: ActivityDeletedValuesSchema,
});

export type ActivityFieldValues = z.infer<typeof ActivityFieldValuesSchema>;
export type ActivityCreated = z.infer<typeof ActivityCreatedSchema>;
export type ActivityChanged = z.infer<typeof ActivityChangedSchema>;
export type ActivityDeleted = z.infer<typeof ActivityDeletedSchema>;
export type ActivityEvent = ActivityCreated | ActivityChanged | ActivityDeleted;
