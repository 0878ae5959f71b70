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
