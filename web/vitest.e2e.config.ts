import { defineProject } from 'vitest/config';

// Browser tests: headless Chromium against the real API (embedded deployment), one file at a time.
export default defineProject({
  test: {
    name: 'web-e2e',
    environment: 'node',
    include: ['e2e/**/*.test.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    fileParallelism: false,
    // After every other project: each file drives an API process and Chromium, which take both cores.
    sequence: { groupOrder: 1 },
  },
});
