import { i18n } from '@lingui/core';
import { notifications } from '@mantine/notifications';

/** A toast with a labelled close button (every notification of the app goes through here). */
export function notify(o: { color: string; message: string; title?: string; id?: string }): void {
  notifications.show({ ...o, closeButtonProps: { 'aria-label': i18n._('common.close') } });
}
