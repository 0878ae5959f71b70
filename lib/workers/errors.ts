/** Base error of the workers: a record that cannot be processed now. Carries the SQS message id. */
export class WorkerError extends Error {
  readonly eventId: string | undefined;

  constructor(
    message: string,
    readonly messageId: string,
    options?: { cause?: unknown; eventId?: string },
  ) {
    super(message, options);
    this.name = 'WorkerError';
    this.eventId = options?.eventId;
  }
}

/** The message body is not an event this worker handles (it never will be: it ends in the DLQ). */
export class InvalidRecordError extends WorkerError {
  constructor(message: string, messageId: string, options?: { cause?: unknown; eventId?: string }) {
    super(message, messageId, options);
    this.name = 'InvalidRecordError';
  }
}

/** An integrator hook threw; the row is written, the record is retried so the hook runs again. */
export class HookError extends WorkerError {
  constructor(messageId: string, eventId: string, cause: unknown) {
    super(`hook failed for event ${eventId}`, messageId, { cause, eventId });
    this.name = 'HookError';
  }
}

/** The item kept changing under us: too many concurrent writers for one row. */
export class ContentionError extends WorkerError {
  constructor(messageId: string, eventId: string, attempts: number) {
    super(`gave up after ${attempts} conflicting writes`, messageId, { eventId });
    this.name = 'ContentionError';
  }
}
