/**
 * The generated dashboards: they build with the SDK's builders (tsc checks them against its types), the
 * checked-in JSON is what the code generates, every panel reads a provisioned data source, and every
 * JSON API query names a metric `POST /metrics` lists with payload values the protocol accepts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { COUNTER_NAMES, isQueryableParam } from '@kilowatch/core';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES, metricDef } from '../metrics.ts';
import { VARIABLE_TARGETS } from '../plugin.ts';
import { QueryTargetSchema } from '../protocol.ts';
import { ENERGY_INTERVALS, SERIES_INTERVALS, ZONE_INTERVALS } from '../resolution.ts';
import { DASHBOARDS } from './dashboards.ts';
import type { InfluxQlQuery, JsonApiQuery } from './queries.ts';
import { DASHBOARD_DIR, dashboardJson } from './write.ts';

const datasources = readFileSync(
  fileURLToPath(new URL('../../provisioning/datasources/kilowatch.yaml', import.meta.url)),
  'utf8',
);
const provisionedUids = [...datasources.matchAll(/^\s+uid: (\S+)$/gm)].map((m) => m[1]);
const INFLUX_MEASUREMENTS = ['readings', 'rollup_15m', 'rollup_30m', 'rollup_1h', 'rollup_1d'];

function panelsOf(d: dashboard.Dashboard): dashboard.Panel[] {
  return (d.panels ?? []).flatMap((p) =>
    'panels' in p ? ((p as dashboard.RowPanel).panels as dashboard.Panel[]) : [p as dashboard.Panel],
  );
}

describe.each(Object.entries(DASHBOARDS))('the %s dashboard', (name, build) => {
  const built = build();

  it('is the checked-in provisioning file (regenerate with `pnpm --filter @kilowatch/grafana run dashboards`)', () => {
    expect(readFileSync(`${DASHBOARD_DIR}${name}.json`, 'utf8')).toBe(dashboardJson(build));
  });

  it('has a uid, a title, and panels laid out on the grid', () => {
    expect(built.uid).toMatch(/^kilowatch-/);
    expect(built.title).toMatch(/^Kilowatch · /);
    const panels = panelsOf(built);
    expect(panels.length).toBeGreaterThanOrEqual(3);
    for (const p of panels) {
      expect(p.type, p.title).toMatch(/^(timeseries|stat|table|barchart)$/);
      expect(p.gridPos?.w, p.title).toBeGreaterThan(0);
      expect(p.gridPos?.h, p.title).toBeGreaterThan(0);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
  });

  it('reads only provisioned data sources, and every query names what the data source serves', () => {
    for (const v_ of built.templating?.list ?? []) {
      if (v_.datasource) expect(provisionedUids).toContain(v_.datasource.uid);
      if (v_.type === 'query' && v_.datasource?.uid === 'kilowatch-json') {
        expect(VARIABLE_TARGETS).toContain((v_.query as { query: string }).query);
      }
    }
    for (const panel of panelsOf(built)) {
      expect(provisionedUids).toContain(panel.datasource?.uid);
      for (const target of panel.targets ?? []) {
        const t = target as unknown as { datasource?: { uid?: string } };
        expect(t.datasource?.uid).toBe(panel.datasource?.uid);
        if (t.datasource?.uid === 'kilowatch-json') {
          const q = target as unknown as JsonApiQuery;
          expect(v.safeParse(QueryTargetSchema, q).success).toBe(true);
          expect(METRIC_NAMES, `${panel.title}: ${q.target}`).toContain(q.target);
          const kind = metricDef(q.target)!.kind;
          const interval = q.payload.interval;
          if (interval !== undefined) {
            expect(
              kind === 'energy' ? ENERGY_INTERVALS : kind === 'zones' ? ZONE_INTERVALS : SERIES_INTERVALS,
            ).toContain(interval);
          }
          if (q.payload.format !== undefined) expect(['timeseries', 'table']).toContain(q.payload.format);
        } else {
          const q = target as unknown as InfluxQlQuery;
          expect(q.rawQuery).toBe(true);
          const from = /FROM "([^"]+)"/.exec(q.query)?.[1];
          expect(INFLUX_MEASUREMENTS, q.query).toContain(from);
          // Every field is a catalogue parameter's rollup column: <p>_e for counters, <p>_sum/_count for gauges.
          for (const [, param, suffix] of q.query.matchAll(/"([a-z0-9]+)_(e|sum|count|min|max)"/g)) {
            expect(isQueryableParam(param!), param).toBe(true);
            if (suffix === 'e') expect(COUNTER_NAMES).toContain(param);
          }
        }
      }
    }
  });
});
