import { type User, UserSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

/** The signed-in user's profile (docs/api.md §Account). */
export function getUserInfo(signal?: AbortSignal): Promise<User> {
  return request('GET', '/account/userInfo', { schema: UserSchema, signal });
}

export const userInfoQueryOptions = () =>
  queryOptions({ queryKey: ['account', 'userInfo'], queryFn: ({ signal }) => getUserInfo(signal) });

export function useUserInfo() {
  return useQuery(userInfoQueryOptions());
}
