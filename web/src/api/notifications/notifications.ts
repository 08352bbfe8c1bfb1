import { type Notification, NotificationsPageSchema } from '@kilowatch/core';
import {
  type InfiniteData,
  type QueryClient,
  useInfiniteQuery,
  useMutation,
  useQueryClient,
} from '@tanstack/react-query';
import type * as v from 'valibot';
import { request } from '../client.ts';

export type NotificationsPage = v.InferOutput<typeof NotificationsPageSchema>;
export type { Notification };

/** Notifications shown at a time; older ones come with "Show more". */
export const NOTIFICATIONS_PAGE = 20;

export const NOTIFICATIONS_KEY = ['notifications'] as const;

/** The alert history, newest first (docs/api.md §Exports and notifications). */
export function getNotifications(cursor: string | null, signal?: AbortSignal): Promise<NotificationsPage> {
  return request('GET', '/notifications', {
    query: { limit: String(NOTIFICATIONS_PAGE), ...(cursor ? { cursor } : {}) },
    schema: NotificationsPageSchema,
    signal,
  });
}

export async function markAllNotificationsRead(): Promise<void> {
  await request('POST', '/notifications/read');
}

export async function markNotificationRead(id: number): Promise<void> {
  await request('POST', `/notifications/${id}/read`, { notFoundPage: false });
}

export function useNotifications() {
  return useInfiniteQuery({
    queryKey: NOTIFICATIONS_KEY,
    queryFn: ({ pageParam, signal }) => getNotifications(pageParam, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}

/** Unread notifications among those loaded, and whether older unread ones may exist beyond them. */
export function unreadCount(pages: readonly NotificationsPage[] | undefined): {
  count: number;
  more: boolean;
} {
  if (!pages?.length) return { count: 0, more: false };
  const items = pages.flatMap((p) => p.items);
  const count = items.filter((n) => !n.read).length;
  const last = pages[pages.length - 1]!;
  // Every loaded notification unread and older ones not loaded yet: there may be more.
  return { count, more: count === items.length && last.nextCursor !== null };
}

/** Shows the chosen notifications (`null`: all) read in the cached list, before the server answers. */
function showRead(qc: QueryClient, id: number | null): void {
  qc.setQueryData<InfiniteData<NotificationsPage, string | null>>(NOTIFICATIONS_KEY, (data) =>
    data
      ? {
          ...data,
          pages: data.pages.map((p) => ({
            ...p,
            items: p.items.map((n) => (id === null || n.id === id ? { ...n, read: true } : n)),
          })),
        }
      : data,
  );
}

/** Marks a notification read, in the list at once and then on the server. */
export function useMarkRead() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: markNotificationRead,
    onMutate: (id: number) => showRead(qc, id),
    onSettled: () => void qc.invalidateQueries({ queryKey: NOTIFICATIONS_KEY }),
  });
}

/** Marks every notification read, in the list at once and then on the server. */
export function useMarkAllRead() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: markAllNotificationsRead,
    onMutate: () => showRead(qc, null),
    onSettled: () => void qc.invalidateQueries({ queryKey: NOTIFICATIONS_KEY }),
  });
}
