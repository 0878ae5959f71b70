/**
 * subscriptions.yml: who receives which published events. Read by the CloudFormation generator
 * (infra/subscriptions.ts, at package time) and by the local bus (`npm start`), never by a Lambda.
 * See subscriptions.example.yml for the format.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import * as yaml from 'js-yaml';
import * as z from 'zod';
import { SubscriptionsError } from './errors.js';
import {
  compilePattern,
  type EventMatcher,
  InexactNumber,
  isExactDouble,
  PatternError,
} from './pattern/index.js';

/** EventBridge's retry policy defaults (and limits) for a rule target. */
export const DEFAULT_RETRY = { attempts: 185, maxAgeSeconds: 86_400 } as const;

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const LAMBDA_ARN =
  /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9_$-]{1,128})?$/;

const AuthSchema = z.strictObject({
  header: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name'),
  parameter: z
    .string()
    .regex(/^\/[A-Za-z0-9_.\-/]{1,1010}$/, 'must be an SSM parameter name starting with /'),
  env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name (A-Z, 0-9, _)'),
});

const TargetSchema = z
  .strictObject({
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    queue: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'must be 1-40 of a-z, 0-9, - and _')
      .optional(),
    lambda: z.string().regex(LAMBDA_ARN, 'must be a Lambda function ARN').optional(),
  })
  .refine((target) => Object.values(target).filter((v) => v !== undefined).length === 1, {
    error: 'must have exactly one of url, queue, lambda',
  });

const SubscriptionSchema = z.strictObject({
  name: z.string().regex(NAME, 'must be 1-32 of a-z, 0-9 and -, starting with a letter'),
  pattern: z.record(z.string(), z.unknown()),
  target: TargetSchema,
  auth: AuthSchema.optional(),
  retry: z
    .strictObject({
      attempts: z.number().int().min(0).max(185).default(DEFAULT_RETRY.attempts),
      maxAgeSeconds: z.number().int().min(60).max(86_400).default(DEFAULT_RETRY.maxAgeSeconds),
    })
    .default(DEFAULT_RETRY),
});

const FileSchema = z.array(SubscriptionSchema).nullable();

export type SubscriptionInput = z.infer<typeof SubscriptionSchema>;
export type Auth = z.infer<typeof AuthSchema>;
/** Where a subscription's events go: tagged by `kind`, so every switch over it is checked for completeness. */
export type Target =
  | { kind: 'url'; url: string }
  | { kind: 'queue'; queue: string }
  | { kind: 'lambda'; lambda: string };

/** One subscription, validated, with its pattern compiled. */
export interface Subscription {
  name: string;
  pattern: Record<string, unknown>;
  matches: EventMatcher;
  target: Target;
  auth?: Auth;
  retry: { attempts: number; maxAgeSeconds: number };
}

export interface LoadOptions {
  /** Repository root: where subscriptions.yml is looked for. */
  root: string;
  /** SUBSCRIPTIONS_FILE and friends; defaults to process.env. */
  env?: Record<string, string | undefined>;
  /** `local` also accepts http:// URLs on 127.0.0.1 and localhost. */
  mode: 'aws' | 'local';
}

/**
 * Loads and validates subscriptions.yml (or the file SUBSCRIPTIONS_FILE names, relative to `root`).
 * A missing default file or an empty one means no subscriptions; a missing SUBSCRIPTIONS_FILE is an
 * error. Anything wrong is a one-line {@link SubscriptionsError} naming the subscription and the place.
 */
export function loadSubscriptions(options: LoadOptions): Subscription[] {
  const named = (options.env ?? process.env).SUBSCRIPTIONS_FILE?.trim();
  const file = named
    ? isAbsolute(named)
      ? named
      : join(options.root, named)
    : join(options.root, 'subscriptions.yml');
  const label = named || 'subscriptions.yml';
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    if (!named && (cause as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SubscriptionsError(label, 'cannot be read (SUBSCRIPTIONS_FILE names a missing file?)', {
      cause,
    });
  }
  return parseSubscriptions(text, label, options.mode);
}

/** Validates the YAML text of a subscriptions file; `label` names it in errors. */
export function parseSubscriptions(text: string, label: string, mode: 'aws' | 'local'): Subscription[] {
  let data: unknown;
  try {
    data = yaml.load(text, { schema: SCHEMA });
  } catch (cause) {
    throw new SubscriptionsError(label, `not valid YAML: ${(cause as Error).message.split('\n')[0]}`, {
      cause,
    });
  }
  const parsed = FileSchema.safeParse(data ?? null);
  if (!parsed.success) throw new SubscriptionsError(label, describeIssue(parsed.error, data));
  const subscriptions = (parsed.data ?? []).map((input) => compile(input, label, mode));
  assertUnique(subscriptions, label);
  return subscriptions;
}

/**
 * YAML's own schema, except that an int or float no double holds exactly (`1E-325`, `9007199254740993`)
 * is kept as an {@link InexactNumber}, so that the pattern compiler refuses it instead of seeing the
 * rounded value (which would also reach CloudFormation rounded).
 */
const SCHEMA = yaml.DEFAULT_SCHEMA.extend({ implicit: (['int', 'float'] as const).map(keepingInexact) });

function keepingInexact(name: 'int' | 'float'): yaml.Type {
  // The schema's own type and its class: when osls loads this file through tsx, `yaml.Type` can be
  // another copy of the class than the one DEFAULT_SCHEMA checks against (a non-Type object, it says).
  const tag = `tag:yaml.org,2002:${name}`;
  const { implicit } = yaml.DEFAULT_SCHEMA as unknown as { implicit?: (yaml.Type & { tag: string })[] };
  const base = implicit?.find((type) => type.tag === tag);
  if (base === undefined) throw new Error(`js-yaml changed: DEFAULT_SCHEMA.implicit has no ${tag}`);
  const SchemaType = base.constructor as typeof yaml.Type;
  return new SchemaType(tag, {
    kind: 'scalar',
    resolve: (data: string) => base.resolve(data),
    construct: (data: string) => {
      const value = base.construct(data) as number;
      // .inf and .nan stay as they are (and are refused as not finite).
      return /\d/.test(data) && !isExact(data, value) ? new InexactNumber(data) : value;
    },
  });
}

/** Whether a YAML number (decimal, or an int in 0x, 0o or 0b) is exactly the double it reads as. */
function isExact(text: string, value: number): boolean {
  const [, sign = '', digits = ''] = /^([-+]?)(.*)$/.exec(text) ?? [];
  if (!/^0[box]/i.test(digits)) return isExactDouble(text);
  return Number.isFinite(value) && BigInt(value) === (sign === '-' ? -1n : 1n) * BigInt(digits);
}

/** The subscription's CloudFormation logical-id stem: `department-changes` → `DepartmentChanges`. */
export function logicalName(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

function compile(input: SubscriptionInput, label: string, mode: 'aws' | 'local'): Subscription {
  const fail = (message: string): never => {
    throw new SubscriptionsError(label, `subscription "${input.name}": ${message}`);
  };
  let matches: EventMatcher;
  try {
    matches = compilePattern(input.pattern);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    return fail(`pattern: ${error.message}`);
  }
  const { url, queue, lambda } = input.target;
  if (url !== undefined) {
    const { protocol, hostname } = new URL(url);
    const loopback = hostname === '127.0.0.1' || hostname === 'localhost';
    if (protocol === 'http:' && !(mode === 'local' && loopback)) {
      fail(`target.url must be https (http only for 127.0.0.1 or localhost with npm start): ${url}`);
    }
  } else if (input.auth !== undefined) {
    fail('auth applies to url targets only');
  }
  const target: Target =
    url !== undefined
      ? { kind: 'url', url }
      : queue !== undefined
        ? { kind: 'queue', queue }
        : { kind: 'lambda', lambda: lambda as string };
  return {
    name: input.name,
    pattern: input.pattern,
    matches,
    target,
    ...(input.auth !== undefined && { auth: input.auth }),
    retry: input.retry,
  };
}

function assertUnique(subscriptions: Subscription[], label: string): void {
  const seen = new Map<string, string>();
  for (const { name, target } of subscriptions) {
    const keys = [`subscription name "${name}"`, `logical id ${logicalName(name)}`];
    if (target.kind === 'queue') keys.push(`queue "${target.queue}"`);
    for (const key of keys) {
      const other = seen.get(key);
      if (other !== undefined) {
        throw new SubscriptionsError(label, `subscriptions "${other}" and "${name}" share the ${key}`);
      }
      seen.set(key, name);
    }
  }
}

function describeIssue(error: z.ZodError, data: unknown): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const [index, ...rest] = issue.path;
  if (typeof index !== 'number') return `expected a list of subscriptions: ${issue.message}`;
  const name =
    (Array.isArray(data) ? (data[index] as { name?: unknown } | undefined)?.name : undefined) ?? '';
  const who =
    typeof name === 'string' && name !== '' ? `subscription "${name}"` : `subscription #${index + 1}`;
  const where = rest.length > 0 ? `${rest.join('.')}: ` : '';
  return `${who}: ${where}${issue.message}`;
}
