/**
 * The dashboards on the JSON API data source (Kilowatch at /grafana): household energy, per-phase power
 * quality, fleet comparison.
 */
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as table from '@grafana/grafana-foundation-sdk/table';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { base, en50160Band, PHASES } from './base.ts';
import { JSON_API, JsonApiQueryBuilder } from './queries.ts';

/** The user's devices (`POST /variable` with "devices"), one or several. */
function deviceVariable(multi: boolean): dashboard.QueryVariableBuilder {
  return new dashboard.QueryVariableBuilder('device')
    .label('Device')
    .datasource(JSON_API)
    .query({ query: 'devices', format: 'string' })
    .definition('devices')
    .refresh(dashboard.VariableRefresh.OnDashboardLoad)
    .multi(multi)
    .includeAll(multi);
}

function adhocFilters(): dashboard.AdHocVariableBuilder {
  return new dashboard.AdHocVariableBuilder('filters').label('Filters').datasource(JSON_API);
}

function energyBars(title: string, interval: '1h' | '1d' | '1mo', device: string): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title(title)
    .datasource(JSON_API)
    .unit('kwatth')
    .decimals(2)
    .drawStyle(common.GraphDrawStyle.Bars)
    .fillOpacity(70)
    .lineWidth(1)
    .withTarget(new JsonApiQueryBuilder('A', 'energy.import').device(device).interval(interval))
    .withTarget(new JsonApiQueryBuilder('B', 'energy.export').device(device).interval(interval))
    .withTarget(new JsonApiQueryBuilder('C', 'energy.balance').device(device).interval(interval));
}

/** One device's energy summed over the dashboard's range, as a single number. */
function rangeTotal(title: string, metric: string): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .title(title)
    .datasource(JSON_API)
    .unit('kwatth')
    .decimals(1)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['sum']))
    .graphMode(common.BigValueGraphMode.None)
    .withTarget(new JsonApiQueryBuilder('A', metric).device('$device').interval('1d'))
    .height(5)
    .span(8);
}

export function householdEnergy(): dashboard.Dashboard {
  return base(
    'kilowatch-household-energy',
    'Kilowatch · Household energy',
    'Import, export and balance (netted per hour across phases) per local day and per hour, and import per tariff zone, from the meters’ own counters: reset-proof, in the location’s time zone.',
    'now-30d',
  )
    .withVariable(deviceVariable(false))
    .withVariable(adhocFilters())
    .withPanel(rangeTotal('Imported in the range', 'energy.import'))
    .withPanel(rangeTotal('Exported in the range', 'energy.export'))
    .withPanel(rangeTotal('Balance in the range', 'energy.balance'))
    .withPanel(energyBars('Energy per local day', '1d', '$device').height(9).span(24))
    .withPanel(energyBars('Energy per hour', '1h', '$device').height(9).span(24))
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Energy imported per tariff zone, per local day')
        .description(
          'Billed import (netted per hour across phases) split by the zones of the device’s tariff, as the tariff screen prices it; Polish public holidays count as holidays. Needs a tariff on the device or its location.',
        )
        .datasource(JSON_API)
        .unit('kwatth')
        .decimals(2)
        .drawStyle(common.GraphDrawStyle.Bars)
        .fillOpacity(70)
        .lineWidth(1)
        .stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal).group('zones'))
        .withTarget(new JsonApiQueryBuilder('A', 'energy.zones').device('$device').interval('1d'))
        .height(9)
        .span(16),
    )
    .withPanel(
      new table.PanelBuilder()
        .title('Energy per tariff zone, per local month')
        .datasource(JSON_API)
        .unit('kwatth')
        .decimals(2)
        .withTarget(
          new JsonApiQueryBuilder('A', 'energy.zones').device('$device').interval('1mo').format('table'),
        )
        .height(9)
        .span(8),
    )
    .withPanel(
      new table.PanelBuilder()
        .title('Daily energy')
        .datasource(JSON_API)
        .unit('kwatth')
        .decimals(3)
        .withTarget(
          new JsonApiQueryBuilder('A', 'energy.import').device('$device').interval('1d').format('table'),
        )
        .height(9)
        .span(24),
    )
    .build();
}

function phasePanel(title: string, stem: string, unit: string): timeseries.PanelBuilder {
  const panel = new timeseries.PanelBuilder().title(title).datasource(JSON_API).unit(unit).lineWidth(1);
  PHASES.forEach((p, i) => {
    panel.withTarget(new JsonApiQueryBuilder(String.fromCharCode(65 + i), `${stem}${p}`).device('$device'));
  });
  return panel;
}

export function powerQuality(): dashboard.Dashboard {
  return base(
    'kilowatch-power-quality',
    'Kilowatch · Power quality per phase',
    'Voltage, current, power and power factor per phase, the device’s warning and critical voltage bands, and the share of 10-minute mean voltages inside EN 50160’s ±10 %.',
    'now-2d',
  )
    .withVariable(deviceVariable(false))
    .withVariable(adhocFilters())
    .withPanel(
      en50160Band(
        phasePanel('Voltage per phase, with the limit bands', 'vave', 'volt')
          .withTarget(new JsonApiQueryBuilder('D', 'voltage.bands').device('$device'))
          .overrideByRegexp('/(warning|critical) (low|high)$/', [
            { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
            { id: 'color', value: { mode: 'fixed', fixedColor: 'orange' } },
          ]),
      )
        .height(10)
        .span(24),
    )
    .withPanel(phasePanel('Current per phase', 'iave', 'amp').height(8).span(12))
    .withPanel(phasePanel('Active power per phase', 'pave', 'watt').height(8).span(12))
    .withPanel(phasePanel('Power factor per phase', 'pfave', 'none').min(-1).max(1).height(8).span(12))
    .withPanel(
      new table.PanelBuilder()
        .title('Voltage quality (share of 10-minute means)')
        .description(
          'EN 50160 asks for 95 % of the 10-minute mean voltages of a week inside 230 V ± 10 %; the warning and critical bands are the device’s own limits.',
        )
        .datasource(JSON_API)
        .withTarget(new JsonApiQueryBuilder('A', 'voltage.quality').device('$device'))
        .overrideByRegexp('/^Within/', [
          { id: 'unit', value: 'percentunit' },
          { id: 'decimals', value: 1 },
        ])
        .height(8)
        .span(12),
    )
    .build();
}

export function fleetComparison(): dashboard.Dashboard {
  return base(
    'kilowatch-fleet',
    'Kilowatch · Fleet comparison',
    'Every device side by side: daily energy, power and voltage, filtered by device, location or phase.',
    'now-30d',
  )
    .withVariable(deviceVariable(true))
    .withVariable(adhocFilters())
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Energy imported per local day, by device')
        .datasource(JSON_API)
        .unit('kwatth')
        .drawStyle(common.GraphDrawStyle.Bars)
        .fillOpacity(60)
        .withTarget(new JsonApiQueryBuilder('A', 'energy.import').device('$device').interval('1d'))
        .height(9)
        .span(24),
    )
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Active power, all phases, by device')
        .datasource(JSON_API)
        .unit('watt')
        .withTarget(new JsonApiQueryBuilder('A', 'pave').device('$device'))
        .height(8)
        .span(12),
    )
    .withPanel(
      new timeseries.PanelBuilder()
        .title('Mean voltage, by device')
        .datasource(JSON_API)
        .unit('volt')
        .withTarget(new JsonApiQueryBuilder('A', 'vave').device('$device'))
        .height(8)
        .span(12),
    )
    .withPanel(
      new table.PanelBuilder()
        .title('Monthly energy by device')
        .datasource(JSON_API)
        .unit('kwatth')
        .decimals(2)
        .withTarget(
          new JsonApiQueryBuilder('A', 'energy.import').device('$device').interval('1mo').format('table'),
        )
        .withTarget(
          new JsonApiQueryBuilder('B', 'energy.export').device('$device').interval('1mo').format('table'),
        )
        .height(9)
        .span(24),
    )
    .build();
}
