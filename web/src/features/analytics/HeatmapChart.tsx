/**
 * The heatmap drawn on one canvas with @nivo/heatmap (no per-cell DOM: a year of hours is 8,760 cells).
 * Lazily imported by the heatmap section, so nivo loads only there. The legend is plain HTML.
 * The cell still filling (today so far, or this hour on a daily heatmap) is left out of the colour scale
 * and drawn hatched, its tooltip saying so: a half-day is not a low day.
 */
import type { Heatmap } from '@kilowatch/core';
import { Box, Group, Paper, Stack, Text } from '@mantine/core';
import { useElementSize } from '@mantine/hooks';
import { type CellCanvasRendererProps, ResponsiveHeatMapCanvas, type TooltipProps } from '@nivo/heatmap';
import { memo, useCallback, useMemo } from 'react';
import { formatValue } from '../../charts/options.ts';
import { AXIS_COLORS, type ChartTheme } from '../../charts/palette.ts';
import { useT } from '../../i18n/i18n.ts';
import { formatDay, formatMonth } from '../../lib/time.ts';
import {
  cellLabel,
  colorDomain,
  colorScale,
  fitTicks,
  legendGradient,
  legendTicks,
  NO_DATA_COLORS,
  type PartialCell,
  partialCell,
  rowHeight,
  thinTicks,
  weekdayName,
} from './heatmapScale.ts';

/** Width of a top-axis label in px (11 px digits), with room between two labels. */
const labelPx = (text: string) => text.length * 6.6 + 10;

type Datum = { x: string | number; y: number | null };

export interface HeatmapChartProps {
  heatmap: Heatmap;
  theme: ChartTheme;
  userTz: string;
  label: string;
  /** The clock the cell still filling is judged by (the browser's). */
  now?: number;
}

/** The hatching of the cell still filling: stripes over the page's background, and an outline. */
const PARTIAL_COLORS: Record<ChartTheme, { background: string; stripe: string }> = {
  light: { background: '#ffffff', stripe: '#495057' },
  dark: { background: '#1a1b1e', stripe: '#ced4da' },
};

function drawCell<D extends Datum>(
  ctx: CanvasRenderingContext2D,
  { cell }: CellCanvasRendererProps<D>,
  partial: PartialCell | null,
  theme: ChartTheme,
) {
  const left = cell.x - cell.width / 2;
  const top = cell.y - cell.height / 2;
  ctx.save();
  ctx.globalAlpha = cell.opacity;
  if (partial && cell.serieId === partial.row && cell.data.x === partial.x) {
    const { background, stripe } = PARTIAL_COLORS[theme];
    ctx.fillStyle = background;
    ctx.fillRect(left, top, cell.width, cell.height);
    ctx.beginPath();
    ctx.rect(left, top, cell.width, cell.height);
    ctx.clip();
    ctx.strokeStyle = stripe;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let d = -cell.height; d < cell.width; d += 5) {
      ctx.moveTo(left + d, top + cell.height);
      ctx.lineTo(left + d + cell.height, top);
    }
    ctx.stroke();
    ctx.lineWidth = 2;
    ctx.strokeRect(left, top, cell.width, cell.height);
  } else {
    ctx.fillStyle = cell.color;
    ctx.fillRect(left, top, cell.width, cell.height);
  }
  ctx.restore();
}

const MARGIN = { top: 28, right: 8, bottom: 8, left: 76 };

function HeatmapChartImpl({ heatmap, theme, userTz, label, now }: HeatmapChartProps) {
  const { t, locale } = useT();
  const { kind, tz: deviceTz, unit } = heatmap;
  // The API answer already has nivo's shape; keep one reference per answer (no re-layout on hover).
  const data = heatmap.rows as { id: string; data: Datum[] }[];
  const partial = useMemo(
    () => partialCell(kind, data, deviceTz, now ?? Date.now()),
    [kind, data, deviceTz, now],
  );
  const domain = useMemo(() => colorDomain(data, 0.99, partial), [data, partial]);
  const scale = useMemo(() => colorScale(domain, theme), [domain, theme]);
  const colors = useCallback((cell: { value: number | null }) => scale(cell.value), [scale]);
  const perRow = rowHeight(data.length);
  const height = MARGIN.top + MARGIN.bottom + perRow * Math.max(1, data.length);
  const xs = useMemo(() => (data[0]?.data ?? []).map((c) => c.x), [data]);
  const ids = useMemo(() => data.map((r) => r.id), [data]);

  // The top axis names as many columns as fit the chart's width without their labels touching.
  const { ref: boxRef, width } = useElementSize();
  const formatX = useCallback(
    (x: string | number) => (kind === 'yearly' ? formatDay(String(x), locale, 'dayMonth') : String(x)),
    [kind, locale],
  );
  const xTicks = useMemo(() => {
    const widest = Math.max(0, ...xs.map((x) => labelPx(formatX(x))));
    return fitTicks(xs, kind === 'yearly' ? 8 : 12, width - MARGIN.left - MARGIN.right, widest);
  }, [xs, kind, width, formatX]);
  const axisTop = useMemo(
    () => ({ tickSize: 0, tickPadding: 6, tickValues: xTicks, format: formatX }),
    [xTicks, formatX],
  );
  const axisLeft = useMemo(
    () => ({
      tickSize: 0,
      tickPadding: 6,
      tickValues: thinTicks(ids, Math.max(2, Math.floor((perRow * ids.length) / 16))),
      format: (id: string) =>
        kind === 'weekly' || kind === 'yearly'
          ? weekdayName(id, locale)
          : kind === 'monthly'
            ? formatMonth(id, locale, 'shortMonth')
            : formatDay(id, locale),
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

  const renderCell = useCallback(
    (ctx: CanvasRenderingContext2D, props: CellCanvasRendererProps<Datum>) =>
      drawCell(ctx, props, partial, theme),
    [partial, theme],
  );

  const Tooltip = useCallback(
    ({ cell }: TooltipProps<Datum>) => {
      const filling = partial !== null && cell.serieId === partial.row && cell.data.x === partial.x;
      return (
        <Paper shadow="sm" p={6} withBorder data-testid="heatmap-tooltip">
          <Text size="xs">{cellLabel(kind, cell.serieId, cell.data.x, deviceTz, userTz, locale)}</Text>
          {filling && (
            <Text size="xs" fw={600} data-testid="heatmap-tooltip-partial">
              {t(kind === 'daily' ? 'analytics.partialHour' : 'analytics.partialDay')}
            </Text>
          )}
          <Text size="sm" fw={600}>
            {cell.value === null ? t('analytics.noData') : formatValue(cell.value, unit)}
          </Text>
        </Paper>
      );
    },
    [kind, deviceTz, userTz, locale, unit, t, partial],
  );

  return (
    <Stack gap="xs">
      <Box
        ref={boxRef}
        h={height}
        role="img"
        aria-label={label}
        data-testid="heatmap-canvas"
        data-partial={partial ? `${partial.row}|${partial.x}` : undefined}
        data-columns={xs.length}
        data-x-ticks={JSON.stringify(xTicks.map((x) => [xs.indexOf(x), formatX(x)]))}
        style={{ width: '100%', minWidth: 0 }}
      >
        <ResponsiveHeatMapCanvas<Datum, object>
          data={data}
          margin={MARGIN}
          colors={colors}
          renderCell={renderCell}
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
        partial={partial !== null}
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
  partial,
  unit,
  theme,
}: {
  domainMin: number | null;
  domainMax: number | null;
  clipped: boolean;
  partial: boolean;
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
            <Text key={v} size="xs" c="dimmed" data-testid="heatmap-tick">
              {clipped && i === ticks.length - 1 ? `≥ ${formatValue(v, '')}` : formatValue(v, '')}
            </Text>
          ))}
        </Group>
      </Stack>
      <Group gap={6} wrap="nowrap" mt={18}>
        <Box w={14} h={14} style={{ background: NO_DATA_COLORS[theme], borderRadius: 2 }} aria-hidden />
        <Text size="xs">{t('analytics.noData')}</Text>
      </Group>
      {partial && (
        <Group gap={6} wrap="nowrap" mt={18} data-testid="heatmap-partial-legend">
          <Box
            w={14}
            h={14}
            style={{
              background: `repeating-linear-gradient(135deg, ${PARTIAL_COLORS[theme].stripe} 0 1.5px, ${PARTIAL_COLORS[theme].background} 1.5px 5px)`,
              border: `2px solid ${PARTIAL_COLORS[theme].stripe}`,
              borderRadius: 2,
            }}
            aria-hidden
          />
          <Text size="xs">{t('analytics.partialLegend')}</Text>
        </Group>
      )}
    </Group>
  );
}

const HeatmapChart = memo(HeatmapChartImpl);
export default HeatmapChart;
