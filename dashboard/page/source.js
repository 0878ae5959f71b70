import { api } from './api.js';

/**
 * Where the page's data comes from (GET /source), asked once: `{ kind: 'local' | 'aws', name, live,
 * parkedOnRequest, parkedNote, replayNote, subscriptionsNote, webhookStates }` (webhookStates: the
 * webhook states by name, in order, from lib/events/states.ts).
 */
export const source = api.source();
