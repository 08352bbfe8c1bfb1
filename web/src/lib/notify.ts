import { i18n } from '@lingui/core';
import { notifications } from '@mantine/notifications';

/** Error toasts on screen, so a later success can clear them. */
const shownErrors = new Set<string>();

/**
 * A toast with a labelled close button (every notification of the app goes through here). The same
 * message shown again while its toast is up does not stack (a toast's id defaults to its colour and text),
 * and a success clears the error toasts before it: an old "Try again!" never stays beside "logged in".
 */
export function notify(o: { color: string; message: string; title?: string; id?: string }): void {
  const id = o.id ?? `${o.color}:${o.title ?? ''}:${o.message}`;
  if (o.color === 'green') {
    for (const shown of [...shownErrors]) notifications.hide(shown);
    shownErrors.clear();
  }
  if (o.color === 'red') shownErrors.add(id);
  notifications.show({
    ...o,
    id,
    closeButtonProps: { 'aria-label': i18n._('common.close') },
    onClose: () => shownErrors.delete(id),
  });
}

let alertsListOpen = false;

/**
 * The notifications list is open (or closed again): it shows alerts as they come, so while it is open
 * alerts raise no toast, and the toasts shown before are closed (they would cover the list).
 */
export function setAlertsListOpen(open: boolean): void {
  alertsListOpen = open;
  if (open) notifications.clean();
}

/** A toast for an alert pushed by the hub, unless the notifications list already shows it. */
export function notifyAlert(o: { title: string; message: string }): void {
  if (!alertsListOpen) notify({ color: 'orange', ...o });
}

const shownOutcome = new Map<string, string>();
let outcomeSeq = 0;

/**
 * The outcome of one action (a save, a claim): a new outcome replaces the toast of the previous one, so
 * an old error never stays beside a new success and a repeated failure shows once.
 */
export function notifyOutcome(action: string, ok: boolean, message: string): void {
  const previous = shownOutcome.get(action);
  if (previous) notifications.hide(previous);
  const id = `${action}-${++outcomeSeq}`;
  shownOutcome.set(action, id);
  notify({ color: ok ? 'green' : 'red', message, id });
}
