import { clearAuth } from '../../auth/session.ts';
import { request } from '../client.ts';

/** Ends the session on the server; the local auth is cleared even when that call fails (docs/spec.md §4). */
export async function logout(): Promise<void> {
  try {
    await request('GET', '/account/logout', { notFoundPage: false, auth: true });
  } catch {
    // Signing out locally must not depend on the server.
  } finally {
    clearAuth();
  }
}
