import { ApiError } from '../client.ts';

/**
 * Saves are tried again when the server shed them unprocessed (503 busy, 429 rate limited), so a
 * momentarily busy server does not lose the user's edit; any other failure is reported at once.
 */
export const retryShedSave = {
  retry: (count: number, err: unknown) =>
    count < 4 && err instanceof ApiError && (err.status === 503 || err.status === 429),
  retryDelay: (attempt: number) => Math.min(1000 * 2 ** attempt, 8000),
} as const;
