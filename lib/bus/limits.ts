/** EventBridge's limit on one PutEvents entry (and on one PutEvents call). */
export const MAX_ENTRY_BYTES = 256 * 1024;

/**
 * The most a delivery's Changes may take written as JSON (UTF-8 bytes of `JSON.stringify(Changes)`):
 * 120 KiB, some 6,000 field names of 17 characters. The ingest parks a longer one with the reason
 * `too-many-changes` (lib/ingest/store-fit.ts), so the workers never meet it; they rely on it for the
 * bus: a truncated entry keeps Changes and significantChanges (a part of Changes), and twice this plus
 * the envelope (a ContextIdentifier within DynamoDB's key limit) fits {@link MAX_ENTRY_BYTES}.
 */
export const MAX_CHANGES_BYTES = 120 * 1024;
