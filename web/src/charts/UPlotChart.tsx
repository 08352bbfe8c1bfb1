/**
 * One uPlot chart, created once per mount the way vmui does it; data, series, scales and size then
 * change through small effects, so a live reading or a resize never rebuilds the chart.
 */
import { ActionIcon, Box, Tooltip } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import { AXIS_COLORS, type ChartTheme } from './palette.ts';

export const RESIZE_DEBOUNCE_MS = 200;

export interface UPlotChartProps {
  options: uPlot.Options;
  data: uPlot.AlignedData;
  theme: ChartTheme;
  /** Accessible name of the canvas region. */
  label: string;
  resetLabel?: string;
  onCreate?: (u: uPlot) => void;
}

function sameSeries(a: readonly uPlot.Series[], b: readonly uPlot.Series[]): boolean {
  return a.length === b.length && a.every((s, i) => s.label === b[i]?.label && s.stroke === b[i]?.stroke);
}

export function UPlotChart({
  options,
  data,
  theme,
  label,
  resetLabel = 'Reset zoom',
  onCreate,
}: UPlotChartProps) {
  const boxRef = useRef<HTMLDivElement>(null);
  const plotRef = useRef<uPlot | null>(null);
  const latest = useRef({ options, data, onCreate });
  latest.current = { options, data, onCreate };
  const zoomedRef = useRef(false);
  const [zoomed, setZoomed] = useState(false);
  // What the chart was last given: effects skip values it already has (creation applies them all).
  const applied = useRef({ data, series: options.series, scales: options.scales, theme });

  // Create once.
  useEffect(() => {
    const el = boxRef.current;
    if (!el) return;
    const { options: opts, data: initial } = latest.current;
    const width = el.clientWidth || opts.width;
    const hooks: uPlot.Hooks.Arrays = {
      ...opts.hooks,
      // The y range drawn, on the box, for whoever checks it against the data (browser tests).
      setScale: [
        ...(opts.hooks?.setScale ?? []),
        (u, key) => {
          const y = u.scales.y;
          if (key !== 'y' || !y || y.min === null || y.max === null) return;
          el.dataset.yMin = String(y.min);
          el.dataset.yMax = String(y.max);
        },
      ],
      // The time labels drawn and their font, for whoever checks that the last one fits (browser tests).
      draw: [
        ...(opts.hooks?.draw ?? []),
        (u) => {
          const x = u.axes[0] as (uPlot.Axis & { _values?: readonly unknown[] | null }) | undefined;
          if (!x?._values || !Array.isArray(x.font)) return;
          el.dataset.xLabels = JSON.stringify(x._values.map(String));
          el.dataset.xFont = String(x.font[0]);
          el.dataset.xPxRatio = String(uPlot.pxRatio);
        },
      ],
      setSelect: [
        ...(opts.hooks?.setSelect ?? []),
        (u) => {
          if (u.select.width > 0) {
            zoomedRef.current = true;
            setZoomed(true);
          }
        },
      ],
    };
    const u = new uPlot({ ...opts, width, hooks }, initial, el);
    plotRef.current = u;
    latest.current.onCreate?.(u);
    return () => {
      u.destroy();
      plotRef.current = null;
    };
  }, []);

  // Data: in place; a zoomed view keeps its window while live points arrive.
  useEffect(() => {
    const u = plotRef.current;
    if (!u || applied.current.data === data) return;
    applied.current.data = data;
    u.setData(data, !zoomedRef.current);
  }, [data]);

  // Series and bands: replaced without recreating the chart.
  useEffect(() => {
    const u = plotRef.current;
    if (!u || sameSeries(applied.current.series, options.series)) return;
    for (let i = u.series.length - 1; i >= 1; i--) u.delSeries(i);
    const bands = (u as unknown as { bands?: uPlot.Band[] }).bands ?? [];
    for (let i = bands.length - 1; i >= 0; i--) u.delBand(i);
    options.series.slice(1).forEach((s, i) => {
      u.addSeries(s, i + 1);
    });
    for (const b of options.bands ?? []) u.addBand(b);
    applied.current.series = options.series;
    u.setData(latest.current.data, true);
  }, [options.series, options.bands]);

  // Scales: a new y range rule (limit lines changed) redraws with it.
  useEffect(() => {
    const u = plotRef.current;
    const range = options.scales?.y?.range;
    if (!u || applied.current.scales === options.scales || !range || !u.scales.y) return;
    applied.current.scales = options.scales;
    u.scales.y.range = range as uPlot.Scale['range'];
    u.redraw(true, true);
  }, [options.scales]);

  // Theme: axis and grid colours.
  useEffect(() => {
    const u = plotRef.current;
    if (!u || applied.current.theme === theme) return;
    applied.current.theme = theme;
    const { stroke, grid } = AXIS_COLORS[theme];
    for (const a of u.axes) {
      a.stroke = () => stroke;
      if (a.grid) a.grid.stroke = () => grid;
      if (a.ticks) a.ticks.stroke = () => grid;
    }
    u.redraw(false, true);
  }, [theme]);

  // Size: follow the container, debounced.
  useEffect(() => {
    const el = boxRef.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ro = new ResizeObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const u = plotRef.current;
        const width = el.clientWidth;
        if (u && width > 0 && width !== u.width) u.setSize({ width, height: u.height });
      }, RESIZE_DEBOUNCE_MS);
    });
    ro.observe(el);
    return () => {
      clearTimeout(timer);
      ro.disconnect();
    };
  }, []);

  const resetZoom = () => {
    const u = plotRef.current;
    zoomedRef.current = false;
    setZoomed(false);
    if (!u) return;
    const t = u.data[0];
    if (t.length) u.setScale('x', { min: t[0] as number, max: t[t.length - 1] as number });
  };

  return (
    <Box pos="relative" role="figure" aria-label={label}>
      {zoomed && (
        <Tooltip label={resetLabel}>
          <ActionIcon
            variant="light"
            size="sm"
            pos="absolute"
            top={4}
            right={4}
            style={{ zIndex: 2 }}
            onClick={resetZoom}
            aria-label={resetLabel}
          >
            ⤺
          </ActionIcon>
        </Tooltip>
      )}
      <div ref={boxRef} className="kw-chart" />
    </Box>
  );
}
