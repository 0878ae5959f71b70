import {
  ListMessageMoveTasksCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';

export interface RedriveResult {
  queue: string;
  /** The move task's status (COMPLETED, RUNNING, FAILED, ...). */
  status: string;
  moved: number;
  failureReason?: string;
}

export interface MoveBack {
  /** The queue's key, named in the result. */
  queue: string;
  /** The dead-letter queue's ARN. */
  sourceArn: string;
  /** The queue's ARN; without it SQS moves the messages back to the queue they came from. */
  destinationArn?: string;
}

/**
 * Moves a dead-letter queue's messages back with SQS's own StartMessageMoveTask (FIFO order per group
 * kept), then follows the task with ListMessageMoveTasks until it ends or `timeoutMs` passes.
 */
export async function moveBack(sqs: SQSClient, move: MoveBack, timeoutMs: number): Promise<RedriveResult> {
  await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: move.sourceArn,
      ...(move.destinationArn !== undefined && { DestinationArn: move.destinationArn }),
    }),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Results = [] } = await sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: move.sourceArn, MaxResults: 1 }),
    );
    const task = Results[0];
    if (task && task.Status !== 'RUNNING') {
      return {
        queue: move.queue,
        status: task.Status ?? 'UNKNOWN',
        moved: task.ApproximateNumberOfMessagesMoved ?? 0,
        ...(task.FailureReason ? { failureReason: task.FailureReason } : {}),
      };
    }
    if (Date.now() > deadline) {
      return { queue: move.queue, status: 'RUNNING', moved: task?.ApproximateNumberOfMessagesMoved ?? 0 };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
