import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capacity, type Load } from '../../scripts/capacity/model.js';
import { QUOTAS, REGIONS } from '../../scripts/capacity/quotas.js';
import { defaultParams, loadStageShape, type StageShape } from '../../scripts/capacity/shape.js';
import { CapacityUsageError, type CommandLine, parseCommandLine } from '../../scripts/capacity.js';
import { runCli } from '../support/cli.js';

describe('the quota data file (scripts/capacity/quotas.ts)', () => {
  it('gives every quota a value in every supported region, the AWS page it was read on and the date', () => {
    for (const [key, entry] of Object.entries(QUOTAS)) {
      expect(Object.keys(entry.values).sort(), key).toEqual([...REGIONS].sort());
      for (const region of REGIONS) {
        expect(Number.isFinite(entry.values[region]) && entry.values[region] > 0, `${key} ${region}`).toBe(
          true,
        );
      }
      expect(entry.source, key).toMatch(/^https:\/\/(docs\.aws\.amazon\.com|repost\.aws)\/\S+$/);
      expect(entry.read, key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(Number.isNaN(Date.parse(entry.read)), key).toBe(false);
      expect(entry.name.length, key).toBeGreaterThan(10);
    }
  });

  it('holds exactly the quotas the model reads: none missing (the compiler checks), none unused', () => {
    const model = readFileSync(new URL('../../scripts/capacity/model.ts', import.meta.url), 'utf8');
    const used = new Set([...model.matchAll(/\bq\('(\w+)'\)/g)].map((match) => match[1]));
    expect([...used].sort()).toEqual(Object.keys(QUOTAS).sort());
  });
});

/** A stage small enough to check by hand: 20 deliveries/s per ingest execution, 10 events/s per worker one. */
const shape: StageShape = {
  ingestReservedConcurrency: 10,
  ingestThrottleRate: 500,
  ingestThrottleBurst: 500,
  ingestMs: 50,
  workerMsPerEvent: 100,
  workers: [
    {
      function: 'a',
      queue: 'contact',
      batchSize: 10,
      maximumConcurrency: 5,
      highThroughput: true,
      visibilityTimeoutSeconds: 60,
    },
    {
      function: 'b',
      queue: 'activity',
      batchSize: 10,
      maximumConcurrency: 3,
      highThroughput: true,
      visibilityTimeoutSeconds: 60,
    },
  ],
  unitsPerWrite: 2,
  tenantItemWritesPerEvent: 1,
  senderWindowMs: 5000,
  reconcile: { maxInFlight: 4, maxCallsPerSecond: 10 },
};
// 50 tenants × 2 events/s = 100 sustained, 300 at the 3× peak, 6 for one tenant at its peak.
const load: Load = {
  tenants: 50,
  eventsPerSecond: 2,
  peak: 3,
  peakShare: 1,
  region: 'eu-central-1',
  functionUrl: false,
  publishes: true,
};

describe('the capacity model', () => {
  it('computes each ceiling from the quotas and the settings, and finds the first bottleneck', () => {
    const result = capacity(shape, load);
    expect([result.sustained, result.peak, result.tenantPeak]).toEqual([100, 300, 6]);
    const byName = Object.fromEntries(result.stages.map((s) => [s.name.split(' (')[0], [s.load, s.ceiling]]));
    expect(byName).toEqual({
      'API Gateway account quota': [300, 10_000],
      'route throttle': [300, 500],
      'ingest reserved concurrency': [300, 10 * 20],
      // 100/s of new environments (1,000 per 10 s) for the sender's 5 s, each 20/s, on top of the sustained 100.
      'ingest scale-out: Lambda scaling rate': [300, 100 + 100 * 5 * 20],
      'ingest scale-out: SSM GetParameter': [300, 100 + 40 * 5 * 20],
      'SQS FIFO SendMessage per queue': [300, 19_000],
      "row workers' maximumConcurrency together": [100, (5 + 3) * 10],
      'Lambda account concurrency': [100, (1000 - 10) * 10],
      'EventBridge PutEvents': [100, 2_400],
      'EventBridge invocations': [100, 4_500],
      'DynamoDB per table': [100, 40_000 / 2],
      "one tenant's marker item": [6, 1_000 / 2],
    });
    expect(result.first.name).toMatch(/^ingest reserved concurrency/);
    expect(result.first.moves).toMatch(
      /^ingestReservedConcurrency \(50 ms per delivery: 20\/s per execution\), up to the account's concurrency less 100$/,
    );
    // 60,000 deliveries/s at the peak need 3,000 executions of 50 ms: more than the 900 one account reserves.
    const big = capacity(shape, { ...load, tenants: 10_000 }).first;
    expect(big.moves).toMatch(
      /; this load needs 3,000 executions, more than the 900 the account's default allows: a quota raise, or cells of accounts$/,
    );
    // The ingest's 200/s over 300 per 50 tenants: 33 tenants.
    expect(result.maxTenants).toBe(33);
    expect(result.limits).toEqual({
      failingToFillInFlight: 120_000 / 60,
      reconcileCallsPerSecond: 500,
      reconcileInFlight: 200,
      rowEventsPerSecond: 10,
    });
    expect(result.warnings).toEqual([]);
  });

  it('through the function URL, API Gateway is out of the path; the region changes the figures', () => {
    const result = capacity(shape, { ...load, functionUrl: true, region: 'us-east-1' });
    expect(result.stages.map((s) => s.name).filter((n) => /API Gateway|route throttle/.test(n))).toEqual([]);
    const ceiling = (prefix: string) => result.stages.find((s) => s.name.startsWith(prefix))?.ceiling;
    expect([
      ceiling('SQS FIFO'),
      ceiling('EventBridge PutEvents'),
      ceiling('EventBridge invocations'),
    ]).toEqual([70_000, 10_000, 18_750]);
  });

  it('with a share of the tenants at their peak at once, the edge takes the sustained rate plus their bursts', () => {
    // 100 sustained, and a tenth of the tenants at 3× (2 more each): 100 × (1 + 0.1 × 2) = 120.
    const result = capacity(shape, { ...load, peakShare: 0.1 });
    expect([result.sustained, result.peak, result.tenantPeak]).toEqual([100, 120, 6]);
  });

  it('without subscriptions nothing is published: EventBridge is out of the path', () => {
    const names = capacity(shape, { ...load, publishes: false }).stages.map((s) => s.name);
    expect(names.filter((n) => n.startsWith('EventBridge'))).toEqual([]);
    expect(names).toHaveLength(capacity(shape, load).stages.length - 2);
  });

  it('without high throughput mode a queue takes 300 transactions per second', () => {
    const workers = shape.workers.map((w) => ({ ...w, highThroughput: false }));
    const sqs = capacity({ ...shape, workers }, load).stages.find((s) => s.name.startsWith('SQS FIFO'));
    expect(sqs?.ceiling).toBe(300);
  });

  it('warns when the sustained writes are more than a new table takes at once', () => {
    // 3,000 tenants × 2 = 6,000 events/s of 2 WRU: 12,000 WRU/s against a new table's 4,000.
    expect(capacity(shape, { ...load, tenants: 3000 }).warnings).toEqual([
      expect.stringMatching(
        /^a new table takes 4,000 WRU\/s at once, 2,000 events\/s: bring tenants over in steps/,
      ),
    ]);
  });

  it('warns when the reservation or the mappings do not fit the account', () => {
    const result = capacity({ ...shape, ingestReservedConcurrency: 995, ingestThrottleBurst: 6_000 }, load);
    expect(result.warnings).toEqual([
      expect.stringMatching(/^ingestReservedConcurrency 995 leaves less than 100 unreserved/),
      expect.stringMatching(/^ingestThrottleBurst 6000 is above the account's API Gateway burst of 5000/),
      expect.stringMatching(/^the row workers' maximumConcurrency add up to 8, more than the 5 executions/),
    ]);
  });
});

describe("the receiver's shape, read from the repository", () => {
  // scripts/cost.ts's measurement runs the real handlers through tsx (`npm run capacity` does); here its
  // figures at batches of one: a row write, a history write and its index entry, a marker update.
  const writes = async () => ({ wru: 3, indexWru: 1, requests: { GetItem: 1, PutItem: 2, UpdateItem: 1 } });

  it("takes serverless.yml's params and mappings, and a --param over them", async () => {
    const params = defaultParams();
    const deployed = await loadStageShape({}, writes);
    expect(deployed.ingestReservedConcurrency).toBe(params.ingestReservedConcurrency);
    expect(deployed.ingestThrottleRate).toBe(params.ingestThrottleRate);
    expect(deployed.workers.map((w) => [w.queue, w.maximumConcurrency, w.highThroughput])).toEqual([
      ['contact', params.contactMaxConcurrency, true],
      ['activity', params.activityMaxConcurrency, true],
      ['entities', params.entitiesMaxConcurrency, true],
    ]);
    // 4 write units over 3 write requests; one marker update per event; the sender's 1 s and 4 s.
    expect(deployed.unitsPerWrite).toBeCloseTo(4 / 3);
    expect(deployed.tenantItemWritesPerEvent).toBe(1);
    expect(deployed.senderWindowMs).toBe(5000);
    expect(deployed.reconcile).toEqual({ maxInFlight: 4, maxCallsPerSecond: 10 });
    const changed = await loadStageShape(
      { ingestReservedConcurrency: 300, activityMaxConcurrency: 77 },
      writes,
    );
    expect(changed.ingestReservedConcurrency).toBe(300);
    expect(changed.workers.find((w) => w.queue === 'activity')?.maximumConcurrency).toBe(77);
  });
});

describe('npm run capacity, when the command line is wrong', () => {
  const numeric = ['ingestReservedConcurrency', 'contactMaxConcurrency'];
  const base = ['--tenants', '10', '--events-per-second', '5', '--peak', '20', '--region', 'us-east-1'];
  const error = (argv: string[]) => {
    try {
      parseCommandLine(argv, numeric);
    } catch (thrown) {
      expect(thrown).toBeInstanceOf(CapacityUsageError);
      return (thrown as Error).message;
    }
    throw new Error('accepted');
  };

  it('names the option and what it accepts, in one line', () => {
    const cases: Array<[string[], RegExp]> = [
      [base.slice(2), /^--tenants is missing: it takes a positive whole number$/],
      [
        ['--tenants', '0', ...base.slice(2)],
        /^--tenants "0" is not accepted: it takes a positive whole number$/,
      ],
      [['--tenants', '1.5', ...base.slice(2)], /^--tenants "1\.5" is not accepted/],
      [
        [...base.slice(0, 2), '--events-per-second', 'abc', ...base.slice(4)],
        /^--events-per-second "abc" is not accepted: it takes a positive number/,
      ],
      [
        [...base.slice(0, 4), '--peak', '0.5', ...base.slice(6)],
        /^--peak "0\.5" is not accepted: it takes a number of 1 or more/,
      ],
      [
        [...base.slice(0, 6), '--region', 'us-west-2'],
        /^--region "us-west-2" is not one the quota file knows: it takes us-east-1, eu-central-1, eu-west-1$/,
      ],
      [
        [...base, '--peak-share', '0'],
        /^--peak-share "0" is not accepted: it takes a number over 0 and at most 1/,
      ],
      [base.slice(0, 6), /^--region is missing: it takes us-east-1, eu-central-1, eu-west-1$/],
      [[...base, '--tenant', '3'], /^Unknown option '--tenant'$/],
      [
        [...base, '--param', 'stage=3'],
        /^--param "stage=3" is not accepted: it takes name=value with a numeric param of serverless.yml \(ingestReservedConcurrency, contactMaxConcurrency\)$/,
      ],
      [
        [...base, '--param', 'contactMaxConcurrency=-1'],
        /^--param "contactMaxConcurrency=-1" is not accepted: contactMaxConcurrency takes a positive whole number$/,
      ],
    ];
    for (const [argv, message] of cases) {
      const text = error(argv);
      expect(text, argv.join(' ')).toMatch(message);
      expect(text).not.toContain('\n');
    }
  });

  it('accepts a good line', () => {
    expect((parseCommandLine([...base, '--no-subscriptions'], numeric) as CommandLine).load.publishes).toBe(
      false,
    );
    expect(
      parseCommandLine([...base, '--function-url', '--param', 'contactMaxConcurrency=40'], numeric),
    ).toEqual({
      load: {
        tenants: 10,
        eventsPerSecond: 5,
        peak: 20,
        peakShare: 1,
        region: 'us-east-1',
        functionUrl: true,
        publishes: true,
      },
      params: { contactMaxConcurrency: 40 },
    });
  });

  it('exits 2 with the one line and the option list on standard error, nothing on standard output', async () => {
    const run = await runCli('scripts/capacity.ts', ['--tenants', 'many']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.errors).toEqual([
      '--tenants "many" is not accepted: it takes a positive whole number',
      expect.stringMatching(/^options: --tenants <value> --events-per-second <value> /),
    ]);
  });

  it('prints the table and the first bottleneck for a good line', async () => {
    const run = await runCli('scripts/capacity.ts', base);
    expect(run.errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^\| ingest reserved concurrency \(ingestReservedConcurrency\) \| peak \| 1,000 \| 667 \| 150 % \|/m,
    );
    expect(run.stdout).toMatch(/^First bottleneck: /m);
  });
});
