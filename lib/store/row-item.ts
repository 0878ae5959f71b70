import { deflateRawSync, inflateRawSync } from 'node:zlib';
import * as z from 'zod/mini';
import { fieldRecord } from '../field-record.js';
import { eventSeq } from '../model/order-key.js';
import type { Row } from '../model/types.js';
import { compressBody, decompressBody } from './body-codec.js';
import { InvalidItemError } from './errors.js';
import { RowEntitySchema, RowItemSchema } from './items.js';
import { parseRowKey, rowKey, rowSetKey } from './keys.js';
import { parseItem } from './parse-item.js';

type Item = Record<string, unknown>;

/**
 * The merge bookkeeping of a row as stored: every order key the row refers to, once, sorted, and the
 * fields that refer to them by index. Keys share long prefixes (`2025-05-14T12:00:0…`), which deflate
 * folds away; the UUIDs are what is left.
 */
const BookkeepingSchema = z.object({
  /** Distinct order keys, ascending. */
  s: z.array(z.string()),
  /** `recentSeqs`. */
  r: z.array(z.number()),
  /** `fieldValuesSeq`, `valuesSeq`. */
  f: z.optional(z.number()),
  v: z.optional(z.number()),
  /** `changedFieldSeqs`, in the order of `changedFields`. */
  c: z.array(z.number()),
  /** `contentHashes` of `r`, in the same order (`null` for an event without one). */
  h: z.optional(z.array(z.nullable(z.string()))),
});

type Bookkeeping = z.infer<typeof BookkeepingSchema>;

const BOOKKEEPING_V1 = 1;

/**
 * A row as a DynamoDB item, with nothing stored twice: `context`, `entity` and `primaryKey` are in
 * `rowKey`, `lastSeq` is `lastTimestamp` and `lastEventId`, and the order keys of the merge
 * bookkeeping (`recentSeqs`, `changedFieldSeqs`, `fieldValuesSeq`, `valuesSeq`, `contentHashes`) go,
 * deduplicated and deflated, into one binary attribute `merge`. FieldValues and Values are stored as
 * the JSON text delivered, deflated (binary `fieldValuesJson`, `valuesJson`), never as native
 * attributes: any valid JSON fits (a long's digits, 1e-200, any depth). The other data fields stay
 * plain attributes. `rowSet` and `rowPk` (the `byRowSet` index's keys) repeat the key for that index
 * only. {@link fromRowItem} gives back the same row.
 */
export function toRowItem(row: Row, version: number): Item {
  const {
    context,
    entity,
    primaryKey,
    lastSeq: _lastSeq,
    recentSeqs,
    changedFieldSeqs,
    fieldValuesSeq,
    valuesSeq,
    fieldValues,
    fieldValuesJson,
    values,
    valuesJson,
    contentHashes,
    ...data
  } = row;
  const referenced = [...recentSeqs, ...Object.values(changedFieldSeqs)];
  if (fieldValuesSeq !== undefined) referenced.push(fieldValuesSeq);
  if (valuesSeq !== undefined) referenced.push(valuesSeq);
  const seqs = [...new Set(referenced)].sort();
  const index = new Map(seqs.map((seq, i) => [seq, i]));
  const at = (seq: string) => index.get(seq)!;
  const bookkeeping: Bookkeeping = {
    s: seqs,
    r: recentSeqs.map(at),
    ...(fieldValuesSeq !== undefined && { f: at(fieldValuesSeq) }),
    ...(valuesSeq !== undefined && { v: at(valuesSeq) }),
    // changedFields is the sorted key list of changedFieldSeqs (see apply): one list serves both.
    c: row.changedFields.map((field) => at(changedFieldSeqs[field]!)),
    ...(contentHashes !== undefined && { h: recentSeqs.map((seq) => contentHashes[seq] ?? null) }),
  };
  const fieldValuesText = fieldValuesJson ?? (fieldValues && JSON.stringify(fieldValues));
  const valuesText = valuesJson ?? (values && JSON.stringify(values));
  const merge = Buffer.concat([
    Buffer.of(BOOKKEEPING_V1),
    deflateRawSync(JSON.stringify(bookkeeping), { level: 9 }),
  ]);
  return {
    ...Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined)),
    ...(fieldValuesText !== undefined && { fieldValuesJson: compressBody(fieldValuesText) }),
    ...(valuesText !== undefined && { valuesJson: compressBody(valuesText) }),
    rowKey: rowKey(context, entity, primaryKey),
    // The keys of the byRowSet index: the same on every write, so only the item's creation writes it.
    rowSet: rowSetKey(context, entity),
    rowPk: primaryKey,
    version,
    merge,
  };
}

/** The row {@link toRowItem} stored, parsed ({@link RowItemSchema}, then the packed bookkeeping). */
export function fromRowItem(stored: Item, table = 'rows'): Row {
  const key = String(stored.rowKey);
  const item = parseItem(RowItemSchema, stored, table, key);
  const { rowKey: _key, version: _version, merge, fieldValuesJson, valuesJson, ...data } = item;
  const parts = parseRowKey(key);
  if (parts === undefined) throw new InvalidItemError(table, key, ['rowKey']);
  if (merge[0] !== BOOKKEEPING_V1) throw new InvalidItemError(table, key, ['merge']);
  const bookkeeping = parseItem(
    BookkeepingSchema,
    JSON.parse(inflateRawSync(merge.subarray(1)).toString('utf8')),
    table,
    key,
  );
  const seq = (i: number) => bookkeeping.s[i]!;
  const hashes = bookkeeping.h;
  return {
    ...data,
    ...jsonPart('fieldValues', fieldValuesJson),
    ...jsonPart('values', valuesJson),
    context: parts.context,
    entity: parseItem(RowEntitySchema, parts.entity, table, key),
    primaryKey: parts.primaryKey,
    lastSeq: eventSeq({ Timestamp: data.lastTimestamp, EventId: data.lastEventId }),
    recentSeqs: bookkeeping.r.map(seq),
    changedFieldSeqs: fieldRecord(data.changedFields.map((field, i) => [field, seq(bookkeeping.c[i]!)])),
    ...(bookkeeping.f !== undefined && { fieldValuesSeq: seq(bookkeeping.f) }),
    ...(bookkeeping.v !== undefined && { valuesSeq: seq(bookkeeping.v) }),
    ...(hashes !== undefined && {
      contentHashes: Object.fromEntries(
        bookkeeping.r.flatMap((i, n) => (hashes[n] ? [[seq(i), hashes[n]]] : [])),
      ),
    }),
  };
}

/** A stored FieldValues/Values: the deflated JSON text of an object. */
function jsonPart(name: 'fieldValues' | 'values', stored: Uint8Array | undefined): Partial<Row> {
  if (stored === undefined) return {};
  const text = decompressBody(stored);
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return { [name]: value, [`${name}Json`]: text };
}
