/**
 * One replay of a parked queue at a time (lib/store/replay-lock.ts holds it in DynamoDB, so that the
 * dashboard and `ops replay-parked` on one stage exclude each other). A lease, not a promise: a replay
 * stays correct beside another one (see {@link replayParked}); the lock only keeps two from handing
 * the same messages back and forth.
 */
export interface ReplayLock {
  /** Takes the lock for this run; throws {@link ReplayBusyError} while another run holds it. */
  acquire(): Promise<void>;
  /** Extends this run's lease (before each batch); throws {@link ReplayBusyError} if another run took it. */
  renew(): Promise<void>;
  /** Lets the next run start; a lock another run holds by now is left alone. */
  release(): Promise<void>;
}

/** Another replay of the parked queue holds the lock: try again once it ends. */
export class ReplayBusyError extends Error {
  constructor(
    readonly since: string | undefined,
    readonly until: string | undefined,
  ) {
    super(
      `another replay of the parked queue is running${since ? ` (since ${since})` : ''}; try again when it ends` +
        `${until ? `, or after ${until} if it stopped without finishing` : ''}`,
    );
    this.name = 'ReplayBusyError';
  }
}
