/** Users, sessions and their tokens, password-reset tokens. Tokens arrive here already hashed. */
import type { Language, User } from '@kilowatch/core';
import type { Queryable, Sql } from '../../db/sql.ts';
import { isUniqueViolation } from '../../db/sql.ts';

interface UserRow {
  id: number;
  email: string;
  password_hash: string;
  full_name: string;
  country: string;
  timezone: string;
  language: string;
  is_demo: boolean;
  workspace_expires_at: number | null;
}

export interface UserRecord extends User {
  passwordHash: string;
  isDemo: boolean;
  /** A demo visitor's workspace: when it is removed unless used again; null for every other account. */
  workspaceExpiresAt: number | null;
}

function toUser(r: UserRow): UserRecord {
  return {
    id: Number(r.id),
    email: r.email,
    fullName: r.full_name,
    country: r.country,
    timezone: r.timezone,
    language: r.language as Language,
    passwordHash: r.password_hash,
    isDemo: r.is_demo,
    workspaceExpiresAt: r.workspace_expires_at === null ? null : Number(r.workspace_expires_at),
  };
}

export function publicUser(u: UserRecord): User {
  return {
    id: u.id,
    email: u.email,
    fullName: u.fullName,
    country: u.country,
    timezone: u.timezone,
    language: u.language,
  };
}

export interface NewUser {
  email: string;
  passwordHash: string;
  fullName: string;
  country: string;
  timezone: string;
  language: Language;
  isDemo?: boolean;
}

export interface SessionTokens {
  accessHash: string;
  accessExpiresAt: number;
  refreshHash: string;
  refreshExpiresAt: number;
}

export interface AuthenticatedSession {
  userId: number;
  sessionId: number;
  expiresAt: number;
}

export type RotateOutcome =
  | { kind: 'invalid' }
  | { kind: 'reused'; sessionId: number; userId: number; usedAt: number | null }
  | { kind: 'rotated'; userId: number; sessionId: number; remember: boolean };

const USER_COLUMNS =
  'id, email, password_hash, full_name, country, timezone, language, is_demo, workspace_expires_at';

export function createAccountsRepository(sql: Sql, now: () => number) {
  async function insertTokens(q: Queryable, sessionId: number, t: SessionTokens) {
    await q.query('insert into access_tokens (token_hash, session_id, expires_at) values ($1, $2, $3)', [
      t.accessHash,
      sessionId,
      t.accessExpiresAt,
    ]);
    await q.query('insert into refresh_tokens (token_hash, session_id, expires_at) values ($1, $2, $3)', [
      t.refreshHash,
      sessionId,
      t.refreshExpiresAt,
    ]);
  }

  return {
    async findUserById(id: number): Promise<UserRecord | null> {
      const { rows } = await sql.query<UserRow>(`select ${USER_COLUMNS} from users where id = $1`, [id]);
      return rows[0] ? toUser(rows[0]) : null;
    },

    async findUserByEmail(email: string): Promise<UserRecord | null> {
      const { rows } = await sql.query<UserRow>(`select ${USER_COLUMNS} from users where email = $1`, [
        email.toLowerCase(),
      ]);
      return rows[0] ? toUser(rows[0]) : null;
    },

    /** null when the email is taken. */
    async createUser(u: NewUser): Promise<UserRecord | null> {
      const t = now();
      try {
        const { rows } = await sql.query<UserRow>(
          `insert into users (email, password_hash, full_name, country, timezone, language, is_demo, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $8) returning ${USER_COLUMNS}`,
          [
            u.email.toLowerCase(),
            u.passwordHash,
            u.fullName,
            u.country,
            u.timezone,
            u.language,
            u.isDemo ?? false,
            t,
          ],
        );
        return toUser(rows[0]!);
      } catch (err) {
        if (isUniqueViolation(err)) return null;
        throw err;
      }
    },

    async updateProfile(
      id: number,
      p: { fullName: string; country: string; timezone: string; language: Language },
    ): Promise<UserRecord | null> {
      const { rows } = await sql.query<UserRow>(
        `update users set full_name = $2, country = $3, timezone = $4, language = $5, updated_at = $6
         where id = $1 returning ${USER_COLUMNS}`,
        [id, p.fullName, p.country, p.timezone, p.language, now()],
      );
      return rows[0] ? toUser(rows[0]) : null;
    },

    async createSession(
      userId: number,
      remember: boolean,
      expiresAt: number,
      tokens: SessionTokens,
    ): Promise<number> {
      return sql.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: number }>(
          'insert into sessions (user_id, remember, created_at, expires_at) values ($1, $2, $3, $4) returning id',
          [userId, remember, now(), expiresAt],
        );
        const sessionId = Number(rows[0]!.id);
        await insertTokens(tx, sessionId, tokens);
        return sessionId;
      });
    },

    /** The live session an access token belongs to, or null (unknown, expired or revoked). */
    async authenticate(accessHash: string): Promise<AuthenticatedSession | null> {
      const { rows } = await sql.query<{ user_id: number; session_id: number; expires_at: number }>(
        `select s.user_id, s.id as session_id, a.expires_at from access_tokens a
         join sessions s on s.id = a.session_id
         where a.token_hash = $1 and a.expires_at > $2 and s.revoked_at is null and s.expires_at > $2`,
        [accessHash, now()],
      );
      const r = rows[0];
      return r
        ? { userId: Number(r.user_id), sessionId: Number(r.session_id), expiresAt: Number(r.expires_at) }
        : null;
    },

    /**
     * Spends a refresh token and stores its successor pair in one transaction, ending the access token
     * it replaces. A token that was already spent is a replay: the caller revokes the whole session.
     */
    async rotate(refreshHash: string, next: (remember: boolean) => SessionTokens): Promise<RotateOutcome> {
      return sql.transaction(async (tx) => {
        const t = now();
        const { rows } = await tx.query<{
          session_id: number;
          expires_at: number;
          used_at: number | null;
          user_id: number;
          remember: boolean;
          revoked_at: number | null;
          session_expires_at: number;
        }>(
          `select r.session_id, r.expires_at, r.used_at, s.user_id, s.remember, s.revoked_at, s.expires_at as session_expires_at
           from refresh_tokens r join sessions s on s.id = r.session_id where r.token_hash = $1 for update of r`,
          [refreshHash],
        );
        const r = rows[0];
        if (!r) return { kind: 'invalid' };
        const sessionId = Number(r.session_id);
        const userId = Number(r.user_id);
        if (r.used_at !== null) {
          if (r.revoked_at !== null) return { kind: 'invalid' };
          return { kind: 'reused', sessionId, userId, usedAt: Number(r.used_at) };
        }
        if (r.revoked_at !== null || Number(r.expires_at) <= t || Number(r.session_expires_at) <= t) {
          return { kind: 'invalid' };
        }
        const spent = await tx.query(
          'update refresh_tokens set used_at = $2 where token_hash = $1 and used_at is null',
          [refreshHash, t],
        );
        if (spent.rowCount !== 1) return { kind: 'reused', sessionId, userId, usedAt: null };
        const tokens = next(r.remember);
        // A session holds one live access token: the one this refresh replaces ends now, not at its expiry.
        await tx.query('delete from access_tokens where session_id = $1', [sessionId]);
        await insertTokens(tx, sessionId, tokens);
        await tx.query('update sessions set expires_at = $2 where id = $1', [
          sessionId,
          tokens.refreshExpiresAt,
        ]);
        return { kind: 'rotated', userId, sessionId, remember: r.remember };
      });
    },

    async revokeSession(sessionId: number, reason: string): Promise<void> {
      await sql.query(
        'update sessions set revoked_at = $2, revoked_reason = $3 where id = $1 and revoked_at is null',
        [sessionId, now(), reason],
      );
    },

    async revokeUserSessions(userId: number, reason: string): Promise<void> {
      await sql.query(
        'update sessions set revoked_at = $2, revoked_reason = $3 where user_id = $1 and revoked_at is null',
        [userId, now(), reason],
      );
    },

    /** A new reset link voids every older one of the account. */
    async createPasswordReset(userId: number, hash: string, expiresAt: number): Promise<void> {
      await sql.query('update password_resets set used_at = $2 where user_id = $1 and used_at is null', [
        userId,
        now(),
      ]);
      await sql.query(
        'insert into password_resets (token_hash, user_id, created_at, expires_at) values ($1, $2, $3, $4)',
        [hash, userId, now(), expiresAt],
      );
    },

    /** Spends a reset token once, and with it every other link of the account; null when unknown, spent or expired. */
    async consumePasswordReset(hash: string): Promise<number | null> {
      const t = now();
      const { rows } = await sql.query<{ user_id: number }>(
        `update password_resets set used_at = $2 where token_hash = $1 and used_at is null and expires_at > $2
         returning user_id`,
        [hash, t],
      );
      if (!rows[0]) return null;
      const userId = Number(rows[0].user_id);
      await sql.query('update password_resets set used_at = $2 where user_id = $1 and used_at is null', [
        userId,
        t,
      ]);
      return userId;
    },

    /** Deletes what can never be used again: expired tokens and sessions, spent or expired reset tokens. */
    async prune(): Promise<number> {
      const t = now();
      let n = 0;
      n += (await sql.query('delete from access_tokens where expires_at <= $1', [t])).rowCount;
      // Spent refresh tokens stay while their session lives: a replay must still be recognised.
      n += (await sql.query('delete from sessions where expires_at <= $1 or revoked_at is not null', [t]))
        .rowCount;
      n += (await sql.query('delete from password_resets where expires_at <= $1 or used_at is not null', [t]))
        .rowCount;
      return n;
    },

    /**
     * A password reset: the new password, and every way in the old one opened ends with it — each session
     * and each API key of the account — in one transaction, so none outlives a reset half done.
     */
    async resetPassword(userId: number, passwordHash: string): Promise<{ apiKeysEnded: number }> {
      return sql.transaction(async (tx) => {
        const t = now();
        await tx.query('update users set password_hash = $2, updated_at = $3 where id = $1', [
          userId,
          passwordHash,
          t,
        ]);
        await tx.query(
          `update sessions set revoked_at = $2, revoked_reason = 'password reset'
           where user_id = $1 and revoked_at is null`,
          [userId, t],
        );
        const keys = await tx.query('delete from api_keys where user_id = $1', [userId]);
        return { apiKeysEnded: keys.rowCount };
      });
    },
  };
}

export type AccountsRepository = ReturnType<typeof createAccountsRepository>;
