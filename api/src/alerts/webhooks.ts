/**
 * Notification webhooks (docs/api.md §Exports and notifications): an account may name one http(s) address;
 * every notification stored for it is POSTed there as JSON, signed with the account's secret:
 * `X-Kilowatch-Signature: sha256=<hex HMAC-SHA256 of the raw body>`. A delivery waits at most `timeoutMs`
 * for an answer; a network error, a timeout, a 429 or a 5xx answer is retried after each of
 * `retryDelaysMs` (1 s, 4 s, 16 s: four attempts in all); any other answer but a 2xx fails it at once
 * (redirects are not followed). At most `concurrency` deliveries run at a time and `queueLimit` wait;
 * past that a notification's delivery is dropped and counted (/metrics).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/sql.ts';

export interface WebhookOptions {
  /** Delays before the retries, ms (default 1 s, 4 s, 16 s). */
  retryDelaysMs?: readonly number[];
  /** How long one attempt waits for the answer, ms (default 5 s). */
  timeoutMs?: number;
  /** Deliveries in flight at once, in this process (default 4). */
  concurrency?: number;
  /** Deliveries waiting for a slot; past this they are dropped (default 1,000). */
  queueLimit?: number;
  /**
   * Whether loopback addresses (localhost, 127.0.0.0/8, ::1) may be webhook targets: only tests turn this
   * on. The API has no rule against other internal addresses (see docs/api.md).
   */
  allowLoopback?: boolean;
  /** The wait before a retry (tests make it instant). */
  sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_RETRY_DELAYS_MS = [1_000, 4_000, 16_000] as const;
export const WEBHOOK_TIMEOUT_MS = 5_000;
export const SIGNATURE_HEADER = 'x-kilowatch-signature';

/** The signature header's value for a body: `sha256=` and the hex HMAC-SHA256 of the raw bytes. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A new signing secret: 32 random bytes as hex. */
export function newWebhookSecret(): string {
  return randomBytes(32).toString('hex');
}

/** Whether the address points at this machine by name or literal (not what a name resolves to). */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    host === '0.0.0.0' ||
    host === '::' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    /^::ffff:127\./.test(host)
  );
}

export interface WebhookRecord {
  url: string;
  secret: string;
  secretCreatedAt: number;
}

export function createWebhooksRepository(sql: Queryable) {
  return {
    async get(userId: number): Promise<WebhookRecord | null> {
      const { rows } = await sql.query<{ url: string; secret: string; secret_created_at: number }>(
        'select url, secret, secret_created_at from webhooks where user_id = $1',
        [userId],
      );
      const r = rows[0];
      return r ? { url: r.url, secret: r.secret, secretCreatedAt: Number(r.secret_created_at) } : null;
    },

    /** Sets the address; a new secret when there was none or `rotate`. Answers the record and whether its secret is new. */
    async set(
      userId: number,
      url: string,
      rotate: boolean,
      now: number,
    ): Promise<{ record: WebhookRecord; newSecret: boolean }> {
      const secret = newWebhookSecret();
      const { rows } = await sql.query<{
        url: string;
        secret: string;
        secret_created_at: number;
        fresh: boolean;
      }>(
        `insert into webhooks (user_id, url, secret, secret_created_at, updated_at) values ($1, $2, $3, $4, $4)
         on conflict (user_id) do update set url = excluded.url, updated_at = excluded.updated_at,
           secret = case when $5 then excluded.secret else webhooks.secret end,
           secret_created_at = case when $5 then excluded.secret_created_at else webhooks.secret_created_at end
         returning url, secret, secret_created_at, (secret = $3) as fresh`,
        [userId, url, secret, now, rotate],
      );
      const r = rows[0]!;
      return {
        record: { url: r.url, secret: r.secret, secretCreatedAt: Number(r.secret_created_at) },
        newSecret: r.fresh === true,
      };
    },

    async remove(userId: number): Promise<void> {
      await sql.query('delete from webhooks where user_id = $1', [userId]);
    },
  };
}

export interface WebhookStats {
  delivered: number;
  failed: number;
  dropped: number;
  retries: number;
  /** Deliveries waiting or in flight now. */
  pending: number;
}

interface Job {
  url: string;
  secret: string;
  body: string;
}

export interface WebhookLog {
  warn(obj: object, msg: string): void;
}

/** The delivery queue of one process. */
export function createWebhookSender(opts: WebhookOptions, log: WebhookLog) {
  const delays = opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const queueLimit = Math.max(0, opts.queueLimit ?? 1_000);
  const stopped = new AbortController();
  const sleep =
    opts.sleep ??
    ((ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        t.unref();
        stopped.signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      }));
  const waiting: Job[] = [];
  let running = 0;
  const stats = { delivered: 0, failed: 0, dropped: 0, retries: 0 };

  /** One attempt: 'ok', 'retry' (worth trying again) or 'fail'. */
  async function attempt(job: Job): Promise<'ok' | 'retry' | 'fail'> {
    if (isLoopbackUrl(job.url) && !opts.allowLoopback) return 'fail';
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const res = await fetch(job.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: webhookSignature(job.secret, job.body),
          'user-agent': 'Kilowatch-Webhook',
        },
        body: job.body,
        redirect: 'manual',
        signal: AbortSignal.any([timeout, stopped.signal]),
      });
      await res.body?.cancel().catch(() => {});
      if (res.status >= 200 && res.status < 300) return 'ok';
      return res.status === 429 || res.status >= 500 ? 'retry' : 'fail';
    } catch {
      return 'retry';
    }
  }

  async function deliver(job: Job): Promise<void> {
    for (let i = 0; ; i++) {
      const outcome = await attempt(job);
      if (outcome === 'ok') {
        stats.delivered++;
        return;
      }
      const delay = delays[i];
      if (outcome === 'fail' || delay === undefined || stopped.signal.aborted) {
        stats.failed++;
        log.warn({ url: job.url, attempts: i + 1 }, 'webhooks: a notification could not be delivered');
        return;
      }
      stats.retries++;
      await sleep(delay);
    }
  }

  function pump(): void {
    while (running < concurrency && waiting.length > 0) {
      const job = waiting.shift()!;
      running++;
      void deliver(job).finally(() => {
        running--;
        pump();
      });
    }
  }

  return {
    /** Queues one delivery; false when the queue is full (dropped and counted). */
    enqueue(url: string, secret: string, body: string): boolean {
      if (stopped.signal.aborted) return false;
      if (running >= concurrency && waiting.length >= queueLimit) {
        stats.dropped++;
        return false;
      }
      waiting.push({ url, secret, body });
      pump();
      return true;
    },
    stats(): WebhookStats {
      return { ...stats, pending: running + waiting.length };
    },
    /** Stops: waiting deliveries are dropped, retries end, attempts in flight are aborted. */
    stop(): void {
      stats.dropped += waiting.length;
      waiting.length = 0;
      stopped.abort();
    },
  };
}
