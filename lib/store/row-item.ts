import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { eventSeq, rowKey } from './keys.js';
import type { Row } from './types.js';

type Item = Record<string, unknown>;

/**
 * The merge bookkeeping of a row as stored: every order key the row refers to, once, sorted, and the
 * fields that refer to them by index. Keys share long prefixes (`2025-05-14T12:00:0…`), which deflate
 * folds away; the UUIDs are what is left.
 */
interface Bookkeeping {
  /** Distinct order keys, ascending. */
  s: string[];
  /** `recentSeqs`. */
  r: number[];
  /** `fieldValuesSeq`, `valuesSeq`. */
  f?: number;
  v?: number;
  /** `changedFieldSeqs`, in the order of `changedFields`. */
  c: number[];
}

const BOOKKEEPING_V1 = 1;

/**
 * A row as a DynamoDB item, with nothing stored twice: `context`, `entity` and `primaryKey` are in
 * `rowKey`, `lastSeq` is `lastTimestamp` and `lastEventId`, and the order keys of the merge
 * bookkeeping (`recentSeqs`, `changedFieldSeqs`, `fieldValuesSeq`, `valuesSeq`) go, deduplicated and
 * deflated, into one binary attribute `merge`. The data fields stay plain attributes.
 * {@link fromRowItem} gives back the same row.
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
  };
  const merge = Buffer.concat([
    Buffer.of(BOOKKEEPING_V1),
    deflateRawSync(JSON.stringify(bookkeeping), { level: 9 }),
  ]);
  return {
    ...Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined)),
    rowKey: rowKey(context, entity, primaryKey),
    version,
    merge,
  };
}

/** The row {@link toRowItem} stored (or an item written before it, which held every field as is). */
export function fromRowItem(item: Item): Row {
  const { rowKey: key, version: _version, merge, ...data } = item;
  if (merge === undefined) return data as unknown as Row; // written before the bookkeeping was packed
  const [entity, primaryKey, ...context] = String(key).split('#');
  const stored = merge as Uint8Array;
  if (stored[0] !== BOOKKEEPING_V1) throw new Error(`unknown row bookkeeping format ${String(stored[0])}`);
  const bookkeeping = JSON.parse(inflateRawSync(stored.subarray(1)).toString('utf8')) as Bookkeeping;
  const seq = (i: number) => bookkeeping.s[i]!;
  const row = data as unknown as Row;
  return {
    ...row,
    context: context.join('#'),
    entity: entity as Row['entity'],
    primaryKey: Number(primaryKey),
    lastSeq: eventSeq({ Timestamp: row.lastTimestamp, EventId: row.lastEventId }),
    recentSeqs: bookkeeping.r.map(seq),
    changedFieldSeqs: Object.fromEntries(
      row.changedFields.map((field, i) => [field, seq(bookkeeping.c[i]!)]),
    ),
    ...(bookkeeping.f !== undefined && { fieldValuesSeq: seq(bookkeeping.f) }),
    ...(bookkeeping.v !== undefined && { valuesSeq: seq(bookkeeping.v) }),
  };
}
