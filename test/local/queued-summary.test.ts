import { describe, expect, it } from 'vitest';
import type { LocalQueue } from '../../local/emulators/resources.js';
import { describeQueued } from '../../local/queued-summary.js';

const queue = (key: string) => ({ key, name: key, dlq: { name: `${key}-dlq` } }) as LocalQueue;
const queues = ['contact', 'activity', 'webhookState', 'parked'].map(queue);

describe('what a stop says stays queued', () => {
  it('says which messages are pending and which are parked or dead-lettered', () => {
    const counts: Record<string, number> = { contact: 3, activity: 1, parked: 2, 'contact-dlq': 1 };
    expect(describeQueued(queues, (name) => counts[name] ?? 0)).toBe(
      '7 messages stay queued: 4 pending (contact 3, activity 1), processed on the next start; ' +
        '2 parked (never drain: GET /parked); 1 dead-lettered (until redriven: POST /queues/{name}/redrive)',
    );
  });

  it('says one message in the singular', () => {
    expect(describeQueued(queues, (name) => (name === 'parked' ? 1 : 0))).toBe(
      '1 message stays queued: 0 pending, processed on the next start; 1 parked (never drain: GET /parked)',
    );
  });

  it('says nothing when the queues are empty', () => {
    expect(describeQueued(queues, () => 0)).toBeUndefined();
  });
});
