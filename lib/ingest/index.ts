/** The ingest: a raw request in, a decision, a queued message, an answer out. Transport-agnostic. */
export * from './answers.js';
export * from './body-checks.js';
export * from './decision.js';
export * from './envelope-view.js';
export * from './handle.js';
export * from './pipeline.js';
export * from './policy.js';
export * from './replay.js';
export * from './replay-lock.js';
export * from './replay-parked.js';
export * from './request.js';
