import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayBusyError, replayParked } from '../../lib/ingest/index.js';
import type { ParkedSource, QueueSender } from '../../lib/queue/port.js';
import { createDynamoReplayLock } from '../../lib/store/index.js';
import type { StoreReader } from '../../lib/store/types.js';
import { createAdminServer } from '../../local/admin/admin-api.js';
import { httpRequest } from '../../tools/http-client.js';
import { buildSampleBody } from '../../tools/samples.js';
import { policy } from '../support/delivery.js';
import { gapsIn, type LocalDynamo, startDynamoStore, type TableNames } from '../support/dynamo.js';
import { testSource } from '../support/local-source.js';
import { type ParkedQueues, startParkedQueues } from '../support/parked.js';

/** One replay of the parked queue at a time: the lock in the webhooks table (dynalite), and the replay behind it. */
let dynamo: LocalDynamo;
let tables: TableNames;
let store: StoreReader;
let queues: ParkedQueues;

beforeAll(async () => {
  ({ dynamo, tables, store } = await startDynamoStore());
  queues = await startParkedQueues();
});
afterAll(async () => {
  await queues.local.close();
  await dynamo.close();
});

const lock = (now?: () => number) =>
  createDynamoReplayLock({ client: dynamo.doc, table: tables.webhooks, ...(now && { now }) });

describe('the replay lock', () => {
  it('is held by one run: the next is refused, naming since when, until it is released; no webhook sees it', async () => {
    const first = lock();
    const second = lock();
    await first.acquire();

    const refused = await second.acquire().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ReplayBusyError);
    expect((refused as Error).message).toMatch(
      /^another replay of the parked queue is running \(since \d{4}-\S+Z\); try again when it ends, or after \d{4}-\S+Z if it stopped without finishing$/,
    );
    expect(await store.listWebhooks()).toEqual([]);
    expect(await gapsIn(store)).toEqual([]);

    await first.release();
    await second.acquire();
    await second.release();
  });

  it('left by a crashed run, is taken once its lease ran out; the crashed run then can neither renew nor release it', async () => {
    const start = Date.now();
    const crashed = lock(() => start);
    await crashed.acquire();
    await expect(lock(() => start + 59_000).acquire()).rejects.toBeInstanceOf(ReplayBusyError);

    const next = lock(() => start + 61_000);
    await next.acquire();
    await expect(crashed.renew()).rejects.toBeInstanceOf(ReplayBusyError);
    await crashed.release();
    await expect(lock(() => start + 62_000).acquire()).rejects.toBeInstanceOf(ReplayBusyError);
    await next.release();
  });

  it('left by a crashed run whose clock ran ahead, keeps the next run out for two leases at most, not until that clock’s time', async () => {
    const start = Date.now();
    const ahead = lock(() => start + 24 * 3_600_000); // a day ahead, then killed
    await ahead.acquire();

    const next = lock(() => start + 1_000);
    await next.acquire();
    await expect(ahead.renew()).rejects.toBeInstanceOf(ReplayBusyError);
    await next.release();
  });

  it('keeps out a run whose clock is behind by less than a lease, however fresh the lease', async () => {
    const start = Date.now();
    const holder = lock(() => start);
    await holder.acquire();

    await expect(lock(() => start - 1).acquire()).rejects.toBeInstanceOf(ReplayBusyError);
    await expect(lock(() => start - 59_000).acquire()).rejects.toBeInstanceOf(ReplayBusyError);
    await holder.release();
  });

  it('a second replay while one runs receives nothing, and POST /parked/replay answers 409 saying why', async () => {
    const [eventId] = await queues.park([
      buildSampleBody('person.created', { context: 'CustL', primaryKey: 1 }),
    ]);
    let received = 0;
    const counted = (source: ParkedSource): ParkedSource => ({
      ...source,
      receive: (max) => {
        received++;
        return source.receive(max);
      },
    });
    // The first run waits inside its first send until the second one has been refused.
    let proceed!: () => void;
    const gate = new Promise<void>((resolve) => {
      proceed = resolve;
    });
    const waiting: QueueSender = {
      send: async (message) => {
        await gate;
        await queues.sender().send(message);
      },
    };
    const personsToo = policy({ entities: (entity) => entity === 'contact' || entity === 'person' });
    const running = replayParked({
      source: queues.source(),
      sender: waiting,
      policy: personsToo,
      lock: lock(),
    });
    await expect.poll(() => queues.peek('parked').some((message) => message.inFlight)).toBe(true);

    await expect(
      replayParked({
        source: counted(queues.source()),
        sender: queues.sender(),
        policy: personsToo,
        lock: lock(),
      }),
    ).rejects.toBeInstanceOf(ReplayBusyError);
    expect(received).toBe(0);

    const admin = await adminServer();
    try {
      const answer = await httpRequest('POST', `${admin.base}/parked/replay`, {});
      expect(answer.status).toBe(409);
      expect(JSON.parse(answer.body).error).toMatch(/^another replay of the parked queue is running/);
    } finally {
      admin.server.close();
    }

    proceed();
    expect(await running).toEqual({ replayed: 1, kept: 0, keptBy: {}, complete: true });
    expect(queues.peek('entities').map((message) => message.values.eventId)).toEqual([eventId]);
    // Released at the end: the next replay runs.
    expect(
      await replayParked({
        source: queues.source(),
        sender: queues.sender(),
        policy: personsToo,
        lock: lock(),
      }),
    ).toEqual({ replayed: 0, kept: 0, keptBy: {}, complete: true });
  });
});

/** The local admin API over these queues and this table, as `npm start` wires it. */
async function adminServer(): Promise<{ server: Server; base: string }> {
  const { emulator, client, queues: localQueues } = queues.local;
  const server = createAdminServer({
    source: testSource({
      store,
      sqs: client,
      doc: dynamo.doc,
      webhooksTable: tables.webhooks,
      queues: localQueues,
      peek: emulator.peek,
      env: Object.fromEntries(localQueues.map((queue) => [queue.envVar, queue.url])),
    }),
    queues: localQueues,
    peek: emulator.peek,
    isReady: () => true,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
