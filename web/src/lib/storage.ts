/**
 * Browser-storage keys of docs/spec.md §9, in one place, so sign-out can clear exactly what sign-in wrote.
 * Preferences live in local storage; a session's token, refresh token and profile in local storage when
 * the sign-in asked to be remembered, else in this tab's session storage (`area` 'tab').
 */
export const STORAGE_KEYS = {
  token: 'kw.token',
  refreshToken: 'kw.refreshToken',
  user: 'kw.user',
  timezone: 'kw.timezone',
  language: 'kw.language',
  appVersion: 'kw.appVersion',
  themeMode: 'kw.themeMode',
  appMode: 'kw.appMode',
} as const;

export type StorageKey = (typeof STORAGE_KEYS)[keyof typeof STORAGE_KEYS];

/** Local storage outlives the browser; session storage ends with its tab (and the browser). */
export type StorageArea = 'local' | 'tab';

function store(area: StorageArea): Storage | null {
  try {
    return (area === 'local' ? globalThis.localStorage : globalThis.sessionStorage) ?? null;
  } catch {
    return null;
  }
}

export function readStored(key: StorageKey, area: StorageArea = 'local'): string | null {
  return store(area)?.getItem(key) ?? null;
}

export function writeStored(key: StorageKey, value: string | null, area: StorageArea = 'local'): void {
  const s = store(area);
  if (!s) return;
  if (value === null) s.removeItem(key);
  else s.setItem(key, value);
}
