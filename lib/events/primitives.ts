import * as z from 'zod/mini';

/** A string matching `regex`; `message` is what a refusal says (never the value). */
const pattern = (regex: RegExp, message: string) => z.string().check(z.regex(regex, message));

/**
 * Envelope `Timestamp`: ISO 8601 UTC with fractional seconds (1 to 7 digits, as .NET writes them)
 * and a trailing `Z`. The string is kept exactly as sent; see `normaliseTimestamp` in timestamp.ts for ordering.
 */
export const UtcTimestampSchema = pattern(
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{1,7}Z$/,
  'must be an ISO 8601 UTC timestamp with fractional seconds and a trailing Z',
);

const DATE_TIME = String.raw`\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,7})?`;
const OFFSET = String.raw`(Z|[+-]([01]\d|2[0-3]):[0-5]\d)`;

/** A date inside FieldValues: with or without an offset; `0001-01-01T00:00:00` means "never". Kept verbatim. */
export const DateStringSchema = pattern(
  new RegExp(`^${DATE_TIME}${OFFSET}?$`),
  'must be an ISO 8601 timestamp',
);

/** A date that the spec writes with an offset (webhook `registered`). */
export const DateWithOffsetSchema = pattern(
  new RegExp(`^${DATE_TIME}${OFFSET}$`),
  'must be an ISO 8601 timestamp with an offset',
);

/** A date that the spec writes without an offset (webhook `updated`). */
export const DateWithoutOffsetSchema = pattern(
  new RegExp(`^${DATE_TIME}$`),
  'must be an ISO 8601 timestamp without an offset',
);

/** A ContextIdentifier's characters: letters, digits, `_` and `-`, 1 to 100 (a key, a URL path segment). */
export const CONTEXT_CHARS = '[A-Za-z0-9_-]{1,100}';
/** A whole ContextIdentifier the receiver calls the CRM for, stores under and reconciles. */
export const CONTEXT_PATTERN = new RegExp(`^${CONTEXT_CHARS}$`);
export const ContextIdentifierSchema = z.string().check(z.regex(CONTEXT_PATTERN));

/** An integer as JSON carries it (no strings, no fractions). */
export const IntSchema = z.int();

/** Field names: an array of strings. */
export const ChangesSchema = z.array(z.string());

/** Exactly `[]`: state events and deleted events. */
export const EmptyChangesSchema = z
  .array(z.string())
  .check(z.length(0, 'must be an empty array for this event'));

/** FieldValues or Values whose keys the spec does not show: any object, kept as delivered, or absent. */
export const AnyPayloadSchema = z.optional(z.record(z.string(), z.unknown()));

/** A key that must not be present at all (`{ Entity: undefined }` cannot come out of JSON). */
export const absent = (message: string) => z.optional(z.never(message));
