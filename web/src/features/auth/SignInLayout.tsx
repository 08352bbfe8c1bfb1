import { Box, Center, Group, Paper, Text } from '@mantine/core';
import { Outlet } from '@tanstack/react-router';
import { useT } from '../../i18n/i18n.ts';
import { LanguageSelect, ThemeSwitch } from '../../shared/ui/Preferences.tsx';

export default function SignInLayout() {
  const { t } = useT();
  return (
    <Box
      mih="100vh"
      style={{
        background:
          'linear-gradient(135deg, var(--mantine-color-orange-light) 0%, var(--mantine-color-body) 60%)',
      }}
    >
      <Group component="header" justify="flex-end" p="sm" gap="xs">
        <ThemeSwitch />
        <LanguageSelect />
      </Group>
      <Center component="main" id="main" px="sm" pb="xl">
        <Paper withBorder shadow="md" p={{ base: 'md', xs: 'xl' }} radius="lg" w="100%" maw={420}>
          <Text fw={800} fz={28} c="var(--kw-brand-text)" ta="center" mb="xs">
            ⚡ {t('app.name')}
          </Text>
          <Outlet />
        </Paper>
      </Center>
    </Box>
  );
}
