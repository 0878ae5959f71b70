import { randomUUID } from 'node:crypto';
import { dynamicEvent, effectOfVerb, FIXED_CATALOGUE, ROW_ENTITIES } from '../lib/events/index.js';
import { buildSampleBody, dotNetTimestamp } from './samples.js';

/** One delivery of a simulated stream: the exact body bytes, its EventId and the row it concerns. */
export interface StreamDelivery {
  eventId: string;
  /** Position of the event in the in-order stream (duplicates share it). */
  index: number;
  duplicate: boolean;
  rowKey: string;
  body: string;
}

export interface StreamOptions {
  events: number;
  rows: number;
  context: string;
  /** Percentage (0..100) of events delivered a second time, same EventId and bytes. */
  duplicates?: number;
  /** Deliver in a random order instead of timestamp order (the Timestamps still define the order). */
  shuffle?: boolean;
  seed?: number;
  /** Timestamp of the first event; later events follow a few milliseconds apart. */
  start?: Date;
  /** `spec` (default): contacts and activities; `all`: every entity of the catalogue, lists and custom tables too. */
  families?: 'spec' | 'all';
}

export interface Stream {
  /** Every event once, in timestamp order: what the rows must converge to. */
  inOrder: StreamDelivery[];
  /** What the sender delivers, duplicates included, in delivery order. */
  deliveries: StreamDelivery[];
  rows: Array<{ key: string; entity: string; primaryKey: number }>;
}

const CONTACT_FIELDS = [
  'name',
  'department',
  'number1',
  'orgNr',
  'associate_id',
  'business_idx',
  'category_idx',
];
const ACTIVITY_FIELDS = ['status', 'done', 'do_by', 'endDate', 'type', 'project_id', 'sale_id', 'text_id'];

/** The entities of `families: 'all'`, in turn: every fixed one of the catalogue, a list and a custom table. */
const ALL_ENTITIES = [...ROW_ENTITIES, ...Object.keys(FIXED_CATALOGUE), 'list.category', 'y_equipment'];

/** The verbs an entity is documented with (lists and custom tables by their grammar). */
export function verbsOf(entity: string): readonly string[] {
  if (entity === 'contact') return ['created', 'changed', 'softdeleted', 'deleted'];
  if (entity === 'activity') return ['created', 'changed', 'deleted'];
  if (Object.hasOwn(FIXED_CATALOGUE, entity)) return FIXED_CATALOGUE[entity as keyof typeof FIXED_CATALOGUE];
  return ['created', 'changed', 'softdeleted', 'deleted'].filter(
    (verb) => dynamicEvent(`${entity}.${verb}`) !== undefined,
  );
}

/**
 * A row's lifecycle for `families: 'all'`: created first (when the entity has it), then changes and
 * the entity's actions, sometimes a soft delete, sometimes a final delete.
 */
function planOf(entity: string, count: number, random: () => number): string[] {
  const verbs = verbsOf(entity);
  const actions = verbs.filter((verb) => effectOfVerb(verb) === 'action');
  const plan: string[] = [];
  for (let n = 0; n < count; n++) {
    if (n === 0 && verbs.includes('created')) plan.push('created');
    else if (verbs.includes('changed') && (actions.length === 0 || random() < 0.6)) plan.push('changed');
    else plan.push(actions[Math.floor(random() * actions.length)]!);
  }
  if (count >= 3 && verbs.includes('deleted') && random() < 0.15) plan[count - 1] = 'deleted';
  if (count >= 4 && verbs.includes('softdeleted') && random() < 0.2)
    plan[1 + Math.floor(random() * (count - 3))] = 'softdeleted';
  return plan;
}

/**
 * A realistic mixed stream over `rows` rows (contacts and activities alternately, or with
 * `families: 'all'` every entity of the catalogue in turn), `events` events in all: each row starts
 * with created, then changes (and actions), sometimes a soft delete (and a restoring change), and
 * sometimes ends deleted. Rows interleave at random; timestamps rise strictly along the stream.
 */
export function buildStream(options: StreamOptions): Stream {
  const random = mulberry32(options.seed ?? 1);
  const rowCount = Math.max(1, Math.min(options.rows, options.events));
  const start = options.start ?? new Date(Date.now() - 60_000);
  const all = options.families === 'all';
  const rows = Array.from({ length: rowCount }, (_, i) => {
    const entity = all ? ALL_ENTITIES[i % ALL_ENTITIES.length]! : i % 2 === 0 ? 'contact' : 'activity';
    const primaryKey = 1000 + i;
    return { key: `${options.context}/${entity}/${primaryKey}`, entity, primaryKey };
  });

  // Each row's lifecycle, as event names.
  const plans = rows.map((_, i) => {
    const count = Math.floor(options.events / rowCount) + (i < options.events % rowCount ? 1 : 0);
    if (all) return planOf(rows[i]!.entity, count, random);
    const plan: string[] = ['created'];
    for (let n = 1; n < count; n++) plan.push('changed');
    if (count >= 3 && random() < 0.15) plan[count - 1] = 'deleted';
    if (count >= 4 && rows[i]!.entity === 'contact' && random() < 0.2)
      plan[1 + Math.floor(random() * (count - 3))] = 'softdeleted';
    return plan;
  });

  // Interleave the rows at random, keeping each row's own order.
  const remaining = plans.map((plan) => plan.length);
  const cursor = plans.map(() => 0);
  const open = rows.map((_, i) => i).filter((i) => remaining[i]! > 0);
  const inOrder: StreamDelivery[] = [];
  let clock = start.getTime();
  while (open.length > 0) {
    const pick = Math.floor(random() * open.length);
    const rowIndex = open[pick]!;
    const row = rows[rowIndex]!;
    const kind = plans[rowIndex]![cursor[rowIndex]!]!;
    cursor[rowIndex]!++;
    if (--remaining[rowIndex]! === 0) open.splice(pick, 1);
    clock += 1 + Math.floor(random() * 3);
    const eventId = randomUUID();
    const body = buildSampleBody(`${row.entity}.${kind}`, {
      primaryKey: row.primaryKey,
      context: options.context,
      eventId,
      timestamp: dotNetTimestamp(new Date(clock), Math.floor(random() * 10_000)),
      changedByAssociateId: 1 + Math.floor(random() * 20),
    });
    if (kind === 'changed' && (row.entity === 'contact' || row.entity === 'activity')) {
      const fields = row.entity === 'contact' ? CONTACT_FIELDS : ACTIVITY_FIELDS;
      body.Changes = fields.filter(() => random() < 0.4).concat(['updated', 'updatedCount']);
    }
    inOrder.push({
      eventId,
      index: inOrder.length,
      duplicate: false,
      rowKey: row.key,
      body: JSON.stringify(body),
    });
  }

  const deliveries = options.shuffle ? shuffle([...inOrder], random) : [...inOrder];
  const duplicateShare = (options.duplicates ?? 0) / 100;
  if (duplicateShare > 0) {
    for (const original of inOrder) {
      if (random() >= duplicateShare) continue;
      // The sender repeats an event later on: anywhere after the first delivery.
      const first = deliveries.indexOf(original);
      const at = first + 1 + Math.floor(random() * (deliveries.length - first));
      deliveries.splice(at, 0, { ...original, duplicate: true });
    }
  }
  return { inOrder, deliveries, rows };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** A small seeded PRNG, so a run can be repeated with --seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
