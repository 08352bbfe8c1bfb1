/**
 * A location's price series (docs/api.md §Price series): energy prices per interval start, e.g. the Polish
 * market price (RCE) or a day-ahead price, per kWh in the location's tariff currency. Sent as JSON or as
 * CSV (`start,price`); starts are ISO 8601 instants on a quarter hour.
 */
import * as v from 'valibot';
import { MESSAGES } from './messages.ts';
import { RangeInstantSchema } from './telemetry.ts';

/** Rows of one upload: two years of quarter-hour prices. */
export const MAX_PRICE_ROWS = 70_176;
/** Rows a location keeps: ten years of quarter-hour prices. */
export const MAX_LOCATION_PRICES = 350_640;
/** Prices per kWh outside ±this are refused as typing mistakes (market prices can be negative). */
export const PRICE_LIMIT = 100;
const QUARTER_MS = 15 * 60_000;

/** An interval start: an ISO 8601 instant with a zone or `Z`, on a quarter hour, as epoch ms. */
export const PriceStartSchema = v.pipe(
  v.string(MESSAGES.invalidTimestamp),
  v.trim(),
  v.isoTimestamp(MESSAGES.invalidTimestamp),
  v.transform((s) => Date.parse(s)),
  v.check((t) => Number.isFinite(t) && t % QUARTER_MS === 0, MESSAGES.priceStart),
);

export const PriceValueSchema = v.pipe(
  v.number(MESSAGES.validNumber),
  v.finite(MESSAGES.validNumber),
  v.minValue(-PRICE_LIMIT, MESSAGES.priceRange),
  v.maxValue(PRICE_LIMIT, MESSAGES.priceRange),
);

export const PriceRowSchema = v.object({ start: PriceStartSchema, price: PriceValueSchema });

export const PricesRequestSchema = v.object({
  prices: v.pipe(
    v.array(PriceRowSchema, MESSAGES.pricesRequired),
    v.minLength(1, MESSAGES.pricesRequired),
    v.maxLength(MAX_PRICE_ROWS, MESSAGES.tooManyPrices),
  ),
});
export type PricesRequest = v.InferOutput<typeof PricesRequestSchema>;

export const PricesQuerySchema = v.object({ from: RangeInstantSchema, to: RangeInstantSchema });

export const PricesSchema = v.object({
  locationId: v.number(),
  prices: v.array(v.object({ start: v.string(), price: v.number() })),
});
export type Prices = v.InferOutput<typeof PricesSchema>;

export interface PriceRow {
  start: number;
  price: number;
}

/** Field errors keyed as the JSON body's (`prices.<row>.start`), rows counted from 0 without the header. */
export type PriceErrors = Record<string, string[]>;

/**
 * A CSV of `start,price` rows (a header naming them is optional; `;` separates too, and then a decimal
 * comma is read as a point). Every bad row is named; nothing is taken when one is bad.
 */
export function parsePriceCsv(text: string): { rows: PriceRow[] } | { errors: PriceErrors } {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length > 0 && /start/i.test(lines[0]!) && /price/i.test(lines[0]!)) lines.shift();
  const errors: PriceErrors = {};
  const rows: PriceRow[] = [];
  if (lines.length === 0) return { errors: { prices: [MESSAGES.pricesRequired] } };
  if (lines.length > MAX_PRICE_ROWS) return { errors: { prices: [MESSAGES.tooManyPrices] } };
  lines.forEach((line, i) => {
    const semicolon = line.includes(';');
    const cells = line.split(semicolon ? ';' : ',').map((c) => c.trim());
    if (cells.length !== 2) {
      errors[`prices.${i}`] = [MESSAGES.priceRow];
      return;
    }
    const start = v.safeParse(PriceStartSchema, cells[0]);
    const number = Number((semicolon ? cells[1]!.replace(',', '.') : cells[1]!) || Number.NaN);
    const price = v.safeParse(PriceValueSchema, number);
    if (!start.success) errors[`prices.${i}.start`] = [start.issues[0].message];
    if (!price.success) errors[`prices.${i}.price`] = [price.issues[0].message];
    if (start.success && price.success) rows.push({ start: start.output, price: price.output });
  });
  return Object.keys(errors).length > 0 ? { errors } : { rows };
}

/** The rows named twice (by their start), keyed as in `parsePriceCsv`. */
export function duplicatePriceStarts(rows: readonly PriceRow[]): PriceErrors {
  const seen = new Map<number, number>();
  const errors: PriceErrors = {};
  rows.forEach((r, i) => {
    if (seen.has(r.start)) errors[`prices.${i}.start`] = [MESSAGES.priceDuplicate];
    else seen.set(r.start, i);
  });
  return errors;
}
