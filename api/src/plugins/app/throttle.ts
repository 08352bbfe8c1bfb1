/**
 * Brute-force brakes for the credential routes: one budget per IP and account (email), one wider per IP.
 * An attacker elsewhere cannot lock the real user out (no account-wide lockout); one address cannot
 * hammer many accounts. Over budget → 429 with Retry-After.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
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
    throttleFailures: (
      scope: string,
      account: (request: FastifyRequest) => string | undefined,
    ) => {
      preHandler: (request: FastifyRequest) => Promise<void>;
      onResponse: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    };
  }
}

/** Failed attempts per key in fixed windows, kept in memory (bounded: expired keys go first). */
class FailureCounter {
  private readonly counts = new Map<string, { n: number; until: number }>();
  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Seconds until `key` may try again, or 0 while it is within budget. */
  retryAfter(key: string): number {
    const e = this.counts.get(key);
    const t = this.now();
    if (!e || e.until <= t) return 0;
    return e.n >= this.max ? (e.until - t) / 1000 : 0;
  }

  fail(key: string): void {
    const t = this.now();
    const e = this.counts.get(key);
    if (e && e.until > t) {
      e.n++;
      return;
    }
    if (this.counts.size >= 100_000) {
      for (const [k, x] of this.counts) if (x.until <= t) this.counts.delete(k);
      if (this.counts.size >= 100_000) this.counts.clear();
    }
    this.counts.set(key, { n: 1, until: t + this.windowMs });
  }
}

export default fp(
  async (app: FastifyInstance) => {
    const { accountRateLimit, ipRateLimit } = app.config;
    app.decorate('throttle', (scope: string, account: (request: FastifyRequest) => string | undefined) => {
      const perIp = app.createRateLimit({
        max: ipRateLimit.max,
        timeWindow: ipRateLimit.windowMs,
        keyGenerator: (req) => `${scope}|ip|${req.ip}`,
      });
      const perAccount = app.createRateLimit({
        max: accountRateLimit.max,
        timeWindow: accountRateLimit.windowMs,
        keyGenerator: (req) => `${scope}|acct|${req.ip}|${(account(req) ?? '').toLowerCase()}`,
      });
      return async (request: FastifyRequest) => {
        for (const check of [perIp, perAccount]) {
          const limit = await check(request);
          if (!limit.isAllowed && limit.isExceeded) throw new TooManyRequestsError(limit.ttlInSeconds);
        }
      };
    });
    app.decorate(
      'throttleFailures',
      (scope: string, account: (request: FastifyRequest) => string | undefined) => {
        const perIp = new FailureCounter(ipRateLimit.max, ipRateLimit.windowMs, app.clock.now);
        const perAccount = new FailureCounter(accountRateLimit.max, accountRateLimit.windowMs, app.clock.now);
        const keys = (req: FastifyRequest) =>
          [`${scope}|ip|${req.ip}`, `${scope}|acct|${req.ip}|${(account(req) ?? '').toLowerCase()}`] as const;
        return {
          preHandler: async (request: FastifyRequest) => {
            const [ip, acct] = keys(request);
            const wait = Math.max(perIp.retryAfter(ip), perAccount.retryAfter(acct));
            if (wait > 0) throw new TooManyRequestsError(wait);
          },
          onResponse: async (request: FastifyRequest, reply: FastifyReply) => {
            if (reply.statusCode < 400 || reply.statusCode >= 500 || reply.statusCode === 429) return;
            const [ip, acct] = keys(request);
            perIp.fail(ip);
            perAccount.fail(acct);
          },
        };
      },
    );
  },
  { name: 'throttle', dependencies: ['config'] },
);
