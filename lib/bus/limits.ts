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

/** "PutEvents will only process nested JSON up to 1100 levels deep" (PutEvents API reference). */
export const MAX_DETAIL_DEPTH = 1100;

/**
 * How many levels a JSON text nests (each object or array is one), from its brackets outside strings:
 * one linear pass, no parse, so a text nested far deeper than any stack holds is measured too.
 *
 * @example nestingDepth('{"a":[1,"]"]}') // 2
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') deepest = Math.max(deepest, ++depth);
    else if (char === '}' || char === ']') depth--;
  }
  return deepest;
}
