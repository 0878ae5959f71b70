import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import { absent, DateStringSchema, EmptyChangesSchema, IntSchema, lazy } from './primitives.js';

export const ContactFieldValuesSchema = lazy(() =>
  z.looseObject({
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
  }),
);

export const ContactDeletedValuesSchema = lazy(() =>
  z.looseObject({
    associate_id: IntSchema,
    contact_id: IntSchema,
  }),
);

const ContactBaseSchema = lazy(() => z.extend(EnvelopeSchema, { Entity: z.literal('contact') }));

export const ContactCreatedSchema = lazy(() =>
  z.extend(ContactBaseSchema(), {
    Event: z.literal('contact.created'),
    FieldValues: ContactFieldValuesSchema(),
    Values: absent('must be absent on created events'),
  }),
);

export const ContactChangedSchema = lazy(() =>
  z.extend(ContactBaseSchema(), {
    Event: z.literal('contact.changed'),
    FieldValues: absent('must be absent on changed events'),
    Values: absent('must be absent on changed events'),
  }),
);

/**
 * The spec does not show this payload. The envelope rules hold; FieldValues and Values, when
 * present, are kept as delivered (objects, any keys) so that nothing the sender adds is lost.
 */
export const ContactSoftDeletedSchema = lazy(() =>
  z.extend(ContactBaseSchema(), {
    Event: z.literal('contact.softdeleted'),
    FieldValues: z.optional(z.record(z.string(), z.unknown())),
    Values: z.optional(z.record(z.string(), z.unknown())),
  }),
);

export const ContactDeletedSchema = lazy(() =>
  z.extend(ContactBaseSchema(), {
    Event: z.literal('contact.deleted'),
    Changes: EmptyChangesSchema,
    FieldValues: absent('must be absent on deleted events'),
    Values: ContactDeletedValuesSchema(),
  }),
);

export type ContactFieldValues = z.infer<ReturnType<typeof ContactFieldValuesSchema>>;
export type ContactCreated = z.infer<ReturnType<typeof ContactCreatedSchema>>;
export type ContactChanged = z.infer<ReturnType<typeof ContactChangedSchema>>;
export type ContactSoftDeleted = z.infer<ReturnType<typeof ContactSoftDeletedSchema>>;
export type ContactDeleted = z.infer<ReturnType<typeof ContactDeletedSchema>>;
export type ContactEvent = ContactCreated | ContactChanged | ContactSoftDeleted | ContactDeleted;
