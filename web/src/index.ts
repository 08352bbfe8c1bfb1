/** Public entry of @kilowatch/web for other packages (benchmarks): pure chart builders. */
export { buildChartData, buildChartOptions, type SeriesSpec } from './charts/options.ts';
