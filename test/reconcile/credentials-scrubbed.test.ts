import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gapViews } from '../../dashboard/reconcile-routes.js';
import type { CrmCredentials } from '../../lib/config/crm.js';
import { createCrmClient } from '../../lib/crm/index.js';
import { createReconcileHandler } from '../../lib/reconcile/run/reconcile-handler.js';
import { createRecoveryStore, createStoredRows } from '../../lib/store/index.js';
import type { Store } from '../../lib/store/types.js';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { generateAppKeys } from '../../tools/crm/auth.js';
import { FakePublisher } from '../support/bus.js';
import { type LocalDynamo, startDynamoStore, type TableNames } from '../support/dynamo.js';
import { startServer } from '../support/http-server.js';
import { lambdaContext, quietObservability, stateEvent } from '../support/workers.js';

/**
 * A CRM that echoes every credential it is sent (and its own key) in its error text: the Authenticate
 * answer quotes the request body, every API answer is a 500 quoting the request's headers. Each kind
 * of credential must reach no outlet: the log lines, the recovery item, `GET /gaps`, the failed event.
 */
const TICKET = `7T:${randomBytes(48).toString('base64')}`;
const KEY = generateAppKeys().privateKey;
const secret = () => randomBytes(24).toString('hex');
const REFUSED: CrmCredentials = {
  type: 'systemUser',
  systemUserToken: `SU${secret()}`,
  applicationToken: secret(),
  privateKey: KEY,
};
const TICKETED: CrmCredentials = { ...REFUSED, systemUserToken: `SU${secret()}`, applicationToken: secret() };
const BASIC: CrmCredentials = { type: 'basic', user: 'integration', password: `pw-${secret().slice(0, 10)}` };
const CREDENTIALS: Record<string, CrmCredentials> = {
  CtxRefused: REFUSED,
  CtxTicket: TICKETED,
  CtxBasic: BASIC,
};

const jwtWith = (claims: object) =>
  ['{"alg":"RS256"}', JSON.stringify(claims), 'signature']
    .map((part) => Buffer.from(part).toString('base64url'))
    .join('.');

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

let dynamo: LocalDynamo;
let store: Store;
let tables: TableNames;
let crm: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  ({ dynamo, tables, store } = await startDynamoStore());
  crm = await startServer((req, res) => {
    void bodyOf(req).then((body) => {
      const url = new URL(req.url ?? '/', 'http://crm');
      res.setHeader('content-type', 'application/json');
      if (url.pathname.startsWith('/api/state/')) {
        res.end(JSON.stringify({ State: 'Running', IsRunning: true }));
      } else if (url.pathname === '/Login/api/PartnerSystemUser/Authenticate') {
        const asked = JSON.parse(body) as { ContextIdentifier: string };
        res.end(
          JSON.stringify(
            asked.ContextIdentifier === 'CtxTicket'
              ? {
                  IsSuccessful: true,
                  Token: jwtWith({ 'http://schemes.superoffice.net/identity/ticket': TICKET }),
                }
              : { IsSuccessful: false, ErrorMessage: `cannot read ${body}; our key is ${KEY}` },
          ),
        );
      } else {
        const basic = (req.headers.authorization ?? '').replace(/^Basic /, '');
        res.statusCode = 500;
        res.end(
          JSON.stringify({
            Error: `failed for ${JSON.stringify(req.headers)} (${Buffer.from(basic, 'base64').toString()})`,
          }),
        );
      }
    });
  });
  for (const context of Object.keys(CREDENTIALS)) {
    const started = applyStateEvent(undefined, stateEvent('webhook.started', { context, primaryKey: 9 }));
    await store.saveWebhook(started, 0);
    const { item, version } = await store.loadWebhook(context, 9);
    await store.saveWebhook(
      applyStateEvent(item, stateEvent('webhook.stopped', { context, primaryKey: 9 })),
      version,
    );
  }
}, 30_000);
afterAll(async () => {
  await crm?.close();
  await dynamo?.close();
});

/** Every form a credential of `credentials` may take in text, the ticket it was given included. */
function forms(credentials: CrmCredentials): string[] {
  const values =
    credentials.type === 'basic'
      ? [credentials.password, Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')]
      : [
          credentials.systemUserToken,
          credentials.applicationToken,
          TICKET,
          ...KEY.split('\n').filter((l) => l.length > 20),
        ];
  return values.flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]);
}

describe('a CRM that echoes credentials in its error text', () => {
  it.each(Object.keys(CREDENTIALS))(
    'reaches no log line, recovery item, GET /gaps card or failed event with one (%s)',
    async (context) => {
      const observability = quietObservability();
      const logged: string[] = [];
      for (const level of ['debug', 'info', 'warn', 'error'] as const)
        vi.spyOn(observability.logger, level).mockImplementation((...args: unknown[]) => {
          logged.push(JSON.stringify(args));
        });
      const lifecycle = new FakePublisher();
      const client = createCrmClient({
        apiUrl: `${crm.url}/{ContextIdentifier}/api/v1`,
        credentials: CREDENTIALS,
        limits: { maxAttempts: 1 },
      });
      const handler = createReconcileHandler({
        async runDeps() {
          return {
            crm: client,
            stored: createStoredRows({ client: dynamo.doc, table: tables.rows }),
            send: async () => undefined,
            stores: () => true,
            apiCalls: () => 0,
            timeLeftMs: () => 60_000,
            now: () => new Date(),
            warn: (message) => observability.logger.warn(message),
          };
        },
        carryOn: async () => undefined,
        hide: async () => undefined,
        publisher: lifecycle,
        maxReceives: 1,
        recovery: createRecoveryStore(dynamo.doc, tables.webhooks),
        ...observability,
      });
      const body = JSON.stringify({
        context,
        reason: 'gap-opened',
        from: '2026-11-28T00:00:00.000Z',
        webhookId: 9,
        requestedAt: new Date().toISOString(),
      });
      const record = {
        messageId: 'm',
        receiptHandle: 'r',
        body,
        attributes: { ApproximateReceiveCount: '1' },
      };

      const { batchItemFailures } = await handler(
        { Records: [record as unknown as SQSRecord] },
        lambdaContext as Context,
      );

      expect(batchItemFailures).toHaveLength(1);
      const failed = lifecycle.details().find((d) => typeof d.error === 'string');
      const gap = (await gapViews(store, context))[0];
      const stored = (await store.listRecoveries(context))[0]?.reconcile;
      expect(gap?.lastReconcile?.status).toBe('failed');
      const outlets = {
        logs: logged.join('\n'),
        event: JSON.stringify(failed),
        gap: JSON.stringify(gap),
        stored: JSON.stringify(stored),
      };
      // The error still says what failed, on one short line.
      expect(String(failed?.error)).toMatch(/(Authenticate|HTTP 500|refused)/);
      expect(String(failed?.error).length).toBeLessThanOrEqual(340);
      expect(String(failed?.error)).toContain('[redacted]');
      for (const [outlet, text] of Object.entries(outlets))
        for (const value of forms(CREDENTIALS[context]!))
          expect(text.includes(value), `${outlet} holds a credential of ${context}`).toBe(false);
      expect(outlets.logs).not.toMatch(/eyJ[\w-]{10,}|BEGIN PRIVATE KEY/);
    },
  );
});
