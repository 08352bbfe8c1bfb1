/**
 * The dashboards of server deployments: Grafana's own InfluxDB data source on the rollups Kilowatch writes
 * (household energy, power quality, fleet; the layout of influx/README.md).
 */
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as table from '@grafana/grafana-foundation-sdk/table';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { base, en50160, en50160Band, PHASES } from './base.ts';
import { INFLUXDB, InfluxQlQueryBuilder } from './queries.ts';

/** Server deployments: Grafana's own InfluxDB data source on the rollups Kilowatch writes. */
export function influxDirect(): dashboard.Dashboard {
  // Each rollup point is one bucket (a local day in rollup_1d, an hour in rollup_1h): the fields are read as
  // they are, no GROUP BY time, and the phases stacked (a single-phase meter has only phase 1).
  const phaseFields = PHASES.flatMap((p) => [
    `"eai${p}_e" AS "L${p} import"`,
    `"eae${p}_e" AS "L${p} export"`,
  ]).join(', ');
  const stacked = new common.StackingConfigBuilder().mode(common.StackingMode.Normal).group('energy');
  const stackedBars = (title: string, fromWhere: string) =>
    new timeseries.PanelBuilder()
      .title(title)
      .datasource(INFLUXDB)
      .unit('kwatth')
      .stacking(stacked)
      .drawStyle(common.GraphDrawStyle.Bars)
      .fillOpacity(70)
      .withTarget(new InfluxQlQueryBuilder('A', `SELECT ${phaseFields} FROM ${fromWhere}`))
      .height(9)
      .span(24);
  return base(
    'kilowatch-influxdb-direct',
    'Kilowatch · InfluxDB direct',
    'Reads the InfluxDB that Kilowatch writes (server deployments): energy per local day from rollup_1d, per hour from rollup_1h, voltages from rollup_15m. Devices are their MAC keys.',
    'now-7d',
  )
    .withVariable(influxDeviceVariable(false))
    .withVariable(influxTzVariable())
    .withPanel(
      stackedBars(
        'Energy per local day, phases stacked',
        `"rollup_1d" WHERE "device" = '$device' AND "tz" = '$tz' AND $timeFilter`,
      ),
    )
    .withPanel(
      stackedBars(
        'Energy per hour, phases stacked',
        `"rollup_1h" WHERE "device" = '$device' AND $timeFilter`,
      ),
    )
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Voltage per phase (15-minute means)')
        .datasource(INFLUXDB)
        .unit('volt')
        .withTarget(new InfluxQlQueryBuilder('A', influxPhaseMeans('vave')))
        .height(9)
        .span(24),
    )
    .build();
}

/** The device variable of the InfluxDB-direct dashboards: MAC keys from the `device` tag. */
function influxDeviceVariable(multi: boolean): dashboard.QueryVariableBuilder {
  return new dashboard.QueryVariableBuilder('device')
    .label('Device (MAC)')
    .datasource(INFLUXDB)
    .query('SHOW TAG VALUES FROM "readings" WITH KEY = "device"')
    .definition('SHOW TAG VALUES FROM "readings" WITH KEY = "device"')
    .refresh(dashboard.VariableRefresh.OnDashboardLoad)
    .multi(multi)
    .includeAll(multi);
}

function influxTzVariable(): dashboard.QueryVariableBuilder {
  return new dashboard.QueryVariableBuilder('tz')
    .label('Time zone of the days')
    .datasource(INFLUXDB)
    .query('SHOW TAG VALUES FROM "rollup_1d" WITH KEY = "tz"')
    .definition('SHOW TAG VALUES FROM "rollup_1d" WITH KEY = "tz"')
    .refresh(dashboard.VariableRefresh.OnDashboardLoad);
}

/** Bucket means of a gauge per phase from the 15-minute rollup (exact at any coarser grouping). */
function influxPhaseMeans(stem: string): string {
  return `SELECT ${PHASES.map((p) => `sum("${stem}${p}_sum") / sum("${stem}${p}_count") AS "L${p}"`).join(', ')} FROM "rollup_15m" WHERE "device" = '$device' AND $timeFilter GROUP BY time($__interval) fill(none)`;
}

function influxPhasePanel(title: string, stem: string, unit: string): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title(title)
    .datasource(INFLUXDB)
    .unit(unit)
    .lineWidth(1)
    .withTarget(new InfluxQlQueryBuilder('A', influxPhaseMeans(stem)));
}

/** 10-minute means of one phase's voltage from the raw readings (EN 50160's averaging), optionally only those in the band. */
function tenMinuteMeans(phase: number, within: boolean): string {
  const inner = `SELECT mean("vave${phase}") AS "m" FROM "readings" WHERE "device" = '$device' AND $timeFilter GROUP BY time(10m) fill(none)`;
  const band = within ? ` WHERE "m" >= ${en50160.low} AND "m" <= ${en50160.high}` : '';
  return `SELECT count("m") AS "L${phase} ${within ? 'within EN 50160' : 'all'}" FROM (${inner})${band}`;
}

/** Server deployments: power quality per phase from the InfluxDB Kilowatch writes. */
export function influxPowerQuality(): dashboard.Dashboard {
  const query = (refId: string, q: string) => new InfluxQlQueryBuilder(refId, q);
  const counts = new stat.PanelBuilder()
    .title('EN 50160: 10-minute mean voltages inside 207–253 V, and all')
    .description(
      'Counts of 10-minute mean voltages per phase from the raw readings (windows aligned to the clock, as the JSON API counts them); EN 50160 asks for 95 % of a week’s inside.',
    )
    .datasource(INFLUXDB)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']))
    .graphMode(common.BigValueGraphMode.None)
    .decimals(0)
    .height(6)
    .span(24);
  PHASES.forEach((p, i) => {
    counts.withTarget(query(String.fromCharCode(65 + 2 * i), tenMinuteMeans(p, true)).table());
    counts.withTarget(query(String.fromCharCode(66 + 2 * i), tenMinuteMeans(p, false)).table());
  });
  return base(
    'kilowatch-influxdb-power-quality',
    'Kilowatch · Power quality per phase (InfluxDB direct)',
    'Reads the InfluxDB that Kilowatch writes (server deployments): voltage, current, power and power factor per phase from rollup_15m, voltage extremes, and EN 50160’s 10-minute means from the readings. Devices are their MAC keys; the device’s own limit bands are on the JSON API dashboard.',
    'now-2d',
  )
    .withVariable(influxDeviceVariable(false))
    .withPanel(
      en50160Band(influxPhasePanel('Voltage per phase (bucket means), EN 50160 band', 'vave', 'volt'))
        .height(10)
        .span(24),
    )
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Voltage extremes per phase')
        .datasource(INFLUXDB)
        .unit('volt')
        .lineWidth(1)
        .withTarget(
          query(
            'A',
            `SELECT ${PHASES.map((p) => `min("vave${p}_min") AS "L${p} min", max("vave${p}_max") AS "L${p} max"`).join(', ')} FROM "rollup_15m" WHERE "device" = '$device' AND $timeFilter GROUP BY time($__interval) fill(none)`,
          ),
        )
        .height(8)
        .span(12),
    )
    .withPanel(influxPhasePanel('Current per phase', 'iave', 'amp').height(8).span(12))
    .withPanel(influxPhasePanel('Active power per phase', 'pave', 'watt').height(8).span(12))
    .withPanel(influxPhasePanel('Power factor per phase', 'pfave', 'none').min(-1).max(1).height(8).span(12))
    .withPanel(counts)
    .build();
}

/** Server deployments: every (or the chosen) device side by side from the InfluxDB Kilowatch writes. */
export function influxFleet(): dashboard.Dashboard {
  const devices = `"device" =~ /^$device$/`;
  const perPhase = (c: 'eai' | 'eae', label: string) =>
    PHASES.map((p) => `sum("${c}${p}_e") AS "L${p} ${label}"`).join(', ');
  return base(
    'kilowatch-influxdb-fleet',
    'Kilowatch · Fleet comparison (InfluxDB direct)',
    'Reads the InfluxDB that Kilowatch writes (server deployments): energy per local day from rollup_1d, power and voltage per device from rollup_15m, and each device’s import and export in the range. Devices are their MAC keys.',
    'now-30d',
  )
    .withVariable(influxDeviceVariable(true))
    .withVariable(influxTzVariable())
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Energy imported per local day, by device and phase')
        .datasource(INFLUXDB)
        .unit('kwatth')
        .drawStyle(common.GraphDrawStyle.Bars)
        .fillOpacity(60)
        .withTarget(
          new InfluxQlQueryBuilder(
            'A',
            `SELECT ${PHASES.map((p) => `"eai${p}_e" AS "L${p}"`).join(', ')} FROM "rollup_1d" WHERE ${devices} AND "tz" = '$tz' AND $timeFilter GROUP BY "device"`,
          ).alias('$tag_device $col'),
        )
        .height(9)
        .span(24),
    )
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Active power, all phases, by device')
        .datasource(INFLUXDB)
        .unit('watt')
        .withTarget(
          new InfluxQlQueryBuilder(
            'A',
            `SELECT sum("pave_sum") / sum("pave_count") AS "pave" FROM "rollup_15m" WHERE ${devices} AND $timeFilter GROUP BY time($__interval), "device" fill(none)`,
          ).alias('$tag_device'),
        )
        .height(8)
        .span(12),
    )
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Mean voltage, by device')
        .datasource(INFLUXDB)
        .unit('volt')
        .withTarget(
          new InfluxQlQueryBuilder(
            'A',
            `SELECT sum("vave_sum") / sum("vave_count") AS "vave" FROM "rollup_15m" WHERE ${devices} AND $timeFilter GROUP BY time($__interval), "device" fill(none)`,
          ).alias('$tag_device'),
        )
        .height(8)
        .span(12),
    )
    .withPanel(
      new table.PanelBuilder()
        .title('Energy in the range by device (local days)')
        .datasource(INFLUXDB)
        .unit('kwatth')
        .decimals(2)
        .withTarget(
          new InfluxQlQueryBuilder(
            'A',
            `SELECT ${perPhase('eai', 'import')}, ${perPhase('eae', 'export')} FROM "rollup_1d" WHERE ${devices} AND "tz" = '$tz' AND $timeFilter GROUP BY "device"`,
          ).table(),
        )
        .height(9)
        .span(24),
    )
    .build();
}
