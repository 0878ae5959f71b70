import { rowWorkerHandler } from './row-worker.js';

/**
 * SQS (entities FIFO queue: person, sale, lists, custom tables, ... ) → rows and events tables,
 * partial batch failures per message group.
 */
export const handler = rowWorkerHandler('entities');
