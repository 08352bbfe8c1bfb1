/** What the ingest bench's parts share: its progress log and its command-line options. */
export const log = (msg: string) => process.stderr.write(`[ingest bench] ${msg}\n`);

export function arg(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : dflt;
}

export function strArg(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}
