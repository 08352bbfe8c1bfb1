import { getSession, markVerified } from '../../auth/session.ts';
import { ApiError, request } from '../client.ts';
import { VerifyTokenSchema } from '../schemas.ts';

/**
 * Checks the stored token before a route change. The body is built at send time so a retry after a
 * transparent refresh verifies the new token. Only a definite answer fails verification: a busy server
 * (503), a rate limit or a dropped connection says nothing about the token and keeps the user signed in.
 */
export async function verifyToken(): Promise<boolean> {
  try {
    const answer = await request('POST', '/account/verifytoken', {
      body: () => ({ api_token: getSession().token }),
      schema: VerifyTokenSchema,
      notFoundPage: false,
    });
    if (answer.valid) markVerified();
    return answer.valid;
  } catch (err) {
    return err instanceof ApiError && err.retryable;
  }
}
