/**
 * The signed-in session (docs/spec.md §4): token, refresh token and profile live in local storage under the
 * §9 keys. Components read it with `useSession`; everything else through these functions.
 */
import { type AuthData, DEFAULT_TIMEZONE, type User } from '@kilowatch/core';
import { useSyncExternalStore } from 'react';
import { readStored, STORAGE_KEYS, writeStored } from '../lib/storage.ts';

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

function load(): Session {
  let user: User | null = null;
  try {
    const raw = readStored(STORAGE_KEYS.user);
    user = raw ? (JSON.parse(raw) as User) : null;
  } catch {
    user = null;
  }
  const token = readStored(STORAGE_KEYS.token);
  return {
    token,
    refreshToken: readStored(STORAGE_KEYS.refreshToken),
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

/** Stores the answer of login, demo, register or refresh. The profile's zone becomes the display zone. */
export function saveAuth(auth: AuthData): void {
  writeStored(STORAGE_KEYS.token, auth.token);
  if (auth.refreshToken) writeStored(STORAGE_KEYS.refreshToken, auth.refreshToken);
  writeStored(STORAGE_KEYS.user, JSON.stringify(auth.user));
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
  writeStored(STORAGE_KEYS.user, JSON.stringify(user));
  if (user.timezone) writeStored(STORAGE_KEYS.timezone, user.timezone);
  emit();
}

/** Forgets the authentication; theme, language and app version are preferences and stay. */
export function clearAuth(): void {
  writeStored(STORAGE_KEYS.token, null);
  writeStored(STORAGE_KEYS.refreshToken, null);
  writeStored(STORAGE_KEYS.user, null);
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
