import { defineConfig } from 'vitest/config';

// One run covers every package; each package's own vitest.config.ts sets its environment and timeouts.
export default defineConfig({
  test: {
    projects: ['*/vitest.config.ts', 'web/vitest.e2e.config.ts'],
    // A file per core at once (Vitest would take one fewer here): most suites wait on their servers. The
    // browser suite runs after the others, one file at a time (its groupOrder, web/vitest.e2e.config.ts).
    maxWorkers: '100%',
    reporters: ['default', './.ci/summary-reporter.ts'],
  },
});
