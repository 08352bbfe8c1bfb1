import { queryOptions, useQuery } from '@tanstack/react-query';
import * as v from 'valibot';
import { ApiError, request } from '../client.ts';

const Instant = v.optional(v.nullable(v.union([v.string(), v.number()])), null);

/** What the broker knows of a meter (docs/api.md §Devices): the add-device screen waits on it. */
export const ConnectionSchema = v.object({
  connected: v.optional(v.boolean(), false),
  lastConnectedAt: Instant,
  lastReadingAt: Instant,
  lastRejection: v.optional(
    v.nullable(v.object({ reason: v.string(), topic: v.optional(v.nullable(v.string())), at: Instant })),
    null,
  ),
});
export type Connection = v.InferOutput<typeof ConnectionSchema>;

/** The connection state, or null when this server does not report one (an older API answers 404). */
export async function getConnection(id: string, signal?: AbortSignal): Promise<Connection | null> {
  try {
    return await request('GET', `/devices/${encodeURIComponent(id)}/connection`, {
      schema: ConnectionSchema,
      signal,
      notFoundPage: false,
    });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export const connectionQueryOptions = (id: string) =>
  queryOptions({
    queryKey: ['devices', id, 'connection'],
    queryFn: ({ signal }) => getConnection(id, signal),
  });

/** Polls the connection every 2 s while `enabled`; stops when the server has no such endpoint. */
export function useConnection(id: string, enabled: boolean) {
  return useQuery({
    ...connectionQueryOptions(id),
    enabled,
    refetchInterval: (q) => (q.state.data === null ? false : 2000),
  });
}
