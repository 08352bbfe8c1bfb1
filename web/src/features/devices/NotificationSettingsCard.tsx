/**
 * A device's notification settings (docs/spec.md §3, docs/domain.md §Limits, notifications, docs/api.md
 * §Detector alerts, §Daily detector alerts): whether to alert, the voltage and daily-consumption limits,
 * the phase and offline checks, the daily checks (base load, unusual consumption, solar), email, the
 * quiet night, the interval and mute-all. Saved on its own; the alert evaluator takes the change at the
 * device's next reading.
 */
import type { DeviceOverview } from '@kilowatch/core';
import { Button, Card, Group, NumberInput, SimpleGrid, Stack, Switch, Text, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useSaveNotificationSettings } from '../../api/devices/notification-settings.ts';
import { useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import {
  checkForm,
  type FieldError,
  formFrom,
  type NotificationForm,
  NUMBER_RANGES,
  type ToggleField,
} from './notificationForm.ts';

export function NotificationSettingsCard({ device }: { device: DeviceOverview }) {
  const { t } = useT();
  const save = useSaveNotificationSettings(String(device.id));
  const [form, setForm] = useState<NotificationForm>(() => formFrom(device.notifications));
  const [errors, setErrors] = useState<Partial<Record<keyof NotificationForm, FieldError>>>({});
  const set = <K extends keyof NotificationForm>(k: K, v: NotificationForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    setErrors((e) => ({ ...e, [k]: undefined }));
  };
  const message = (e: FieldError | undefined) =>
    e ? (e.id === 'val.range' ? t('val.range', e.values) : t('val.number')) : undefined;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const checked = checkForm(form);
    if (!checked.ok) {
      setErrors(checked.errors);
      notify({ color: 'red', message: t('msg.saveFailed') });
      return;
    }
    try {
      const saved = await save.mutateAsync(checked.settings);
      setForm(formFrom(saved));
      notify({ color: 'green', message: t('msg.saved') });
    } catch {
      notify({ color: 'red', message: t('msg.saveFailed') });
    }
  };

  const number = (k: keyof typeof NUMBER_RANGES, label: string, unit: string, description?: string) => (
    <NumberInput
      label={label}
      description={description}
      value={form[k]}
      onChange={(v) => set(k, v)}
      min={NUMBER_RANGES[k].min}
      max={NUMBER_RANGES[k].max}
      allowDecimal={!NUMBER_RANGES[k].integer}
      decimalScale={NUMBER_RANGES[k].integer ? 0 : 2}
      rightSection={
        <Text size="xs" c="dimmed">
          {unit}
        </Text>
      }
      rightSectionWidth={44}
      error={message(errors[k])}
      disabled={!form.enabled}
      data-testid={`notif-${k}`}
    />
  );

  /** The on/off settings; with notifications off, only that switch stays open. */
  const toggle = (k: ToggleField, label: string, description?: string) => (
    <Switch
      label={label}
      description={description}
      checked={form[k]}
      onChange={(e) => set(k, e.currentTarget.checked)}
      disabled={k !== 'enabled' && !form.enabled}
      data-testid={`notif-${k}`}
    />
  );

  return (
    <Card
      withBorder
      maw={560}
      component="form"
      onSubmit={submit}
      noValidate
      data-testid="notification-settings"
    >
      <Stack gap="sm">
        <div>
          <Title order={2} fz="h4">
            {t('overview.notifications')}
          </Title>
          <Text size="sm" c="dimmed">
            {t('notif.hint')}
          </Text>
        </div>
        {toggle('enabled', t('notif.enabled'))}
        <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm">
          {number('voltageDrop', t('overview.voltageDrop'), 'V')}
          {number('voltageRise', t('overview.voltageRise'), 'V')}
          {number('totalConsumption', t('notif.totalConsumption'), 'kWh', t('notif.totalConsumptionHint'))}
          {number('interval', t('overview.interval'), 'min')}
        </SimpleGrid>
        <Title order={3} fz="h5" mt="xs">
          {t('notif.phasesTitle')}
        </Title>
        <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm">
          {number('fuseA', t('notif.fuseA'), 'A', t('notif.fuseAHint'))}
          {number('overloadShare', t('notif.overloadShare'), '%')}
          {number('overloadSeconds', t('notif.overloadSeconds'), 's')}
          {number('imbalanceShare', t('notif.imbalanceShare'), '%', t('notif.imbalanceShareHint'))}
        </SimpleGrid>
        {toggle('offline', t('notif.offline'), t('notif.offlineHint'))}
        {number('offlineFactor', t('notif.offlineFactor'), '×')}
        <Title order={3} fz="h5" mt="xs">
          {t('notif.dailyTitle')}
        </Title>
        <Text size="sm" c="dimmed">
          {t('notif.dailyHint')}
        </Text>
        {toggle('baseLoad', t('notif.baseLoad'))}
        {number('baseLoadShare', t('notif.baseLoadShare'), '%')}
        {toggle('unusual', t('notif.unusual'), t('notif.unusualHint'))}
        {number('unusualShare', t('notif.unusualShare'), '%')}
        {toggle('solar', t('notif.solar'), t('notif.solarHint'))}
        {number('solarShare', t('notif.solarShare'), '%')}
        <Title order={3} fz="h5" mt="xs">
          {t('notif.deliveryTitle')}
        </Title>
        {toggle('email', t('notif.email'), t('notif.emailHint'))}
        {toggle('disableAtNight', t('overview.disableAtNight'))}
        {toggle('muteAll', t('overview.muteAll'))}
        <Group justify="flex-end">
          <Button type="submit" loading={save.isPending} data-testid="notif-save">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
