/**
 * Sessions and bearer authentication. A session holds one live access token (15 min) and one live
 * refresh token (1 day, 30 with remember-me); refreshing spends the refresh token and issues both anew,
 * and replaying a spent one revokes the session. Logout revokes the session, so its tokens stop at once.
 */
import type { AuthData } from '@kilowatch/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { UnauthorizedError } from '../../errors.ts';
import {
  type AuthenticatedSession,
  createAccountsRepository,
  publicUser,
  type UserRecord,
} from './accounts-repository.ts';
import { newToken, tokenHash } from './tokens.ts';

declare module 'fastify' {
  interface FastifyInstance {
    accounts: ReturnType<typeof createAccountsRepository>;
    sessions: ReturnType<typeof createSessions>;
    /** onRequest hook: 401 unless the request carries a live access token. */
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
  interface FastifyRequest {
    session: AuthenticatedSession;
  }
}

function createSessions(app: FastifyInstance) {
  const { config, clock, accounts } = app;

  function tokensFor(remember: boolean) {
    const t = clock.now();
    const access = newToken();
    const refresh = newToken();
    const accessExpiresAt = t + config.accessTokenTtlMs;
    const refreshExpiresAt = t + (remember ? config.rememberMeTtlMs : config.refreshTokenTtlMs);
    return {
      plain: { access, refresh },
      stored: {
        accessHash: tokenHash(access),
        accessExpiresAt,
        refreshHash: tokenHash(refresh),
        refreshExpiresAt,
      },
    };
  }

  function authData(user: UserRecord, t: ReturnType<typeof tokensFor>): AuthData {
    return {
      token: t.plain.access,
      refreshToken: t.plain.refresh,
      expiresAt: new Date(t.stored.accessExpiresAt).toISOString(),
      refreshExpiresAt: new Date(t.stored.refreshExpiresAt).toISOString(),
      user: publicUser(user),
    };
  }

  return {
    async start(user: UserRecord, remember: boolean): Promise<AuthData> {
      const t = tokensFor(remember);
      await accounts.createSession(user.id, remember, t.stored.refreshExpiresAt, t.stored);
      return authData(user, t);
    },

    /** New tokens for a refresh token, or null. A replayed refresh token revokes its session. */
    async refresh(refreshToken: string): Promise<AuthData | null> {
      let issued: ReturnType<typeof tokensFor> | undefined;
      const outcome = await accounts.rotate(tokenHash(refreshToken), (remember) => {
        issued = tokensFor(remember);
        return issued.stored;
      });
      if (outcome.kind === 'reused') {
        await accounts.revokeSession(outcome.sessionId, 'refresh token reused');
        app.log.warn({ sessionId: outcome.sessionId }, 'refresh token replayed: session revoked');
        await app.hub.sessionsEnded(outcome.userId);
        return null;
      }
      if (outcome.kind !== 'rotated' || !issued) return null;
      const user = await accounts.findUserById(outcome.userId);
      return user ? authData(user, issued) : null;
    },

    async verify(accessToken: string): Promise<AuthenticatedSession | null> {
      return accounts.authenticate(tokenHash(accessToken));
    },
  };
}

const PRUNE_INTERVAL_MS = 3_600_000;

function bearer(request: FastifyRequest): string | null {
  const h = request.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+([A-Za-z0-9_-]{20,512})$/.exec(h);
  return m ? m[1]! : null;
}

export default fp(
  async (app: FastifyInstance) => {
    app.decorate('accounts', createAccountsRepository(app.sql, app.clock.now));
    app.decorate('sessions', createSessions(app));
    app.decorateRequest('session', null as unknown as AuthenticatedSession);
    // Expired tokens and ended sessions are deleted hourly; nothing reads them anyway.
    let pruner: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      pruner = setInterval(() => {
        app.accounts.prune().catch((err: unknown) => app.log.warn({ err }, 'session pruning failed'));
      }, PRUNE_INTERVAL_MS);
      pruner.unref();
    });
    app.addHook('onClose', async () => clearInterval(pruner));
    app.decorate('authenticate', async (request: FastifyRequest) => {
      const token = bearer(request);
      const session = token ? await app.sessions.verify(token) : null;
      if (!session) throw new UnauthorizedError();
      request.session = session;
    });
  },
  { name: 'auth', dependencies: ['metadata'] },
);
