/**
 * What an import inserted, for its undo: the stamps it wrote, as runs of evenly spaced stamps
 * (`[first, step, count]`). A file of regular readings is one run however long it is; every gap, change
 * of interval or stamp already stored starts another. The number of runs is bounded (`MAX_RUNS`): past it
 * the import goes on, but it can no longer be undone exactly and says so.
 */

/** `[first stamp, step (ms, 0 for a single stamp), count]`. */
export type Run = [number, number, number];

/** Runs kept per import at most (~20 bytes each in the metadata store). */
export const MAX_RUNS = 20_000;

export class InsertedRuns {
  readonly runs: Run[];
  overflowed = false;

  constructor(runs: Run[] = []) {
    this.runs = runs;
  }

  /** Adds stamps in the order they were written (ascending within a batch). */
  add(stamps: Iterable<number>): void {
    for (const ts of stamps) {
      if (this.overflowed) return;
      const last = this.runs.at(-1);
      if (last) {
        const [first, step, count] = last;
        if (count === 1 && ts > first) {
          last[1] = ts - first;
          last[2] = 2;
          continue;
        }
        if (step > 0 && ts === first + step * count) {
          last[2] = count + 1;
          continue;
        }
      }
      if (this.runs.length >= MAX_RUNS) {
        this.overflowed = true;
        return;
      }
      this.runs.push([ts, 0, 1]);
    }
  }

  get empty(): boolean {
    return this.runs.length === 0;
  }
}

/** The last stamp of a run. */
export function runEnd([first, step, count]: Run): number {
  return first + step * (count - 1);
}

/** Whether a run holds the stamp. */
export function runHolds([first, step, count]: Run, ts: number): boolean {
  if (ts < first) return false;
  if (step === 0) return ts === first;
  const k = (ts - first) / step;
  return Number.isInteger(k) && k < count;
}
