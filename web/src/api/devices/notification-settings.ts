import { type NotificationSettings, NotificationSettingsSchema } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export type { NotificationSettings };

/** Saves a device's notification settings (docs/api.md §Devices); the evaluator takes them at the next reading. */
export function putNotificationSettings(
  id: string,
  body: NotificationSettings,
): Promise<NotificationSettings> {
  return request('PUT', `/devices/${encodeURIComponent(id)}/notifications`, {
    body,
    schema: NotificationSettingsSchema,
    notFoundPage: false,
  });
}

export function useSaveNotificationSettings(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: NotificationSettings) => putNotificationSettings(id, body),
    // The device overview shows them.
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['devices', id], exact: true }),
  });
}
