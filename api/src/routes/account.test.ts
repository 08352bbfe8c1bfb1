import { MESSAGES } from '@kilowatch/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_GRACE_MS } from '../plugins/app/auth.ts';
import { as, buildTestApp, engines, PASSWORD, signUp, type TestApp, uniqueEmail } from '../testing/helper.ts';

/** The app's clock (moved by `t.advance`, read by `t.now`): expiries are checked against it, not the machine's date. */
const NOW = Date.parse('2026-11-26T09:00:00Z');

describe.each(engines())('account and sessions on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(engine, { now: () => NOW });
  });
  afterAll(async () => {
    await t?.close();
  });

  const login = (email: string, password = PASSWORD, rememberMe?: boolean) =>
    t.app.inject({ method: 'POST', url: '/api/account/login', payload: { email, password, rememberMe } });

  describe('register', () => {
    it('creates an account and signs it in (201 AuthData with defaults)', async () => {
      const email = uniqueEmail();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/register',
        payload: { email: email.toUpperCase(), password: PASSWORD, fullName: ' Ada Lovelace ' },
      });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(body.user).toEqual({
        id: expect.any(Number),
        email,
        fullName: 'Ada Lovelace',
        country: 'PL',
        timezone: 'Europe/Warsaw',
        language: 'en',
      });
      expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(body.refreshToken).not.toBe(body.token);
      expect(Date.parse(body.expiresAt) - t.now()).toBe(15 * 60_000);
      expect(body).not.toHaveProperty('user.passwordHash');
    });

    it.each([
      [{ email: 'not-an-email', password: PASSWORD, fullName: 'A' }, 'email', MESSAGES.invalidEmail],
      [{ email: uniqueEmail(), password: 'short', fullName: 'A' }, 'password', MESSAGES.passwordLength],
      [
        { email: uniqueEmail(), password: 'x'.repeat(129), fullName: 'A' },
        'password',
        MESSAGES.passwordLength,
      ],
      [{ email: uniqueEmail(), password: PASSWORD, fullName: '  ' }, 'fullName', MESSAGES.fieldEmpty],
      [
        { email: uniqueEmail(), password: PASSWORD, fullName: 'A', timezone: 'Mars/Base' },
        'timezone',
        MESSAGES.timezoneRequired,
      ],
      [
        { email: uniqueEmail(), password: PASSWORD, fullName: 'A', language: 'de' },
        'language',
        MESSAGES.fieldEmpty,
      ],
    ])('rejects %j with a message on %s', async (payload, field, message) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/register', payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[field]).toEqual([message]);
    });

    it.each(['password', 'Password1', 'iloveyou', 'aaaaaaaa'])(
      'refuses the common password %j with 400 on its field and creates nothing',
      async (password) => {
        const email = uniqueEmail();
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/register',
          payload: { email, password, fullName: 'A' },
        });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({
          message: MESSAGES.commonPassword,
          errors: { password: [MESSAGES.commonPassword] },
        });
        expect(await t.app.accounts.findUserByEmail(email)).toBeNull();
      },
    );

    it('accepts a 64-character password and rejects a taken email', async () => {
      const email = uniqueEmail();
      const payload = {
        email,
        password: 'a long passphrase of sixty-four chars: '.padEnd(64, '.'),
        fullName: 'A',
      };
      expect((await t.app.inject({ method: 'POST', url: '/api/register', payload })).statusCode).toBe(201);
      const again = await t.app.inject({ method: 'POST', url: '/api/register', payload });
      expect(again.statusCode).toBe(400);
      expect(again.json().errors.email).toEqual([MESSAGES.emailTaken]);
    });
  });

  describe('login', () => {
    it('answers AuthData for the right password, 1 day refresh without remember-me, 30 with', async () => {
      const a = await signUp(t.app);
      const res = await login(a.email);
      expect(res.statusCode).toBe(200);
      expect(Date.parse(res.json().refreshExpiresAt) - t.now()).toBe(24 * 3_600_000);
      const remembered = await login(a.email, PASSWORD, true);
      expect(Date.parse(remembered.json().refreshExpiresAt) - t.now()).toBe(30 * 86_400_000);
      expect(remembered.json().user.email).toBe(a.email);
    });

    it('answers 400 "Try again!" with errors for a wrong password or an unknown account', async () => {
      const a = await signUp(t.app);
      for (const res of [await login(a.email, 'wrong password'), await login(uniqueEmail())]) {
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({
          message: MESSAGES.loginFailed,
          errors: { password: [MESSAGES.loginFailed] },
        });
      }
    });

    it('answers 400 "Try again!" with field errors for an empty form', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/account/login', payload: {} });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(MESSAGES.loginFailed);
      expect(res.json().errors).toMatchObject({
        email: [MESSAGES.fieldEmpty],
        password: [MESSAGES.fieldEmpty],
      });
    });
  });

  describe('tokens', () => {
    it('verifytoken answers valid with expiry for a live token, 401 otherwise', async () => {
      const a = await signUp(t.app);
      const ok = await t.app.inject({
        method: 'POST',
        url: '/api/account/verifytoken',
        payload: { api_token: a.token },
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ valid: true, expiresAt: expect.any(String) });
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/account/verifytoken',
        payload: { api_token: 'x'.repeat(43) },
      });
      expect(bad.statusCode).toBe(401);
    });

    it('refresh rotates: new tokens work, the old refresh token is spent', async () => {
      const a = await signUp(t.app);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: a.refreshToken },
      });
      expect(res.statusCode).toBe(200);
      const next = res.json();
      expect(next.refreshToken).not.toBe(a.refreshToken);
      expect(next.token).not.toBe(a.token);
      const me = await as(t.app, next, { method: 'GET', url: '/api/account/userInfo' });
      expect(me.statusCode).toBe(200);
      expect(me.json().email).toBe(a.email);
      const second = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: next.refreshToken },
      });
      expect(second.statusCode).toBe(200);
    });

    it('a refresh ends the access token it replaces at once; other sessions keep theirs', async () => {
      const a = await signUp(t.app);
      const other = (await login(a.email)).json();
      const userInfo = { method: 'GET', url: '/api/account/userInfo' } as const;
      expect((await as(t.app, a, userInfo)).statusCode).toBe(200);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: a.refreshToken },
      });
      expect(res.statusCode).toBe(200);
      // Well before its 15 minutes are up, the replaced token is refused everywhere a token is checked.
      const old = await as(t.app, a, userInfo);
      expect(old.statusCode).toBe(401);
      expect(old.json()).toEqual({ message: MESSAGES.unauthorized });
      const verified = await t.app.inject({
        method: 'POST',
        url: '/api/account/verifytoken',
        payload: { api_token: a.token },
      });
      expect(verified.statusCode).toBe(401);
      expect((await as(t.app, res.json(), userInfo)).statusCode).toBe(200);
      expect((await as(t.app, other, userInfo)).statusCode).toBe(200);
      // The next refresh ends the token the first one issued, too.
      const next = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: res.json().refreshToken },
      });
      expect(next.statusCode).toBe(200);
      expect((await as(t.app, res.json(), userInfo)).statusCode).toBe(401);
      expect((await as(t.app, next.json(), userInfo)).statusCode).toBe(200);
      const { rows } = await t.sql.query(
        'select 1 from access_tokens a join sessions s on s.id = a.session_id where s.user_id = $1',
        [a.userId],
      );
      // One live access token per session: the refreshed one and the other sign-in's.
      expect(rows).toHaveLength(2);
    });

    it('a replayed old refresh token, past the grace of a retry, revokes the whole session', async () => {
      const a = await signUp(t.app);
      const rotated = (
        await t.app.inject({
          method: 'POST',
          url: '/api/account/refreshtoken',
          payload: { refreshToken: a.refreshToken },
        })
      ).json();
      t.advance(REFRESH_GRACE_MS + 1000);
      const replay = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: a.refreshToken },
      });
      expect(replay.statusCode).toBe(401);
      // Everything of that session is dead: the rotated access token and the rotated refresh token.
      expect((await as(t.app, rotated, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(
        401,
      );
      const after = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: rotated.refreshToken },
      });
      expect(after.statusCode).toBe(401);
      // Other sessions of the same user live on.
      expect((await login(a.email)).statusCode).toBe(200);
    });

    it('logout ends the session at once', async () => {
      const a = await signUp(t.app);
      const other = (await login(a.email)).json();
      const out = await as(t.app, a, { method: 'GET', url: '/api/account/logout' });
      expect(out.statusCode).toBe(204);
      expect((await as(t.app, a, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(401);
      const refresh = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: a.refreshToken },
      });
      expect(refresh.statusCode).toBe(401);
      expect((await as(t.app, other, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(200);
    });

    it('access tokens expire after 15 minutes; refresh tokens after their lifetime', async () => {
      // Moves the app's clock forward; every other test signs up its own fresh account.
      const b = await signUp(t.app);
      t.advance(14 * 60_000);
      expect((await as(t.app, b, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(200);
      t.advance(2 * 60_000);
      expect((await as(t.app, b, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(401);
      const refreshed = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: b.refreshToken },
      });
      expect(refreshed.statusCode).toBe(200);
      t.advance(25 * 3_600_000);
      const late = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: refreshed.json().refreshToken },
      });
      expect(late.statusCode).toBe(401);
    });

    it('prunes expired tokens and ended sessions without touching live ones', async () => {
      const live = await signUp(t.app);
      const ended = await signUp(t.app);
      await as(t.app, ended, { method: 'GET', url: '/api/account/logout' });
      const pruned = await t.app.accounts.prune();
      expect(pruned).toBeGreaterThan(0);
      expect((await as(t.app, live, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(200);
      const { rows } = await t.sql.query('select 1 from sessions where user_id = $1', [ended.userId]);
      expect(rows).toHaveLength(0);
    });

    it.each([
      ['no header', undefined],
      ['a malformed header', 'Token abc'],
      ['an unknown token', `Bearer ${'a'.repeat(43)}`],
    ])('answers 401 to %s', async (_label, authorization) => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/account/userInfo',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ message: MESSAGES.unauthorized });
    });
  });

  describe('profile', () => {
    it('userInfo answers the user; update changes everything but the email', async () => {
      const a = await signUp(t.app);
      const res = await as(t.app, a, {
        method: 'POST',
        url: '/api/account/update',
        payload: {
          fullName: 'Grace Hopper',
          country: 'TR',
          timezone: 'Europe/Istanbul',
          language: 'tr',
          email: 'x@y.z',
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        id: a.userId,
        email: a.email,
        fullName: 'Grace Hopper',
        country: 'TR',
        timezone: 'Europe/Istanbul',
        language: 'tr',
      });
      const me = await as(t.app, a, { method: 'GET', url: '/api/account/userInfo' });
      expect(me.json().language).toBe('tr');
    });

    it.each([
      [
        { fullName: 'A', country: '', timezone: 'Europe/Warsaw', language: 'en' },
        { country: [MESSAGES.countryRequired] },
      ],
      [{ fullName: 'A', timezone: 'Europe/Warsaw', language: 'en' }, { country: [MESSAGES.countryRequired] }],
      [
        { fullName: 'A', country: 'PL', timezone: '', language: 'en' },
        { timezone: [MESSAGES.timezoneRequired] },
      ],
      [{ fullName: 'A', country: 'PL', language: 'pl' }, { timezone: [MESSAGES.timezoneRequired] }],
      [
        { fullName: 'A', country: 'PL', timezone: 'Europe/Warsaw', language: 'fr' },
        { language: [MESSAGES.fieldEmpty] },
      ],
    ])('update rejects %j', async (payload, errors) => {
      const a = await signUp(t.app);
      const res = await as(t.app, a, { method: 'POST', url: '/api/account/update', payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ message: MESSAGES.saveFailed, errors });
    });
  });

  describe('password reset', () => {
    it('mails a single-use link that sets a new password and ends every session', async () => {
      const a = await signUp(t.app);
      const before = t.mails.length;
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/forgot_password',
        payload: { email: a.email },
      });
      expect(res.statusCode).toBe(202);
      await vi_waitFor(() => t.mails.length > before);
      const mail = t.mails.at(-1)!;
      expect(mail.to).toBe(a.email);
      const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
      const reset = await t.app.inject({
        method: 'POST',
        url: '/api/reset_password',
        payload: { token, password: 'a brand new password' },
      });
      expect(reset.statusCode).toBe(204);
      expect((await as(t.app, a, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(401);
      expect((await login(a.email)).statusCode).toBe(400);
      expect((await login(a.email, 'a brand new password')).statusCode).toBe(200);
      const again = await t.app.inject({
        method: 'POST',
        url: '/api/reset_password',
        payload: { token, password: 'yet another password' },
      });
      expect(again.statusCode).toBe(400);
      expect(again.json().errors).toEqual({ token: [MESSAGES.invalidToken] });
    });

    it('refuses a common new password with 400 and leaves the link and the old password working', async () => {
      const a = await signUp(t.app);
      const before = t.mails.length;
      await t.app.inject({ method: 'POST', url: '/api/forgot_password', payload: { email: a.email } });
      await vi_waitFor(() => t.mails.length > before);
      const token = /token=([A-Za-z0-9_-]+)/.exec(t.mails.at(-1)!.text)![1]!;
      const common = await t.app.inject({
        method: 'POST',
        url: '/api/reset_password',
        payload: { token, password: 'qwertyuiop' },
      });
      expect(common.statusCode).toBe(400);
      expect(common.json()).toEqual({
        message: MESSAGES.commonPassword,
        errors: { password: [MESSAGES.commonPassword] },
      });
      expect((await login(a.email)).statusCode).toBe(200);
      expect((await as(t.app, a, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(200);
      const better = await t.app.inject({
        method: 'POST',
        url: '/api/reset_password',
        payload: { token, password: 'a brand new password' },
      });
      expect(better.statusCode).toBe(204);
    });

    it('answers 202 for an unknown email and sends nothing', async () => {
      const before = t.mails.length;
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/forgot_password',
        payload: { email: uniqueEmail() },
      });
      expect(res.statusCode).toBe(202);
      expect(res.body).toBe('');
      expect(t.mails.length).toBe(before);
    });

    it('a reset token expires after an hour', async () => {
      const a = await signUp(t.app);
      const before = t.mails.length;
      await t.app.inject({ method: 'POST', url: '/api/forgot_password', payload: { email: a.email } });
      await vi_waitFor(() => t.mails.length > before);
      const token = /token=([A-Za-z0-9_-]+)/.exec(t.mails.at(-1)!.text)![1]!;
      t.advance(61 * 60_000);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/reset_password',
        payload: { token, password: 'a brand new password' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toEqual({ token: [MESSAGES.invalidToken] });
    });
  });
});

/** Mails go out in the background; wait a bounded number of turns for one. */
async function vi_waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error('condition not met');
}
