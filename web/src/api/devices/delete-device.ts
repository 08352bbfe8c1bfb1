import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export async function deleteDevice(id: string): Promise<void> {
  await request('DELETE', `/devices/${encodeURIComponent(id)}`, { notFoundPage: false });
}

export function useDeleteDevice(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => deleteDevice(id),
    onSuccess: () => {
      qc.removeQueries({ queryKey: ['devices', id] });
      void qc.invalidateQueries({ queryKey: ['devices'], exact: true });
    },
  });
}
