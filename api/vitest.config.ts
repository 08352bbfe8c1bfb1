import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'api',
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One PostgreSQL server per run; each test file gets its own schema.
    globalSetup: ['./src/testing/postgres-server.ts'],
  },
});
