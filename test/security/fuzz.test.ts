import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DeliveryPolicy, handleDelivery } from '../../lib/ingest/index.js';
import { createSignatureVerifier } from '../../lib/ingest/signature.js';
import { type OutboundMessage, type QueueSender, QueueUnavailableError } from '../../lib/queue/port.js';
import { encodeSqsMessage, type SqsMessage } from '../../lib/queue/sqs-message.js';
import {
  buildDelivery,
  type Expectations,
  expectations,
  FUZZ_MAX_BODY,
  FUZZ_POLICIES,
  FUZZ_TOKEN,
  type FuzzCase,
  fieldOf,
  fuzzCaseArb,
  MAX_AGE_SECONDS,
  type PolicyName,
  secretConfigOf,
  toHttpApiEvent,
  toRequest,
} from '../support/fuzz.js';

/**
 * Property-based fuzzing of the ingest. Every generated delivery is judged by the oracle in
 * test/support/fuzz.ts, which knows from the generator alone whether the request is authentic (signed
 * over its exact bytes with a secret valid for its context, or carrying the state token) and well-formed.
 *
 * Seeds: set FC_SEED (and FC_RUNS) to replay or widen a run; a failure prints its seed and the shrunk case.
 */
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const RUNS = Number(process.env.FC_RUNS ?? 3000);
const DOCUMENTED = [200, 400, 401, 405, 413, 415];
/** Room for widened runs (FC_RUNS): about 4 ms per case on the CI machine, doubled. */
const TIMEOUT = Math.max(60_000, RUNS * 8);

function policyFor(name: PolicyName): DeliveryPolicy {
  const facts = FUZZ_POLICIES[name];
  return {
    verifier: createSignatureVerifier(secretConfigOf(name)),
    stateEventToken: facts.token ? FUZZ_TOKEN : undefined,
    allowUnsigned: facts.allowUnsigned,
    maxEventAgeSeconds: MAX_AGE_SECONDS,
    maxBodyBytes: FUZZ_MAX_BODY,
  };
}

/** Records every attempt; fails each one when told to (the queue is down). */
class FuzzQueue implements QueueSender {
  readonly attempts: SqsMessage[] = [];
  constructor(private readonly fails: boolean) {}
  async send(message: OutboundMessage): Promise<void> {
    this.attempts.push(encodeSqsMessage(message));
    if (this.fails) throw new QueueUnavailableError('ThrottlingException', message.queue);
  }
}

function bodyBytesOf(message: { body: string; bodyEncoding: string | undefined }): Buffer {
  return message.bodyEncoding === 'base64'
    ? Buffer.from(message.body, 'base64')
    : Buffer.from(message.body, 'utf8');
}

interface Observed {
  status: number;
  /** What was handed to the queue (attempted, whether or not the queue acknowledged). */
  messages: Array<{
    queue: string;
    body: string;
    deduplicationId: string;
    attributes: SqsMessage['attributes'];
  }>;
  /** Everything a client or an operator can read: answer body and headers, log lines. */
  visible: string[];
}

function checkInvariants(c: FuzzCase, raw: Buffer, exp: Expectations, seen: Observed): void {
  const allowed = c.queueFails ? [...DOCUMENTED, 503] : DOCUMENTED;
  // Documented statuses only: never 410, never a 5xx other than the queue's 503.
  expect(allowed).toContain(seen.status);
  expect(seen.messages.length).toBeLessThanOrEqual(1);
  if (seen.status === 200 && seen.messages.length === 0) {
    // Only the CRM's registration check is answered 200 without a message, and only once it passed
    // what any delivery must pass: a valid signature for its context, or ALLOW_UNSIGNED's exception.
    expect(exp.registrationTest).toBe(true);
    expect(exp.authentic || exp.unsignedAllowance === 'allowUnsigned').toBe(true);
    expect(exp.badSignature).toBe(false);
  } else if (c.queueFails) expect(seen.status === 503).toBe(seen.messages.length === 1);
  else expect(seen.status === 200).toBe(seen.messages.length === 1);

  const message = seen.messages[0];
  if (message !== undefined) {
    // Nothing unauthenticated reaches a queue, except the two documented unsigned paths, never parked.
    if (!exp.authentic) {
      expect(exp.unsignedAllowance).toBeDefined();
      const allowedQueues = exp.unsignedAllowance === 'state' ? ['webhookState'] : ['contact', 'activity'];
      expect(allowedQueues).toContain(message.queue);
    }
    // A wrong, partial or other-context signature never reaches a queue.
    expect(exp.badSignature).toBe(false);
    expect(message.attributes.signatureVerified).toBe(String(exp.signedByConfigured));
    // The exact bytes, always.
    expect(
      bodyBytesOf({ body: message.body, bodyEncoding: message.attributes.bodyEncoding }).equals(raw),
    ).toBe(true);
    if (message.queue !== 'parked') expect(message.deduplicationId).toBe(fieldOf(raw, 'EventId'));
  }
  // Nothing authentic is dropped: routed or parked, 200 (503 only while the queue is down).
  if (exp.authentic && exp.wellFormed && !exp.tooOld) {
    expect(seen.status).toBe(c.queueFails && !exp.registrationTest ? 503 : 200);
  }
  for (const text of seen.visible) {
    for (const secret of exp.forbidden) expect(text).not.toContain(secret);
  }
}

describe('fuzz: handleDelivery', () => {
  it(
    'answers only documented statuses; nothing unauthenticated is queued, nothing authentic is dropped, nothing secret leaks',
    async () => {
      const tally = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(fuzzCaseArb(), async (c) => {
          const built = buildDelivery(c);
          const exp = expectations(c, built);
          const queue = new FuzzQueue(c.queueFails);

          const response = await handleDelivery(toRequest(c, built, new Date()), policyFor(c.policy), queue);

          const { decision } = response;
          const visible = [
            response.body,
            JSON.stringify(response.headers),
            JSON.stringify(decision.log),
            decision.kind === 'reject' || decision.kind === 'park' ? decision.detail : '',
            ...queue.attempts.map((m) => JSON.stringify(m.attributes)),
          ];
          checkInvariants(c, built.raw, exp, { status: response.status, messages: queue.attempts, visible });
          // Refusals say what is wrong in a short problem document; nothing of the body is echoed at length.
          expect(response.body.length).toBeLessThan(1024);
          const key = `${response.status}:${queue.attempts[0]?.queue ?? '-'}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
        }),
        { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }) },
      );
      if (process.env.FC_TALLY) console.log(Object.fromEntries([...tally].sort()));
      // The generator reaches every outcome (a fuzz that only ever sees 400 proves little).
      for (const key of [
        '200:contact',
        '200:activity',
        '200:webhookState',
        '200:parked',
        '200:-',
        '400:-',
        '401:-',
        '413:-',
      ]) {
        expect(tally.get(key) ?? 0, key).toBeGreaterThan(0);
      }
      expect([...tally.keys()].some((key) => key.startsWith('415'))).toBe(true);
      expect([...tally.keys()].some((key) => key.startsWith('405'))).toBe(true);
    },
    TIMEOUT,
  );

  it('an unauthenticated body cannot make the answer grow (found by this fuzz: the body Event was echoed in full)', async () => {
    const c = fc.sample(fuzzCaseArb(['signed']), { numRuns: 1, seed: 1 })[0]!;
    const built = buildDelivery({
      ...c,
      method: 'POST',
      event: 'webhook.errors',
      body: { kind: 'set', path: ['Event'], value: 'x'.repeat(FUZZ_MAX_BODY - 1000) },
      contentType: { valid: true, value: 'application/json' },
      headerEvent: 'matching',
      duplicate: 'none',
      missing: 'none',
      secondPrefix: false,
      signature: { kind: 'none' },
    });

    const response = await handleDelivery(
      toRequest(c, built, new Date()),
      policyFor('signed'),
      new FuzzQueue(false),
    );

    expect(response.status).toBe(400);
    expect(response.body.length).toBeLessThan(1024);
    expect(response.decision.kind === 'reject' && response.decision.detail.length).toBeLessThan(200);
  });

  it('strings with lone surrogates (no transport hands them over, but a caller might) are never routed', async () => {
    const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
    await fc.assert(
      fc.asyncProperty(fuzzCaseArb(['signed']), surrogate, fc.nat(), async (c, lone, at) => {
        const built = buildDelivery({ ...c, body: { kind: 'valid' }, method: 'POST' });
        const text = built.raw.toString('utf8');
        const index = at % text.length;
        const request = toRequest(c, built, new Date());
        request.body = `${text.slice(0, index)}${lone}${text.slice(index)}`;
        const queue = new FuzzQueue(false);

        const response = await handleDelivery(request, policyFor('signed'), queue);

        expect(DOCUMENTED).toContain(response.status);
        for (const message of queue.attempts) expect(message.queue).toBe('parked');
      }),
      { numRuns: 200, ...(SEED !== undefined && { seed: SEED }) },
    );
  });
});

describe('fuzz: functions/ingest.ts handler (API Gateway events, SQS mocked, logs captured)', () => {
  const sqs = mockClient(SQSClient);
  let handler: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
  const output: string[] = [];

  beforeAll(async () => {
    const urls = {
      CONTACT_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/contact.fifo',
      ACTIVITY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/activity.fifo',
      WEBHOOK_STATE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/webhook-state.fifo',
      ENTITIES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/entities.fifo',
      PARKED_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/parked.fifo',
    };
    for (const [name, value] of Object.entries(urls)) vi.stubEnv(name, value);
    const secrets = secretConfigOf('token');
    vi.stubEnv('WEBHOOK_SECRET', secrets.fallback.join(','));
    vi.stubEnv('WEBHOOK_SECRETS', JSON.stringify(secrets.byContext));
    vi.stubEnv('STATE_EVENT_TOKEN', FUZZ_TOKEN);
    vi.stubEnv('MAX_BODY_BYTES', String(FUZZ_MAX_BODY));
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('POWERTOOLS_DEV', 'false');
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'DEBUG');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    vi.resetModules();
    ({ handler } = await import('../../functions/ingest.js'));
  });
  afterAll(() => {
    sqs.restore();
    vi.unstubAllEnvs();
  });

  it(
    'keeps the same invariants end to end, and no log line carries a secret or the expected signature',
    async () => {
      const capture = (chunk: unknown) => {
        output.push(String(chunk));
        return true;
      };
      vi.spyOn(process.stdout, 'write').mockImplementation(capture);
      vi.spyOn(process.stderr, 'write').mockImplementation(capture);
      let logLines = 0;
      await fc.assert(
        fc.asyncProperty(fuzzCaseArb(['token']), async (c) => {
          const built = buildDelivery(c);
          const exp = expectations(c, built);
          sqs.reset();
          if (c.queueFails) {
            sqs
              .on(SendMessageCommand)
              .rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
          } else sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
          output.length = 0;

          const result = await handler(toHttpApiEvent(c, built));

          const messages = sqs.commandCalls(SendMessageCommand).map((call) => {
            const input = call.args[0].input;
            const attributes = Object.fromEntries(
              Object.entries(input.MessageAttributes ?? {}).map(([name, value]) => [
                name,
                value.StringValue ?? '',
              ]),
            );
            return {
              queue: queueKeyOf(input.QueueUrl ?? ''),
              body: input.MessageBody ?? '',
              deduplicationId: input.MessageDeduplicationId ?? '',
              attributes,
            };
          });
          const lines = output
            .join('')
            .split('\n')
            .filter((line) => line.trim() !== '');
          for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
          logLines += lines.length;
          checkInvariants(c, built.raw, exp, {
            status: result.statusCode ?? 0,
            messages,
            visible: [String(result.body), JSON.stringify(result.headers), ...lines],
          });
          // Log lines stay bounded whatever the body holds.
          for (const line of lines) expect(line.length).toBeLessThan(8192);
        }),
        { numRuns: Math.ceil(RUNS / 6), ...(SEED !== undefined && { seed: SEED }) },
      );
      vi.mocked(process.stdout.write).mockRestore();
      vi.mocked(process.stderr.write).mockRestore();
      expect(logLines).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});

function queueKeyOf(url: string): string {
  if (url.endsWith('/contact.fifo')) return 'contact';
  if (url.endsWith('/activity.fifo')) return 'activity';
  if (url.endsWith('/webhook-state.fifo')) return 'webhookState';
  if (url.endsWith('/parked.fifo')) return 'parked';
  return `unknown:${url}`;
}
