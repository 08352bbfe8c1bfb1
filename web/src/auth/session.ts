/**
 * The signed-in session (docs/spec.md §4): token, refresh token and profile live under the §9 keys, in
 * local storage when the sign-in asked to be remembered (it survives a restart of the browser), else in
 * this tab's session storage (it ends with the tab). Components read it with `useSession`; everything
 * else through these functions.
 */
import { type AuthData, DEFAULT_TIMEZONE, type User } from '@kilowatch/core';
import { useSyncExternalStore } from 'react';
import { readStored, STORAGE_KEYS, type StorageArea, writeStored } from '../lib/storage.ts';

export interface Session {
  token: string | null;
  refreshToken: string | null;
  user: User | null;
  /** The server has accepted this token since the page loaded (the live hub waits for it). */
  verified: boolean;
}

const listeners = new Set<() => void>();
let verified = false;
let snapshot: Session = load();

const AUTH_KEYS = [STORAGE_KEYS.token, STORAGE_KEYS.refreshToken, STORAGE_KEYS.user] as const;
type AuthKey = (typeof AUTH_KEYS)[number];

/** Where this tab's session is kept: its own session storage when it holds one, else local storage. */
function sessionArea(): StorageArea {
  return readStored(STORAGE_KEYS.token, 'tab') !== null ? 'tab' : 'local';
}

function readAuth(key: AuthKey): string | null {
  return readStored(key, sessionArea());
}

function load(): Session {
  let user: User | null = null;
  try {
    const raw = readAuth(STORAGE_KEYS.user);
    user = raw ? (JSON.parse(raw) as User) : null;
  } catch {
    user = null;
  }
  const token = readAuth(STORAGE_KEYS.token);
  return {
    token,
    refreshToken: readAuth(STORAGE_KEYS.refreshToken),
    user,
    verified: verified && token !== null,
  };
}

function emit(): void {
  snapshot = load();
  for (const l of listeners) l();
}

export function getSession(): Session {
  return snapshot;
}

/**
 * Reads the session again from storage: another tab of the same browser may have refreshed the tokens
 * (or signed out) since this one last looked.
 */
export function reloadSession(): void {
  const stored = load();
  if (
    stored.token === snapshot.token &&
    stored.refreshToken === snapshot.refreshToken &&
    stored.verified === snapshot.verified
  )
    return;
  emit();
}

// Another tab's sign-in, refresh or sign-out: this tab follows it at once.
globalThis.addEventListener?.('storage', (e: StorageEvent) => {
  if (e.key === null || e.key.startsWith('kw.')) reloadSession();
});

export function isSignedIn(): boolean {
  return snapshot.token !== null;
}

/**
 * Stores the answer of login, demo, register or refresh. `remember` chooses local storage (true) or this
 * tab's session storage (false); a refresh leaves it out and keeps the session where it is. The profile's
 * zone becomes the display zone.
 */
export function saveAuth(auth: AuthData, remember?: boolean): void {
  const area: StorageArea = remember === undefined ? sessionArea() : remember ? 'local' : 'tab';
  const other: StorageArea = area === 'local' ? 'tab' : 'local';
  if (remember !== undefined) for (const key of AUTH_KEYS) writeStored(key, null, other);
  writeStored(STORAGE_KEYS.token, auth.token, area);
  if (auth.refreshToken) writeStored(STORAGE_KEYS.refreshToken, auth.refreshToken, area);
  writeStored(STORAGE_KEYS.user, JSON.stringify(auth.user), area);
  if (auth.user.timezone) writeStored(STORAGE_KEYS.timezone, auth.user.timezone);
  verified = true;
  emit();
}

/** Marks the stored token as accepted by the server. */
export function markVerified(): void {
  if (verified) return;
  verified = true;
  emit();
}

export function saveUser(user: User): void {
  writeStored(STORAGE_KEYS.user, JSON.stringify(user), sessionArea());
  if (user.timezone) writeStored(STORAGE_KEYS.timezone, user.timezone);
  emit();
}

/** Forgets the authentication; theme, language and app version are preferences and stay. */
export function clearAuth(): void {
  for (const key of AUTH_KEYS) {
    writeStored(key, null, 'tab');
    writeStored(key, null, 'local');
  }
  verified = false;
  emit();
}

export function subscribeSession(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useSession(): Session {
  return useSyncExternalStore(subscribeSession, getSession, getSession);
}

/** The zone data is shown in (docs/spec.md §3, §9). */
export function displayTimeZone(): string {
  return readStored(STORAGE_KEYS.timezone) || DEFAULT_TIMEZONE;
}

/** Companion-app mode: read once at start (docs/spec.md §4); hides the web chrome. */
export const appMode = { companion: readStored(STORAGE_KEYS.appMode) === '1' };

export function setCompanionMode(on: boolean): void {
  writeStored(STORAGE_KEYS.appMode, on ? '1' : null);
  appMode.companion = on;
}
