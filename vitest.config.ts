import { defineConfig } from 'vitest/config';
import { FUZZ_FACTOR } from './test/support/property.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // fast-check's seed: the same inputs on every run, new ones under `npm run test:fuzz`.
    setupFiles: ['test/support/property-setup.ts'],
    // Property tests run FUZZ_FACTOR times as many inputs under `npm run test:fuzz`.
    testTimeout: 30_000 * FUZZ_FACTOR,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
