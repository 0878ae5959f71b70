import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DeleteMessageCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalQueue } from '../../local/emulators/resources.js';
import { OpsError } from '../../scripts/ops/commands.js';
import { type DashboardClients, main } from '../../scripts/ops.js';
import { UsageError } from '../../tools/command-line.js';
import { type LocalQueues, startLocalQueues } from '../support/local-queues.js';
import { describedStack, opsClients, outputsWith } from '../support/stack-outputs.js';

/**
 * `npm run ops -- reconcile` against the SQS emulator: the stage's outputs (mocked CloudFormation) name
 * the emulator's reconcile queue, and the request lands on it as the reconcile function would read it.
 */
let local: LocalQueues;
let reconcile: LocalQueue;
let clients: DashboardClients;
const cloudFormation = new CloudFormationClient({ region: 'eu-west-1' });
const stack = mockClient(cloudFormation);

beforeAll(async () => {
  local = await startLocalQueues({ stage: 'opsreconcile' });
  reconcile = local.queues.find((queue) => queue.key === 'reconcile')!;
  stack.on(DescribeStacksCommand).resolves(describedStack(outputsWith({ ReconcileQueueUrl: reconcile.url })));
  clients = opsClients({ cloudFormation, sqs: local.client });
});
afterAll(async () => {
  stack.restore();
  await local?.close();
});
/** The queue's messages, deleted as read (FIFO holds a group while one of its messages is in flight). */
async function receive(): Promise<Message[]> {
  const { Messages = [] } = await local.client.send(
    new ReceiveMessageCommand({
      QueueUrl: reconcile.url,
      MaxNumberOfMessages: 10,
      AttributeNames: ['All'],
      WaitTimeSeconds: 0,
    }),
  );
  for (const message of Messages)
    await local.client.send(
      new DeleteMessageCommand({ QueueUrl: reconcile.url, ReceiptHandle: message.ReceiptHandle! }),
    );
  return Messages;
}

describe('npm run ops -- reconcile', () => {
  it('sends the request to the stage’s reconcile queue, grouped by context', async () => {
    const result = await main(
      [
        'reconcile',
        '--stage',
        'test',
        '--context',
        'Cust9',
        '--from',
        '2026-11-27T10:00:00Z',
        '--to',
        '2026-11-27T11:00:00Z',
        '--entities',
        'contact,person',
      ],
      clients,
    );
    const queued = {
      context: 'Cust9',
      reason: 'manual',
      from: '2026-11-27T10:00:00Z',
      to: '2026-11-27T11:00:00Z',
      entities: ['contact', 'person'],
      requestedAt: expect.any(String),
    };
    expect(result).toEqual({ queued, queueUrl: reconcile.url });
    const [message, ...more] = await receive();
    expect(more).toEqual([]);
    expect(message?.Attributes?.MessageGroupId).toBe('Cust9');
    expect(JSON.parse(message!.Body!)).toEqual(queued);
  });

  it('--full: every row, no window', async () => {
    await main(['reconcile', '--stage', 'test', '--context', 'Cust9', '--full'], clients);
    const [message] = await receive();
    expect(JSON.parse(message!.Body!)).toMatchObject({ context: 'Cust9', full: true });
    expect(JSON.parse(message!.Body!)).not.toHaveProperty('from');
  });

  it('--max-deletes: the deletes the run may apply per entity, instead of the cap', async () => {
    await main(
      ['reconcile', '--stage', 'test', '--context', 'Cust9', '--full', '--max-deletes', '40'],
      clients,
    );
    const [message] = await receive();
    expect(JSON.parse(message!.Body!)).toMatchObject({ context: 'Cust9', full: true, maxDeletes: 40 });
  });

  it.each([
    [['--from', '2026-11-27T10:00:00Z'], '--context: required'],
    [['--context', 'Cust9'], '--from: required unless full=true'],
    [['--context', 'Cust9', '--from', 'yesterday'], '--from: yesterday: an ISO 8601 time'],
    [
      ['--context', 'Cust9', '--full', '--entities', 'contakt'],
      '--entities: contakt cannot be reconciled (not an entity of the CRM)',
    ],
    [['--context', 'Cust9', '--full', '--max-deletes', 'all'], '--max-deletes: all: a whole number'],
  ])('%j: one line naming the option, nothing sent', async (args, message) => {
    const error = await main(['reconcile', '--stage', 'test', ...args], clients).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpsError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toContain('\n');
    expect(await receive()).toEqual([]);
  });

  it('an unknown option is a mistake of the command line, one line, nothing sent', async () => {
    const error = await main(['reconcile', '--stage', 'test', '--context', 'Cust9', '--ful'], clients).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe("Unknown option '--ful'");
    expect(await receive()).toEqual([]);
  });
});
