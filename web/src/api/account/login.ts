import { type AuthData, AuthDataSchema } from '@kilowatch/core';
import { useMutation } from '@tanstack/react-query';
import { saveAuth } from '../../auth/session.ts';
import { request } from '../client.ts';

export interface Credentials {
  email: string;
  password: string;
  rememberMe: boolean;
}

export async function login(credentials: Credentials): Promise<AuthData> {
  const auth = await request('POST', '/account/login', {
    body: credentials,
    schema: AuthDataSchema,
    auth: false,
    notFoundPage: false,
  });
  saveAuth(auth, credentials.rememberMe);
  return auth;
}

export function useLogin() {
  return useMutation({ mutationFn: login });
}
