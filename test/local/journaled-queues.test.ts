import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openJournaledQueues } from '../../local/bus/journaled-queues.js';
import { type JournalRecord, readJournal } from '../../local/emulators/sqs-journal.js';
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

  it('a put the disk cuts short (full, or over the file size limit) throws and leaves no torn line', () => {
    const path = tempJournal();
    // A child whose files may not pass 2 KiB (ulimit -f): the second put's write(2) is cut short.
    const script = `
      import { openJournaledQueues } from ${JSON.stringify(new URL('../../local/bus/journaled-queues.ts', import.meta.url).href)};
      const queues = openJournaledQueues(${JSON.stringify(path)});
      const record = (id, size) => ({ MessageId: id, MessageBody: 'x'.repeat(size), attributes: {} });
      queues.put('q', record('small', 10));
      let failed = false;
      try { queues.put('q', record('large', 3000)); } catch { failed = true; }
      process.stdout.write(JSON.stringify({ failed, held: [...queues.state.get('q').keys()] }));`;
    const out = execFileSync(
      'bash',
      ['-c', 'ulimit -f 2 && exec "$0" --import tsx --input-type=module -e "$1"', process.execPath, script],
      { encoding: 'utf8' },
    );

    expect(JSON.parse(out)).toEqual({ failed: true, held: ['small'] });
    expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
    expect([...(readJournal(path).get('q')?.keys() ?? [])]).toEqual(['small']);
  });
});
