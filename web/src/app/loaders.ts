/**
 * A screen's loader warms the query cache (`ensureQueryData`). A query whose fetch is cancelled under it
 * — its last observer left while it fetched, as when the session's token is refreshed and the page
 * renders again — rejects the loader with TanStack Query's CancelledError, which the router would show as
 * the error page although nothing failed. The loader then runs again (the query fetches anew); a real
 * failure still reaches the error page.
 */
import { isCancelledError } from '@tanstack/react-query';

/** Attempts of one loader before a cancellation counts as its failure. */
const LOAD_ATTEMPTS = 3;

export async function loadThroughCancels<T>(load: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await load();
    } catch (e) {
      if (!isCancelledError(e) || attempt >= LOAD_ATTEMPTS) throw e;
    }
  }
}
