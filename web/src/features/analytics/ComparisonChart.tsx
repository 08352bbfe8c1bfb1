/** A saved comparison's data on uPlot: every member on one chart, or one chart per member. */
import { unitOf } from '@kilowatch/core';
import { Card, SimpleGrid, Text } from '@mantine/core';
import { useMemo } from 'react';
import type { ComparisonData } from '../../api/analytics/get-comparison-data.ts';
import { buildChartData, buildChartOptions, type SeriesSpec } from '../../charts/options.ts';
import { type ChartTheme, SERIES_COLORS } from '../../charts/palette.ts';
import { UPlotChart } from '../../charts/UPlotChart.tsx';
import { useChartTheme } from '../../charts/useChartTheme.ts';
import { useT } from '../../i18n/i18n.ts';
import { paramName } from '../../shared/devices/paramNames.ts';
import { memberKey, mergeBlocks } from './comparisonForm.ts';

const HEIGHT = 260;

type T = ReturnType<typeof useT>['t'];

function memberLabel(t: T, b: { deviceName: string; param: string }): string {
  return `${b.deviceName} · ${paramName(t, b.param)}`;
}

/** Bands when the answer carries each bucket's min and max (long ranges). */
function hasBands(b: { data: { series: Record<string, { min?: unknown; max?: unknown }> } }): boolean {
  return Object.values(b.data.series).some((s) => s.min !== undefined && s.max !== undefined);
}

function Chart({
  title,
  specs,
  cols,
  tz,
  theme,
  testId,
}: {
  title: string;
  specs: SeriesSpec[];
  cols: Parameters<typeof buildChartData>[0];
  tz: string;
  theme: ChartTheme;
  testId: string;
}) {
  const { t } = useT();
  const options = useMemo(
    () =>
      buildChartOptions({
        specs,
        tz,
        theme,
        width: 600,
        height: HEIGHT,
        labels: { min: t('details.min'), max: t('details.max'), time: t('col.time') },
      }),
    [specs, tz, theme, t],
  );
  const data = useMemo(() => buildChartData(cols, specs), [cols, specs]);
  return (
    <Card withBorder padding="sm" data-testid={testId}>
      <Text fw={600} size="sm" mb={4}>
        {title}
      </Text>
      {cols.t.length === 0 ? (
        <Text c="dimmed" ta="center" py={HEIGHT / 3}>
          {t('common.empty')}
        </Text>
      ) : (
        <UPlotChart
          options={options}
          data={data}
          theme={theme}
          label={title}
          resetLabel={t('details.resetZoom')}
        />
      )}
    </Card>
  );
}

export function ComparisonCharts({
  data,
  grouped,
  tz,
  name,
}: {
  data: ComparisonData;
  grouped: boolean;
  tz: string;
  name: string;
}) {
  const theme = useChartTheme();
  const { t } = useT();
  const merged = useMemo(() => mergeBlocks(data.blocks), [data]);
  const groupedSpecs = useMemo<SeriesSpec[]>(
    () =>
      data.blocks.map((b, i) => ({
        param: memberKey(b),
        label: memberLabel(t, b),
        unit: unitOf(b.param) ?? '',
        color: SERIES_COLORS[i % SERIES_COLORS.length]!,
        band: hasBands(b),
      })),
    [data, t],
  );
  const separate = useMemo(
    () =>
      data.blocks.map((b, i) => ({
        key: memberKey(b),
        title: memberLabel(t, b),
        cols: b.data,
        specs: [
          {
            param: b.param,
            label: memberLabel(t, b),
            unit: unitOf(b.param) ?? '',
            color: SERIES_COLORS[i % SERIES_COLORS.length]!,
            band: hasBands(b),
          },
        ] as SeriesSpec[],
      })),
    [data, t],
  );

  if (grouped) {
    return (
      <div data-testid="comparison-charts" data-view="grouped">
        <Chart
          title={name}
          specs={groupedSpecs}
          cols={merged}
          tz={tz}
          theme={theme}
          testId="comparison-chart"
        />
      </div>
    );
  }
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="comparison-charts" data-view="separate">
      {separate.map((c) => (
        <Chart
          key={c.key}
          title={c.title}
          specs={c.specs}
          cols={c.cols}
          tz={tz}
          theme={theme}
          testId="comparison-chart"
        />
      ))}
    </SimpleGrid>
  );
}
