/** Building blocks shared by the request and response schemas of the HTTP API (docs/api.md §Conventions). */
import * as v from 'valibot';
import { isValidTimeZone } from '../time.ts';
import { MESSAGES } from './messages.ts';

/** `{ message, errors? }`: every error answer. */
export const ErrorBodySchema = v.object({
  message: v.string(),
  errors: v.optional(v.record(v.string(), v.array(v.string()))),
});
export type ErrorBody = v.InferOutput<typeof ErrorBodySchema>;

/** The largest database id: ids are PostgreSQL `integer`s, so a larger one names nothing. */
export const MAX_ID = 2_147_483_647;

/** Database ids are positive integers up to `MAX_ID`. */
export const IdSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_ID));

/** True for the text of an id (`1` .. `2147483647`): what path ids, cursors and id lists accept. */
export function isIdText(s: string): boolean {
  return /^[1-9][0-9]{0,9}$/.test(s) && Number(s) <= MAX_ID;
}

/** An id in a path or query string, as a number; anything else fails with `message`. */
export function idText(message?: string) {
  return v.pipe(v.string(message), v.check(isIdText, message), v.transform(Number));
}

/** A path `:id`: anything that is not a positive integer names nothing (404, not 400). */
export const IdParamsSchema = v.object({ id: idText() });

export const RefSchema = v.object({ id: IdSchema, name: v.string() });
export type Ref = v.InferOutput<typeof RefSchema>;

/** A required text field: missing, not a string or blank → "Field cannot be empty." */
export function requiredText(max = 200, message: string = MESSAGES.fieldEmpty) {
  return v.pipe(v.string(message), v.trim(), v.nonEmpty(message), v.maxLength(max, message));
}

/** An optional text field, stored as '' when absent. */
export function optionalText(max = 200) {
  return v.optional(
    v.pipe(v.string(MESSAGES.fieldEmpty), v.trim(), v.maxLength(max, MESSAGES.fieldEmpty)),
    '',
  );
}

/** A finite number within [min, max] with the docs/spec.md §5 messages. */
export function numberIn(min: number, max: number, rangeMessage?: string) {
  const range = rangeMessage ?? `Must be greater than or equal to ${min}, and less than or equal to ${max}.`;
  return v.pipe(
    v.number(MESSAGES.validNumber),
    v.finite(MESSAGES.validNumber),
    v.minValue(min, range),
    v.maxValue(max, range),
  );
}

/** `YYYY-MM-DD`, a day that exists (no 30 February). */
export const DateStringSchema = v.pipe(
  v.string(MESSAGES.invalidDate),
  v.isoDate(MESSAGES.invalidDate),
  v.check(
    (s) => !Number.isNaN(Date.parse(s)) && new Date(Date.parse(s)).toISOString().startsWith(s),
    MESSAGES.invalidDate,
  ),
);

/** ISO 8601 instant with a zone (`2026-03-01T00:00:00Z` or with an offset). */
export const InstantSchema = v.pipe(
  v.string(MESSAGES.invalidTimestamp),
  v.isoTimestamp(MESSAGES.invalidTimestamp),
);

export const TimeZoneSchema = v.pipe(
  v.string(MESSAGES.timezoneRequired),
  v.trim(),
  v.nonEmpty(MESSAGES.timezoneRequired),
  v.check(isValidTimeZone, MESSAGES.timezoneRequired),
);
