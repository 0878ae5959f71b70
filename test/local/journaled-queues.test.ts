import { afterEach, describe, expect, it } from 'vitest';
import { openJournaledQueues } from '../../local/journaled-queues.js';
import type { JournalRecord } from '../../local/sqs-journal.js';
import { removeJournals, tempJournal } from '../support/bus.js';

afterEach(removeJournals);

const record = (id: string): JournalRecord => ({
  MessageId: id,
  MessageBody: `{"id":"${id}"}`,
  attributes: { SentTimestamp: '1', ApproximateReceiveCount: '0' },
});

/** The queues as plain data: queue → [id, receive count]. */
const contents = (state: Map<string, Map<string, JournalRecord>>) =>
  Object.fromEntries(
    [...state].map(([queue, records]) => [
      queue,
      [...records.values()].map((r) => [r.MessageId, r.attributes.ApproximateReceiveCount]),
    ]),
  );

describe('journaled queues (the local bus journal)', () => {
  it('gives back after a kill (no close) what it held: puts, counts, moves to another queue, removals', () => {
    const path = tempJournal();
    const first = openJournaledQueues(path);
    first.put('a', record('a/1'));
    first.put('a', record('a/2'));
    first.put('a', record('a/3'));
    first.received('a', 'a/1', 3);
    first.put('a.dlq', { ...record('a/1'), attributes: { ...record('a/1').attributes, error: 'HTTP 500' } });
    first.remove('a', 'a/2');
    const before = contents(first.state);

    const second = openJournaledQueues(path);

    expect(before).toEqual({ a: [['a/3', '0']], 'a.dlq': [['a/1', '0']] });
    expect(contents(second.state)).toEqual(before);
    expect(second.state.get('a.dlq')?.get('a/1')?.attributes.error).toBe('HTTP 500');
    second.close();
  });

  it('compacts at close to the live records, which the next open reads', () => {
    const path = tempJournal();
    const first = openJournaledQueues(path);
    for (let i = 0; i < 50; i++) first.put('q', record(`q/${i}`));
    for (let i = 0; i < 49; i++) first.remove('q', `q/${i}`);
    first.received('q', 'q/49', 2);
    first.close();

    expect(contents(openJournaledQueues(path).state)).toEqual({ q: [['q/49', '2']] });
  });
});
