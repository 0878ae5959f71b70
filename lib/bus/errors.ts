/** The base of the bus's errors (the event pattern's own is {@link PatternError} in ./pattern). */
export class BusError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BusError';
  }
}

/** subscriptions.yml (or SUBSCRIPTIONS_FILE) cannot be used; the message is one line naming the place. */
export class SubscriptionsError extends BusError {
  constructor(
    readonly file: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${file}: ${message}`, options);
    this.name = 'SubscriptionsError';
  }
}

/** An entry over EventBridge's 256 KB even with every part it may leave out left out (see buildEntry). */
export class EntryTooLargeError extends BusError {
  constructor(
    readonly eventId: string,
    readonly bytes: number,
  ) {
    super(
      `event ${eventId}: the bus entry is ${bytes} bytes with all it may leave out left out, over 262144`,
    );
    this.name = 'EntryTooLargeError';
  }
}
