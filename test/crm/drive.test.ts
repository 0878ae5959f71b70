import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { validEvent } from '../../lib/events/index.js';
import { crmClient, runStream } from '../../tools/crm/client.js';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { httpRequest } from '../../tools/http-client.js';
import { startTarget, until } from './support.js';

let crm: RunningCrm;
let dir: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'crm-drive-'));
  crm = await startCrm({ dataDir: dir });
});
afterEach(async () => {
  vi.useRealTimers();
  await crm.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('driving the CRM simulator', () => {
  it('streams changes through the control API: rows created before they change, every event delivered', async () => {
    const target = await startTarget();
    try {
      await crm.core.register('Cust1', {
        name: 'rows',
        events: ['contact.created', 'contact.changed', 'activity.created', 'activity.changed'],
        targetUrl: target.url,
      });
      const done = await runStream(crmClient(crm.url, 'Cust1'), {
        rate: 500,
        rows: 6,
        durationMs: 300,
        seed: 3,
      });
      await crm.core.dispatcher.idle();

      expect(done.changes).toBe(done.events + done.silent);
      expect(target.received).toHaveLength(done.deliveries);
      expect(done.deliveries).toBe(done.events);
      const seen = new Set<string>();
      for (const { body } of target.received) {
        const row = `${body.Entity}/${body.PrimaryKey}`;
        expect(String(body.Event).endsWith('.created')).toBe(!seen.has(row));
        seen.add(row);
        expect(validEvent(body)).toBeDefined();
      }
      expect(seen.size).toBe(done.created);
    } finally {
      await target.close();
    }
  });

  it('answers slowly while told to: nothing before the delay has passed, then the answer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    crm.faults.set({ slowMs: 5000 });
    let answered = 0;
    const request = httpRequest('GET', `${crm.url}/Cust1/api/v1/Webhook`, {
      authorization: `Basic ${Buffer.from('crm:crm').toString('base64')}`,
    }).then((answer) => {
      answered = answer.status;
    });
    await until(() => vi.getTimerCount() > 0);
    await vi.advanceTimersByTimeAsync(4999);
    expect(answered).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    await request;
    expect(answered).toBe(200);
  });
});
