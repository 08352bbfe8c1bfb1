import {
  Button,
  Card,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { DateTimePicker } from '@mantine/dates';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { forgetDevice, useDeleteDevice } from '../../api/devices/delete-device.ts';
import { useLimits, useSaveLimits } from '../../api/devices/limits.ts';
import { useProvideMeterValue } from '../../api/devices/meter-value.ts';
import { useLatest } from '../../api/telemetry/get-latest.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { useT } from '../../i18n/i18n.ts';
import { notify, notifyOutcome } from '../../lib/notify.ts';
import { dayjs, formatInZone } from '../../lib/time.ts';
import { LocalDates } from '../../ranges/RangeControl.tsx';
import { ownParams } from '../../shared/devices/logParams.ts';
import { paramLabel } from '../../shared/devices/paramNames.ts';
import { type LimitErrors, type LimitInput, validateLimits } from './limits.ts';

/** Limit values: validated on blur, change and input (docs/spec.md §5). */
export function LimitsForm({ deviceId }: { deviceId: string }) {
  const { t } = useT();
  const limits = useLimits(deviceId);
  const save = useSaveLimits(deviceId);
  const [values, setValues] = useState<LimitInput>({ warning: '', critical: '' });
  const [touched, setTouched] = useState<Partial<Record<keyof LimitInput, boolean>>>({});
  const [errors, setErrors] = useState<LimitErrors>({});

  useEffect(() => {
    if (limits.data)
      setValues({ warning: String(limits.data.warning), critical: String(limits.data.critical) });
  }, [limits.data]);

  const update = (key: keyof LimitInput, value: string) => {
    const next = { ...values, [key]: value };
    setValues(next);
    setTouched((s) => ({ ...s, [key]: true }));
    setErrors(validateLimits(next));
  };
  const blur = (key: keyof LimitInput) => () => {
    setTouched((s) => ({ ...s, [key]: true }));
    setErrors(validateLimits(values));
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const errs = validateLimits(values);
    setErrors(errs);
    setTouched({ warning: true, critical: true });
    if (Object.keys(errs).length) {
      notify({ color: 'red', message: t('msg.saveFailed') });
      return;
    }
    try {
      await save.mutateAsync({
        warning: Number(values.warning.replace(',', '.')),
        critical: Number(values.critical.replace(',', '.')),
      });
      notify({ color: 'green', message: t('msg.saved') });
    } catch {
      notify({ color: 'red', message: t('msg.limitsFailed') });
    }
  };
  const err = (k: keyof LimitInput) => (touched[k] && errors[k] ? t(errors[k]) : undefined);

  return (
    <Card withBorder padding="sm" component="form" onSubmit={submit} noValidate data-testid="limits-form">
      <Title order={3} fz="sm" mb={4}>
        {t('details.limits')}
      </Title>
      <Text size="xs" c="dimmed" mb="xs">
        {t('details.limitsIntro')}
      </Text>
      <Group align="flex-start" grow>
        <TextInput
          label={t('details.warning')}
          inputMode="decimal"
          value={values.warning}
          onChange={(e) => update('warning', e.currentTarget.value)}
          onInput={(e) => update('warning', e.currentTarget.value)}
          onBlur={blur('warning')}
          error={err('warning')}
          disabled={limits.isPending}
        />
        <TextInput
          label={t('details.critical')}
          inputMode="decimal"
          value={values.critical}
          onChange={(e) => update('critical', e.currentTarget.value)}
          onInput={(e) => update('critical', e.currentTarget.value)}
          onBlur={blur('critical')}
          error={err('critical')}
          disabled={limits.isPending}
        />
      </Group>
      <Group justify="flex-end" mt="sm">
        <Button type="submit" size="xs" loading={save.isPending}>
          {t('common.save')}
        </Button>
      </Group>
    </Card>
  );
}

/** Registers a meter value can be given for, totals first; only those the device reports are offered. */
const REGISTERS = [
  'energy3phases_import',
  'energy3phases_export',
  'eai1',
  'eai2',
  'eai3',
  'eae1',
  'eae2',
  'eae3',
] as const;

export function registersOf(own: readonly string[]): string[] {
  return REGISTERS.filter((r) => own.includes(r));
}

export function MeterValueForm({ deviceId }: { deviceId: string }) {
  const { t } = useT();
  const provide = useProvideMeterValue(deviceId);
  const latest = useLatest(deviceId);
  const registers = useMemo(() => registersOf(ownParams(latest.data?.values)), [latest.data]);
  const [picked, setParam] = useState<string | null>(null);
  const param = picked !== null && registers.includes(picked) ? picked : (registers[0] ?? null);
  const [serverError, setServerError] = useState<string | undefined>();
  const [value, setValue] = useState<string | number>('');
  // The time is read and typed in the user's zone, as every other time on the page is shown.
  const tz = displayTimeZone();
  const [at, setAt] = useState(() => formatInZone(Date.now(), tz, 'YYYY-MM-DD HH:mm:ss'));
  const [touched, setTouched] = useState(false);
  const numeric = typeof value === 'number' ? value : Number(value);
  const valueError = !touched
    ? undefined
    : value === ''
      ? t('val.required')
      : !Number.isFinite(numeric)
        ? t('val.number')
        : numeric < 0 || numeric > 1e9
          ? t('val.range', { min: 0, max: 1e9 })
          : undefined;
  const atError = touched && !dayjs(at).isValid() ? t('val.required') : serverError;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setServerError(undefined);
    if (param === null) return;
    if (value === '' || !Number.isFinite(numeric) || numeric < 0 || !dayjs(at).isValid()) return;
    try {
      await provide.mutateAsync({ param, value: numeric, at: dayjs.tz(at, tz).toISOString() });
      notifyOutcome('meter-value', true, t('msg.saved'));
    } catch (err) {
      // The API refuses a time before the register's first reading: said on the time field, in words.
      const noReading = err instanceof ApiError && err.status === 400 && err.errors.at !== undefined;
      if (noReading) setServerError(t('details.meterValueNoReading'));
      notifyOutcome(
        'meter-value',
        false,
        noReading ? t('details.meterValueNoReading') : t('msg.meterValueFailed'),
      );
    }
  };

  if (latest.isSuccess && registers.length === 0) {
    return (
      <Card withBorder padding="sm" data-testid="meter-value">
        <Title order={3} fz="sm" mb={4}>
          {t('details.meterValue')}
        </Title>
        <Text size="sm" c="dimmed" data-testid="meter-value-none">
          {t('details.noRegisters')}
        </Text>
      </Card>
    );
  }

  return (
    <Card withBorder padding="sm" component="form" onSubmit={submit} noValidate data-testid="meter-value">
      <Title order={3} fz="sm" mb={4}>
        {t('details.meterValue')}
      </Title>
      <Text size="xs" c="dimmed" mb="xs">
        {t('details.meterValueIntro')}
      </Text>
      <Stack gap="xs">
        <Select
          label={t('details.register')}
          data={registers.map((r) => ({ value: r, label: paramLabel(t, r) }))}
          value={param}
          onChange={(v) => v && setParam(v)}
          allowDeselect={false}
          data-testid="meter-value-register"
        />
        <NumberInput
          label={t('details.value')}
          value={value}
          onChange={setValue}
          onBlur={() => setTouched(true)}
          error={valueError}
          min={0}
          decimalScale={3}
        />
        <LocalDates>
          <DateTimePicker
            label={t('details.at')}
            value={at || null}
            onChange={(v) => {
              setAt(v ? String(v) : '');
              setTouched(true);
            }}
            valueFormat="L HH:mm"
            maxDate={formatInZone(Date.now(), tz, 'YYYY-MM-DD HH:mm:ss')}
            error={atError}
            data-testid="meter-value-at"
          />
        </LocalDates>
      </Stack>
      <Group justify="flex-end" mt="sm">
        <Button type="submit" size="xs" loading={provide.isPending}>
          {t('common.save')}
        </Button>
      </Group>
    </Card>
  );
}

export function DeleteDevice({ deviceId, name }: { deviceId: string; name: string }) {
  const { t } = useT();
  const [opened, { open, close }] = useDisclosure(false);
  const remove = useDeleteDevice(deviceId);
  const navigate = useNavigate();
  const qc = useQueryClient();
  const confirm = async () => {
    try {
      await remove.mutateAsync();
    } catch {
      notify({ color: 'red', message: t('msg.deleteFailed') });
      return;
    }
    notify({ color: 'green', message: t('msg.deleted') });
    close();
    await navigate({ to: '/dashboard', replace: true });
    forgetDevice(qc, deviceId);
  };
  return (
    <>
      <Button color="red" variant="light" size="xs" onClick={open}>
        {t('details.deleteDevice')}
      </Button>
      <Modal opened={opened} onClose={close} title={t('details.deleteDevice')} centered>
        <Stack>
          <Text>{t('details.deleteConfirm', { name })}</Text>
          <Text size="sm" c="dimmed">
            {t('details.deleteWarning')}
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              {t('common.cancel')}
            </Button>
            <Button color="red" onClick={confirm} loading={remove.isPending} data-autofocus>
              {t('common.delete')}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
