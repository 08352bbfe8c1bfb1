import { PasswordInput, Progress, Stack, Text } from '@mantine/core';
import { useId } from 'react';
import { useT } from '../../i18n/i18n.ts';
import { passwordMeter } from './passwordStrength.ts';

/** A password field with the strength meter of docs/spec.md §5 (informative only). */
export function PasswordWithStrength(props: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  error?: string | undefined;
  onBlur?: () => void;
}) {
  const { t } = useT();
  const meterId = useId();
  const meter = passwordMeter(props.value);
  return (
    <Stack gap={4}>
      <PasswordInput
        label={props.label}
        value={props.value}
        onChange={(e) => props.onChange(e.currentTarget.value)}
        onBlur={props.onBlur}
        error={props.error}
        autoComplete="new-password"
        aria-describedby={meterId}
        required
      />
      <Progress
        id={meterId}
        value={meter.value}
        color={meter.color}
        size="sm"
        aria-label={t('password.strength')}
      />
      <Text size="xs" c="dimmed">
        {t('password.hint')}
      </Text>
    </Stack>
  );
}
