/**
 * InfluxDB line protocol and InfluxQL quoting. Every name and value that reaches the server goes through
 * these functions, so a device key or parameter name can never break a line or a statement.
 */

export type FieldValue = number | string;

/** Measurement names: commas and spaces are escaped. */
export function escapeMeasurement(name: string): string {
  assertPlain(name, 'measurement');
  return name.replace(/[, ]/g, (c) => `\\${c}`);
}

const NEEDS_ESCAPE = /[\\,= \n\r]/;
const keyCache = new Map<string, string>();

/** Tag keys, tag values and field keys: commas, equals signs and spaces are escaped. */
export function escapeKey(key: string): string {
  // Field keys repeat on every line: plain names pass through, escaped ones are remembered.
  if (!NEEDS_ESCAPE.test(key) && key.length > 0) return key;
  const hit = keyCache.get(key);
  if (hit !== undefined) return hit;
  assertPlain(key, 'key');
  const out = key.replace(/[,= ]/g, (c) => `\\${c}`);
  if (keyCache.size < 10_000) keyCache.set(key, out);
  return out;
}

/** String field values are double-quoted; quotes and backslashes escaped. */
export function quoteString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Floats always: InfluxDB types a field by its first write, and every Kilowatch field is a float. */
export function formatFloat(v: number): string {
  if (!Number.isFinite(v)) throw new RangeError(`field value must be finite, got ${v}`);
  return Object.is(v, -0) ? '0' : String(v);
}

/**
 * InfluxDB 1.x keeps a backslash in a name or tag literally (it unescapes only `\,`, `\=` and `\ `), so a
 * name ending in one cannot be written at all: names with backslashes or line breaks are refused.
 */
function assertPlain(s: string, what: string): void {
  if (s.length === 0) throw new RangeError(`line protocol ${what} must not be empty`);
  if (/[\n\r]/.test(s)) throw new RangeError(`line protocol ${what} must not contain a line break`);
  if (s.includes('\\')) throw new RangeError(`line protocol ${what} must not contain a backslash`);
}

/**
 * One line: `measurement,tag=v field=1.5 1700000000000`. Tags are sorted (the server's own order, so it
 * does less work); fields keep their order. Timestamp in the precision the write request names.
 */
export function encodeLine(
  measurement: string,
  tags: Record<string, string>,
  fields: Record<string, FieldValue>,
  ts: number,
): string {
  let line = escapeMeasurement(measurement);
  for (const k of Object.keys(tags).sort()) {
    const v = tags[k]!;
    line += `,${escapeKey(k)}=${escapeKey(v)}`;
  }
  let sep = ' ';
  for (const k in fields) {
    const v = fields[k]!;
    line += `${sep}${escapeKey(k)}=${typeof v === 'number' ? formatFloat(v) : quoteString(v)}`;
    sep = ',';
  }
  if (sep === ' ') throw new RangeError('line protocol point needs at least one field');
  if (!Number.isSafeInteger(ts)) throw new RangeError(`timestamp must be an integer, got ${ts}`);
  return `${line} ${ts}`;
}

/** InfluxQL identifier: `"name"` with quotes and backslashes escaped. */
export function ident(name: string): string {
  return `"${name.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** InfluxQL string literal: `'value'` with quotes and backslashes escaped. */
export function literal(value: string): string {
  return `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/** InfluxQL time literal for epoch milliseconds (RFC 3339, which every v1 API accepts). */
export function timeLiteral(ms: number): string {
  return `'${new Date(ms).toISOString()}'`;
}
