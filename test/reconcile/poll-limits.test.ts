import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrmCredentials } from '../../lib/config/crm.js';
import { readWatchConfig } from '../../lib/config/watch.js';
import { createCrmClient, credentialsCover } from '../../lib/crm/index.js';
import { type PollDeps, pollWebhooks } from '../../lib/reconcile/poll/poll.js';
import { createWebhookStore } from '../../lib/store/dynamo-webhooks.js';
import { createWatchStore } from '../../lib/store/watch-memory.js';
import { BASIC } from '../crm-client/support.js';
import { type LocalDynamo, startDynalite } from '../support/dynamo.js';
import { startServer } from '../support/http-server.js';
import { countingQueue } from '../support/sqs.js';
import { quietObservability } from '../support/workers.js';

const CONTEXTS = Array.from({ length: 40 }, (_, i) => `CtxPool${i}`);

let dynamo: LocalDynamo;
let crm: Awaited<ReturnType<typeof startServer>>;
/** The CRM's side: requests in flight now and at most, and the contexts asked for. */
const seen = { inFlight: 0, most: 0, contexts: new Set<string>() };

beforeAll(async () => {
  dynamo = await startDynalite();
  // A CRM that takes 20 ms to answer that a context has no webhooks.
  crm = await startServer((req, res) => {
    if (req.url?.startsWith('/CtxDead')) return; // a tenant that never answers
    seen.inFlight++;
    seen.most = Math.max(seen.most, seen.inFlight);
    seen.contexts.add(new URL(req.url ?? '/', 'http://crm').pathname.split('/')[1]!);
    setTimeout(() => {
      seen.inFlight--;
      res.setHeader('content-type', 'application/json');
      res.end('[]');
    }, 20);
  });
});
afterAll(async () => {
  await crm?.close();
  await dynamo?.close();
});

/** A poll of the receiver's table, which knows the deliveries of every context of CONTEXTS. */
async function pollOf(
  env: Record<string, string>,
  credentials: Record<string, CrmCredentials>,
  contexts = CONTEXTS,
  timeLeftMs?: () => number,
) {
  const tables = await dynamo.createTables();
  const receiver = createWebhookStore({ client: dynamo.doc, table: tables.webhooks });
  for (const context of contexts)
    await receiver.markAccepted(context, 'rows', {
      seq: 'x',
      timestamp: new Date().toISOString(),
      eventId: 'e',
    });
  const deps: PollDeps = {
    crm: createCrmClient({
      apiUrl: `${crm.url}/{ContextIdentifier}/api/v1`,
      credentials,
      ...(timeLeftMs && { timeLeftMs }),
    }),
    covers: (context) => credentialsCover(credentials, context),
    store: createWatchStore(dynamo.doc, tables.webhooks),
    lastAccepted: (context, name) => receiver.getLastAccepted(context, name),
    queue: countingQueue().queue,
    config: readWatchConfig(env),
    ...quietObservability(),
  };
  seen.most = 0;
  seen.contexts.clear();
  return { first: await pollWebhooks(deps), deps };
}

describe('one poll of many contexts', () => {
  it('has at most RECONCILE_POLL_MAX_IN_FLIGHT requests in flight at the CRM, and polls every context', async () => {
    const { first: report } = await pollOf({ RECONCILE_POLL_MAX_IN_FLIGHT: '5' }, { '*': BASIC });

    expect(report).toMatchObject({ polled: true, failed: [], unfinished: [], uncovered: 0 });
    expect(seen.contexts.size).toBe(CONTEXTS.length);
    expect(seen.most).toBe(5);
  });

  it('polls only the contexts the credentials cover (no `*`: those named)', async () => {
    const { first: report } = await pollOf({}, { CtxPool3: BASIC, CtxPool7: BASIC });

    expect([...seen.contexts].sort()).toEqual(['CtxPool3', 'CtxPool7']);
    expect(report).toMatchObject({ failed: [], uncovered: CONTEXTS.length - 2 });
  });

  it('tenants that never answer do not starve the others: each poll takes the contexts in a new order', async () => {
    let budgetEnds = 0;
    const contexts = ['CtxLive1', 'CtxDead1', 'CtxDead2', 'CtxDead3', 'CtxDead4', 'CtxDead5'];
    const { deps } = await pollOf(
      { RECONCILE_POLL_MAX_IN_FLIGHT: '1', RECONCILE_POLL_SECONDS: '10' },
      { '*': BASIC },
      contexts,
      () => budgetEnds - Date.now(),
    );
    // One runner, held by a dead tenant for the whole budget: a poll reaches CtxLive1 only when it
    // comes first. In the scan's fixed order it never does; shuffled, 1 poll in 6 (60 polls: all but
    // certain, about 6 expected).
    let polls = 0;
    for (; polls < 60 && !seen.contexts.has('CtxLive1'); polls++) {
      budgetEnds = Date.now() + 300; // the poll's time: spent waiting for the dead tenants
      const now = Date.now() + polls * 20_000;
      await pollWebhooks({ ...deps, now: () => now });
    }
    expect(seen.contexts.has('CtxLive1')).toBe(true);
  }, 40_000);
});
