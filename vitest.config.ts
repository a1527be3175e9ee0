import { defineConfig } from 'vitest/config';

// Forks, not threads: chDB binds one data directory per process, and each integration file
// gets its own PostgreSQL database, Redis prefix and chDB directory (see test/support).
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/every-test-asserts.ts', 'test/support/fuzz-seed.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
