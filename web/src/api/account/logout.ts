import { clearAuth } from '../../auth/session.ts';
import { cancelRequestsForSignOut, request } from '../client.ts';

/**
 * Ends the session on the server; the local auth is cleared even when that call fails (docs/spec.md §4).
 * Requests still in flight are cancelled first, and none is sent with the ending session after it.
 */
export async function logout(): Promise<void> {
  cancelRequestsForSignOut();
  try {
    await request('GET', '/account/logout', { notFoundPage: false, auth: true, signOut: true });
  } catch {
    // Signing out locally must not depend on the server.
  } finally {
    clearAuth();
  }
}
