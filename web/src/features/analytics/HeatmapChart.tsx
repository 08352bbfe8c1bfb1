/**
 * The heatmap drawn on one canvas with @nivo/heatmap (no per-cell DOM: a year of hours is 8,760 cells).
 * Lazily imported by the heatmap section, so nivo loads only there. The legend is plain HTML.
 */
import type { Heatmap } from '@kilowatch/core';
import { Box, Group, Paper, Stack, Text } from '@mantine/core';
import { ResponsiveHeatMapCanvas, type TooltipProps } from '@nivo/heatmap';
import { memo, useCallback, useMemo } from 'react';
import { formatValue } from '../../charts/options.ts';
import { AXIS_COLORS, type ChartTheme } from '../../charts/palette.ts';
import { useT } from '../../i18n/i18n.ts';
import {
  cellLabel,
  colorDomain,
  colorScale,
  legendGradient,
  legendTicks,
  NO_DATA_COLORS,
  rowHeight,
  thinTicks,
  weekdayName,
} from './heatmapScale.ts';

type Datum = { x: string | number; y: number | null };

export interface HeatmapChartProps {
  heatmap: Heatmap;
  theme: ChartTheme;
  userTz: string;
  label: string;
}

const MARGIN = { top: 28, right: 8, bottom: 8, left: 76 };

function HeatmapChartImpl({ heatmap, theme, userTz, label }: HeatmapChartProps) {
  const { t, locale } = useT();
  const { kind, tz: deviceTz, unit } = heatmap;
  // The API answer already has nivo's shape; keep one reference per answer (no re-layout on hover).
  const data = heatmap.rows as { id: string; data: Datum[] }[];
  const domain = useMemo(() => colorDomain(data), [data]);
  const scale = useMemo(() => colorScale(domain, theme), [domain, theme]);
  const colors = useCallback((cell: { value: number | null }) => scale(cell.value), [scale]);
  const perRow = rowHeight(data.length);
  const height = MARGIN.top + MARGIN.bottom + perRow * Math.max(1, data.length);
  const xs = useMemo(() => (data[0]?.data ?? []).map((c) => c.x), [data]);
  const ids = useMemo(() => data.map((r) => r.id), [data]);

  const axisTop = useMemo(
    () => ({
      tickSize: 0,
      tickPadding: 6,
      tickValues: thinTicks(xs, kind === 'yearly' ? 8 : 12),
      format: (x: string | number) => (kind === 'yearly' ? String(x).slice(5) : String(x)),
    }),
    [xs, kind],
  );
  const axisLeft = useMemo(
    () => ({
      tickSize: 0,
      tickPadding: 6,
      tickValues: thinTicks(ids, Math.max(2, Math.floor((perRow * ids.length) / 16))),
      format: (id: string) => (kind === 'weekly' || kind === 'yearly' ? weekdayName(id, locale) : id),
    }),
    [ids, perRow, kind, locale],
  );
  const nivoTheme = useMemo(() => {
    const { stroke } = AXIS_COLORS[theme];
    return {
      text: { fill: stroke, fontSize: 11 },
      axis: { ticks: { text: { fill: stroke, fontSize: 11 } } },
    };
  }, [theme]);

  const Tooltip = useCallback(
    ({ cell }: TooltipProps<Datum>) => (
      <Paper shadow="sm" p={6} withBorder data-testid="heatmap-tooltip">
        <Text size="xs">{cellLabel(kind, cell.serieId, cell.data.x, deviceTz, userTz, locale)}</Text>
        <Text size="sm" fw={600}>
          {cell.value === null ? t('analytics.noData') : formatValue(cell.value, unit)}
        </Text>
      </Paper>
    ),
    [kind, deviceTz, userTz, locale, unit, t],
  );

  return (
    <Stack gap="xs">
      <Box
        h={height}
        role="img"
        aria-label={label}
        data-testid="heatmap-canvas"
        style={{ width: '100%', minWidth: 0 }}
      >
        <ResponsiveHeatMapCanvas<Datum, object>
          data={data}
          margin={MARGIN}
          colors={colors}
          emptyColor={NO_DATA_COLORS[theme]}
          enableLabels={false}
          animate={false}
          xInnerPadding={0.04}
          yInnerPadding={data.length > 60 ? 0 : 0.06}
          borderWidth={0}
          axisTop={axisTop}
          axisLeft={axisLeft}
          theme={nivoTheme}
          tooltip={Tooltip}
          hoverTarget="cell"
          activeOpacity={1}
          inactiveOpacity={1}
        />
      </Box>
      <HeatmapLegend
        domainMin={domain?.min ?? null}
        domainMax={domain?.max ?? null}
        clipped={domain?.clipped ?? false}
        unit={unit}
        theme={theme}
      />
    </Stack>
  );
}

function HeatmapLegend({
  domainMin,
  domainMax,
  clipped,
  unit,
  theme,
}: {
  domainMin: number | null;
  domainMax: number | null;
  clipped: boolean;
  unit: string;
  theme: ChartTheme;
}) {
  const { t } = useT();
  const ticks =
    domainMin === null || domainMax === null ? [] : legendTicks({ min: domainMin, max: domainMax });
  return (
    <Group gap="md" wrap="wrap" align="flex-start" data-testid="heatmap-legend">
      <Stack gap={2} style={{ flex: '1 1 200px', maxWidth: 360 }}>
        <Text size="xs" fw={600} data-testid="heatmap-unit">
          {unit ? t('analytics.legendUnit', { unit }) : t('analytics.legend')}
        </Text>
        <Box h={12} style={{ background: legendGradient(theme), borderRadius: 2 }} aria-hidden />
        <Group justify="space-between" gap={4} wrap="nowrap">
          {ticks.map((v, i) => (
            <Text key={v} size="xs" c="dimmed">
              {clipped && i === ticks.length - 1 ? `≥ ${formatValue(v, '')}` : formatValue(v, '')}
            </Text>
          ))}
        </Group>
      </Stack>
      <Group gap={6} wrap="nowrap" mt={18}>
        <Box w={14} h={14} style={{ background: NO_DATA_COLORS[theme], borderRadius: 2 }} aria-hidden />
        <Text size="xs">{t('analytics.noData')}</Text>
      </Group>
    </Group>
  );
}

const HeatmapChart = memo(HeatmapChartImpl);
export default HeatmapChart;
