/**
 * Brute-force brakes for the credential routes: one budget per IP and account (email), one wider per IP.
 * An attacker elsewhere cannot lock the real user out (no account-wide lockout); one address cannot
 * hammer many accounts. Over budget → 429 with Retry-After.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { TooManyRequestsError } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** preHandler for a credential route; `account` names the account the request is about. */
    throttle: (
      scope: string,
      account: (request: FastifyRequest) => string | undefined,
    ) => (request: FastifyRequest) => Promise<void>;
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
  },
  { name: 'throttle', dependencies: ['config'] },
);
