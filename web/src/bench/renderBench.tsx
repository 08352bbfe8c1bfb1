/**
 * Browser side of `pnpm bench render`: draws the same year of 15-minute data for three series in
 * our chart component (API answer → typed arrays → React → uPlot) and in bare uPlot, timing each
 * from the moment the data is handed over to the end of uPlot's first draw.
 */
import 'uplot/dist/uPlot.min.css';
import { MantineProvider } from '@mantine/core';
import { type ReactNode, useMemo, useState } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, type Root } from 'react-dom/client';
import uPlot from 'uplot';
import { buildChartData, buildChartOptions, type SeriesColumns, type SeriesSpec } from '../charts/options.ts';
import { PHASE_COLORS } from '../charts/palette.ts';
import { UPlotChart } from '../charts/UPlotChart.tsx';

const SPECS: SeriesSpec[] = [1, 2, 3].map((p, i) => ({
  param: `vave${p}`,
  label: `L${p}`,
  unit: 'V',
  color: PHASE_COLORS[i] ?? '#000',
}));

function makeAnswer(points: number): SeriesColumns {
  const start = Date.UTC(2025, 0, 1);
  const t = new Array<number>(points);
  const cols = SPECS.map(() => new Array<number | null>(points));
  for (let i = 0; i < points; i++) {
    t[i] = start + i * 900_000;
    for (let s = 0; s < cols.length; s++) {
      cols[s]![i] =
        230 + 6 * Math.sin(i / 96 + s) + 2 * Math.sin(i / 7 + s * 2) + ((i * 7919 + s * 104729) % 100) / 50;
    }
  }
  const series: SeriesColumns['series'] = {};
  SPECS.forEach((s, k) => {
    series[s.param] = { avg: cols[k] };
  });
  return { t, series };
}

function options(onDraw: () => void): uPlot.Options {
  const o = buildChartOptions({
    specs: SPECS,
    tz: 'Europe/Warsaw',
    theme: 'light',
    width: 1200,
    height: 300,
  });
  return { ...o, hooks: { draw: [onDraw] } };
}

function BenchChart({ answer, onDraw }: { answer: SeriesColumns; onDraw: () => void }) {
  const data = useMemo(() => buildChartData(answer, SPECS), [answer]);
  const opts = useMemo(() => options(onDraw), [onDraw]);
  return <UPlotChart options={opts} data={data} theme="light" label="bench" />;
}

/**
 * The app mounts MantineProvider once; so does the bench. Each round mounts only a new chart under it, so
 * what is timed is the chart component: data conversion, React render, uPlot creation and first draw.
 */
let root: Root | null = null;
let setChart: ((node: ReactNode) => void) | null = null;

/** Holds the chart below the provider, so mounting one re-renders the slot only, as in the app. */
function Slot() {
  const [node, set] = useState<ReactNode>(null);
  setChart = set;
  return node;
}

function Host() {
  return (
    <MantineProvider>
      <Slot />
    </MantineProvider>
  );
}

let round = 0;

/**
 * Before each timed draw, both sides alike: the previous chart's teardown is laid out and painted (two
 * animation frames) and garbage is collected (Chromium started with `--expose-gc`), so a round is charged
 * with its own work only.
 */
async function settle(): Promise<void> {
  await new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  (globalThis as { gc?: () => void }).gc?.();
}

async function drawOurs(answer: SeriesColumns): Promise<number> {
  if (!root) {
    root = createRoot(document.getElementById('ours')!);
    flushSync(() => root!.render(<Host />));
  }
  flushSync(() => setChart!(null));
  round++;
  await settle();
  return new Promise((resolve) => {
    let t0 = 0;
    const onDraw = () => resolve(performance.now() - t0);
    t0 = performance.now();
    flushSync(() => setChart!(<BenchChart key={round} answer={answer} onDraw={onDraw} />));
  });
}

let bare: uPlot | null = null;

async function drawBare(answer: SeriesColumns): Promise<number> {
  const el = document.getElementById('bare')!;
  bare?.destroy();
  bare = null;
  // Bare uPlot gets the columns as they are, already aligned.
  const data = [answer.t, ...SPECS.map((s) => answer.series[s.param]!.avg!)] as uPlot.AlignedData;
  await settle();
  return new Promise((resolve) => {
    const t0 = performance.now();
    bare = new uPlot(
      options(() => resolve(performance.now() - t0)),
      data,
      el,
    );
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

async function run(points = 35_040, rounds = 7) {
  const answer = makeAnswer(points);
  const ours: number[] = [];
  const bareTimes: number[] = [];
  // Warm-up, then alternate so both see the same machine state.
  await drawOurs(answer);
  await drawBare(answer);
  for (let i = 0; i < rounds; i++) {
    ours.push(await drawOurs(answer));
    bareTimes.push(await drawBare(answer));
  }
  const o = median(ours);
  const b = median(bareTimes);
  return {
    points: points * SPECS.length,
    rounds,
    oursMs: o,
    bareMs: b,
    ratio: o / b,
    oursAll: ours,
    bareAll: bareTimes,
  };
}

(window as unknown as { kwRenderBench: typeof run }).kwRenderBench = run;
document.body.dataset.ready = '1';
