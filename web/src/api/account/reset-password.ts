import { useMutation } from '@tanstack/react-query';
import { request } from '../client.ts';

export async function resetPassword(body: { token: string; password: string }): Promise<void> {
  await request('POST', '/reset_password', { body, auth: false, notFoundPage: false });
}

export function useResetPassword() {
  return useMutation({ mutationFn: resetPassword });
}
