/** Account, session and profile messages (docs/api.md §Account). */
import * as v from 'valibot';
import { DEFAULT_TIMEZONE } from '../time.ts';
import { IdSchema, TimeZoneSchema } from './common.ts';
import { MESSAGES } from './messages.ts';

export const LANGUAGES = ['en', 'pl', 'tr'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en';
export const DEFAULT_COUNTRY = 'PL';

/** Passwords: 8 to 128 characters (OWASP ASVS: at least 64 allowed, no composition rules). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

const EmailSchema = v.pipe(
  v.string(MESSAGES.fieldEmpty),
  v.trim(),
  v.nonEmpty(MESSAGES.fieldEmpty),
  v.maxLength(254, MESSAGES.invalidEmail),
  v.email(MESSAGES.invalidEmail),
  v.toLowerCase(),
);

const NewPasswordSchema = v.pipe(
  v.string(MESSAGES.fieldEmpty),
  v.nonEmpty(MESSAGES.fieldEmpty),
  v.minLength(PASSWORD_MIN, MESSAGES.passwordLength),
  v.maxLength(PASSWORD_MAX, MESSAGES.passwordLength),
);

const LanguageSchema = v.picklist(LANGUAGES, MESSAGES.fieldEmpty);

const CountrySchema = v.pipe(
  v.string(MESSAGES.countryRequired),
  v.trim(),
  v.nonEmpty(MESSAGES.countryRequired),
  v.maxLength(64, MESSAGES.countryRequired),
);

const FullNameSchema = v.pipe(
  v.string(MESSAGES.fieldEmpty),
  v.trim(),
  v.nonEmpty(MESSAGES.fieldEmpty),
  v.maxLength(200, MESSAGES.fieldEmpty),
);

export const UserSchema = v.object({
  id: IdSchema,
  email: v.string(),
  fullName: v.string(),
  country: v.string(),
  timezone: v.string(),
  language: v.picklist(LANGUAGES),
});
export type User = v.InferOutput<typeof UserSchema>;

export const AuthDataSchema = v.object({
  /** Access token (short-lived bearer). */
  token: v.string(),
  refreshToken: v.string(),
  /** When the access token expires (ISO 8601). */
  expiresAt: v.string(),
  /** When the refresh token expires (ISO 8601). */
  refreshExpiresAt: v.string(),
  user: UserSchema,
});
export type AuthData = v.InferOutput<typeof AuthDataSchema>;

export const LoginRequestSchema = v.object({
  email: EmailSchema,
  // Login checks no length rules: a wrong password is just wrong.
  password: v.pipe(v.string(MESSAGES.fieldEmpty), v.nonEmpty(MESSAGES.fieldEmpty), v.maxLength(1024)),
  rememberMe: v.optional(v.boolean(), false),
});
export type LoginRequest = v.InferInput<typeof LoginRequestSchema>;

export const DemoRequestSchema = v.optional(v.object({}), {});

export const RefreshRequestSchema = v.object({
  refreshToken: v.pipe(v.string(MESSAGES.fieldEmpty), v.nonEmpty(MESSAGES.fieldEmpty), v.maxLength(512)),
});
export type RefreshRequest = v.InferInput<typeof RefreshRequestSchema>;

export const VerifyTokenRequestSchema = v.object({
  api_token: v.pipe(v.string(MESSAGES.fieldEmpty), v.nonEmpty(MESSAGES.fieldEmpty), v.maxLength(512)),
});
export type VerifyTokenRequest = v.InferInput<typeof VerifyTokenRequestSchema>;

export const VerifyTokenResponseSchema = v.object({ valid: v.literal(true), expiresAt: v.string() });
export type VerifyTokenResponse = v.InferOutput<typeof VerifyTokenResponseSchema>;

export const UpdateUserRequestSchema = v.object({
  fullName: FullNameSchema,
  country: CountrySchema,
  timezone: TimeZoneSchema,
  language: LanguageSchema,
});
export type UpdateUserRequest = v.InferInput<typeof UpdateUserRequestSchema>;

export const RegisterRequestSchema = v.object({
  email: EmailSchema,
  password: NewPasswordSchema,
  fullName: FullNameSchema,
  country: v.optional(CountrySchema, DEFAULT_COUNTRY),
  timezone: v.optional(TimeZoneSchema, DEFAULT_TIMEZONE),
  language: v.optional(LanguageSchema, DEFAULT_LANGUAGE),
});
export type RegisterRequest = v.InferInput<typeof RegisterRequestSchema>;

export const ForgotPasswordRequestSchema = v.object({ email: EmailSchema });
export type ForgotPasswordRequest = v.InferInput<typeof ForgotPasswordRequestSchema>;

export const ResetPasswordRequestSchema = v.object({
  token: v.pipe(v.string(MESSAGES.fieldEmpty), v.nonEmpty(MESSAGES.fieldEmpty), v.maxLength(512)),
  password: NewPasswordSchema,
});
export type ResetPasswordRequest = v.InferInput<typeof ResetPasswordRequestSchema>;

/** Personal API keys (docs/api.md §Account): read-only bearer keys for Grafana and scripts. */
export const API_KEY_NAME_MAX = 60;
/** Keys one account may hold at once. */
export const API_KEYS_MAX = 20;

export const ApiKeySchema = v.object({
  id: IdSchema,
  name: v.string(),
  /** ISO 8601. */
  createdAt: v.string(),
  /** ISO 8601, or null before the first use. */
  lastUsedAt: v.nullable(v.string()),
});
export type ApiKey = v.InferOutput<typeof ApiKeySchema>;

export const CreateApiKeyRequestSchema = v.object({
  name: v.pipe(
    v.string(MESSAGES.fieldEmpty),
    v.trim(),
    v.nonEmpty(MESSAGES.fieldEmpty),
    v.maxLength(API_KEY_NAME_MAX, MESSAGES.fieldEmpty),
  ),
});
export type CreateApiKeyRequest = v.InferInput<typeof CreateApiKeyRequestSchema>;

/** The answer to a new key: the only time the key itself is shown (only its hash is stored). */
export const CreatedApiKeySchema = v.object({ id: IdSchema, name: v.string(), key: v.string() });
export type CreatedApiKey = v.InferOutput<typeof CreatedApiKeySchema>;

/**
 * The account's notification webhook (docs/api.md §Exports and notifications): every notification is POSTed
 * to `url` as JSON, signed with the secret (`X-Kilowatch-Signature: sha256=<hex HMAC-SHA256 of the body>`).
 */
export const WEBHOOK_URL_MAX = 2000;

export const WebhookSchema = v.object({
  /** null: no webhook. */
  url: v.nullable(v.string()),
  /** The signing secret: only in the answer that created or rotated it. */
  secret: v.optional(v.string()),
  /** ISO 8601: when the secret was made, or null without a webhook. */
  secretCreatedAt: v.nullable(v.string()),
});
export type Webhook = v.InferOutput<typeof WebhookSchema>;

export const WebhookRequestSchema = v.object({
  /** An http(s) address, or null to remove the webhook (and its secret). */
  url: v.nullable(
    v.pipe(
      v.string(MESSAGES.saveFailed),
      v.trim(),
      v.maxLength(WEBHOOK_URL_MAX, MESSAGES.saveFailed),
      v.check((u) => {
        try {
          const p = new URL(u).protocol;
          return p === 'http:' || p === 'https:';
        } catch {
          return false;
        }
      }, MESSAGES.saveFailed),
    ),
  ),
  /** A new secret (the old one stops signing at once). */
  rotateSecret: v.optional(v.boolean(MESSAGES.fieldEmpty)),
});
export type WebhookRequest = v.InferInput<typeof WebhookRequestSchema>;
