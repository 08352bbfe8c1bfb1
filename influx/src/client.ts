/**
 * HTTP client of the InfluxDB v1 API (`/write`, `/query`, `/ping`), the one API InfluxDB 1.x, 2.x (v1
 * compatibility) and 3.x serve. Retries what a retry can fix (408, 429, 5xx, network) with exponential
 * backoff, full jitter and `Retry-After`; never retries what it cannot (partial writes, 4xx).
 */
import { StoreError } from '@kilowatch/tsdb';

export interface RetryOptions {
  /** Attempts in total, the first included (default 6). */
  maxAttempts?: number;
  /** First backoff step (default 200 ms); doubles per attempt, full jitter. */
  baseDelayMs?: number;
  /** Cap of one backoff step (default 10 s). */
  maxDelayMs?: number;
  /** Longest `Retry-After` honoured (default 60 s). */
  maxRetryAfterMs?: number;
  /** Told before each wait (logging, tests). */
  onRetry?(info: RetryInfo): void;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  /** HTTP status, or 0 for a network error or timeout. */
  status: number;
  reason: string;
}

export interface InfluxClientOptions {
  url: string;
  database: string;
  /** `Authorization: Token …` (InfluxDB 2.x/3.x, Cloud). */
  token?: string;
  /** Basic auth (InfluxDB 1.x users; 2.x v1 authorizations). */
  username?: string;
  password?: string;
  retentionPolicy?: string;
  retry?: RetryOptions;
  /** One request's time limit (default 30 s). */
  timeoutMs?: number;
  /**
   * Queries answer someone waiting (a chart, an export page, a rollup run that comes again anyway), so
   * they give up sooner than writes, which must not lose readings: at most `maxAttempts` (default 2) of
   * at most `timeoutMs` each (default 15 s), and a `Retry-After` of at most 5 s is honoured.
   */
  reads?: { maxAttempts?: number; timeoutMs?: number };
}

interface Budget {
  maxAttempts: number;
  timeoutMs: number;
  maxRetryAfterMs: number;
}

export interface ClientStats {
  requests: number;
  retries: number;
  /** Points the server dropped in partial writes. */
  droppedPoints: number;
  partialWrites: number;
  /** Requests that failed for good (after retries, or not retryable). */
  failures: number;
}

export interface WriteOutcome {
  /** Points the server reported as dropped (0 when all were written). */
  dropped: number;
  /** The server's message for a partial write. */
  reason?: string;
}

export interface QuerySeries {
  name: string;
  tags?: Record<string, string>;
  columns: string[];
  values: (number | string | boolean | null)[][];
  partial?: boolean;
}

export interface StatementResult {
  statement_id?: number;
  series?: QuerySeries[];
  error?: string;
  partial?: boolean;
}

interface QueryBody {
  results?: StatementResult[];
  error?: string;
}

/** A chunked `/query` answer: one JSON object per line, a series continued across chunks. */
export function mergeChunks(text: string): QueryBody {
  const byStatement = new Map<number, StatementResult>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const chunk = JSON.parse(line) as QueryBody;
    if (chunk.error) return { error: chunk.error };
    for (const r of chunk.results ?? []) {
      const id = r.statement_id ?? 0;
      let into = byStatement.get(id);
      if (!into) {
        into = { statement_id: id };
        byStatement.set(id, into);
      }
      if (r.error) into.error = r.error;
      for (const s of r.series ?? []) {
        if (!into.series) into.series = [];
        const list = into.series;
        const prev = list[list.length - 1];
        if (prev && prev.name === s.name && JSON.stringify(prev.tags) === JSON.stringify(s.tags)) {
          for (const v of s.values) prev.values.push(v);
        } else
          list.push({
            name: s.name,
            columns: s.columns,
            values: [...s.values],
            ...(s.tags ? { tags: s.tags } : {}),
          });
      }
    }
  }
  return { results: [...byStatement.values()].sort((a, b) => (a.statement_id ?? 0) - (b.statement_id ?? 0)) };
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `Retry-After` as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const s = value.trim();
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

async function errorText(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 500) || res.statusText;
}

export class InfluxClient {
  readonly stats: ClientStats = { requests: 0, retries: 0, droppedPoints: 0, partialWrites: 0, failures: 0 };
  private readonly base: string;
  private readonly headers: Record<string, string> = {};
  private readonly retry: Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>;
  private readonly timeoutMs: number;
  private readonly writeBudget: Budget;
  private readonly readBudget: Budget;

  constructor(readonly options: InfluxClientOptions) {
    let u: URL;
    try {
      u = new URL(options.url);
    } catch {
      throw new StoreError(`INFLUX_URL is not a URL: ${options.url}`, 'configuration');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new StoreError(`INFLUX_URL must be http(s): ${options.url}`, 'configuration');
    if (!options.database) throw new StoreError('InfluxDB database name is required', 'configuration');
    this.base = options.url.replace(/\/+$/, '');
    if (options.token) this.headers.authorization = `Token ${options.token}`;
    else if (options.username !== undefined)
      this.headers.authorization = `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`;
    this.retry = {
      maxAttempts: 6,
      baseDelayMs: 200,
      maxDelayMs: 10_000,
      maxRetryAfterMs: 60_000,
      ...options.retry,
    };
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.writeBudget = {
      maxAttempts: this.retry.maxAttempts,
      timeoutMs: this.timeoutMs,
      maxRetryAfterMs: this.retry.maxRetryAfterMs,
    };
    this.readBudget = {
      maxAttempts: Math.min(this.retry.maxAttempts, options.reads?.maxAttempts ?? 2),
      timeoutMs: Math.min(this.timeoutMs, options.reads?.timeoutMs ?? 15_000),
      maxRetryAfterMs: Math.min(this.retry.maxRetryAfterMs, 5_000),
    };
  }

  /** Writes line protocol with millisecond timestamps. A partial write is reported, not thrown. */
  async write(body: string | (() => string)): Promise<WriteOutcome> {
    const params = new URLSearchParams({ db: this.options.database, precision: 'ms' });
    if (this.options.retentionPolicy) params.set('rp', this.options.retentionPolicy);
    const res = await this.send(`/write?${params}`, () => ({
      method: 'POST',
      headers: { ...this.headers, 'content-type': 'text/plain; charset=utf-8' },
      body: typeof body === 'string' ? body : body(),
    }));
    if (res.status === 204 || res.status === 200) {
      await res.body?.cancel();
      return { dropped: 0 };
    }
    const msg = await errorText(res);
    if (res.status === 400 && /partial write/i.test(msg)) {
      const m = /dropped=(\d+)/.exec(msg);
      const dropped = m ? Number(m[1]) : 0;
      this.stats.partialWrites++;
      this.stats.droppedPoints += dropped;
      return { dropped, reason: msg };
    }
    throw this.fail(res.status, msg, 'write');
  }

  /** Runs InfluxQL (one or more `;`-separated statements); results per statement, times in ms. */
  async query(q: string, chunked = false): Promise<StatementResult[]> {
    const params = new URLSearchParams({ db: this.options.database, epoch: 'ms' });
    if (this.options.retentionPolicy) params.set('rp', this.options.retentionPolicy);
    if (chunked) {
      params.set('chunked', 'true');
      params.set('chunk_size', '10000');
    }
    const res = await this.send(
      `/query?${params}`,
      () => ({
        method: 'POST',
        headers: { ...this.headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ q }).toString(),
      }),
      this.readBudget,
    );
    if (res.status !== 200) throw this.fail(res.status, await errorText(res), 'query');
    const text = await res.text();
    let body: QueryBody;
    try {
      body = chunked ? mergeChunks(text) : (JSON.parse(text) as QueryBody);
    } catch {
      throw this.fail(502, `unreadable /query answer: ${text.slice(0, 200)}`, 'query');
    }
    if (body.error) throw this.fail(400, body.error, 'query');
    const results = body.results ?? [];
    const errors = results.filter((r) => r.error).map((r) => r.error!);
    const real = errors.find((e) => e !== 'not executed');
    if (real) throw this.fail(400, real, 'query');
    if (errors.length > 0) {
      // InfluxDB 1.x reports only "not executed" for a multi-statement request it refused as a whole
      // (a missing database): the first statement alone tells why.
      const first = q.split(/;\s*(?=SELECT|SHOW|DROP|DELETE|CREATE)/i)[0];
      if (first && first !== q) await this.query(first);
      throw this.fail(400, errors[0]!, 'query');
    }
    // A server with `max-row-limit` cuts long answers and marks them partial; chunked answers are
    // never cut, so the query is asked again that way.
    if (!chunked && results.some((r) => r.partial || r.series?.some((x) => x.partial)))
      return this.query(q, true);
    return results;
  }

  /** `/ping`: the server's version when it answers. */
  async ping(): Promise<string> {
    const res = await fetch(`${this.base}/ping`, {
      headers: this.headers,
      signal: AbortSignal.timeout(Math.min(this.timeoutMs, 5000)),
    });
    await res.body?.cancel();
    if (res.status !== 204 && res.status !== 200) throw this.fail(res.status, res.statusText, 'ping');
    return res.headers.get('x-influxdb-version') ?? 'unknown';
  }

  private fail(status: number, msg: string, op: string): StoreError {
    this.stats.failures++;
    const text = `InfluxDB ${op} failed (${status}): ${msg}`;
    if (/database not found/i.test(msg) || status === 404)
      return new StoreError(`${text} — create the database (or a DBRP mapping) first`, 'configuration');
    if (status === 401 || status === 403 || /authorization failed|unable to parse authentication/i.test(msg))
      return new StoreError(`${text} — check INFLUX_TOKEN or INFLUX_USER/INFLUX_PASSWORD`, 'configuration');
    if (RETRYABLE.has(status)) return new StoreError(text, 'unavailable');
    return new StoreError(text, 'rejected');
  }

  private async send(path: string, init: () => RequestInit, budget = this.writeBudget): Promise<Response> {
    const { baseDelayMs, maxDelayMs, onRetry } = this.retry;
    const { maxAttempts, timeoutMs, maxRetryAfterMs } = budget;
    for (let attempt = 1; ; attempt++) {
      this.stats.requests++;
      let status = 0;
      let reason: string;
      let retryAfter: number | undefined;
      try {
        const res = await fetch(`${this.base}${path}`, {
          ...init(),
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!RETRYABLE.has(res.status)) return res;
        status = res.status;
        retryAfter = parseRetryAfter(res.headers.get('retry-after'));
        reason = await errorText(res);
      } catch (err) {
        reason =
          err instanceof Error
            ? `${err.name}: ${(err.cause as Error | undefined)?.message ?? err.message}`
            : String(err);
      }
      if (attempt >= maxAttempts) {
        this.stats.failures++;
        const what = status ? `HTTP ${status}: ${reason}` : reason;
        throw new StoreError(
          `InfluxDB at ${this.base} unavailable after ${attempt} attempts (${what})`,
          'unavailable',
        );
      }
      const backoff = Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      const delayMs = Math.round(
        retryAfter === undefined ? backoff : Math.max(backoff, Math.min(retryAfter, maxRetryAfterMs)),
      );
      this.stats.retries++;
      onRetry?.({ attempt, delayMs, status, reason });
      await sleep(delayMs);
    }
  }
}
