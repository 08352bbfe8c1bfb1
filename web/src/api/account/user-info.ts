import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';
import { type User, UserSchema } from '../schemas.ts';

/** The signed-in user's profile (docs/api.md §Account). */
export function getUserInfo(signal?: AbortSignal): Promise<User> {
  return request('GET', '/account/userInfo', { schema: UserSchema, signal });
}

export const userInfoQueryOptions = () =>
  queryOptions({ queryKey: ['account', 'userInfo'], queryFn: ({ signal }) => getUserInfo(signal) });

export function useUserInfo() {
  return useQuery(userInfoQueryOptions());
}
