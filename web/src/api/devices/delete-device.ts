import { type QueryClient, useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export async function deleteDevice(id: string): Promise<void> {
  await request('DELETE', `/devices/${encodeURIComponent(id)}`, { notFoundPage: false });
}

/**
 * Deletes the device. Its cached queries stay until `forgetDevice`: the screen still showing it leaves
 * first, else removing them makes that screen fetch the device again and land on the not-found page.
 */
export function useDeleteDevice(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => deleteDevice(id),
    onSuccess: async () => {
      await qc.cancelQueries({ queryKey: ['devices', id] });
      qc.setQueryData<{ id: number | string }[]>(['devices'], (list) =>
        list?.filter((d) => String(d.id) !== id),
      );
    },
  });
}

/** Drops a deleted device's cached queries, once no screen shows it, and reloads the device list. */
export function forgetDevice(qc: QueryClient, id: string): void {
  qc.removeQueries({ queryKey: ['devices', id] });
  void qc.invalidateQueries({ queryKey: ['devices'], exact: true });
}
