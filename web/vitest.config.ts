import { defineProject } from 'vitest/config';

// Unit tests (pure logic, node environment). Browser tests live in e2e/ (vitest.e2e.config.ts).
export default defineProject({
  test: {
    name: 'web',
    environment: 'node',
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
