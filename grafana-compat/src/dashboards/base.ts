/** What every provisioned dashboard shares: its tags, the three phases, the EN 50160 band and its settings. */
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { EN50160_BAND_PERCENT, voltageBand } from '@kilowatch/core';

export const TAGS = ['kilowatch'];
export const PHASES = [1, 2, 3] as const;
export const en50160 = voltageBand(EN50160_BAND_PERCENT);

export function base(
  uid: string,
  title: string,
  description: string,
  from = 'now-7d',
): dashboard.DashboardBuilder {
  return new dashboard.DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags(TAGS)
    .timezone('browser')
    .time({ from, to: 'now' })
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .refresh('1m')
    .readonly();
}

/** A time series panel's thresholds drawn as the EN 50160 voltage band (dashed, red outside). */
export function en50160Band(panel: timeseries.PanelBuilder): timeseries.PanelBuilder {
  return panel
    .thresholds(
      new dashboard.ThresholdsConfigBuilder().mode(dashboard.ThresholdsMode.Absolute).steps([
        { value: null, color: 'red' },
        { value: en50160.low, color: 'transparent' },
        { value: en50160.high, color: 'red' },
      ]),
    )
    .thresholdsStyle(
      new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed),
    );
}
