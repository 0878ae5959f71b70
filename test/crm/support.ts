import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CrmCore, createCrmCore } from '../../tools/crm/crm.js';
import { createDispatcher, type DispatcherOptions } from '../../tools/crm/deliver.js';
import { openStore } from '../../tools/crm/store.js';
import { startRecorder } from '../support/http-server.js';

/** A request the target received, with the (possibly fake) clock's time of arrival. */
export interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}

/**
 * A real local HTTP target for webhook deliveries: answers each request with `answer(request)`
 * (200 by default) and keeps every request.
 */
export async function startTarget(answer: (request: Received) => number = () => 200) {
  const target = await startRecorder(
    ({ at, headers, body }): Received => ({
      at,
      headers,
      raw: body,
      body: JSON.parse(body) as Record<string, unknown>,
    }),
    answer,
  );
  return {
    url: `${target.url}/webhook`,
    received: target.received,
    /** The requests whose X-SuperOffice-Event header is `event`. */
    of: (event: string) =>
      target.received.filter((request) => request.headers['x-superoffice-event'] === event),
    close: target.close,
  };
}

/**
 * Waits (through real I/O turns, never the timers a test may fake) until `condition` holds: not vi.waitFor,
 * which advances a faked clock by its interval at every check, and the tests under fake timers move it themselves.
 */
export async function until(condition: () => boolean, turns = 20_000): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition never held');
}

/** A CRM core on a fresh data directory; `reopen` starts another on the same directory. */
export function crmOnTempDir(options: Partial<DispatcherOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'crm-sim-'));
  const cores: CrmCore[] = [];
  const open = () => {
    const store = openStore(dir);
    const core = createCrmCore(
      store,
      createDispatcher({ ...options, save: (data) => store.save(data.name) }),
    );
    cores.push(core);
    return core;
  };
  return {
    dir,
    core: open(),
    reopen: open,
    cleanup() {
      // Not waiting for cycles: one may sleep on a fake clock that no longer runs.
      for (const core of cores) core.dispatcher.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Under fake timers: runs the dispatcher's cycles to their end, letting each pause pass on the fake
 * clock as soon as every cycle is either sleeping or done (real I/O in between), so that a wrong
 * delay or a missing stop fails an assertion instead of hanging.
 */
export async function settle(core: CrmCore, advance: () => Promise<unknown>, timers: () => number) {
  let done = false;
  void core.dispatcher.idle().then(() => {
    done = true;
  });
  for (let step = 0; step < 100; step++) {
    await until(() => done || timers() > 0);
    if (done) return;
    await advance();
  }
  throw new Error('the delivery cycles did not end within 100 pauses');
}
