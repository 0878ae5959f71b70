import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDefinitions } from '../../infra/definitions.js';
import { ensureQueues, type LocalQueue } from '../../local/emulators/resources.js';
import { type SqsEmulator, startSqsEmulator } from '../../local/emulators/sqs-emulator.js';
import { readJournal } from '../../local/emulators/sqs-journal.js';

/** An emulator as the runtime starts it: journal read, queues created, journal recovered. */
async function start(journalPath: string, visibilityTimeout = 1) {
  const emulator = await startSqsEmulator({ journalPath });
  const client = new SQSClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const queues = await ensureQueues(client, loadDefinitions({ stage: 'local' }).queues, {
    visibilityTimeout,
  });
  const recovered = emulator.recover();
  const queue = (key: string): LocalQueue => queues.find((candidate) => candidate.key === key)!;
  return { emulator, client, queue, recovered };
}

let dir: string;
let journalPath: string;
const running: Array<{ emulator: SqsEmulator; client: SQSClient }> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqs-journal-'));
  journalPath = join(dir, 'sqs-journal.ndjson');
});

afterEach(async () => {
  for (const { emulator, client } of running.splice(0)) {
    client.destroy();
    await emulator.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

const send = (client: SQSClient, url: string, body: string, group: string, reason?: string) =>
  client.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: body,
      MessageGroupId: group,
      MessageDeduplicationId: `dedup-${body}`,
      ...(reason ? { MessageAttributes: { reason: { DataType: 'String', StringValue: reason } } } : {}),
    }),
  );

describe('the SQS journal', () => {
  it('brings back every accepted message after a killed process: order, group, dedup id, attributes, receive count', async () => {
    // Arrange: a first life that is never closed (as after kill -9).
    const first = await start(journalPath);
    running.push(first);
    const contact = first.queue('contact');
    for (const body of ['a1', 'a2', 'a3']) await send(first.client, contact.url, body, 'A');
    await send(first.client, contact.url, 'b1', 'B');
    await send(first.client, first.queue('parked').url, 'p1', 'P', 'unknown-event');
    const { Messages = [] } = await first.client.send(
      new ReceiveMessageCommand({ QueueUrl: contact.url, MaxNumberOfMessages: 2 }),
    );
    expect(Messages.map((m) => m.Body)).toEqual(['a1', 'a2']);
    await first.client.send(
      new DeleteMessageCommand({ QueueUrl: contact.url, ReceiptHandle: Messages[0]!.ReceiptHandle }),
    );
    const before = first.emulator.peek(contact.name);

    // Act: a second life on the same journal.
    const second = await start(journalPath);
    running.push(second);

    // Assert
    expect(second.recovered).toEqual({ restored: 4, kept: 0 });
    const after = second.emulator.peek(contact.name);
    expect(after.map((m) => [m.body, m.messageId, m.inFlight, m.attributes.ApproximateReceiveCount])).toEqual(
      [
        ['a2', before[0]!.messageId, false, '1'],
        ['a3', before[1]!.messageId, false, '0'],
        ['b1', before[2]!.messageId, false, '0'],
      ],
    );
    expect(after[0]!.attributes).toMatchObject({
      MessageGroupId: 'A',
      MessageDeduplicationId: 'dedup-a2',
      SentTimestamp: before[0]!.attributes.SentTimestamp,
    });
    const [parked] = second.emulator.peek(second.queue('parked').name);
    expect(parked).toMatchObject({
      body: 'p1',
      messageAttributes: { reason: { StringValue: 'unknown-event' } },
    });

    // The group order holds, and a resend of an accepted message is still deduplicated.
    await send(second.client, contact.url, 'a2', 'A');
    const { Messages: again = [] } = await second.client.send(
      new ReceiveMessageCommand({ QueueUrl: contact.url, MaxNumberOfMessages: 10, AttributeNames: ['All'] }),
    );
    expect(again.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([
      ['a2', '2'],
      ['a3', '1'],
      ['b1', '1'],
    ]);
  });

  it('is compacted to the live messages on start and on close', async () => {
    const first = await start(journalPath);
    const url = first.queue('activity').url;
    for (let i = 0; i < 20; i++) await send(first.client, url, `m${i}`, `G${i % 3}`);
    const { Messages = [] } = await first.client.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }),
    );
    for (const message of Messages) {
      await first.client.send(
        new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }),
      );
    }
    const grown = readFileSync(journalPath, 'utf8').trim().split('\n').length;
    first.client.destroy();
    await first.emulator.close();

    const lines = readFileSync(journalPath, 'utf8').trim().split('\n');
    expect(grown).toBeGreaterThan(20);
    expect(lines).toHaveLength(20 - Messages.length);
    expect(lines.every((line) => (JSON.parse(line) as { op: string }).op === 'put')).toBe(true);
  });

  it('keeps the messages of a queue that does not exist now, and ignores a torn last line', async () => {
    writeFileSync(
      journalPath,
      `${JSON.stringify({
        op: 'put',
        queue: 'gone.fifo',
        record: { MessageId: 'x', MessageBody: 'kept', attributes: { MessageGroupId: 'g' } },
      })}\n{"op":"put","queue":"crm-webhook-receiver-lo`,
    );
    const life = await start(journalPath);
    running.push(life);
    expect(life.recovered).toEqual({ restored: 0, kept: 1 });
    expect([...(readJournal(journalPath).get('gone.fifo')?.keys() ?? [])]).toEqual(['x']);
  });

  it('replays a move to a DLQ (same MessageId) as leaving the source queue, and a purge as emptying it', () => {
    const record = (id: string) => ({ MessageId: id, MessageBody: id, attributes: { MessageGroupId: 'g' } });
    const lines = [
      { op: 'put', queue: 'q.fifo', record: record('a') },
      { op: 'put', queue: 'q.fifo', record: record('b') },
      { op: 'recv', queue: 'q.fifo', counts: { a: 5 } },
      {
        op: 'put',
        queue: 'q-dlq.fifo',
        record: { ...record('a'), attributes: { ApproximateReceiveCount: '0' } },
      },
      { op: 'put', queue: 'other.fifo', record: record('c') },
      { op: 'clear', queue: 'other.fifo' },
    ];
    writeFileSync(journalPath, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);

    const state = readJournal(journalPath);

    expect([...(state.get('q.fifo')?.keys() ?? [])]).toEqual(['b']);
    expect([...(state.get('q-dlq.fifo')?.keys() ?? [])]).toEqual(['a']);
    expect(state.get('other.fifo')?.size).toBe(0);
  });
});
