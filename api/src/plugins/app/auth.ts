/**
 * Sessions and bearer authentication. A session holds one live access token (15 min) and one live
 * refresh token (1 day, 30 with remember-me); refreshing spends the refresh token and issues both anew
 * (the replaced access token stops at once), and replaying a spent one revokes the session. Logout revokes the session, so its tokens stop at once.
 * A personal API key (docs/api.md §Account) stands in for a session on read routes only: GET requests outside
 * the account and export routes, and the Grafana data source (whose POSTs only read).
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
import { createApiKeysRepository } from './api-keys-repository.ts';
import { newToken, tokenHash } from './tokens.ts';

declare module 'fastify' {
  interface FastifyInstance {
    accounts: ReturnType<typeof createAccountsRepository>;
    sessions: ReturnType<typeof createSessions>;
    apiKeys: ReturnType<typeof createApiKeysRepository>;
    /**
     * onRequest hook: 401 unless the request carries a live access token, or an API key when the request
     * is a read (GET or HEAD outside the account and export routes).
     */
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** onRequest hook for routes that only read whatever their method (the Grafana data source). */
    authenticateReader: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
  interface FastifyRequest {
    session: AuthenticatedSession;
    /** The API key the request came with, or null when it came with a session's token. */
    apiKeyId: number | null;
  }
}

/** How long a just-rotated refresh token still gets the pair it was rotated into. */
export const REFRESH_GRACE_MS = 30_000;

function createSessions(app: FastifyInstance) {
  const { config, clock, accounts } = app;
  /** Pairs issued in the last `REFRESH_GRACE_MS`, by the refresh token they replaced (its hash). */
  const recentlyIssued = new Map<string, { at: number; tokens: ReturnType<typeof tokensFor> }>();
  function rememberIssued(hash: string, tokens: ReturnType<typeof tokensFor>) {
    const t = clock.now();
    for (const [k, e] of recentlyIssued) {
      if (t - e.at <= REFRESH_GRACE_MS) break;
      recentlyIssued.delete(k);
    }
    recentlyIssued.set(hash, { at: t, tokens });
  }

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

    /**
     * New tokens for a refresh token, or null. A replayed refresh token revokes its session, except
     * within `REFRESH_GRACE_MS` of its rotation: two tabs refreshing at once, or a retry after a lost
     * answer, get the pair the first refresh issued (null when another process issued it, and the
     * session lives on).
     */
    async refresh(refreshToken: string): Promise<AuthData | null> {
      const hash = tokenHash(refreshToken);
      let issued: ReturnType<typeof tokensFor> | undefined;
      const outcome = await accounts.rotate(hash, (remember) => {
        issued = tokensFor(remember);
        rememberIssued(hash, issued);
        return issued.stored;
      });
      if (
        outcome.kind === 'reused' &&
        outcome.usedAt !== null &&
        clock.now() - outcome.usedAt <= REFRESH_GRACE_MS
      ) {
        const again = recentlyIssued.get(hash);
        const user = again ? await accounts.findUserById(outcome.userId) : null;
        return again && user ? authData(user, again.tokens) : null;
      }
      if (outcome.kind === 'reused') {
        await accounts.revokeSession(outcome.sessionId, 'refresh token reused');
        app.log.warn({ sessionId: outcome.sessionId }, 'refresh token replayed: session revoked');
        await app.hub.sessionsEnded(outcome.userId);
        return null;
      }
      if (outcome.kind !== 'rotated' || !issued) return null;
      const user = await accounts.findUserById(outcome.userId);
      if (!user) return null;
      // A demo workspace in use lives on; one already expired is not brought back.
      if (user.workspaceExpiresAt !== null && !(await app.demoWorkspaces.touch(user.id))) return null;
      return authData(user, issued);
    },

    async verify(accessToken: string): Promise<AuthenticatedSession | null> {
      return accounts.authenticate(tokenHash(accessToken));
    },
  };
}

const PRUNE_INTERVAL_MS = 3_600_000;

/** Every API key starts so; a session token may too (it is random), so sessions are looked up first. */
export const API_KEY_PREFIX = 'kw_';

/** Routes an API key never opens, whatever the method: the account (keys included) and exports. */
const KEYLESS_ROUTES = /^\/api\/(account|exports)(\/|$)/;

function isReadRequest(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  return !KEYLESS_ROUTES.test(request.routeOptions.url ?? request.url);
}

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
    app.decorate('apiKeys', createApiKeysRepository(app.sql, app.clock.now));
    app.decorateRequest('session', null as unknown as AuthenticatedSession);
    app.decorateRequest('apiKeyId', null);
    // Expired tokens and ended sessions are deleted hourly; nothing reads them anyway.
    let pruner: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      pruner = setInterval(() => {
        app.accounts.prune().catch((err: unknown) => app.log.warn({ err }, 'session pruning failed'));
      }, PRUNE_INTERVAL_MS);
      pruner.unref();
    });
    app.addHook('onClose', async () => clearInterval(pruner));
    async function authenticateWith(request: FastifyRequest, keyAllowed: boolean): Promise<void> {
      const token = bearer(request);
      if (!token) throw new UnauthorizedError();
      const session = await app.sessions.verify(token);
      if (session) {
        request.session = session;
        return;
      }
      if (keyAllowed && token.startsWith(API_KEY_PREFIX)) {
        const key = await app.apiKeys.authenticate(tokenHash(token));
        if (key) {
          request.session = { userId: key.userId, sessionId: 0, expiresAt: Number.MAX_SAFE_INTEGER };
          request.apiKeyId = key.keyId;
          return;
        }
      }
      throw new UnauthorizedError();
    }
    app.decorate('authenticate', (request: FastifyRequest) =>
      authenticateWith(request, isReadRequest(request)),
    );
    app.decorate('authenticateReader', (request: FastifyRequest) => authenticateWith(request, true));
  },
  { name: 'auth', dependencies: ['metadata'] },
);
