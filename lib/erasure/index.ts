/** Erasure of personal data: on the CRM's hard delete (the workers), on request, for a whole tenant. */
export { carriesRow } from './carries.js';
export { type RowErasedDetail, rowErasedEntry } from './erased-event.js';
export {
  type ErasureDeps,
  type ErasureQueue,
  type ErasureReport,
  type ErasureTarget,
  eraseOnRequest,
  eraseTenant,
} from './request.js';
export { erasedBody, eraseRowData } from './row.js';
export { sqsErasureQueue, sqsStandardErasureQueue } from './sqs-queues.js';
export { ErasureTargetError, erasureTarget } from './target.js';
