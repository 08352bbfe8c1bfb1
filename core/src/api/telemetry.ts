/**
 * Telemetry message schemas (docs/api.md §Telemetry, §Locations and tariffs stats): series, energy, heatmaps,
 * the data log, consumption tables, comparisons, voltage quality and simulated tariff costs. Query strings
 * arrive as text; lists are comma-separated.
 */
import * as v from 'valibot';
import { MAX_POINTS, MIN_POINTS, POINTS_OUT_OF_RANGE } from '../analytics/downsample.ts';
import { ENERGY_INTERVALS, SERIES_INTERVALS } from '../buckets/intervals.ts';
import { TARIFF_GROUPS } from '../tariff/calendar.ts';
import { IdSchema, idText, isIdText } from './common.ts';
import { MESSAGES } from './messages.ts';

const QUERYABLE_PARAM = /^[a-z][a-z0-9_]{0,40}$/;

/** `from` / `to`: ISO 8601 instants; a missing one reads "Date range is required.". */
export const RangeInstantSchema = v.pipe(
  v.string(MESSAGES.dateRangeRequired),
  v.trim(),
  v.nonEmpty(MESSAGES.dateRangeRequired),
  v.isoTimestamp(MESSAGES.invalidTimestamp),
);

/** A comma-separated list of parameter names (`vave1,vave2`), at least one. */
export const ParamListSchema = v.pipe(
  v.string(MESSAGES.selectParameter),
  v.transform((s) =>
    s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  ),
  v.minLength(1, MESSAGES.selectParameter),
  v.maxLength(64, MESSAGES.selectParameter),
  v.check((list) => list.every((p) => QUERYABLE_PARAM.test(p)), MESSAGES.selectParameter),
);

/** A comma-separated list of ids (`1,2,3`). */
export const IdListSchema = v.pipe(
  v.string(MESSAGES.fieldEmpty),
  v.transform((s) =>
    s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  ),
  v.check((list) => list.every(isIdText), MESSAGES.fieldEmpty),
  v.transform((list) => [...new Set(list.map(Number))]),
  v.minLength(1, MESSAGES.fieldEmpty),
  v.maxLength(100, MESSAGES.fieldEmpty),
);

/** `raw` computes the same answer straight from raw readings (benchmarks compare the two paths). */
export const SourceSchema = v.optional(v.picklist(['auto', 'raw'] as const, 'Choose auto or raw.'));

export const STATS = ['avg', 'min', 'max'] as const;
export const HEATMAP_KINDS = ['daily', 'weekly', 'monthly', 'yearly'] as const;

const StatListSchema = v.pipe(
  v.string(),
  v.transform((s) =>
    s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  ),
  v.check(
    (list) => list.length > 0 && list.every((p) => (STATS as readonly string[]).includes(p)),
    'Choose avg, min or max.',
  ),
  v.transform((list) => [...new Set(list)] as (typeof STATS)[number][]),
);

/**
 * `points`: how many points a series may hold, the client's plot width in device pixels; a longer answer
 * comes back reduced to about that many (`reduceSeries`, docs/api.md §Telemetry).
 */
export const PointsSchema = v.optional(
  v.pipe(
    v.string(POINTS_OUT_OF_RANGE),
    v.regex(/^[0-9]{1,6}$/, POINTS_OUT_OF_RANGE),
    v.transform(Number),
    v.minValue(MIN_POINTS, POINTS_OUT_OF_RANGE),
    v.maxValue(MAX_POINTS, POINTS_OUT_OF_RANGE),
  ),
);

export const SeriesQuerySchema = v.object({
  params: ParamListSchema,
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  interval: v.optional(v.picklist(SERIES_INTERVALS, 'Choose raw, 15m, 30m, 1h or 1d.')),
  stats: v.optional(StatListSchema),
  points: PointsSchema,
  source: SourceSchema,
});
export type SeriesQueryInput = v.InferOutput<typeof SeriesQuerySchema>;

export const RangeQuerySchema = v.object({ from: RangeInstantSchema, to: RangeInstantSchema });

export const EnergyQuerySchema = v.object({
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  interval: v.optional(v.picklist(ENERGY_INTERVALS, 'Choose 15m, 30m, 1h, 1d or 1mo.'), '1d'),
  source: SourceSchema,
});

export const HeatmapQuerySchema = v.object({
  param: v.pipe(v.string(MESSAGES.selectParameter), v.regex(QUERYABLE_PARAM, MESSAGES.selectParameter)),
  kind: v.picklist(HEATMAP_KINDS, 'Choose daily, weekly, monthly or yearly.'),
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  source: SourceSchema,
});

export const ReadingsQuerySchema = v.object({
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  params: v.optional(ParamListSchema),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(200))),
  limit: v.optional(
    v.pipe(
      v.string(MESSAGES.validNumber),
      v.regex(/^[0-9]{1,5}$/, MESSAGES.validNumber),
      v.transform(Number),
      v.minValue(1, 'Must be greater than or equal to 1, and less than or equal to 10000.'),
      v.maxValue(10_000, 'Must be greater than or equal to 1, and less than or equal to 10000.'),
    ),
    '100',
  ),
});

export const ConsumptionQuerySchema = v.object({
  deviceIds: IdListSchema,
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  interval: v.optional(v.picklist(['1h', '1d', '1mo'] as const, 'Choose 1h, 1d or 1mo.'), '1d'),
  source: SourceSchema,
});

export const ComparisonDataQuerySchema = v.object({
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  interval: v.optional(v.picklist(SERIES_INTERVALS, 'Choose raw, 15m, 30m, 1h or 1d.')),
  /** `avg` by default; `avg,min,max` adds each bucket's band (long ranges). */
  stats: v.optional(StatListSchema),
  points: PointsSchema,
  source: SourceSchema,
});

export const TariffStatsQuerySchema = v.object({
  deviceId: idText(MESSAGES.fieldEmpty),
  from: RangeInstantSchema,
  to: RangeInstantSchema,
});

const NumCol = v.array(v.nullable(v.number()));

export const SeriesBlockSchema = v.object({
  interval: v.string(),
  from: v.number(),
  to: v.number(),
  tz: v.string(),
  t: v.array(v.number()),
  series: v.record(
    v.string(),
    v.object({ avg: v.optional(NumCol), min: v.optional(NumCol), max: v.optional(NumCol) }),
  ),
  /** Present only when `points` reduced the answer: the points asked for and the rows the full answer held. */
  reduced: v.optional(v.object({ points: v.number(), from: v.number() })),
});
export type SeriesBlock = v.InferOutput<typeof SeriesBlockSchema>;

export const EnergySeriesSchema = v.object({
  interval: v.string(),
  tz: v.string(),
  unit: v.literal('kWh'),
  t: v.array(v.number()),
  import: NumCol,
  export: NumCol,
  balance: NumCol,
});
export type EnergySeries = v.InferOutput<typeof EnergySeriesSchema>;

export const EnergyTripleSchema = v.object({
  import: v.nullable(v.number()),
  export: v.nullable(v.number()),
  balance: v.nullable(v.number()),
});
export type EnergyTriple = v.InferOutput<typeof EnergyTripleSchema>;

export const EnergySummarySchema = v.object({
  tz: v.string(),
  unit: v.literal('kWh'),
  today: EnergyTripleSchema,
  month: EnergyTripleSchema,
  year: EnergyTripleSchema,
  total: EnergyTripleSchema,
  billingPeriod: v.object({ start: v.string(), end: v.string() }),
  billing: EnergyTripleSchema,
  /**
   * Present (true) while the meter's history is still being written (the demo's first minute): the
   * totals above then cover only part of it and are not to be shown as totals.
   */
  historyLoading: v.optional(v.boolean()),
});
export type EnergySummary = v.InferOutput<typeof EnergySummarySchema>;

export const HeatmapSchema = v.object({
  kind: v.picklist(HEATMAP_KINDS),
  param: v.string(),
  tz: v.string(),
  unit: v.string(),
  rows: v.array(
    v.object({
      id: v.string(),
      data: v.array(v.object({ x: v.union([v.string(), v.number()]), y: v.nullable(v.number()) })),
    }),
  ),
});
export type Heatmap = v.InferOutput<typeof HeatmapSchema>;

export const LatestSchema = v.object({
  ts: v.nullable(v.number()),
  values: v.record(v.string(), v.number()),
});

export const ReadingsPageSchema = v.object({
  items: v.array(v.object({ ts: v.string(), values: v.record(v.string(), v.number()) })),
  nextCursor: v.nullable(v.string()),
});

export const ConsumptionSchema = v.object({
  interval: v.string(),
  unit: v.literal('kWh'),
  rows: v.array(
    v.object({
      deviceId: v.number(),
      bucket: v.number(),
      tz: v.string(),
      import: v.nullable(v.number()),
      export: v.nullable(v.number()),
      balance: v.nullable(v.number()),
    }),
  ),
});

export const COMPARISON_MEMBERS_MAX = 16;

export const ComparisonRequestSchema = v.object({
  name: v.pipe(
    v.string(MESSAGES.comparisonName),
    v.trim(),
    v.minLength(3, MESSAGES.comparisonName),
    v.maxLength(30, MESSAGES.comparisonName),
  ),
  members: v.pipe(
    v.array(
      v.object({
        deviceId: IdSchema,
        param: v.pipe(
          v.string(MESSAGES.compareParameter),
          v.regex(QUERYABLE_PARAM, MESSAGES.compareParameter),
        ),
      }),
      MESSAGES.compareParameter,
    ),
    v.minLength(1, MESSAGES.compareParameter),
    v.maxLength(COMPARISON_MEMBERS_MAX, MESSAGES.compareParameter),
  ),
  grouped: v.optional(v.boolean(), false),
});
export type ComparisonRequest = v.InferOutput<typeof ComparisonRequestSchema>;

export const ComparisonSchema = v.object({
  id: v.number(),
  name: v.string(),
  members: v.array(v.object({ deviceId: v.number(), param: v.string() })),
  grouped: v.boolean(),
});
export type Comparison = v.InferOutput<typeof ComparisonSchema>;

export const ComparisonDataSchema = v.object({
  interval: v.string(),
  blocks: v.array(
    v.object({ deviceId: v.number(), param: v.string(), deviceName: v.string(), data: SeriesBlockSchema }),
  ),
});

const PhaseQualitySchema = v.object({
  phase: v.number(),
  samples: v.number(),
  withinWarning: v.nullable(v.number()),
  withinCritical: v.nullable(v.number()),
  withinEn50160: v.nullable(v.number()),
  en50160Met: v.nullable(v.boolean()),
});

/**
 * The longest range voltage quality is computed over: 100,000 ten-minute windows per phase, about 694 days
 * (a longer one is answered 400 "Data range is too long.").
 */
export const VOLTAGE_QUALITY_MAX_MS = 100_000 * 600_000;

export const VoltageQualitySchema = v.object({
  from: v.number(),
  to: v.number(),
  limits: v.object({ warning: v.number(), critical: v.number() }),
  phases: v.array(PhaseQualitySchema),
});

const ZoneCostSchema = v.object({ zone: v.number(), energy: v.number(), cost: v.number() });

export const TariffStatsSchema = v.object({
  tariffId: v.number(),
  deviceId: v.number(),
  group: v.picklist(TARIFF_GROUPS),
  currency: v.string(),
  tz: v.string(),
  unit: v.literal('kWh'),
  simulated: v.literal(true),
  months: v.array(
    v.object({
      month: v.string(),
      zones: v.array(ZoneCostSchema),
      energy: v.number(),
      fixed: v.number(),
      cost: v.number(),
    }),
  ),
  /** A dynamic tariff's hours with billed import and no price in the series: left out, never priced at zero. */
  unpriced: v.array(v.string()),
  total: v.object({ energy: v.number(), cost: v.number() }),
});

export const TariffComparisonSchema = v.object({
  deviceId: v.number(),
  currency: v.string(),
  tz: v.string(),
  simulated: v.literal(true),
  energy: v.number(),
  groups: v.array(
    v.object({
      group: v.picklist(TARIFF_GROUPS),
      zones: v.array(ZoneCostSchema),
      energy: v.number(),
      fixed: v.number(),
      cost: v.number(),
      prices: v.object({ zone1: v.number(), zone2: v.number(), zone3: v.number(), fixed: v.number() }),
    }),
  ),
  /**
   * The dynamic group is ranked where the location's price series prices every hour with billed import;
   * otherwise it is left out and `unpriced` names those hours (empty: the location holds no prices).
   */
  dynamic: v.object({ covered: v.boolean(), unpriced: v.array(v.string()) }),
});
