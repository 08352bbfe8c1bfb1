import { Button, Stack, Text, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useT } from '../../i18n/i18n.ts';

export default function NotFoundPage() {
  const { t } = useT();
  return (
    <Stack align="center" py={64} gap="sm">
      <Text fz={64} fw={800} c="orange" aria-hidden>
        404
      </Text>
      <Title order={1} fz="h2">
        {t('notFound.title')}
      </Title>
      <Text c="dimmed">{t('msg.notFound')}</Text>
      <Button component={Link} to="/dashboard" mt="md">
        {t('notFound.home')}
      </Button>
    </Stack>
  );
}
