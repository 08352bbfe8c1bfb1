import { type UpdateUserRequest, type User, UserSchema } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { saveUser } from '../../auth/session.ts';
import { request, retryShed } from '../client.ts';

/** Saves the profile (email is read-only) and makes it the session's profile, time zone included. */
export async function updateProfile(body: UpdateUserRequest): Promise<User> {
  const user = await request('POST', '/account/update', { body, schema: UserSchema });
  saveUser(user);
  return user;
}

export function useUpdateProfile() {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: updateProfile,
    onSuccess: (user) => qc.setQueryData(['account', 'userInfo'], user),
  });
}
