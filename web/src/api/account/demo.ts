import { type AuthData, AuthDataSchema } from '@kilowatch/core';
import { useMutation } from '@tanstack/react-query';
import { saveAuth } from '../../auth/session.ts';
import { request } from '../client.ts';

/** Signs in to the demo account: simulated meters with a year of history. */
export async function demoLogin(): Promise<AuthData> {
  const auth = await request('POST', '/account/demo', {
    body: {},
    schema: AuthDataSchema,
    auth: false,
    notFoundPage: false,
  });
  saveAuth(auth, true);
  return auth;
}

export function useDemoLogin() {
  return useMutation({ mutationFn: demoLogin });
}
