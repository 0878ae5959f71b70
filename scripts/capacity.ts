/**
 * `npm run capacity -- --tenants N --events-per-second R --peak P --region REGION [--function-url]`:
 * each stage's ceiling for that load from AWS's default quotas (scripts/capacity/quotas.ts) and this
 * stage's settings (serverless.yml, infra/resources.yml), and the first bottleneck with what moves it.
 * docs/capacity.md shows its output for the 10,000-tenant case.
 */
import { pathToFileURL } from 'node:url';
import { parseCommandLine as parseArgv, UsageError, usageLines } from '../tools/command-line.js';
import { type Capacity, capacity, type Load } from './capacity/model.js';
import { QUOTAS, REGIONS, type Region } from './capacity/quotas.js';
import { defaultParams, loadStageShape } from './capacity/shape.js';

const USAGE =
  'Usage: npm run capacity -- --tenants N --events-per-second R --peak P --region REGION [--peak-share S] [--function-url] [--no-subscriptions] [--param name=value ...]';

/** What `--help` prints. */
const HELP = `${USAGE}

Each stage's ceiling for that load from AWS's default quotas and this stage's settings (serverless.yml,
infra/resources.yml), and the first bottleneck with what moves it (docs/capacity.md).

Options:
  --tenants N              how many tenants (CRM contexts)
  --events-per-second R    each tenant's average events per second
  --peak P                 a tenant's peak over its average (1 or more)
  --peak-share S           the share of tenants at their peak at once (over 0, at most 1; default 1)
  --region REGION          ${REGIONS.join(', ')}
  --function-url           a Lambda function URL instead of the HTTP API in front of the ingest
  --no-subscriptions       no subscriptions: nothing published to EventBridge
  --param name=value       a numeric param of serverless.yml over its default, as a deploy's --param
  --help, -h               this text`;

const OPTIONS = {
  tenants: { type: 'string' },
  'events-per-second': { type: 'string' },
  peak: { type: 'string' },
  'peak-share': { type: 'string', default: '1' },
  region: { type: 'string' },
  'function-url': { type: 'boolean', default: false },
  'no-subscriptions': { type: 'boolean', default: false },
  param: { type: 'string', multiple: true, default: [] as string[] },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** A mistake on the command line: one line, naming the option and what it accepts. */
export class CapacityUsageError extends UsageError {
  constructor(message: string) {
    super(message);
    this.name = 'CapacityUsageError';
  }
}

export interface CommandLine {
  load: Load;
  /** `--param name=value`: a numeric param of serverless.yml over its default, as a deploy's --param. */
  params: Record<string, number>;
}

/**
 * The command line ('help' for --help), or a CapacityUsageError naming the first wrong option and what it
 * accepts.
 */
export function parseCommandLine(argv: string[], numericParams: readonly string[]): CommandLine | 'help' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    values = parseArgv({ args: argv, options: OPTIONS }).values;
  } catch (error) {
    if (error instanceof UsageError) throw new CapacityUsageError(error.message);
    throw error;
  }
  if (values.help === true) return 'help';
  const number = (name: string, accepted: string, valid: (n: number) => boolean): number => {
    const raw = values[name];
    if (raw === undefined) throw new CapacityUsageError(`--${name} is missing: it takes ${accepted}`);
    const value = Number(raw);
    if (typeof raw !== 'string' || raw.trim() === '' || !valid(value))
      throw new CapacityUsageError(`--${name} ${JSON.stringify(raw)} is not accepted: it takes ${accepted}`);
    return value;
  };
  const tenants = number('tenants', 'a positive whole number', (n) => Number.isSafeInteger(n) && n > 0);
  const eventsPerSecond = number(
    'events-per-second',
    'a positive number (per tenant)',
    (n) => n > 0 && Number.isFinite(n),
  );
  const peak = number(
    'peak',
    'a number of 1 or more (the peak over the average)',
    (n) => n >= 1 && Number.isFinite(n),
  );
  const peakShare = number(
    'peak-share',
    'a number over 0 and at most 1 (the share of tenants at their peak at once)',
    (n) => n > 0 && n <= 1,
  );
  const region = values.region;
  if (typeof region !== 'string' || !(REGIONS as readonly string[]).includes(region))
    throw new CapacityUsageError(
      `--region ${region === undefined ? 'is missing' : `${JSON.stringify(region)} is not one the quota file knows`}: it takes ${REGIONS.join(', ')}`,
    );
  const params: Record<string, number> = {};
  for (const pair of values.param as string[]) {
    const [name = '', raw = ''] = pair.split('=', 2);
    if (!numericParams.includes(name))
      throw new CapacityUsageError(
        `--param ${JSON.stringify(pair)} is not accepted: it takes name=value with a numeric param of serverless.yml (${numericParams.join(', ')})`,
      );
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isSafeInteger(value) || value <= 0)
      throw new CapacityUsageError(
        `--param ${JSON.stringify(pair)} is not accepted: ${name} takes a positive whole number`,
      );
    params[name] = value;
  }
  return {
    load: {
      tenants,
      eventsPerSecond,
      peak,
      peakShare,
      region: region as Region,
      functionUrl: values['function-url'] === true,
      publishes: values['no-subscriptions'] !== true,
    },
    params,
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** The report: the load, each stage's ceiling and use, the first bottleneck and what moves it. */
export function report(load: Load, result: Capacity): string {
  const edge = `${load.functionUrl ? 'function URL' : 'HTTP API'}, ${load.publishes ? 'every event published' : 'no subscriptions'}`;
  const lines = [
    `${fmt(load.tenants)} tenants × ${load.eventsPerSecond} events/s, peaks ${load.peak}× (${Math.round(load.peakShare * 100)} % of tenants at once), ${load.region}, ${edge}`,
    `sustained ${fmt(result.sustained)} events/s, peak ${fmt(result.peak)} events/s, one tenant's peak ${fmt(result.tenantPeak)} events/s`,
    '',
    '| Stage | Must take | Load (events/s) | Ceiling (events/s) | Use | What moves it |',
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...result.stages.map(
      (s) =>
        `| ${s.name} | ${s.against} | ${fmt(s.load)} | ${fmt(s.ceiling)} | ${Math.round((100 * s.load) / s.ceiling)} % | ${s.moves} |`,
    ),
    '',
  ];
  const { first } = result;
  const use = Math.round((100 * first.load) / first.ceiling);
  lines.push(
    first.load > first.ceiling
      ? `First bottleneck: ${first.name}, at ${use} % (${fmt(first.load)} against ${fmt(first.ceiling)} events/s). Moves it: ${first.moves}.`
      : `No bottleneck: the nearest limit is ${first.name}, at ${use} %.`,
    `This stage serves ${fmt(result.maxTenants)} tenants at ${load.eventsPerSecond} events/s with ${load.peak}× peaks (stage-wide limits).`,
    ...(result.maxTenants < load.tenants
      ? [
          `Cells: ${fmt(Math.ceil(load.tenants / Math.max(result.maxTenants, 1)))} stages of this shape, each in its own account (tenants split between them), at the default quotas.`,
        ]
      : []),
    `One row (a message group, one message at a time): ${fmt(result.limits.rowEventsPerSecond)} events/s; a tenant's burst spread over many rows is not bound by it.`,
    `SQS in-flight: ${fmt(result.limits.failingToFillInFlight)} failing events/s per queue fill the ${fmt(QUOTAS.sqsFifoInFlight.values[load.region])} in-flight messages.`,
    `Reconciliation, every tenant at once: ${fmt(result.limits.reconcileCallsPerSecond)} CRM API calls/s, ${fmt(result.limits.reconcileInFlight)} in flight.`,
    ...result.warnings.map((w) => `Warning: ${w}.`),
  );
  return lines.join('\n');
}

/** Runs the command: the report on success, else throws a CapacityUsageError. */
export async function main(argv: string[]): Promise<string> {
  const numeric = Object.entries(defaultParams()).filter(([, value]) => typeof value === 'number');
  const commandLine = parseCommandLine(
    argv,
    numeric.map(([name]) => name),
  );
  if (commandLine === 'help') return HELP;
  const { load, params } = commandLine;
  const result = capacity(await loadStageShape(params), load);
  const changed = Object.entries(params).map(([name, value]) => `${name}=${value}`);
  return `${changed.length > 0 ? `serverless.yml's default params with ${changed.join(', ')}\n` : ''}${report(load, result)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  main(process.argv.slice(2)).then(
    (text) => console.log(text),
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(usageLines(error, 'capacity', OPTIONS));
        process.exitCode = 2;
        return;
      }
      console.error(error);
      process.exitCode = 1;
    },
  );
}
