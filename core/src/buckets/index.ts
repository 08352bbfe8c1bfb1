/**
 * Time buckets and intervals, one home for every layer (engines render these rules to SQL or InfluxQL; the
 * API and the web client call them): the interval catalogue, local days and months with their equal-length
 * runs and fine rollup, phase combining, billing periods.
 */
export * from './billing.ts';
export * from './calendar.ts';
export * from './intervals.ts';
export * from './phases.ts';
