import { api } from './api.js';

/**
 * Where the page's data comes from (GET /source), asked once: `{ kind: 'local' | 'aws', name, live,
 * parkedOnRequest, parkedNote }`.
 */
export const source = api.source();
