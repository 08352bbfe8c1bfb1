/** Local-storage keys of docs/spec.md §9, in one place, so sign-out can clear exactly what sign-in wrote. */
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

function store(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

export function readStored(key: StorageKey): string | null {
  return store()?.getItem(key) ?? null;
}

export function writeStored(key: StorageKey, value: string | null): void {
  const s = store();
  if (!s) return;
  if (value === null) s.removeItem(key);
  else s.setItem(key, value);
}
