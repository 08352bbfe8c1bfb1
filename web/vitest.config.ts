import { defineProject } from 'vitest/config';

// Unit tests (pure logic, node environment) and browser tests (e2e/: headless Chromium against the real API).
export default defineProject({
  test: {
    name: 'web',
    environment: 'node',
    include: ['src/**/*.test.ts', 'e2e/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    fileParallelism: false,
  },
});
