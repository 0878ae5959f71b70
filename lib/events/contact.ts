import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import { AnyPayloadSchema, absent, DateStringSchema, EmptyChangesSchema, IntSchema } from './primitives.js';

export const ContactFieldValuesSchema = z.looseObject({
  activeInterests: IntSchema,
  associate_id: IntSchema,
  business_idx: IntSchema,
  category_idx: IntSchema,
  country_id: IntSchema,
  deleted: IntSchema,
  DeletedDate: DateStringSchema,
  registered: DateStringSchema,
  registered_associate_id: IntSchema,
  source: IntSchema,
  updated: DateStringSchema,
  userdef2_id: IntSchema,
  userdef_id: IntSchema,
});

export const ContactDeletedValuesSchema = z.looseObject({
  associate_id: IntSchema,
  contact_id: IntSchema,
});

const ContactBaseSchema = z.extend(EnvelopeSchema, { Entity: z.literal('contact') });

export const ContactCreatedSchema = z.extend(ContactBaseSchema, {
  Event: z.literal('contact.created'),
  // Optional: CRM versions older than FieldValues send created events without it.
  FieldValues: z.optional(ContactFieldValuesSchema),
  Values: absent('must be absent on created events'),
});

export const ContactChangedSchema = z.extend(ContactBaseSchema, {
  Event: z.literal('contact.changed'),
  FieldValues: absent('must be absent on changed events'),
  Values: absent('must be absent on changed events'),
});

/**
 * The spec does not show this payload. The envelope rules hold; FieldValues and Values, when
 * present, are kept as delivered (objects, any keys) so that nothing the sender adds is lost.
 */
export const ContactSoftDeletedSchema = z.extend(ContactBaseSchema, {
  Event: z.literal('contact.softdeleted'),
  FieldValues: AnyPayloadSchema,
  Values: AnyPayloadSchema,
});

export const ContactDeletedSchema = z.extend(ContactBaseSchema, {
  Event: z.literal('contact.deleted'),
  Changes: EmptyChangesSchema,
  FieldValues: absent('must be absent on deleted events'),
  Values: ContactDeletedValuesSchema,
});

export type ContactFieldValues = z.infer<typeof ContactFieldValuesSchema>;
export type ContactCreated = z.infer<typeof ContactCreatedSchema>;
export type ContactChanged = z.infer<typeof ContactChangedSchema>;
export type ContactSoftDeleted = z.infer<typeof ContactSoftDeletedSchema>;
export type ContactDeleted = z.infer<typeof ContactDeletedSchema>;
export type ContactEvent = ContactCreated | ContactChanged | ContactSoftDeleted | ContactDeleted;
