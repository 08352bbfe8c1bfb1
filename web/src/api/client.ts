/**
 * The one way to the Kilowatch API (docs/api.md §Conventions, docs/spec.md §4): bearer token, one transparent
 * retry after a token refresh on 401 (a busy or unreachable server never signs anyone out), the
 * not-found page on 404, a reload when the server's `X-App-Version` changes on a GET, and every failure
 * turned into an `ApiError` with a readable message.
 */
import { AuthDataSchema, MESSAGES as CATALOGUE, ErrorBodySchema } from '@kilowatch/core';
import * as v from 'valibot';
import { clearAuth, getSession, reloadSession, saveAuth } from '../auth/session.ts';
import { readStored, STORAGE_KEYS, writeStored } from '../lib/storage.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly errors: Record<string, string[]> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Network failures, rate limits and busy servers may succeed when tried again. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status === 503;
  }
}

/**
 * Whether a "Retry" button can help after a failed load: not when the server refused the request itself
 * (a 4xx other than a timeout or a rate limit), which it would refuse again.
 */
export function worthRetrying(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  return error.status === 0 || error.status >= 500 || error.status === 408 || error.status === 429;
}

/**
 * A busy server turns requests away (503 with Retry-After, 429) before handling them, so trying again
 * cannot apply a save twice: shed requests are tried up to four more times, waiting 1, 2, 4 and 8 s,
 * which rides out a demo-history write or a burst. Reads also try a lost connection twice more; any
 * other failure is reported at once.
 */
export const retryShed = {
  retry: (count: number, err: unknown) =>
    count < 4 && err instanceof ApiError && (err.status === 503 || err.status === 429),
  retryDelay: (attempt: number) => Math.min(1000 * 2 ** attempt, 8000),
} as const;

/** Query retries: shed answers as `retryShed`, network failures twice. */
export const retryRead = {
  retry: (count: number, err: unknown) =>
    retryShed.retry(count, err) || (count < 2 && err instanceof ApiError && err.status === 0),
  retryDelay: retryShed.retryDelay,
} as const;

/** The client's own failure messages; those the server also sends come from the shared catalogue. */
export const MESSAGES = {
  internal: CATALOGUE.internal,
  network: 'Network connection problem',
  notFound: CATALOGUE.notFound,
  busy: CATALOGUE.busy,
} as const;

interface Navigator {
  toSignIn(): void;
  toNotFound(): void;
}

let navigator: Navigator = {
  toSignIn: () => globalThis.location?.assign('/sign-in'),
  toNotFound: () => globalThis.location?.assign('/404'),
};

/** The router plugs its navigation in here, so the client never imports the route tree. */
export function setNavigator(n: Navigator): void {
  navigator = n;
}

export interface RequestOptions<T> {
  body?: unknown | (() => unknown);
  /** A text body sent as it is, with this content type, instead of JSON (a CSV upload, a picked file). */
  text?: { body: string | Blob; contentType: string };
  query?: Record<string, string | number | undefined | null>;
  schema?: v.GenericSchema<unknown, T>;
  signal?: AbortSignal;
  /** Send the bearer token and handle 401 with a refresh (default true). */
  auth?: boolean;
  /** Send the user to /404 when the answer is 404 (default true). */
  notFoundPage?: boolean;
  /** The sign-out call itself: sent while every other request is being cancelled. */
  signOut?: boolean;
}

/**
 * Sign-out cancels every request in flight (their answers would be 401s of a session being ended) and
 * refuses new ones until a different session is stored: `signedOutToken` is the token signed out of.
 */
let inFlight = new AbortController();
let signedOutToken: string | null | undefined;

function abortError(): DOMException {
  return new DOMException('Cancelled by sign-out', 'AbortError');
}

/** Cancels every request in flight and holds back new ones until the next sign-in. */
export function cancelRequestsForSignOut(): void {
  signedOutToken = getSession().token;
  inFlight.abort(abortError());
  inFlight = new AbortController();
}

/** True while signing out or signed out of the session the last sign-out ended. */
function signingOut(): boolean {
  if (signedOutToken === undefined) return false;
  const current = getSession().token;
  if (current !== null && current !== signedOutToken) signedOutToken = undefined;
  return signedOutToken !== undefined;
}

function withInFlight(signal: AbortSignal | undefined): AbortSignal {
  if (!signal) return inFlight.signal;
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([signal, inFlight.signal]);
  const both = new AbortController();
  const stop = (from: AbortSignal) => () => both.abort(from.reason);
  if (signal.aborted) both.abort(signal.reason);
  else signal.addEventListener('abort', stop(signal), { once: true });
  inFlight.signal.addEventListener('abort', stop(inFlight.signal), { once: true });
  return both.signal;
}

/**
 * How a token refresh ended: a new token, a refusal (the refresh token is no good, so the user must
 * sign in again), or no answer at all (a lost connection or a server too busy to answer, which says
 * nothing about the session and must never sign anyone out).
 */
export type RefreshOutcome = 'refreshed' | 'refused' | 'unavailable';

/** Further refresh attempts after a 503, 429 or lost connection, spaced as `retryShed` (1, 2, 4, 8 s). */
const REFRESH_RETRIES = 4;

let refreshing: Promise<RefreshOutcome> | null = null;

/** The Web Locks name under which one tab of the browser at a time refreshes the shared tokens. */
const REFRESH_LOCK = 'kw.refresh';

/**
 * Runs `fn` while holding the browser-wide refresh lock, so tabs sharing one refresh token never spend
 * it concurrently (a replayed token ends the whole session). Without Web Locks (an old browser, an
 * insecure origin) it runs at once: the server gives a just-rotated token the same new pair for 30 s.
 */
function underRefreshLock<T>(fn: () => Promise<T>): Promise<T> {
  const locks = (globalThis.navigator as { locks?: LockManager } | undefined)?.locks;
  if (!locks?.request) return fn();
  return (locks.request(REFRESH_LOCK, { mode: 'exclusive' }, fn) as Promise<T>).catch((err: unknown) => {
    // A lock manager that refuses (storage partitioned, a security error) must not sign anyone out.
    if (err instanceof DOMException && err.name !== 'AbortError') return fn();
    throw err;
  });
}
/** The status of the last refresh that got no usable answer (0 for a lost connection). */
let unansweredStatus = 0;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function refreshOnce(refreshToken: string): Promise<RefreshOutcome | number> {
  let res: Response;
  try {
    res = await fetch('/api/account/refreshtoken', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      credentials: 'include',
      body: JSON.stringify({ refreshToken }),
    });
  } catch {
    return 0;
  }
  if (res.status === 503 || res.status === 429) return res.status;
  if (!res.ok) return 'refused';
  const parsed = v.safeParse(AuthDataSchema, await res.json().catch(() => null));
  if (!parsed.success) return 'refused';
  saveAuth(parsed.output);
  return 'refreshed';
}

/**
 * One refresh at a time: concurrent 401s share it, and across tabs one tab refreshes while the others
 * wait for the lock and then take the tokens it stored. A busy server (503, 429) or a lost connection is
 * tried again after 1, 2, 4 and 8 s; only a real refusal ends the session. `sentWith` is the access
 * token that was refused: when storage already holds another, a tab refreshed meanwhile.
 */
export function refreshSession(sentWith?: string | null): Promise<RefreshOutcome> {
  if (signingOut()) return Promise.resolve('refused');
  if (!refreshing) {
    const stale = sentWith === undefined ? getSession().token : sentWith;
    refreshing = underRefreshLock(async (): Promise<RefreshOutcome> => {
      reloadSession();
      const session = getSession();
      if (session.token !== null && session.token !== stale) return 'refreshed';
      const refreshToken = session.refreshToken;
      if (!refreshToken) return 'refused';
      for (let attempt = 0; ; attempt++) {
        const outcome = await refreshOnce(refreshToken);
        if (typeof outcome === 'string') return outcome;
        if (attempt >= REFRESH_RETRIES) {
          unansweredStatus = outcome;
          return 'unavailable';
        }
        await sleep(retryShed.retryDelay(attempt));
      }
    }).finally(() => {
      refreshing = null;
    });
  }
  return refreshing;
}

/**
 * After a 401 to a request sent with `sentWith`: true when it should be sent again with the current
 * token (refreshed meanwhile by a concurrent request, or now), false when the refresh was refused. When
 * the refresh got no answer it throws the network or busy error, and the session stays.
 */
export async function renewAfterUnauthorized(sentWith: string | null): Promise<boolean> {
  reloadSession();
  const current = getSession().token;
  const outcome = current !== null && current !== sentWith ? 'refreshed' : await refreshSession(sentWith);
  if (outcome === 'unavailable') {
    throw unansweredStatus === 0
      ? new ApiError(MESSAGES.network, 0)
      : new ApiError(MESSAGES.busy, unansweredStatus);
  }
  return outcome === 'refreshed';
}

function buildUrl(path: string, query?: RequestOptions<unknown>['query']): string {
  const qs = new URLSearchParams();
  for (const [k, val] of Object.entries(query ?? {})) {
    if (val !== undefined && val !== null && val !== '') qs.set(k, String(val));
  }
  const s = qs.toString();
  return `/api${path}${s ? `?${s}` : ''}`;
}

function checkAppVersion(res: Response): void {
  const version = res.headers.get('X-App-Version');
  if (!version) return;
  const stored = readStored(STORAGE_KEYS.appVersion);
  writeStored(STORAGE_KEYS.appVersion, version);
  if (stored && stored !== version) globalThis.location?.reload();
}

async function send(
  method: Method,
  url: string,
  opts: RequestOptions<unknown>,
  token: string | null,
): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (opts.auth !== false && token) headers.Authorization = `Bearer ${token}`;
  let body: string | Blob | undefined;
  if (opts.text !== undefined) {
    headers['Content-Type'] = opts.text.contentType;
    body = opts.text.body;
  } else if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(typeof opts.body === 'function' ? (opts.body as () => unknown)() : opts.body);
  }
  try {
    const signal = opts.signOut ? (opts.signal ?? null) : withInFlight(opts.signal);
    return await fetch(url, { method, headers, body, credentials: 'include', signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(MESSAGES.network, 0);
  }
}

async function errorFrom(res: Response): Promise<ApiError> {
  let message: string = res.status >= 500 ? MESSAGES.internal : `${res.status} ${res.statusText}`;
  let errors: Record<string, string[]> = {};
  try {
    const parsed = v.safeParse(ErrorBodySchema, await res.json());
    if (parsed.success) {
      if (parsed.output.message) message = parsed.output.message;
      errors = parsed.output.errors ?? {};
    }
  } catch {
    // A body that is not JSON keeps the status message.
  }
  if (res.status === 404 && message.startsWith('404')) message = MESSAGES.notFound;
  return new ApiError(message, res.status, errors);
}

export async function request<T = unknown>(
  method: Method,
  path: string,
  opts: RequestOptions<T> = {},
): Promise<T> {
  const url = buildUrl(path, opts.query);
  const authenticated = opts.auth !== false;
  // Signed out (or signing out): nothing is sent with the session that is ending.
  if (authenticated && !opts.signOut && signingOut()) throw abortError();
  const sentWith = getSession().token;
  let res = await send(method, url, opts, sentWith);
  if (res.status === 401 && authenticated && path !== '/account/login') {
    // The session is being ended on purpose: no refresh, no redirect.
    if (opts.signOut || signingOut()) throw await errorFrom(res);
    if (await renewAfterUnauthorized(sentWith)) res = await send(method, url, opts, getSession().token);
    if (res.status === 401) {
      clearAuth();
      navigator.toSignIn();
      throw await errorFrom(res);
    }
  }
  if (method === 'GET') checkAppVersion(res);
  if (!res.ok) {
    const err = await errorFrom(res);
    if (res.status === 404 && opts.notFoundPage !== false) navigator.toNotFound();
    throw err;
  }
  if (res.status === 204 || res.headers.get('Content-Length') === '0') return undefined as T;
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    if (!opts.schema) return undefined as T;
    throw new ApiError(`Unreadable answer from ${path}`, res.status);
  }
  if (!opts.schema) return json as T;
  const parsed = v.safeParse(opts.schema, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue ? v.getDotPath(issue) : null;
    throw new ApiError(
      `Unexpected answer from ${path}${where ? ` at ${where}` : ''}: ${issue?.message}`,
      500,
    );
  }
  return parsed.output;
}
