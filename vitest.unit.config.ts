import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:unit`: the fast loop, the `*.unit.test.ts` files (each beside the other tests of its room): pure
 * functions, fakes and small HTTP servers of the tests' own; no emulator, no `npm start`, no browser, no packaging.
 * `npm test` runs these and the rest.
 */
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['test/**/*.unit.test.ts'], reporters: ['default'] },
});
