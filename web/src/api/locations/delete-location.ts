import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request, retryShed } from '../client.ts';

export async function deleteLocation(id: string): Promise<void> {
  await request('DELETE', `/locations/${encodeURIComponent(id)}`, { notFoundPage: false });
}

export function useDeleteLocation() {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: (id: string) => deleteLocation(id),
    onSuccess: (_, id) => {
      qc.removeQueries({ queryKey: ['locations', id] });
      void qc.invalidateQueries({ queryKey: ['locations'], exact: true });
      void qc.invalidateQueries({ queryKey: ['devices'] });
    },
  });
}
