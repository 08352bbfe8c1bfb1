/**
 * How the server's log reads (`KW_LOG_FORMAT`, docs/configuration.md): pino's JSON lines when stdout is a
 * file, a pipe or a log collector (and whatever reads them: harnesses, `docker logs | jq`), and one short
 * line of text per entry on a terminal, where a person reads it:
 *
 *   14:03:07 INFO  request completed 200 2.1 ms reqId=req-1
 *   14:03:09 WARN  demo history: writing failed (Out of Memory Error: …); trying once more
 *
 * The text form is made from the JSON line pino writes, so both forms carry the same entries.
 */

export type LogFormat = 'json' | 'pretty';

/** The format in use: the one asked for (`KW_LOG_FORMAT`), else text on a terminal and JSON otherwise. */
export function chooseLogFormat(asked: LogFormat | undefined, isTTY: boolean | undefined): LogFormat {
  return asked ?? (isTTY ? 'pretty' : 'json');
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** Fields the line shows in its own way, or not at all (the same on every line). */
const SHOWN_APART = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'req', 'res', 'responseTime', 'err']);

const two = (n: number) => String(n).padStart(2, '0');
const firstLine = (s: string) => s.split('\n', 1)[0]!.trim();
const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One JSON log entry as a line of text: local time, level, message, then the request, the status and
 * the response time where there are any, an error's type and the first line of its message (a DuckDB
 * error goes on for paragraphs), and the other fields as `key=value`. Errors and fatal entries keep their
 * stack's frames on the lines below. A line that is not a JSON object is given back as it is.
 */
export function formatLogLine(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line.replace(/\n$/, '');
  }
  if (!isRecord(entry)) return line.replace(/\n$/, '');
  const parts: string[] = [];
  if (typeof entry.time === 'number') {
    const t = new Date(entry.time);
    parts.push(`${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`);
  }
  const level = typeof entry.level === 'number' ? (LEVELS[entry.level] ?? String(entry.level)) : 'INFO';
  parts.push(level.padEnd(5));
  if (typeof entry.msg === 'string' && entry.msg !== '') parts.push(entry.msg);
  const req = entry.req;
  if (isRecord(req) && typeof req.method === 'string') parts.push(`${req.method} ${String(req.url ?? '')}`);
  const res = entry.res;
  if (isRecord(res) && res.statusCode !== undefined) parts.push(String(res.statusCode));
  if (typeof entry.responseTime === 'number') parts.push(`${entry.responseTime.toFixed(1)} ms`);
  const err = entry.err;
  let frames: string[] = [];
  if (isRecord(err)) {
    const message = typeof err.message === 'string' ? firstLine(err.message) : '';
    const type = typeof err.type === 'string' ? err.type : 'Error';
    // pino's message is the error's own when none was given: not twice.
    if (message !== entry.msg) parts.push(`(${type}${message ? `: ${message}` : ''})`);
    if (typeof err.stack === 'string' && typeof entry.level === 'number' && entry.level >= 50) {
      frames = err.stack.split('\n').filter((l) => /^\s+at /.test(l));
    }
  }
  for (const [key, value] of Object.entries(entry)) {
    if (!SHOWN_APART.has(key) && value !== undefined) parts.push(`${key}=${fieldValue(value)}`);
  }
  return [parts.join(' '), ...frames].join('\n');
}

/** An error's message in one line (its first): for a log line that tells what happened and goes on. */
export function errorInOneLine(e: unknown): string {
  return firstLine(e instanceof Error ? e.message : String(e));
}

/** A pino destination that writes each entry as `formatLogLine` has it, to `out` (stdout by default). */
export function prettyDestination(out: { write(text: string): unknown } = process.stdout): {
  write(line: string): void;
} {
  return {
    write(chunk: string) {
      // pino writes one entry per call, each ending in a newline.
      for (const line of chunk.split('\n')) if (line !== '') out.write(`${formatLogLine(line)}\n`);
    },
  };
}
