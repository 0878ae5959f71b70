/** The event model: the zod schemas, the registry of event families, and validation. */
export type * from './activity.js';
export * from './catalogue.js';
export type * from './contact.js';
export * from './effects.js';
export type * from './envelope.js';
export * from './parse.js';
export * from './reconciled.js';
export * from './registry.js';
export * from './states.js';
export * from './timestamp.js';
export type * from './webhook.js';
