/**
 * InfluxDB line protocol, one line: `measurement[,tag=value…] field=value[,field=value…] [timestamp]`.
 * Escapes: a backslash before a comma or space in the measurement, and before a comma, equals sign or
 * space in tag keys, tag values and field keys; field strings are double-quoted with `\"` and `\\`.
 */

export type FieldValue =
  | { type: 'number'; text: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'string'; value: string };

export interface ProtocolLine {
  measurement: string;
  tags: Record<string, string>;
  fields: [string, FieldValue][];
  /** The timestamp as written (an integer in the precision's unit), when the line has one. */
  timestamp?: string;
}

/** Reads up to an unescaped stop character; returns the text and the index of the stop (or the end). */
function readEscaped(s: string, i: number, stops: string, escapable: string): [string, number] {
  let out = '';
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length && escapable.includes(s[i + 1]!)) {
      out += s[i + 1];
      i += 2;
      continue;
    }
    if (stops.includes(c)) break;
    out += c;
    i++;
  }
  return [out, i];
}

const INTEGER = /^[+-]?\d+i$/;
const UNSIGNED = /^\d+u$/;
const FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;
const TRUE = new Set(['t', 'T', 'true', 'True', 'TRUE']);
const FALSE = new Set(['f', 'F', 'false', 'False', 'FALSE']);

function fieldValue(raw: string): FieldValue | undefined {
  if (INTEGER.test(raw) || UNSIGNED.test(raw)) return { type: 'number', text: raw.slice(0, -1) };
  if (FLOAT.test(raw)) return { type: 'number', text: raw };
  if (TRUE.has(raw)) return { type: 'boolean', value: true };
  if (FALSE.has(raw)) return { type: 'boolean', value: false };
  return undefined;
}

/** Parses one line (not blank, not a comment), or gives the reason it is not line protocol. */
export function parseProtocolLine(line: string): ProtocolLine | string {
  const s = line.trimStart();
  const [measurement, start] = readEscaped(s, 0, ', ', ', ');
  let i = start;
  if (measurement === '') return 'no measurement';
  const tags: Record<string, string> = {};
  while (s[i] === ',') {
    const [key, j] = readEscaped(s, i + 1, '=, ', ',= ');
    if (s[j] !== '=' || key === '') return `bad tag after '${measurement}'`;
    const [value, k] = readEscaped(s, j + 1, ', ', ',= ');
    if (value === '') return `tag '${key}' has no value`;
    tags[key] = value;
    i = k;
  }
  if (s[i] !== ' ') return 'no fields';
  while (s[i] === ' ') i++;
  const fields: [string, FieldValue][] = [];
  for (;;) {
    const [key, j] = readEscaped(s, i, '=, ', ',= ');
    if (s[j] !== '=' || key === '')
      return key === '' ? 'a field without a name' : `field '${key}' has no value`;
    i = j + 1;
    if (s[i] === '"') {
      let value = '';
      i++;
      let closed = false;
      while (i < s.length) {
        const c = s[i]!;
        if (c === '\\' && (s[i + 1] === '"' || s[i + 1] === '\\')) {
          value += s[i + 1];
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        value += c;
        i++;
      }
      if (!closed) return `the string of field '${key}' is not closed`;
      fields.push([key, { type: 'string', value }]);
    } else {
      let stop = i;
      while (stop < s.length && s[stop] !== ',' && s[stop] !== ' ') stop++;
      const raw = s.slice(i, stop);
      const v = fieldValue(raw);
      if (!v) return `field '${key}' has a bad value '${raw}'`;
      fields.push([key, v]);
      i = stop;
    }
    if (s[i] === ',') {
      i++;
      continue;
    }
    break;
  }
  const rest = s.slice(i).trim();
  if (rest === '') return { measurement, tags, fields };
  if (!/^-?\d+$/.test(rest)) return `bad timestamp '${rest}'`;
  return { measurement, tags, fields, timestamp: rest };
}

const PER_MS = { ns: 1_000_000n, us: 1_000n, ms: 1n } as const;

/** A line's timestamp in epoch milliseconds (ns and µs cut to whole milliseconds). */
export function protocolInstant(timestamp: string, precision: 'ns' | 'us' | 'ms' | 's'): number {
  const t = BigInt(timestamp);
  if (precision === 's') return Number(t * 1000n);
  const per = PER_MS[precision];
  // Floor division, so that a negative remainder rounds toward the past as the store's milliseconds do.
  const q = t / per;
  return Number(t < 0n && q * per !== t ? q - 1n : q);
}
