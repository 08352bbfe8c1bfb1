/**
 * Answers sized to the screen (docs/api.md §Telemetry, `points`): a series answer of more rows than the
 * client can draw is cut into `points` equal slices of its time range (one per pixel column) and each
 * slice keeps what a line or band drawn at that width shows, with every extreme exact:
 *
 * - an answer whose every parameter carries `min` and `max` (the band shape) gets one row per slice: the
 *   lowest `min`, the highest `max` and the mean of the `avg`s (each bucket counted once: the buckets of
 *   an interval are equally long, so this is their time-weighted mean);
 * - any other answer keeps, per slice, the rows holding each column's first, last, lowest and highest
 *   value (M4), as they are: at most 4 rows per slice for one column.
 *
 * Every row of the result sits at a time stamp of the answer (a slice's first row's). A gap is never
 * bridged: a slice is also cut where any column starts or stops having values, so a run of nulls stays a
 * null row at its own start (one, however many slices it spans) and no value is made up for it. Pure and
 * deterministic.
 */

export const MIN_POINTS = 10;
export const MAX_POINTS = 10_000;
export const POINTS_OUT_OF_RANGE = `Must be greater than or equal to ${MIN_POINTS}, and less than or equal to ${MAX_POINTS}.`;

type Column = readonly (number | null)[];

/** The columnar answer of `/series` (and each block of a comparison's data). */
export interface SeriesColumns {
  from: number;
  to: number;
  t: readonly number[];
  series: Readonly<Record<string, Partial<Record<'avg' | 'min' | 'max', Column>>>>;
}

/** What a reduced answer says it did: the slices asked for and the rows the full answer held. */
export interface Reduction {
  points: number;
  from: number;
}

/** An answer as `reduceSeries` gives it back: the same shape, with `reduced` when rows were dropped. */
export type ReducedSeries<A extends SeriesColumns> = A & { reduced?: Reduction };

type Columns = Record<string, Partial<Record<'avg' | 'min' | 'max', (number | null)[]>>>;

/**
 * The answer drawn at `points` pixel columns: unchanged (the same object) when it holds no more rows than
 * that, or when no row could be dropped; otherwise its rows reduced as described above, with `reduced`.
 */
export function reduceSeries<A extends SeriesColumns>(answer: A, points: number): ReducedSeries<A> {
  const n = answer.t.length;
  const slices = Math.floor(points);
  if (!(slices >= 1) || n <= slices || !(answer.to > answer.from)) return answer;
  const names = Object.keys(answer.series);
  const columns: Column[] = [];
  for (const name of names) {
    const s = answer.series[name]!;
    for (const stat of ['avg', 'min', 'max'] as const) {
      const c = s[stat];
      if (c) columns.push(c);
    }
  }
  if (columns.length === 0) return answer;
  const runs = runsOf(answer, slices, columns);
  const band = names.length > 0 && names.every((p) => answer.series[p]!.min && answer.series[p]!.max);
  return band ? bandRows(answer, runs, slices) : m4Rows(answer, runs, columns, slices);
}

/**
 * Row index ranges `[start, end)`: consecutive rows of one slice in which every column is either null
 * throughout or never null. With a column that flickers between values and nulls (more cuts than twice the
 * slices), only the slices cut, and nulls inside a slice are left out of its values.
 */
function runsOf(answer: SeriesColumns, slices: number, columns: readonly Column[]): number[] {
  const { t, from, to } = answer;
  const slice = (i: number) =>
    Math.min(slices - 1, Math.max(0, Math.floor(((t[i]! - from) * slices) / (to - from))));
  const cut = (withGaps: boolean): number[] => {
    const starts = [0];
    let last = slice(0);
    for (let i = 1; i < t.length; i++) {
      const s = slice(i);
      // A gap across a slice edge stays one null row.
      let edge = s !== last && !(withGaps && columns.every((c) => c[i] === null && c[i - 1] === null));
      if (s === last && withGaps) {
        for (const c of columns) {
          if ((c[i] === null) !== (c[i - 1] === null)) {
            edge = true;
            break;
          }
        }
      }
      if (edge) starts.push(i);
      last = s;
    }
    starts.push(t.length);
    return starts;
  };
  const withGaps = cut(true);
  return withGaps.length - 1 <= 2 * slices ? withGaps : cut(false);
}

function reducedAnswer<A extends SeriesColumns>(
  answer: A,
  t: number[],
  series: Columns,
  slices: number,
): ReducedSeries<A> {
  if (t.length >= answer.t.length) return answer;
  // The same parameters and stats as the answer's, each column reduced.
  return { ...answer, t, series, reduced: { points: slices, from: answer.t.length } } as ReducedSeries<A>;
}

/** One row per run: the lowest min, the highest max, the mean of the averages (nulls left out). */
function bandRows<A extends SeriesColumns>(answer: A, starts: readonly number[], slices: number) {
  const runs = starts.length - 1;
  const t = new Array<number>(runs);
  for (let r = 0; r < runs; r++) t[r] = answer.t[starts[r]!]!;
  const series: Columns = {};
  for (const [name, s] of Object.entries(answer.series)) {
    const out: Partial<Record<'avg' | 'min' | 'max', (number | null)[]>> = {};
    if (s.avg) out.avg = perRun(s.avg, starts, mean);
    if (s.min) out.min = perRun(s.min, starts, lowest);
    if (s.max) out.max = perRun(s.max, starts, highest);
    series[name] = out;
  }
  return reducedAnswer(answer, t, series, slices);
}

type Fold = (c: Column, from: number, to: number) => number | null;

function perRun(c: Column, starts: readonly number[], fold: Fold): (number | null)[] {
  const out = new Array<number | null>(starts.length - 1);
  for (let r = 0; r < out.length; r++) out[r] = fold(c, starts[r]!, starts[r + 1]!);
  return out;
}

const mean: Fold = (c, from, to) => {
  let sum = 0;
  let count = 0;
  for (let i = from; i < to; i++) {
    const x = c[i];
    if (x !== null && x !== undefined) {
      sum += x;
      count++;
    }
  }
  return count > 0 ? sum / count : null;
};

const lowest: Fold = (c, from, to) => {
  let out: number | null = null;
  for (let i = from; i < to; i++) {
    const x = c[i];
    if (x !== null && x !== undefined && (out === null || x < out)) out = x;
  }
  return out;
};

const highest: Fold = (c, from, to) => {
  let out: number | null = null;
  for (let i = from; i < to; i++) {
    const x = c[i];
    if (x !== null && x !== undefined && (out === null || x > out)) out = x;
  }
  return out;
};

/** Per run, the rows of each column's first, last, lowest and highest value (the run's first row when all null). */
function m4Rows<A extends SeriesColumns>(
  answer: A,
  starts: readonly number[],
  columns: readonly Column[],
  slices: number,
) {
  const keep: number[] = [];
  const picked = new Set<number>();
  for (let r = 0; r < starts.length - 1; r++) {
    const from = starts[r]!;
    const to = starts[r + 1]!;
    picked.clear();
    for (const c of columns) {
      let first = -1;
      let last = -1;
      let lo = -1;
      let hi = -1;
      for (let i = from; i < to; i++) {
        const x = c[i];
        if (x === null || x === undefined) continue;
        if (first < 0) first = i;
        last = i;
        if (lo < 0 || x < (c[lo] as number)) lo = i;
        if (hi < 0 || x > (c[hi] as number)) hi = i;
      }
      if (first >= 0) for (const i of [first, lo, hi, last]) picked.add(i);
    }
    if (picked.size === 0) picked.add(from);
    keep.push(...[...picked].sort((a, b) => a - b));
  }
  const t = keep.map((i) => answer.t[i]!);
  const series: Columns = {};
  for (const [name, s] of Object.entries(answer.series)) {
    const out: Partial<Record<'avg' | 'min' | 'max', (number | null)[]>> = {};
    for (const stat of ['avg', 'min', 'max'] as const) {
      const c = s[stat];
      if (c) out[stat] = keep.map((i) => c[i] ?? null);
    }
    series[name] = out;
  }
  return reducedAnswer(answer, t, series, slices);
}
