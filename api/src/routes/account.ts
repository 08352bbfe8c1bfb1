/** Accounts and sessions (docs/api.md §Account). */
import {
  AuthDataSchema,
  DemoRequestSchema,
  ForgotPasswordRequestSchema,
  LoginRequestSchema,
  MESSAGES,
  RefreshRequestSchema,
  RegisterRequestSchema,
  ResetPasswordRequestSchema,
  UpdateUserRequestSchema,
  UserSchema,
  VerifyTokenRequestSchema,
  VerifyTokenResponseSchema,
} from '@kilowatch/core';
import type { FastifyRequest } from 'fastify';
import { NotFoundError, UnauthorizedError, ValidationError } from '../errors.ts';
import { publicUser } from '../plugins/app/accounts-repository.ts';
import { hashPassword, isCommonPassword, unmatchableHash, verifyPassword } from '../plugins/app/passwords.ts';
import { newToken, tokenHash } from '../plugins/app/tokens.ts';
import { errorResponse, noContent, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

export { DEMO_EMAIL } from '../plugins/app/demo-workspaces.ts';

const bearer = [{ bearer: [] }];
const tags = ['account'];

function bodyEmail(req: FastifyRequest): string | undefined {
  const email = (req.body as { email?: unknown } | undefined)?.email;
  return typeof email === 'string' ? email : undefined;
}

/** A new password (register, reset) must not be a commonly used one: 400 on its field, before any hashing. */
function refuseCommonPassword(password: string): void {
  if (isCommonPassword(password)) {
    throw new ValidationError({ password: [MESSAGES.commonPassword] }, MESSAGES.commonPassword);
  }
}

const accountRoutes: TypedRoutes<RouteOptions> = async (app) => {
  const { accounts, sessions, config } = app;
  // Verifying against a throwaway hash when the account does not exist keeps both answers equally slow.
  const dummyHash = unmatchableHash(config.scrypt);
  const authenticated = { onRequest: app.authenticate };

  app.post(
    '/account/login',
    {
      schema: {
        summary: 'Sign in',
        tags,
        body: request(LoginRequestSchema),
        response: { 200: response(AuthDataSchema), 400: errorResponse, 429: errorResponse },
      },
      config: { validationMessage: MESSAGES.loginFailed },
      preHandler: app.throttle('login', bodyEmail),
    },
    async (req) => {
      const body = req.body;
      const user = await accounts.findUserByEmail(body.email);
      const ok = await verifyPassword(body.password, user?.passwordHash ?? dummyHash);
      if (!user || !ok || user.isDemo) {
        throw new ValidationError({ password: [MESSAGES.loginFailed] }, MESSAGES.loginFailed);
      }
      return sessions.start(user, body.rememberMe);
    },
  );

  // Each demo sign-in creates a workspace: one address gets a few a minute (shared by API processes).
  const demoThrottle = app.throttleAddress('demo', config.demoSignInRateLimit);

  app.post(
    '/account/demo',
    {
      schema: {
        summary:
          'Sign in to a demo workspace of your own (simulated meters, a year of history); each sign-in gets a new one',
        tags,
        body: request(DemoRequestSchema),
        response: {
          200: response(AuthDataSchema),
          404: errorResponse,
          429: errorResponse,
          503: errorResponse,
        },
      },
      preHandler: demoThrottle,
    },
    async () => {
      const user = await app.demoWorkspaces.create();
      if (!user) throw new NotFoundError();
      return sessions.start(user, false);
    },
  );

  // Refreshing is what every open tab does all day: only failed refreshes count towards the limits.
  const refreshThrottle = app.throttleFailures('refresh', (req) => {
    const t = (req.body as { refreshToken?: unknown } | undefined)?.refreshToken;
    return typeof t === 'string' ? tokenHash(t) : undefined;
  });

  app.post(
    '/account/refreshtoken',
    {
      schema: {
        summary: 'Rotate the refresh token; a replayed old one revokes the whole session',
        tags,
        body: request(RefreshRequestSchema),
        response: { 200: response(AuthDataSchema), 401: errorResponse, 429: errorResponse },
      },
      ...refreshThrottle,
    },
    async (req) => {
      const { refreshToken } = req.body;
      const auth = await sessions.refresh(refreshToken);
      if (!auth) throw new UnauthorizedError();
      return auth;
    },
  );

  app.post(
    '/account/verifytoken',
    {
      schema: {
        summary: 'Check an access token',
        tags,
        body: request(VerifyTokenRequestSchema),
        response: { 200: response(VerifyTokenResponseSchema), 401: errorResponse },
      },
    },
    async (req) => {
      const { api_token } = req.body;
      const session = await sessions.verify(api_token);
      if (!session) throw new UnauthorizedError();
      return { valid: true as const, expiresAt: new Date(session.expiresAt).toISOString() };
    },
  );

  app.get(
    '/account/userInfo',
    {
      ...authenticated,
      schema: {
        summary: 'The signed-in user',
        tags,
        security: bearer,
        response: { 200: response(UserSchema), 401: errorResponse },
      },
    },
    async (req) => {
      const user = await accounts.findUserById(req.session.userId);
      if (!user) throw new UnauthorizedError();
      return publicUser(user);
    },
  );

  app.post(
    '/account/update',
    {
      ...authenticated,
      schema: {
        summary: 'Update the profile (email is read-only)',
        tags,
        security: bearer,
        body: request(UpdateUserRequestSchema),
        response: { 200: response(UserSchema), 400: errorResponse, 401: errorResponse },
      },
    },
    async (req) => {
      const body = req.body;
      const user = await accounts.updateProfile(req.session.userId, body);
      if (!user) throw new UnauthorizedError();
      return publicUser(user);
    },
  );

  app.get(
    '/account/logout',
    {
      ...authenticated,
      schema: {
        summary: 'End the session at once',
        tags,
        security: bearer,
        response: { 204: noContent, 401: errorResponse },
      },
    },
    async (req, reply) => {
      await accounts.revokeSession(req.session.sessionId, 'logout');
      await app.hub.sessionsEnded(req.session.userId);
      // A demo workspace cannot be entered again once signed out of: it goes at once.
      const user = await accounts.findUserById(req.session.userId);
      if (user?.workspaceExpiresAt != null) {
        await app.demoWorkspaces
          .remove(user.id)
          .catch((err: unknown) => req.log.warn({ err }, 'demo workspace: removal at sign-out failed'));
      }
      return reply.code(204).send();
    },
  );

  app.post(
    '/register',
    {
      schema: {
        summary: 'Create an account',
        tags,
        body: request(RegisterRequestSchema),
        response: { 201: response(AuthDataSchema), 400: errorResponse, 429: errorResponse },
      },
      preHandler: app.throttle('register', bodyEmail),
    },
    async (req, reply) => {
      const body = req.body;
      refuseCommonPassword(body.password);
      const passwordHash = await hashPassword(body.password, config.scrypt);
      const user = await accounts.createUser({ ...body, passwordHash });
      if (!user) throw new ValidationError({ email: [MESSAGES.emailTaken] });
      return reply.code(201).send(await sessions.start(user, false));
    },
  );

  app.post(
    '/forgot_password',
    {
      schema: {
        summary: 'Mail a password-reset link (answers 202 whether or not the account exists)',
        tags,
        body: request(ForgotPasswordRequestSchema),
        response: { 202: noContent, 400: errorResponse, 429: errorResponse },
      },
      preHandler: app.throttle('forgot', bodyEmail),
    },
    async (req, reply) => {
      const { email } = req.body;
      const user = await accounts.findUserByEmail(email);
      if (user && !user.isDemo) {
        const token = newToken();
        await accounts.createPasswordReset(
          user.id,
          tokenHash(token),
          app.clock.now() + config.resetTokenTtlMs,
        );
        const link = `${config.publicUrl.replace(/\/$/, '')}/reset-password?token=${token}`;
        // Sent in the background: the answer must not take longer when the account exists.
        app.mailer
          .send({
            to: user.email,
            subject: 'Kilowatch password reset',
            text: `Open this link within ${Math.round(config.resetTokenTtlMs / 60_000)} minutes to set a new password:\n${link}\n\nIf you did not ask for it, ignore this mail.`,
          })
          .catch((err: unknown) => req.log.error({ err }, 'password-reset mail failed'));
      }
      return reply.code(202).send();
    },
  );

  app.post(
    '/reset_password',
    {
      schema: {
        summary:
          'Set a new password with a reset token (single use); ends every session and every API key of the account',
        tags,
        body: request(ResetPasswordRequestSchema),
        response: { 204: noContent, 400: errorResponse },
      },
    },
    async (req, reply) => {
      const { token, password } = req.body;
      // Refused before the token is spent: the link still works for a better password.
      refuseCommonPassword(password);
      const userId = await accounts.consumePasswordReset(tokenHash(token));
      if (userId === null) throw new ValidationError({ token: [MESSAGES.invalidToken] });
      const { apiKeysEnded } = await accounts.resetPassword(
        userId,
        await hashPassword(password, config.scrypt),
      );
      if (apiKeysEnded > 0) req.log.info({ userId, apiKeysEnded }, 'password reset ended the API keys');
      await app.hub.sessionsEnded(userId);
      return reply.code(204).send();
    },
  );
};

export default accountRoutes;
