/**
 * The TelemetryStore conformance suite: every engine runs it (DuckDB in memory and on disk, InfluxDB
 * against a real server). Each test uses fresh device keys, so one store can serve the whole suite.
 * The cases live by topic in conformance/.
 *
 *   describeTelemetryStoreConformance('duckdb (memory)', () => createDuckDbStore());
 */
import { afterAll, beforeAll, describe } from 'vitest';
import type { Conformance } from './conformance/context.ts';
import { edgeCases } from './conformance/edges.ts';
import { energyCases } from './conformance/energy.ts';
import { rejectionCases } from './conformance/rejections.ts';
import { rollupCases } from './conformance/rollups.ts';
import { seriesCases } from './conformance/series.ts';
import { writeCases } from './conformance/writes.ts';
import type { TelemetryStore } from './port.ts';

export function describeTelemetryStoreConformance(label: string, open: () => Promise<TelemetryStore>): void {
  describe(`TelemetryStore conformance: ${label}`, () => {
    let store: TelemetryStore | undefined;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    const ctx: Conformance = {
      get store() {
        if (!store) throw new Error('the conformance store is not open yet');
        return store;
      },
      open,
      T0: Date.UTC(2026, 0, 5), // a Monday, 00:00 UTC
      refresh: () => ctx.store.refreshRollups(Date.UTC(2030, 0, 1)),
    };
    writeCases(ctx);
    rejectionCases(ctx);
    seriesCases(ctx);
    energyCases(ctx);
    rollupCases(ctx);
    edgeCases(ctx);
  });
}
