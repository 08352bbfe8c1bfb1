/** A location's prosumer settlement per billing period (docs/api.md §Prosumer settlement). */
import * as v from 'valibot';
import { RangeInstantSchema } from './telemetry.ts';

export const SettlementQuerySchema = v.object({
  from: RangeInstantSchema,
  to: RangeInstantSchema,
});

const amount = v.number();

export const SettlementPeriodSchema = v.object({
  /** The billing period (the first one starts on the scheme's first day). */
  period: v.object({ start: v.string(), end: v.string() }),
  scheme: v.picklist(['net-metering', 'net-billing']),
  /** Credit earned in the period: kWh banked (net-metering) or the export's value (net-billing). */
  credited: amount,
  /** What credit may be drawn against: the billed import in kWh, or its energy cost. */
  drawable: amount,
  /** Credit drawn, oldest first. */
  used: amount,
  /** Of `drawable`, what no credit covered. */
  payable: amount,
  /** Credit that lapsed in the period unused. */
  expired: amount,
  /** Credit left at the period's end. */
  left: amount,
  /** Of `left`, what lapses by the end of the next period unless drawn. */
  expiring: amount,
});

export const SettlementSchema = v.object({
  locationId: v.number(),
  scheme: v.picklist(['net-metering', 'net-billing']),
  installedKw: v.nullable(v.number()),
  since: v.string(),
  /** Net-metering's banked share of the export (0.8 up to 10 kW, 0.7 above, by default). */
  ratio: v.nullable(v.number()),
  /** `kWh` (net-metering) or the currency of the deposit (net-billing: the tariff's). */
  unit: v.string(),
  tz: v.string(),
  /** The netting step: an hour, or a quarter in a zone whose hours do not nest. */
  step: v.picklist(['1h', '15m']),
  creditMonths: v.number(),
  periods: v.array(SettlementPeriodSchema),
  /** Steps that exported without a price (net-billing): credited nothing, never valued at zero. */
  unpriced: v.array(v.string()),
  /** Steps that imported outside the tariff (net-billing): no energy cost to offset. */
  uncosted: v.array(v.string()),
});
export type SettlementAnswer = v.InferOutput<typeof SettlementSchema>;
