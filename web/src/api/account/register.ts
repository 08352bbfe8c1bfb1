import { type AuthData, AuthDataSchema } from '@kilowatch/core';
import { useMutation } from '@tanstack/react-query';
import { saveAuth } from '../../auth/session.ts';
import { request } from '../client.ts';

export interface Registration {
  email: string;
  password: string;
  fullName: string;
  timezone?: string;
  language?: string;
}

export async function register(body: Registration): Promise<AuthData> {
  const auth = await request('POST', '/register', {
    body,
    schema: AuthDataSchema,
    auth: false,
    notFoundPage: false,
  });
  saveAuth(auth, true);
  return auth;
}

export function useRegister() {
  return useMutation({ mutationFn: register });
}
