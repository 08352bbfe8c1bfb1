import { Alert, Button, Skeleton, Stack } from '@mantine/core';
import type { ErrorComponentProps } from '@tanstack/react-router';
import { ApiError, worthRetrying } from '../../api/client.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';

export function RoutePending() {
  const { t } = useT();
  return (
    <Stack gap="md" role="status" aria-busy="true" aria-label={t('common.loading')} p="md">
      <Skeleton height={28} width="40%" />
      <Skeleton height={120} />
      <Skeleton height={240} />
    </Stack>
  );
}

export function ErrorState({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useT();
  const message =
    error instanceof ApiError
      ? error.message === 'Data range is too long.'
        ? t('msg.rangeTooLong')
        : translateServerMessage(error.message)
      : t('msg.internal');
  return (
    <Alert color="red" title={message} role="alert">
      {onRetry && worthRetrying(error) && (
        <Button size="xs" variant="light" color="red" onClick={onRetry} mt="xs">
          {t('common.retry')}
        </Button>
      )}
    </Alert>
  );
}

export function RouteError({ error, reset }: ErrorComponentProps) {
  return <ErrorState error={error} onRetry={reset} />;
}
