import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Files run in parallel against one Redis and one Postgres; each isolates
    // itself with fresh tenants and hotspots.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
