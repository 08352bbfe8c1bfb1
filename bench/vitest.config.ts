import { defineProject } from 'vitest/config';

// The benches' own helpers (the benches themselves run with `pnpm bench <name>`).
export default defineProject({
  test: { name: 'bench', include: ['src/**/*.test.ts'], testTimeout: 30_000 },
});
