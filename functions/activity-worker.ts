import { rowWorkerHandler } from './row-worker.js';

/** SQS (activity FIFO queue) → rows and events tables, partial batch failures per message group. */
export const handler = rowWorkerHandler('activity');
