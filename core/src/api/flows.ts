/** A location's energy flows (docs/api.md §Energy flows, docs/domain.md §Energy flows). */
import * as v from 'valibot';
import { DEVICE_ROLES, FLOW_KEYS } from '../flows.ts';
import { RangeInstantSchema } from './telemetry.ts';

export const FLOW_INTERVALS = ['15m', '1h', '1d', '1mo'] as const;
export type FlowInterval = (typeof FLOW_INTERVALS)[number];

export const FlowsQuerySchema = v.object({
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  interval: v.optional(v.picklist(FLOW_INTERVALS, 'Choose 15m, 1h, 1d or 1mo.'), '1d'),
});

const kwh = v.nullable(v.number());
const series = v.array(kwh);

/** The energies and shares the answer carries per interval and for the whole range. */
const FLOW_FIELDS = [
  'import',
  'export',
  'production',
  'charge',
  'discharge',
  'consumption',
  'subMeters',
  'untracked',
  'selfConsumption',
  'selfSufficiency',
] as const;

const flowEntries = <T extends v.GenericSchema>(schema: T) =>
  Object.fromEntries(FLOW_KEYS.map((k) => [k, schema])) as Record<(typeof FLOW_KEYS)[number], T>;
const fieldEntries = <T extends v.GenericSchema>(schema: T) =>
  Object.fromEntries(FLOW_FIELDS.map((k) => [k, schema])) as Record<(typeof FLOW_FIELDS)[number], T>;

export const FlowsSchema = v.object({
  locationId: v.number(),
  interval: v.picklist(FLOW_INTERVALS),
  tz: v.string(),
  /** The step the flows were allocated at (an hour, or a quarter where the zone's hours do not nest). */
  step: v.picklist(['15m', '1h'] as const),
  unit: v.literal('kWh'),
  /** Interval starts, ISO 8601 UTC. */
  t: v.array(v.string()),
  ...fieldEntries(series),
  /** Where the energy went, per interval: summed from each step's allocation. */
  flows: v.object(flowEntries(series)),
  /** Per interval: the sub-meters read more than the home used, or the meters disagree. */
  inconsistent: v.array(v.boolean()),
  /** The energy part of the grid import priced by the location's tariff; null without one. */
  cost: v.object({
    import: series,
    /** Net export valued at the location's price series (null where no exported step has a price). */
    exportValue: series,
    currency: v.nullable(v.string()),
    /** Starts of steps that exported without a price in the series (the first 1,000), never valued as zero. */
    unpriced: v.array(v.string()),
  }),
  /**
   * Per device of the location, what it adds in its role per interval: the grid meter's net import
   * (I − E), production, a battery's net discharge (D − C), a sub-meter's consumption.
   */
  devices: v.record(v.string(), series),
  /** Each device's role. */
  roles: v.record(v.string(), v.picklist(DEVICE_ROLES)),
  totals: v.object({
    ...fieldEntries(kwh),
    flows: v.nullable(v.object(flowEntries(v.number()))),
    inconsistent: v.boolean(),
    cost: v.object({ import: kwh, exportValue: kwh, currency: v.nullable(v.string()) }),
  }),
});
export type Flows = v.InferOutput<typeof FlowsSchema>;
