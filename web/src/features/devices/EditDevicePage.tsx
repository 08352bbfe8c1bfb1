import { Button, Card, Group, NumberInput, Stack, TextInput, Title } from '@mantine/core';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { useDevice } from '../../api/devices/get-device.ts';
import { useUpdateDevice } from '../../api/devices/update-device.ts';
import type { DeviceOverview } from '../../api/schemas.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { formatInZone } from '../../lib/time.ts';
import { detailsPath } from '../dashboard/DashboardPage.tsx';
import { RoutePending } from '../shell/RouteStates.tsx';
import { NotificationSettingsCard } from './NotificationSettingsCard.tsx';
import { parseLocalDate } from './ranges.ts';

function EditForm({ device }: { device: DeviceOverview }) {
  const { t } = useT();
  const tz = displayTimeZone();
  const update = useUpdateDevice(String(device.id));
  const navigate = useNavigate();
  const start =
    device.billingStart === null || device.billingStart === undefined
      ? null
      : typeof device.billingStart === 'number'
        ? device.billingStart
        : Date.parse(device.billingStart);
  const [name, setName] = useState(device.name);
  const [friendlyName, setFriendlyName] = useState(device.friendlyName ?? '');
  const [billingStart, setBillingStart] = useState(
    start !== null && Number.isFinite(start) ? formatInZone(start, tz, 'YYYY-MM-DD') : '',
  );
  const [billingMonths, setBillingMonths] = useState<string | number>(device.billingMonths ?? 1);
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const months = Number(billingMonths);
  const errors = {
    name: touched.name && !name.trim() ? t('val.required') : undefined,
    billingMonths:
      touched.billingMonths && (!Number.isInteger(months) || months < 1 || months > 12)
        ? t('val.range', { min: 1, max: 12 })
        : undefined,
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ name: true, billingMonths: true });
    if (!name.trim() || !Number.isInteger(months) || months < 1 || months > 12) {
      notify({ color: 'red', message: t('msg.saveFailed') });
      return;
    }
    const startMs = billingStart ? parseLocalDate(billingStart, tz) : null;
    try {
      const saved = await update.mutateAsync({
        name: name.trim(),
        friendlyName: friendlyName.trim(),
        locationId: device.location?.id ?? null,
        tariffId: device.tariff?.id ?? null,
        billingStart: startMs === null ? null : new Date(startMs).toISOString(),
        billingMonths: months,
      });
      notify({ color: 'green', message: t('msg.saved') });
      await navigate({ to: detailsPath(saved) });
    } catch {
      notify({ color: 'red', message: t('msg.saveFailed') });
    }
  };
  const blur = (k: string) => () => setTouched((s) => ({ ...s, [k]: true }));
  return (
    <Card withBorder maw={560} component="form" onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={t('edit.name')}
          value={name}
          onChange={(e) => {
            setName(e.currentTarget.value);
            blur('name')();
          }}
          onBlur={blur('name')}
          error={errors.name}
          required
        />
        <TextInput
          label={t('edit.friendlyName')}
          value={friendlyName}
          onChange={(e) => setFriendlyName(e.currentTarget.value)}
        />
        <TextInput
          type="date"
          label={t('edit.billingStart')}
          value={billingStart}
          onChange={(e) => setBillingStart(e.currentTarget.value)}
        />
        <NumberInput
          label={t('edit.billingMonths')}
          value={billingMonths}
          onChange={(v) => {
            setBillingMonths(v);
            blur('billingMonths')();
          }}
          onBlur={blur('billingMonths')}
          min={1}
          max={12}
          allowDecimal={false}
          error={errors.billingMonths}
        />
        <Group justify="flex-end">
          <Button variant="default" component={Link} to={detailsPath(device)}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={update.isPending}>
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

export default function EditDevicePage() {
  const { t } = useT();
  const { id } = useParams({ strict: false }) as { id: string };
  const device = useDevice(id);
  if (device.isPending) return <RoutePending />;
  if (!device.data) return null;
  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {t('edit.title')}: {device.data.name}
      </Title>
      <EditForm device={device.data} />
      <NotificationSettingsCard device={device.data} />
    </Stack>
  );
}
