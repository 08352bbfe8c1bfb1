/** Writes the generated dashboards to provisioning/dashboards/ (`pnpm --filter @kilowatch/grafana run dashboards`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DASHBOARDS } from './dashboards.ts';

export const DASHBOARD_DIR = fileURLToPath(new URL('../../provisioning/dashboards/', import.meta.url));

export function dashboardJson(build: () => unknown): string {
  return `${JSON.stringify(build(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [name, build] of Object.entries(DASHBOARDS)) {
    writeFileSync(`${DASHBOARD_DIR}${name}.json`, dashboardJson(build));
    console.log(`wrote ${name}.json`);
  }
}
