import { VerifyTokenResponseSchema } from '@kilowatch/core';
import { getSession, markVerified } from '../../auth/session.ts';
import { ApiError, request } from '../client.ts';

/**
 * Checks the stored token before a route change. The body is built at send time so a retry after a
 * transparent refresh verifies the new token. Only the server's 401 (after a failed refresh) fails
 * verification: a busy server (503), a rate limit, a server error (5xx), a dropped connection or an
 * unreadable answer says nothing about the token and keeps the user signed in; the next request decides.
 */
export async function verifyToken(): Promise<boolean> {
  try {
    const answer = await request('POST', '/account/verifytoken', {
      body: () => ({ api_token: getSession().token }),
      schema: VerifyTokenResponseSchema,
      notFoundPage: false,
    });
    if (answer.valid) markVerified();
    return answer.valid;
  } catch (err) {
    return !(err instanceof ApiError && err.status === 401);
  }
}
