/**
 * Brute-force brakes for the credential routes: one budget per IP and account (email), one wider per IP.
 * An attacker elsewhere cannot lock the real user out (no account-wide lockout); one address cannot
 * hammer many accounts. Over budget → 429 with Retry-After.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Sql } from '../../db/sql.ts';
import { TooManyRequestsError } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** preHandler for a credential route; `account` names the account the request is about. */
    throttle: (
      scope: string,
      account: (request: FastifyRequest) => string | undefined,
    ) => (request: FastifyRequest) => Promise<void>;
    /**
     * Hooks for a route whose successes are ordinary traffic (token refresh): only failed attempts
     * (4xx) count, per IP and per IP and account; over budget → 429. A whole office behind one address
     * can refresh all day, and guessing still stops soon.
     */
    /** preHandler allowing one address `limit.max` requests per window (demo sign-in). */
    throttleAddress: (
      scope: string,
      limit: { max: number; windowMs: number },
    ) => (request: FastifyRequest) => Promise<void>;
    throttleFailures: (
      scope: string,
      account: (request: FastifyRequest) => string | undefined,
    ) => {
      preHandler: (request: FastifyRequest) => Promise<void>;
      onSend: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;
    };
  }
}

/**
 * Attempts per key in fixed windows, counted in the metadata database (table `rate_limits`), so that every
 * API process draws on one budget: behind a round-robin proxy, N replicas do not give a client N times
 * the attempts. The window is judged by the app's clock; expired rows are reused in place and swept once
 * a minute.
 */
class SharedCounter {
  private sweptAt = 0;
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
  ) {}

  /** Counts one attempt on `key`; its count in the current window and when that window ends. */
  async hit(key: string, windowMs: number): Promise<{ n: number; until: number }> {
    const t = this.now();
    const { rows } = await this.sql.query<{ n: number | string; until: number | string }>(
      `insert into rate_limits (key, n, until) values ($1, 1, $2)
       on conflict (key) do update set
         n = case when rate_limits.until <= $3 then 1 else rate_limits.n + 1 end,
         until = case when rate_limits.until <= $3 then excluded.until else rate_limits.until end
       returning n, until`,
      [key, t + windowMs, t],
    );
    await this.sweep(t);
    return { n: Number(rows[0]!.n), until: Number(rows[0]!.until) };
  }

  /** The count of `key` in its current window (0 when none is open). */
  async peek(key: string): Promise<{ n: number; until: number }> {
    const t = this.now();
    const { rows } = await this.sql.query<{ n: number | string; until: number | string }>(
      'select n, until from rate_limits where key = $1 and until > $2',
      [key, t],
    );
    return rows[0] ? { n: Number(rows[0].n), until: Number(rows[0].until) } : { n: 0, until: t };
  }

  private async sweep(t: number): Promise<void> {
    if (t - this.sweptAt < 60_000) return;
    this.sweptAt = t;
    await this.sql.query('delete from rate_limits where until <= $1', [t]);
  }
}

export default fp(
  async (app: FastifyInstance) => {
    const { accountRateLimit, ipRateLimit } = app.config;
    const counter = new SharedCounter(app.sql, app.clock.now);
    const keys = (scope: string, req: FastifyRequest, account: string | undefined) =>
      [
        { key: `${scope}|ip|${req.ip}`, limit: ipRateLimit },
        { key: `${scope}|acct|${req.ip}|${(account ?? '').toLowerCase()}`, limit: accountRateLimit },
      ] as const;
    app.decorate('throttle', (scope: string, account: (request: FastifyRequest) => string | undefined) => {
      return async (request: FastifyRequest) => {
        for (const { key, limit } of keys(scope, request, account(request))) {
          const { n, until } = await counter.hit(key, limit.windowMs);
          if (n > limit.max) throw new TooManyRequestsError((until - app.clock.now()) / 1000);
        }
      };
    });
    app.decorate('throttleAddress', (scope: string, limit: { max: number; windowMs: number }) => {
      return async (request: FastifyRequest) => {
        const { n, until } = await counter.hit(`${scope}|ip|${request.ip}`, limit.windowMs);
        if (n > limit.max) throw new TooManyRequestsError((until - app.clock.now()) / 1000);
      };
    });
    app.decorate(
      'throttleFailures',
      (scope: string, account: (request: FastifyRequest) => string | undefined) => ({
        preHandler: async (request: FastifyRequest) => {
          let wait = 0;
          for (const { key, limit } of keys(scope, request, account(request))) {
            const { n, until } = await counter.peek(key);
            if (n >= limit.max) wait = Math.max(wait, (until - app.clock.now()) / 1000);
          }
          if (wait > 0) throw new TooManyRequestsError(wait);
        },
        // Counted before the answer leaves, so that the client's next attempt already sees it.
        onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
          if (reply.statusCode < 400 || reply.statusCode >= 500 || reply.statusCode === 429) return payload;
          for (const { key, limit } of keys(scope, request, account(request)))
            await counter.hit(key, limit.windowMs);
          return payload;
        },
      }),
    );
  },
  { name: 'throttle', dependencies: ['config', 'metadata'] },
);
