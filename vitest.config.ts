import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser tests need Chromium: `npm run test:browser` (vitest.browser.config.ts); the
    // convergence proof takes minutes: `npm run test:convergence` (vitest.convergence.config.ts).
    exclude: [...configDefaults.exclude, 'test/browser/**', 'test/convergence/**'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    restoreMocks: true,
    unstubEnvs: true,
    // Each test as it finishes, so that a long file does not leave minutes of silence.
    reporters: ['verbose'],
    // The AWS SDK's Node-version notice, once per worker and per spawned `npm start`: not for tests.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
