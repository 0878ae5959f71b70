/** Base error of the store adapter; carries the table and key it was about. */
export class StoreError extends Error {
  constructor(
    message: string,
    readonly table: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}

/** The item changed between read and conditional write (another writer got there first): re-read and retry. */
export class VersionConflictError extends StoreError {
  constructor(table: string, key: string, options?: { cause?: unknown }) {
    super(`${table} item ${key} changed since it was read`, table, key, options);
    this.name = 'VersionConflictError';
  }
}

/** An item that does not have the shape the adapter writes: never read through a cast. */
export class InvalidItemError extends StoreError {
  constructor(
    table: string,
    key: string,
    readonly attributes: string[],
  ) {
    super(`${table} item ${key} is not in a stored format (${attributes.join(', ')})`, table, key);
    this.name = 'InvalidItemError';
  }
}
