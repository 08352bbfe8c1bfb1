import { Stack, Text, Title } from '@mantine/core';
import { useMatches } from '@tanstack/react-router';
import { useT } from '../../i18n/i18n.ts';

/** Routes whose screens come later still render their title, so every route of SPEC.md §2 exists. */
export default function PlaceholderPage() {
  const { t } = useT();
  const title = useMatches({ select: (m) => m[m.length - 1]?.staticData.title });
  return (
    <Stack gap="xs">
      <Title order={1} fz="h2">
        {title ? t(title) : ''}
      </Title>
      <Text c="dimmed">{t('common.comingSoon')}</Text>
    </Stack>
  );
}
