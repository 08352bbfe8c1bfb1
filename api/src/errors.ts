/**
 * Errors with meaning: each carries its HTTP status and a catalogue message (docs/spec.md §8); the
 * one error handler in app.ts turns them into `{ message, errors? }`.
 */
import { MESSAGES } from '@kilowatch/core';

export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** 400 with field errors: a request that broke the docs/spec.md §5 rules. */
export class ValidationError extends ApiError {
  constructor(errors: FieldErrors, message: string = MESSAGES.saveFailed) {
    super(400, message, errors);
    this.name = 'ValidationError';
  }
}

/** 404: unknown, or someone else's (never reveal another user's ids). */
export class NotFoundError extends ApiError {
  constructor() {
    super(404, MESSAGES.notFound);
    this.name = 'NotFoundError';
  }
}

/** 401: missing, expired or revoked token. */
export class UnauthorizedError extends ApiError {
  constructor() {
    super(401, MESSAGES.unauthorized);
    this.name = 'UnauthorizedError';
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, errors?: FieldErrors) {
    super(409, message, errors);
    this.name = 'ConflictError';
  }
}

export class TooManyRequestsError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(429, MESSAGES.tooManyRequests, undefined, {
      'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    });
    this.name = 'TooManyRequestsError';
  }
}

/**
 * 503 with Retry-After: a store the API depends on (PostgreSQL) cannot be reached or does not answer in
 * time. Not the request's fault and not a bug: the client comes back; `cause` says what happened.
 */
export class UnavailableError extends ApiError {
  constructor(what: string, cause: unknown) {
    super(503, MESSAGES.busy, undefined, { 'retry-after': '10' });
    this.name = 'UnavailableError';
    this.cause = cause;
    this.detail = `${what}: ${cause instanceof Error ? cause.message : String(cause)}`;
  }
  readonly detail: string;
}
