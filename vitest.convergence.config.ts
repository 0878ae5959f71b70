import { defineConfig } from 'vitest/config';

/**
 * `npm run test:convergence`: reconciliation's end-to-end proof (`npm start` killed for 20 s, the CRM
 * simulator disabling its webhook, then convergence), apart from `npm test`: about a minute bound to
 * real time (the 20 s outage, the CRM's 1 s and 4 s retries, two starts), too easily starved in a parallel run.
 */
export default defineConfig({
  test: {
    include: ['test/convergence/**/*.test.ts'],
    environment: 'node',
    testTimeout: 360_000,
    hookTimeout: 60_000,
    restoreMocks: true,
    unstubEnvs: true,
    reporters: ['verbose'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
