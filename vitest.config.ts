import { defineConfig } from 'vitest/config';

// One run covers every package; each package's own vitest.config.ts sets its environment and timeouts.
export default defineConfig({
  test: {
    projects: ['*/vitest.config.ts', 'web/vitest.e2e.config.ts'],
    reporters: ['default', './.ci/summary-reporter.ts'],
  },
});
