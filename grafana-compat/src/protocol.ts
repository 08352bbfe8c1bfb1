/**
 * The request and answer shapes of the simPod "JSON API" Grafana data source (its openapi.yaml and
 * README: `/metrics`, `/metric-payload-options` (older `/options`), `/query`, `/variable`, `/tag-keys`,
 * `/tag-values`), as valibot schemas: requests are parsed with them, answers are tested against them.
 * Requests are read loosely (unknown fields kept aside, Grafana adds fields between versions); answers
 * are exactly what the published shapes allow.
 */
import * as v from 'valibot';

/** A payload value as Grafana sends it: a string (variables interpolated), a list, or a number. */
const PayloadValueSchema = v.union([
  v.string(),
  v.number(),
  v.boolean(),
  v.array(v.union([v.string(), v.number()])),
]);
export const PayloadSchema = v.record(v.string(), v.nullish(PayloadValueSchema));
export type Payload = v.InferOutput<typeof PayloadSchema>;

const RawTimeFrameSchema = v.object({ from: v.optional(v.string()), to: v.optional(v.string()) });

export const MetricsRequestSchema = v.object({
  metric: v.optional(v.string()),
  payload: v.optional(PayloadSchema),
});

/** Paging of an option list (a Kilowatch extension): entries containing `search`, from `offset`, at most `limit`. */
export const PagingEntries = {
  search: v.optional(
    v.pipe(v.string('search must be text'), v.maxLength(100, 'search must be at most 100 characters')),
  ),
  offset: v.optional(
    v.pipe(
      v.number('offset must be a number'),
      v.integer('offset must be a whole number'),
      v.minValue(0, 'offset must be ≥ 0'),
    ),
  ),
  limit: v.optional(
    v.pipe(
      v.number('limit must be a number'),
      v.integer('limit must be a whole number'),
      v.minValue(1, 'limit must be ≥ 1'),
    ),
  ),
};

export const PayloadOptionsRequestSchema = v.object({
  metric: v.string('metric is required'),
  payload: v.optional(PayloadSchema, {}),
  name: v.string('name is required'),
  ...PagingEntries,
});

export const AdhocFilterSchema = v.object({
  key: v.string('adhocFilters[].key is required'),
  operator: v.optional(v.string(), '='),
  value: v.union([v.string(), v.number()], 'adhocFilters[].value is required'),
});
export type AdhocFilter = v.InferOutput<typeof AdhocFilterSchema>;

export const QueryTargetSchema = v.object({
  target: v.string('targets[].target is required'),
  refId: v.optional(v.string()),
  hide: v.optional(v.boolean()),
  /** Older plugin versions send `data`, newer ones `payload`; either may be a JSON string. */
  payload: v.optional(v.union([PayloadSchema, v.string()])),
  data: v.optional(v.union([PayloadSchema, v.string()])),
});
export type QueryTarget = v.InferOutput<typeof QueryTargetSchema>;

export const QueryRequestSchema = v.object({
  panelId: v.optional(v.union([v.string(), v.number()])),
  range: v.object(
    {
      from: v.string('range.from is required'),
      to: v.string('range.to is required'),
      raw: v.optional(RawTimeFrameSchema),
    },
    'range is required',
  ),
  rangeRaw: v.optional(RawTimeFrameSchema),
  interval: v.optional(v.string()),
  intervalMs: v.optional(
    v.pipe(v.number('intervalMs must be a number'), v.minValue(0, 'intervalMs must be ≥ 0')),
  ),
  maxDataPoints: v.optional(
    v.pipe(
      v.number('maxDataPoints must be a number'),
      v.integer('maxDataPoints must be a whole number'),
      v.minValue(1, 'maxDataPoints must be ≥ 1'),
    ),
  ),
  targets: v.array(QueryTargetSchema, 'targets must be a list'),
  adhocFilters: v.optional(v.array(AdhocFilterSchema)),
  scopedVars: v.optional(v.record(v.string(), v.unknown())),
});
export type QueryRequest = v.InferOutput<typeof QueryRequestSchema>;

export const VariableRequestSchema = v.object({
  payload: v.optional(
    v.union([
      v.string(),
      v.object({ target: v.optional(v.string()), location: v.optional(v.string()), ...PagingEntries }),
    ]),
  ),
  range: v.optional(v.unknown()),
});

export const TagValuesRequestSchema = v.object({ key: v.string('key is required'), ...PagingEntries });

// Answers.

const SelectOptionSchema = v.strictObject({ label: v.optional(v.string()), value: v.string() });

export const MetricPayloadSchema = v.strictObject({
  label: v.optional(v.string()),
  name: v.string(),
  type: v.optional(v.picklist(['select', 'multi-select', 'input', 'textarea'])),
  placeholder: v.optional(v.string()),
  reloadMetric: v.optional(v.boolean()),
  width: v.optional(v.pipe(v.number(), v.integer())),
  options: v.optional(v.array(SelectOptionSchema)),
});

export const MetricsResponseSchema = v.array(
  v.strictObject({
    label: v.optional(v.string()),
    value: v.string(),
    payloads: v.array(MetricPayloadSchema),
  }),
);
export type MetricsResponse = v.InferOutput<typeof MetricsResponseSchema>;

export const PayloadOptionsResponseSchema = v.array(SelectOptionSchema);

export const TimeSeriesAnswerSchema = v.strictObject({
  target: v.string(),
  /** `[value, epoch ms]`; the published shape has numbers only, so gaps are left out, not null. */
  datapoints: v.array(v.strictTuple([v.number(), v.number()])),
});
export type TimeSeriesAnswer = v.InferOutput<typeof TimeSeriesAnswerSchema>;

export const TableAnswerSchema = v.strictObject({
  type: v.literal('table'),
  columns: v.array(v.strictObject({ text: v.string(), type: v.optional(v.string()) })),
  /** The openapi.yaml example: every row a list of strings and numbers. */
  rows: v.array(v.array(v.union([v.string(), v.number()]))),
});
export type TableAnswer = v.InferOutput<typeof TableAnswerSchema>;

export const QueryResponseSchema = v.array(v.union([TimeSeriesAnswerSchema, TableAnswerSchema]));
export type QueryResponse = v.InferOutput<typeof QueryResponseSchema>;

export const VariableResponseSchema = v.array(v.strictObject({ __text: v.string(), __value: v.string() }));
export const TagKeysResponseSchema = v.array(v.strictObject({ type: v.string(), text: v.string() }));
export const TagValuesResponseSchema = v.array(v.strictObject({ text: v.string() }));

/** Flat rows for the Infinity data source (`GET /grafana/rows`). */
export const RowSchema = v.strictObject({
  time: v.string(),
  ts: v.number(),
  device: v.string(),
  deviceId: v.number(),
  param: v.string(),
  value: v.number(),
});
export type Row = v.InferOutput<typeof RowSchema>;
export const RowsResponseSchema = v.array(RowSchema);

export const RowsQuerySchema = v.object({
  device: v.string('device is required'),
  param: v.string('param is required'),
  from: v.string('from is required'),
  to: v.string('to is required'),
  interval: v.optional(v.string()),
  stat: v.optional(v.string()),
  format: v.optional(v.string()),
  maxDataPoints: v.optional(v.string()),
});

/** The first issue of a failed parse as one sentence: "what, where". */
export function reason(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return 'The request could not be read.';
  const path = issue.path?.map((p) => String(p.key)).join('.') ?? '';
  return path && !issue.message.startsWith(path.split('.')[0] ?? '')
    ? `${path}: ${issue.message}`
    : issue.message;
}
