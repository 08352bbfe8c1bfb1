/**
 * The alert history in the header: a bell with the number of unread notifications, opening the newest
 * first. Choosing one marks it read and opens its device. New ones arrive over the hub (`live.tsx`
 * refreshes the list), so the count is current without polling.
 */
import { detailsPathFor } from '@kilowatch/core';
import {
  ActionIcon,
  Box,
  Button,
  Group,
  Indicator,
  Loader,
  Popover,
  ScrollArea,
  Stack,
  Text,
  UnstyledButton,
} from '@mantine/core';
import { useDisclosure, useWindowEvent } from '@mantine/hooks';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { useDevices } from '../../api/devices/get-devices.ts';
import {
  type Notification,
  unreadCount,
  useMarkAllRead,
  useMarkRead,
  useNotifications,
} from '../../api/notifications/notifications.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { alertMessage, kindTitleId, useT } from '../../i18n/i18n.ts';
import { setAlertsListOpen } from '../../lib/notify.ts';
import { formatInstant } from '../../lib/time.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';

function BellIcon() {
  return (
    <svg
      width="18"
      height="18"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      aria-hidden="true"
    >
      <path d="M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9" />
      <path d="M13.73 21a2 2 0 0 1-3.46 0" />
    </svg>
  );
}

export function NotificationsBell() {
  const { t, locale } = useT();
  const [opened, { toggle, close }] = useDisclosure(false);
  const list = useNotifications();
  const devices = useDevices();
  const markRead = useMarkRead();
  const markAllRead = useMarkAllRead();
  const navigate = useNavigate();
  const tz = displayTimeZone();
  const dropdown = useRef<HTMLDivElement>(null);
  useEffect(() => {
    setAlertsListOpen(opened);
    return () => setAlertsListOpen(false);
  }, [opened]);
  // Escape closes the list wherever the focus is: on the bell (just clicked) as well as inside the list.
  useWindowEvent('keydown', (e) => {
    if (opened && e.key === 'Escape') close();
  });
  const { count, more } = unreadCount(list.data?.pages);
  const label = count > 0 ? `${count}${more ? '+' : ''}` : null;
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  const byId = new Map((devices.data ?? []).map((d) => [d.id, d]));

  /**
   * Marks everything read and keeps the list open. The button goes away with the last unread one, so the
   * focus moves to the list itself rather than falling to the page.
   */
  const readAll = () => {
    markAllRead.mutate();
    dropdown.current?.focus();
  };

  const open = (n: Notification) => {
    if (!n.read) markRead.mutate(n.id);
    const device = byId.get(n.deviceId);
    close();
    if (device) void navigate({ to: detailsPathFor(device.id, device.typeCode, device.phases ?? 3) });
  };

  return (
    <Indicator label={label} size={16} disabled={label === null} color="red" offset={4} inline>
      <Popover opened={opened} onChange={(o) => !o && close()} position="bottom-end" width={380} shadow="md">
        <Popover.Target>
          <ActionIcon
            variant="subtle"
            size="lg"
            onClick={toggle}
            aria-label={label ? t('alerts.openUnread', { count: label }) : t('alerts.title')}
            data-testid="notifications-bell"
            data-unread={count}
          >
            <BellIcon />
          </ActionIcon>
        </Popover.Target>
        <Popover.Dropdown ref={dropdown} p={0} maw="calc(100vw - 16px)" data-testid="notifications-list">
          <Group justify="space-between" px="md" py="xs" gap={4}>
            <Text fw={700}>{t('alerts.title')}</Text>
            {count > 0 && (
              <Button
                variant="subtle"
                size="compact-xs"
                onClick={readAll}
                data-testid="notifications-read-all"
              >
                {t('alerts.readAll')}
              </Button>
            )}
          </Group>
          {list.isPending ? (
            <Group justify="center" p="md">
              <Loader size="sm" aria-label={t('common.loading')} />
            </Group>
          ) : list.isError ? (
            <Box p="sm">
              <ErrorState error={list.error} onRetry={() => void list.refetch()} />
            </Box>
          ) : items.length === 0 ? (
            <Text c="dimmed" size="sm" px="md" pb="md">
              {t('alerts.empty')}
            </Text>
          ) : (
            <ScrollArea.Autosize mah={420} type="auto">
              <Stack gap={0}>
                {items.map((n) => {
                  const titleId = kindTitleId(n.kind);
                  return (
                    <UnstyledButton
                      key={n.id}
                      onClick={() => open(n)}
                      px="md"
                      py="xs"
                      data-testid="notification-item"
                      data-read={n.read}
                      style={{ borderTop: '1px solid var(--mantine-color-default-border)' }}
                    >
                      <Group gap="xs" wrap="nowrap" align="flex-start">
                        <Box
                          w={8}
                          h={8}
                          mt={6}
                          style={{
                            borderRadius: '50%',
                            flexShrink: 0,
                            background: n.read ? 'transparent' : 'var(--mantine-color-red-6)',
                          }}
                          aria-label={n.read ? undefined : t('alerts.unread')}
                          role={n.read ? undefined : 'img'}
                        />
                        <Stack gap={2} style={{ minWidth: 0 }}>
                          <Text size="sm" fw={n.read ? 500 : 700}>
                            {titleId ? t(titleId) : n.kind}
                            {byId.get(n.deviceId) ? ` · ${byId.get(n.deviceId)!.name}` : ''}
                          </Text>
                          <Text size="xs">{alertMessage(n)}</Text>
                          <Text size="xs" c="dimmed">
                            {formatInstant(n.at, tz, locale)}
                          </Text>
                        </Stack>
                      </Group>
                    </UnstyledButton>
                  );
                })}
                {list.hasNextPage && (
                  <Button
                    variant="subtle"
                    size="xs"
                    m="xs"
                    loading={list.isFetchingNextPage}
                    onClick={() => void list.fetchNextPage()}
                  >
                    {t('alerts.more')}
                  </Button>
                )}
              </Stack>
            </ScrollArea.Autosize>
          )}
        </Popover.Dropdown>
      </Popover>
    </Indicator>
  );
}
