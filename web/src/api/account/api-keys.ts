import {
  type ApiKey,
  ApiKeySchema,
  type CreateApiKeyRequest,
  type CreatedApiKey,
  CreatedApiKeySchema,
} from '@kilowatch/core';
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as v from 'valibot';
import { request, retryShed } from '../client.ts';

const ApiKeyListSchema = v.array(ApiKeySchema);

/** The signed-in user's personal API keys (docs/api.md §Account): names and dates, never the keys. */
export function getApiKeys(signal?: AbortSignal): Promise<ApiKey[]> {
  return request('GET', '/account/api-keys', { schema: ApiKeyListSchema, signal });
}

export const apiKeysQueryOptions = () =>
  queryOptions({ queryKey: ['account', 'apiKeys'], queryFn: ({ signal }) => getApiKeys(signal) });

export function useApiKeys() {
  return useQuery(apiKeysQueryOptions());
}

/** Creates a read-only key; the answer is the only place the key itself ever appears. */
export function createApiKey(body: CreateApiKeyRequest): Promise<CreatedApiKey> {
  return request('POST', '/account/api-keys', { body, schema: CreatedApiKeySchema, notFoundPage: false });
}

export function useCreateApiKey() {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: createApiKey,
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['account', 'apiKeys'] }),
  });
}

/** Revokes a key: it stops working at once. */
export async function revokeApiKey(id: number): Promise<void> {
  await request('DELETE', `/account/api-keys/${encodeURIComponent(String(id))}`, { notFoundPage: false });
}

export function useRevokeApiKey() {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: revokeApiKey,
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['account', 'apiKeys'] }),
  });
}
