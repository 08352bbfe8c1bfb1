/** Command-line options of the benches: `--name value`. */

/** A number option, or `dflt` when it is absent or not a number. */
export function arg(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : dflt;
}

/** A text option, or undefined when it is absent. */
export function strArg(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}
