/** URL search parameters of /analytics: the open section and its choices survive a reload. */
import * as v from 'valibot';

export const ANALYTICS_TABS = ['heatmap', 'consumption', 'comparisons'] as const;
export type AnalyticsTab = (typeof ANALYTICS_TABS)[number];
export const HEATMAP_KIND_VALUES = ['daily', 'weekly', 'monthly', 'yearly'] as const;

/** A record id in a URL: `?device=6` arrives as a number, `?device="6"` as a string; both read as "6". */
export const SearchIdSchema = v.pipe(v.unknown(), v.transform(String), v.regex(/^[1-9][0-9]{0,14}$/));
const ids = v.pipe(v.unknown(), v.transform(String), v.regex(/^[1-9][0-9]{0,14}(,[1-9][0-9]{0,14}){0,99}$/));
const date = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/));

/** Values that do not fit are dropped (the page falls back to its defaults), never an error page. */
export const AnalyticsSearchSchema = v.object({
  tab: v.fallback(v.optional(v.picklist(ANALYTICS_TABS)), undefined),
  device: v.fallback(v.optional(SearchIdSchema), undefined),
  param: v.fallback(v.optional(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,40}$/))), undefined),
  kind: v.fallback(v.optional(v.picklist(HEATMAP_KIND_VALUES)), undefined),
  /** Heatmap period. */
  from: v.fallback(v.optional(date), undefined),
  to: v.fallback(v.optional(date), undefined),
  /** Consumption table period. */
  cfrom: v.fallback(v.optional(date), undefined),
  cto: v.fallback(v.optional(date), undefined),
  devices: v.fallback(v.optional(ids), undefined),
  interval: v.fallback(v.optional(v.picklist(['1d', '1mo'] as const)), undefined),
  cmp: v.fallback(v.optional(SearchIdSchema), undefined),
});
export type AnalyticsSearch = v.InferOutput<typeof AnalyticsSearchSchema>;
