/**
 * Where ingest reports (pino's shape, so the API's logger fits as it is): a message alone, or an object
 * first (`{ err }` for an error) and the message after it.
 */
export interface IngestLogger {
  info(o: object | string, msg?: string): void;
  warn(o: object | string, msg?: string): void;
  error(o: object | string, msg?: string): void;
}

/** An `IngestLogger` on the console, for use without one (`info` is dropped unless `verbose`). */
export function consoleLogger(verbose = false): IngestLogger {
  const line =
    (write: (...a: unknown[]) => void) =>
    (o: object | string, msg?: string): void => {
      if (typeof o === 'string') {
        write(o);
        return;
      }
      const { err, ...rest } = o as { err?: unknown };
      const detail = err instanceof Error ? err.message : err === undefined ? '' : String(err);
      write([msg ?? '', detail].filter(Boolean).join(': '), ...(Object.keys(rest).length ? [rest] : []));
    };
  return {
    info: verbose ? line(console.log) : () => {},
    warn: line(console.warn),
    error: line(console.error),
  };
}

/** Sleeps `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
