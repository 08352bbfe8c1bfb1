/**
 * The bounds of a Grafana request (docs/api.md §Grafana, docs/architecture.md §Bounds and fairness): how
 * many targets a query has, how many devices one target reads, how many points and how long an answer
 * may take, and how long an option list may be. One budget per request carries them through the loops
 * over devices, and gives the event loop a turn between devices.
 */
import { nextTurn } from '@kilowatch/core';
import { BadGrafanaRequest } from './request.ts';

export interface GrafanaLimits {
  /** Targets in one `POST /query` (hidden ones count too). */
  maxTargets: number;
  /** Devices one target reads (the `device` payload, or every device when it names none). */
  maxDevicesPerTarget: number;
  /** Data points (time-series points and table rows) in one answer of `/query` or `/rows`. */
  maxAnswerPoints: number;
  /** The longest one `/query` or `/rows` answer may take to build (ms). */
  answerBudgetMs: number;
  /** Entries in an option list (`/metric-payload-options`, `/variable`, `/tag-values`). */
  maxOptions: number;
  /** Device and tariff options each metric of `POST /metrics` carries (the rest by `/metric-payload-options`). */
  maxMetricsOptions: number;
}

export const DEFAULT_GRAFANA_LIMITS: GrafanaLimits = {
  maxTargets: 20,
  maxDevicesPerTarget: 50,
  maxAnswerPoints: 500_000,
  answerBudgetMs: 20_000,
  maxOptions: 1_000,
  maxMetricsOptions: 100,
};

/** A request past a bound: 413 for an answer too large, 503 (with `Retry-After`) for one too slow. */
export class GrafanaLimitError extends BadGrafanaRequest {
  constructor(
    message: string,
    readonly status: 400 | 413 | 503,
    field?: string,
  ) {
    super(message, field);
    this.name = 'GrafanaLimitError';
  }
}

/** Seconds a client is told to wait after a 503 of the answer budget. */
export const RETRY_AFTER_S = 5;

export class AnswerBudget {
  private points = 0;
  private readonly started: number;

  constructor(
    readonly limits: GrafanaLimits,
    private readonly now: () => number,
  ) {
    this.started = now();
  }

  /** Refuses a target that would read more devices than allowed. */
  devices<T>(target: string, devices: readonly T[]): readonly T[] {
    const max = this.limits.maxDevicesPerTarget;
    if (devices.length > max)
      throw new GrafanaLimitError(
        `target "${target}" reads ${devices.length} devices; at most ${max} per target: name them in its device payload`,
        400,
        'targets',
      );
    return devices;
  }

  /** Counts points into the answer; past the bound the answer is refused (413). */
  spend(points: number): void {
    this.points += points;
    const max = this.limits.maxAnswerPoints;
    if (this.points > max)
      throw new GrafanaLimitError(
        `the answer would hold more than ${max} points: ask for fewer targets, devices or maxDataPoints`,
        413,
      );
  }

  /** Refuses to go on once the answer took longer than its budget (503). */
  check(): void {
    const ms = this.limits.answerBudgetMs;
    if (this.now() - this.started > ms)
      throw new GrafanaLimitError(
        `the answer took longer than its ${ms} ms budget: ask for fewer targets, devices or a shorter range`,
        503,
      );
  }

  /** Between two devices: a turn of the event loop for other requests, then the time budget. */
  async turn(): Promise<void> {
    await nextTurn();
    this.check();
  }
}

/**
 * At most `limit` (and at most `limits.maxOptions`) entries from `offset` whose text contains `search`
 * (case-insensitive): how every option list of the data source is paged.
 */
export function page<T>(
  items: readonly T[],
  text: (item: T) => string,
  paging: { search?: string | undefined; offset?: number | undefined; limit?: number | undefined },
  maxOptions: number,
): T[] {
  const search = paging.search?.trim().toLowerCase();
  const found = search ? items.filter((x) => text(x).toLowerCase().includes(search)) : items;
  if (paging.limit !== undefined && paging.limit > maxOptions)
    throw new GrafanaLimitError(`limit must be at most ${maxOptions}`, 400, 'limit');
  const offset = paging.offset ?? 0;
  const limit = paging.limit ?? maxOptions;
  return found.slice(offset, offset + limit);
}
