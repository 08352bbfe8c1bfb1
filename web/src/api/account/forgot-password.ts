import { useMutation } from '@tanstack/react-query';
import { request } from '../client.ts';

/** Always accepted (no account enumeration): the reset link is mailed when the account exists. */
export async function forgotPassword(email: string): Promise<void> {
  await request('POST', '/forgot_password', { body: { email }, auth: false, notFoundPage: false });
}

export function useForgotPassword() {
  return useMutation({ mutationFn: forgotPassword });
}
