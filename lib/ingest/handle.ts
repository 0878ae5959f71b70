import { MessageTooLargeError, type QueueSender } from '../queue/port.js';
import { type Answer, okAnswer, problemAnswer, unavailableAnswer } from './answers.js';
import type { Decision } from './decision.js';
import { decide } from './pipeline.js';
import type { DeliveryPolicy, DeliveryRequest } from './request.js';

export interface DeliveryResponse extends Answer {
  decision: Decision;
  /** Milliseconds spent waiting for the queue, when a message was sent. */
  enqueueMs?: number;
  /** Why the queue did not take the message (answered 413 or 503). */
  error?: unknown;
}

/**
 * Runs {@link decide} and, for accepted and parked deliveries, sends the message and answers 200
 * only once the queue acknowledged it (the registration check is answered 200 at once). A message
 * too large for the queue is a 413; any other queue failure a 503 with Retry-After. The time budget
 * belongs to the queue adapter (bounded attempts and socket timeouts).
 */
export async function handleDelivery(
  request: DeliveryRequest,
  policy: DeliveryPolicy,
  queue: QueueSender,
): Promise<DeliveryResponse> {
  const decision = decide(request, policy);
  if (decision.kind === 'reject') {
    return { ...problemAnswer(decision.status, decision.reason, decision.detail), decision };
  }
  if (decision.kind === 'test') return { ...okAnswer(decision), decision };
  const started = performance.now();
  try {
    await queue.send(decision.message);
  } catch (error) {
    const answer =
      error instanceof MessageTooLargeError
        ? problemAnswer(413, 'body-too-large', 'the body does not fit in one queue message')
        : unavailableAnswer();
    return { ...answer, decision, enqueueMs: performance.now() - started, error };
  }
  return { ...okAnswer(decision), decision, enqueueMs: performance.now() - started };
}
