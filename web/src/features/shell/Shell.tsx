import {
  ActionIcon,
  AppShell,
  Badge,
  Burger,
  Group,
  Menu,
  NavLink,
  Stack,
  Text,
  Tooltip,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate, useRouterState } from '@tanstack/react-router';
import { logout } from '../../api/account/logout.ts';
import { NAVIGATION } from '../../app/screens.ts';
import { appMode, useSession } from '../../auth/session.ts';
import { useHubState } from '../../hub/live.tsx';
import { useT } from '../../i18n/i18n.ts';
import { LanguageSelect, ThemeSwitch } from '../../shared/ui/Preferences.tsx';
import { NotificationsBell } from './NotificationsBell.tsx';

function HubStatus() {
  const { t } = useT();
  const state = useHubState();
  const connected = state === 'connected';
  return (
    <Tooltip label={t(connected ? 'hub.connectedHint' : 'hub.disconnectedHint')}>
      <Badge
        data-testid="hub-status"
        data-state={state}
        color={connected ? 'green' : 'gray'}
        variant="dot"
        role="status"
        aria-live="polite"
      >
        {t(connected ? 'hub.connected' : 'hub.disconnected')}
      </Badge>
    </Tooltip>
  );
}

export default function Shell() {
  const { t } = useT();
  const [opened, { toggle, close }] = useDisclosure();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const { user } = useSession();
  const pathname = useRouterState({ select: (s) => s.location.pathname });

  const signOut = async () => {
    // Queries in flight are cancelled (not refetched) before the session ends.
    await qc.cancelQueries();
    await logout();
    qc.clear();
    await navigate({ to: '/sign-in' });
  };

  // The companion app draws its own chrome around the page.
  if (appMode.companion) {
    return (
      <main id="main" style={{ padding: 'var(--mantine-spacing-sm)' }}>
        <Outlet />
      </main>
    );
  }

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'xs', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="xs" size="sm" aria-label={t('nav.toggle')} />
            <Text
              component={Link}
              to="/dashboard"
              fw={800}
              fz="lg"
              c="var(--kw-brand-text)"
              style={{ textDecoration: 'none' }}
            >
              ⚡ {t('app.name')}
            </Text>
            <HubStatus />
          </Group>
          <Group gap="xs" wrap="nowrap">
            <NotificationsBell />
            <Group gap="xs" wrap="nowrap" visibleFrom="xs">
              <ThemeSwitch />
              <LanguageSelect />
              <Menu position="bottom-end">
                <Menu.Target>
                  <ActionIcon variant="light" size="lg" aria-label={user?.email ?? t('nav.profile')}>
                    {(user?.fullName || user?.email || '?').slice(0, 1).toUpperCase()}
                  </ActionIcon>
                </Menu.Target>
                <Menu.Dropdown>
                  <Menu.Label>{user?.email}</Menu.Label>
                  <Menu.Item component={Link} to="/user/profile">
                    {t('nav.profile')}
                  </Menu.Item>
                  <Menu.Item color="red" onClick={signOut} data-testid="sign-out">
                    {t('nav.signOut')}
                  </Menu.Item>
                </Menu.Dropdown>
              </Menu>
            </Group>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label={t('nav.main')}>
        {NAVIGATION.map((item) => (
          <NavLink
            key={item.to}
            component={Link}
            to={item.to}
            label={t(item.label)}
            active={pathname.startsWith(item.to)}
            variant="filled"
            onClick={close}
          />
        ))}
        <Stack gap="xs" mt="auto" hiddenFrom="xs">
          <ThemeSwitch />
          <LanguageSelect />
          <NavLink component="button" label={t('nav.signOut')} onClick={signOut} c="red" />
        </Stack>
      </AppShell.Navbar>
      <AppShell.Main id="main">
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
