import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request, retryShed } from '../client.ts';

export async function deleteTariff(locationId: string, tariffId: string): Promise<void> {
  await request(
    'DELETE',
    `/locations/${encodeURIComponent(locationId)}/tariffs/${encodeURIComponent(tariffId)}`,
    { notFoundPage: false },
  );
}

export function useDeleteTariff(locationId: string) {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: (tariffId: string) => deleteTariff(locationId, tariffId),
    onSuccess: (_, tariffId) => {
      qc.removeQueries({ queryKey: ['locations', locationId, 'tariffs', tariffId] });
      void qc.invalidateQueries({ queryKey: ['locations', locationId, 'tariffs'], exact: true });
      void qc.invalidateQueries({ queryKey: ['locations'], exact: true });
      void qc.invalidateQueries({ queryKey: ['locations', locationId], exact: true });
      void qc.invalidateQueries({ queryKey: ['devices'] });
    },
  });
}
