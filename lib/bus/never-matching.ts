/**
 * Subscriptions that can never match: a pattern is valid EventBridge whatever field or name it names,
 * so `detail-typ`, `detail: {significantChange: …}` or `detail-type: [contac.changed]` would run as a
 * subscription that stays silent. The receiver knows the shape of what it publishes (lib/bus/detail-schema.ts,
 * and its own lifecycle events, lib/reconcile/records/lifecycle.ts) and the names of its events (lib/events), so
 * it can say so, with the nearest known name.
 */
import { closest, distance } from 'fastest-levenshtein';
import type * as z from 'zod/mini';
import { EnvelopeSchema } from '../events/envelope.js';
import { FIXED_EVENT_NAMES, familyOf } from '../events/registry.js';
import {
  LIFECYCLE_TYPES,
  type LifecycleDetails,
  type LifecycleType,
} from '../reconcile/records/lifecycle.js';
import { TENANT_LIFECYCLE_FIELDS, TENANT_LIFECYCLE_TYPES } from '../tenants/lifecycle.js';
import { AddedDetailSchema } from './detail-schema.js';
import { SOURCE } from './entry.js';
import type { Subscription } from './subscriptions.js';

/** A published object's fields: a nested shape, or `true` for a value the warnings do not look into. */
interface Shape {
  readonly fields: Readonly<Record<string, Shape | true>>;
  /** Open: the detail also carries the delivery's custom properties, so an unknown name may exist. */
  readonly open?: boolean;
}

const leaf = (...names: string[]): Record<string, true> =>
  Object.fromEntries(names.map((name) => [name, true] as const));

type LifecycleField = { [T in LifecycleType]: keyof LifecycleDetails[T] }[LifecycleType];
/** Every field of a lifecycle event's detail; the check below fails to compile when one is missing. */
const LIFECYCLE_FIELDS = [
  'context',
  'webhookId',
  'webhookName',
  'openedAt',
  'closedAt',
  'from',
  'to',
  'reason',
  'entities',
  'scopeFrom',
  'notReconciled',
  'rowsListed',
  'rowsChanged',
  'rowsDeleted',
  'apiCalls',
  'durationMs',
  'error',
  'entity',
  'primaryKey',
  'erasedAt',
  'rows',
] as const satisfies readonly LifecycleField[];
const everyLifecycleField: Exclude<LifecycleField, (typeof LIFECYCLE_FIELDS)[number]> extends never
  ? true
  : never = true;
void everyLifecycleField;

/** Every `detail-type` the receiver publishes by a fixed name: the catalogue's events and its lifecycle events. */
const OWN_EVENTS: readonly string[] = [...LIFECYCLE_TYPES, ...TENANT_LIFECYCLE_TYPES];
const PUBLISHED_NAMES: readonly string[] = [...FIXED_EVENT_NAMES, ...OWN_EVENTS];
const isLifecycleType = (name: string) => OWN_EVENTS.includes(name);

/**
 * The fields of an object schema (an optional one's too), each nested object's own; any other
 * value (a record: `fieldValues` holds the delivery's fields) is not looked into.
 */
function shapeOf(schema: z.core.$ZodType): Shape | true {
  const { def } = schema._zod;
  if (def.type === 'optional') return shapeOf((def as z.core.$ZodOptionalDef).innerType);
  if (def.type !== 'object') return true;
  const fields = Object.entries((def as z.core.$ZodObjectDef).shape);
  return { fields: Object.fromEntries(fields.map(([name, field]) => [name, shapeOf(field)])) };
}

/** The fields the receiver adds to a delivery's in the detail. */
const ADDED = shapeOf(AddedDetailSchema) as Shape;

/** What a bus entry looks like to a pattern: EventBridge's envelope around buildEntry's detail. */
const EVENT: Shape = {
  fields: {
    ...leaf('version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'resources'),
    detail: {
      open: true,
      fields: {
        ...leaf(...Object.keys(EnvelopeSchema.shape), 'Entity', 'FieldValues', 'Values'),
        ...leaf(...LIFECYCLE_FIELDS, ...TENANT_LIFECYCLE_FIELDS),
        ...ADDED.fields,
      },
    },
  },
};

/** An unknown name this close to a known one, in an open object, is taken for a typo of it. */
const TYPO_DISTANCE = 2;

/**
 * One line per way a subscription can never match: a field no published event has, a `detail-type`
 * the receiver never publishes, a `source` other than its own; each names the nearest known one.
 * A detail field is reported only when it is close to a known one, since custom properties reach the
 * detail too. For `npm start` and `npm run package` to print as warnings: the subscription stays.
 *
 * @example neverMatching(subscriptions) // ['subscription "x" can never match: detail-typ is no field of a published event (did you mean detail-type?)']
 */
export function neverMatching(subscriptions: readonly Subscription[]): string[] {
  return subscriptions.flatMap(({ name, pattern }) =>
    [...new Set(reasons(pattern, EVENT, ''))].map((why) => `subscription "${name}" can never match: ${why}`),
  );
}

function reasons(pattern: Record<string, unknown>, shape: Shape, path: string): string[] {
  return Object.entries(pattern).flatMap(([key, value]): string[] => {
    if (key === '$or' && Array.isArray(value))
      return value.filter(isObject).flatMap((alternative) => reasons(alternative, shape, path));
    const known = shape.fields[key];
    if (known === undefined) return unknownField(`${path}${key}`, key, value, shape);
    if (known !== true) return isObject(value) ? reasons(value, known, `${path}${key}.`) : [];
    const strings = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
    if (path === '' && key === 'detail-type')
      return strings
        .filter((event) => familyOf(event) === undefined && !isLifecycleType(event))
        .map(
          (event) =>
            `detail-type ${event} is no event the receiver publishes (did you mean ${closest(event, PUBLISHED_NAMES)}?)`,
        );
    if (path === '' && key === 'source')
      return strings
        .filter((source) => source !== SOURCE)
        .map((source) => `source is always ${SOURCE}, not ${source}`);
    return [];
  });
}

function unknownField(at: string, key: string, value: unknown, shape: Shape): string[] {
  // `exists: false` matches an event without the field: always, for a field that is never there.
  if (Array.isArray(value) && value.some((v) => isObject(v) && v.exists === false)) return [];
  const names = Object.keys(shape.fields);
  if (shape.open && distance(key, closest(key, names)) > TYPO_DISTANCE) return [];
  return [`${at} is no field of a published event${nearest(key, names)}`];
}

const nearest = (name: string, names: readonly string[]) => ` (did you mean ${closest(name, names)}?)`;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
