import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // 2 cores: a few forks at most; the sandbox already uses worker threads inside a test.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    globalSetup: ['test/setup/neo4j.ts', 'test/setup/services.ts'],
  },
});
