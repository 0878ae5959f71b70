import { defineConfig } from 'vitest/config';

/** `npm run test:browser`: the dashboard in Debian's Chromium (/usr/bin/chromium), apart from `npm test`. */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 90_000,
    restoreMocks: true,
    unstubEnvs: true,
  },
});
