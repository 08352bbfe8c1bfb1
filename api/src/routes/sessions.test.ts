/**
 * Sessions that survive ordinary use, on PGlite and on a real PostgreSQL: two tabs refreshing the same
 * token at once, a retry after a lost answer, an office behind one address refreshing all day, and
 * password-reset links that a newer link or a reset voids.
 */
import { MESSAGES } from '@kilowatch/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REFRESH_GRACE_MS } from '../plugins/app/auth.ts';
import { as, buildTestApp, engines, signUp, type TestApp } from '../testing/helper.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');

for (const engine of engines()) {
  describe(`sessions on ${engine}`, () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await buildTestApp(engine, {
        now: () => NOW,
        config: { ipRateLimit: { max: 5, windowMs: 60_000 }, accountRateLimit: { max: 3, windowMs: 60_000 } },
      });
    });
    afterAll(async () => {
      await t?.close();
    });

    const refresh = (refreshToken: string, ip = '10.0.0.1') =>
      t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken },
        remoteAddress: ip,
      });

    it('two concurrent refreshes of one token both succeed with the same new pair; the session lives', async () => {
      const a = await signUp(t.app);
      const [x, y] = await Promise.all([refresh(a.refreshToken), refresh(a.refreshToken)]);
      expect([x.statusCode, y.statusCode]).toEqual([200, 200]);
      expect(x.json().refreshToken).toBe(y.json().refreshToken);
      expect(x.json().token).toBe(y.json().token);
      const me = await as(t.app, x.json(), { method: 'GET', url: '/api/account/userInfo' });
      expect(me.statusCode).toBe(200);
      // Both tabs hold the new pair; the access token it replaced is gone.
      expect((await as(t.app, a, { method: 'GET', url: '/api/account/userInfo' })).statusCode).toBe(401);
      expect((await refresh(x.json().refreshToken)).statusCode).toBe(200);
    });

    it('a retry within the grace gets the same pair; past it, a replay still revokes the session', async () => {
      const a = await signUp(t.app);
      const first = await refresh(a.refreshToken);
      t.advance(5_000);
      const retry = await refresh(a.refreshToken);
      expect(retry.statusCode).toBe(200);
      expect(retry.json().refreshToken).toBe(first.json().refreshToken);
      t.advance(REFRESH_GRACE_MS);
      const replay = await refresh(a.refreshToken);
      expect(replay.statusCode).toBe(401);
      expect(
        (await as(t.app, first.json(), { method: 'GET', url: '/api/account/userInfo' })).statusCode,
      ).toBe(401);
    });

    it('the per-address refresh limit counts failed refreshes only', async () => {
      // Far more successful refreshes than the limit of 5 from one address (one office behind a NAT).
      let token = (await signUp(t.app)).refreshToken;
      for (let i = 0; i < 12; i++) {
        const res = await refresh(token, '10.0.0.2');
        expect(res.statusCode).toBe(200);
        token = res.json().refreshToken;
      }
      // Guessing is still stopped: failures count, per address.
      const codes: number[] = [];
      for (let i = 0; i < 7; i++)
        codes.push((await refresh(`guess-${i}-${'x'.repeat(40)}`, '10.0.0.3')).statusCode);
      expect(codes.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(codes.slice(5)).toEqual([429, 429]);
      const limited = await refresh(token, '10.0.0.3');
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ message: MESSAGES.tooManyRequests });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // Another address of the same office is not affected, and the window passes.
      expect((await refresh(token, '10.0.0.4')).statusCode).toBe(200);
    });

    it('a newer reset link voids the older one, and a reset voids every other link', async () => {
      const a = await signUp(t.app);
      const linkFor = async () => {
        const before = t.mails.length;
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/forgot_password',
          payload: { email: a.email },
          remoteAddress: '10.0.1.1',
        });
        expect(res.statusCode).toBe(202);
        await vi.waitFor(() => expect(t.mails.length).toBeGreaterThan(before));
        return /token=([A-Za-z0-9_-]+)/.exec(t.mails.at(-1)!.text)![1]!;
      };
      const reset = (token: string, password: string) =>
        t.app.inject({ method: 'POST', url: '/api/reset_password', payload: { token, password } });
      const older = await linkFor();
      const newer = await linkFor();
      const stale = await reset(older, 'an old link password');
      expect(stale.statusCode).toBe(400);
      expect(stale.json().errors).toEqual({ token: [MESSAGES.invalidToken] });
      expect((await reset(newer, 'the newest password')).statusCode).toBe(204);

      // Two links outstanding at once (rows written directly, as two mails in flight would leave them):
      // resetting with one voids the other.
      const third = await linkFor();
      const { tokenHash } = await import('../plugins/app/tokens.ts');
      const { rows } = await t.sql.query<{ user_id: number }>(
        'select user_id from password_resets where token_hash = $1',
        [tokenHash(third)],
      );
      const extra = 'extra-outstanding-link-token-000000000000000';
      await t.sql.query(
        'insert into password_resets (token_hash, user_id, created_at, expires_at) values ($1, $2, $3, $4)',
        [tokenHash(extra), rows[0]!.user_id, NOW, NOW + 3_600_000],
      );
      expect((await reset(third, 'yet another password')).statusCode).toBe(204);
      expect((await reset(extra, 'one more password')).statusCode).toBe(400);
    });
  });
}
