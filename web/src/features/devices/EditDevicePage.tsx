import { DEVICE_ROLES, type DeviceOverview, type DeviceRole } from '@kilowatch/core';
import { Button, Card, Group, NumberInput, Select, Stack, TextInput, Title } from '@mantine/core';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useDevice } from '../../api/devices/get-device.ts';
import { useUpdateDevice } from '../../api/devices/update-device.ts';
import { useLocations } from '../../api/locations/get-locations.ts';
import { useTariffs } from '../../api/locations/get-tariffs.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';
import { notifyOutcome } from '../../lib/notify.ts';
import { formatInZone } from '../../lib/time.ts';
import { DateField } from '../../ranges/DateField.tsx';
import { parseLocalDate } from '../../ranges/ranges.ts';
import { detailsPath } from '../../shared/devices/paths.ts';
import { RoutePending } from '../../shared/ui/RouteStates.tsx';
import { NotificationSettingsCard } from './NotificationSettingsCard.tsx';

/** A billing start as the API keeps it: the local date `YYYY-MM-DD` (older answers may send an instant). */
export function billingStartDate(value: string | number | null | undefined, tz: string): string {
  if (value === null || value === undefined || value === '') return '';
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(ms) ? formatInZone(ms, tz, 'YYYY-MM-DD') : '';
}

/** The server's field messages, translated, keyed by field (`locationId` and `tariffId` included). */
function serverFieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError)) return {};
  return Object.fromEntries(
    Object.entries(err.errors).map(([k, msgs]) => [k, msgs.map(translateServerMessage).join(' ')]),
  );
}

function EditForm({ device }: { device: DeviceOverview }) {
  const { t } = useT();
  const tz = displayTimeZone();
  const update = useUpdateDevice(String(device.id));
  const navigate = useNavigate();
  const locations = useLocations();
  const [name, setName] = useState(device.name);
  const [friendlyName, setFriendlyName] = useState(device.friendlyName ?? '');
  const [billingStart, setBillingStart] = useState(billingStartDate(device.billingStart, tz));
  const [billingMonths, setBillingMonths] = useState<string | number>(device.billingMonths ?? 1);
  const [locationId, setLocationId] = useState<string | null>(
    device.location ? String(device.location.id) : null,
  );
  const [tariffId, setTariffId] = useState<string | null>(device.tariff ? String(device.tariff.id) : null);
  const [role, setRole] = useState<DeviceRole>(device.role);
  const tariffs = useTariffs(locationId ?? '', locationId !== null);
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [server, setServer] = useState<Record<string, string>>({});
  const months = Number(billingMonths);
  const dateOk = billingStart === '' || parseLocalDate(billingStart, tz) !== null;
  const errors: Record<string, string | undefined> = {
    name: touched.name && !name.trim() ? t('val.required') : server.name,
    friendlyName: server.friendlyName,
    billingMonths:
      touched.billingMonths && (!Number.isInteger(months) || months < 1 || months > 24)
        ? t('val.range', { min: 1, max: 24 })
        : server.billingMonths,
    billingStart: touched.billingStart && !dateOk ? t('places.val.date') : server.billingStart,
    locationId: server.locationId,
    tariffId: server.tariffId,
    role: server.role,
  };
  const clearServer = (k: string) => setServer((s) => (k in s ? { ...s, [k]: undefined as never } : s));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ name: true, billingMonths: true, billingStart: true });
    if (!name.trim() || !Number.isInteger(months) || months < 1 || months > 24 || !dateOk) {
      notifyOutcome('device-save', false, t('msg.saveFailed'));
      return;
    }
    try {
      const saved = await update.mutateAsync({
        name: name.trim(),
        friendlyName: friendlyName.trim(),
        locationId: locationId === null ? null : Number(locationId),
        tariffId: tariffId === null ? null : Number(tariffId),
        // The API keeps the billing start as a local date (docs/api.md §Devices); empty keeps today's.
        billingStart:
          billingStart ||
          billingStartDate(device.billingStart, tz) ||
          formatInZone(Date.now(), tz, 'YYYY-MM-DD'),
        billingMonths: months,
        // Sent when changed: a grid meter moved to a location that has one becomes a sub-meter there.
        ...(role !== device.role ? { role } : {}),
      });
      setServer({});
      notifyOutcome('device-save', true, t('msg.saved'));
      await navigate({ to: detailsPath(saved) });
    } catch (err) {
      setServer(serverFieldErrors(err));
      const message = err instanceof ApiError && Object.keys(err.errors).length === 0 ? err.message : null;
      notifyOutcome('device-save', false, message ? translateServerMessage(message) : t('msg.saveFailed'));
    }
  };
  const blur = (k: string) => () => setTouched((s) => ({ ...s, [k]: true }));
  const locationOptions = (locations.data ?? []).map((l) => ({ value: String(l.id), label: l.name }));
  const tariffOptions = (tariffs.data ?? []).map((x) => ({
    value: String(x.id),
    label: `${x.name} (${x.group})`,
  }));
  // A tariff the list does not hold (yet) stays selectable under its known name.
  if (
    tariffId !== null &&
    device.tariff &&
    String(device.tariff.id) === tariffId &&
    !tariffOptions.some((o) => o.value === tariffId)
  )
    tariffOptions.unshift({ value: tariffId, label: device.tariff.name });
  return (
    <Card withBorder maw={560} component="form" onSubmit={submit} noValidate data-testid="edit-device-form">
      <Stack gap="sm">
        <TextInput
          label={t('edit.name')}
          value={name}
          onChange={(e) => {
            setName(e.currentTarget.value);
            blur('name')();
            clearServer('name');
          }}
          onBlur={blur('name')}
          error={errors.name}
          required
          data-testid="edit-name"
        />
        <TextInput
          label={t('edit.friendlyName')}
          value={friendlyName}
          onChange={(e) => {
            setFriendlyName(e.currentTarget.value);
            clearServer('friendlyName');
          }}
          error={errors.friendlyName}
          data-testid="edit-friendly-name"
        />
        <Select
          label={t('edit.location')}
          data={locationOptions}
          value={locationId}
          onChange={(v) => {
            setLocationId(v);
            // Tariffs belong to a location: another location's tariff cannot stay.
            setTariffId(null);
            clearServer('locationId');
          }}
          placeholder={t('edit.noLocation')}
          clearable
          clearButtonProps={{ 'aria-label': `${t('places.clear')}: ${t('edit.location')}` }}
          error={errors.locationId}
          data-testid="edit-location"
        />
        <Select
          label={t('edit.tariff')}
          description={locationId === null ? t('edit.tariffNeedsLocation') : undefined}
          data={tariffOptions}
          value={tariffId}
          onChange={(v) => {
            setTariffId(v);
            clearServer('tariffId');
          }}
          placeholder={t('edit.locationTariff')}
          clearable
          clearButtonProps={{ 'aria-label': `${t('places.clear')}: ${t('edit.tariff')}` }}
          disabled={locationId === null}
          error={errors.tariffId}
          data-testid="edit-tariff"
        />
        <Select
          label={t('edit.role')}
          description={t('edit.roleHint')}
          data={DEVICE_ROLES.map((r) => ({ value: r, label: t(`role.${r}`) }))}
          value={role}
          onChange={(v) => {
            if (!v) return;
            setRole(v as DeviceRole);
            clearServer('role');
          }}
          allowDeselect={false}
          error={errors.role}
          data-testid="edit-role"
        />
        <DateField
          label={t('edit.billingStart')}
          value={billingStart}
          onChange={(day) => {
            setBillingStart(day);
            clearServer('billingStart');
          }}
          onBlur={blur('billingStart')}
          error={errors.billingStart}
          clearable
          testId="edit-billing-start"
        />
        <NumberInput
          label={t('edit.billingMonths')}
          value={billingMonths}
          onChange={(v) => {
            setBillingMonths(v);
            blur('billingMonths')();
            clearServer('billingMonths');
          }}
          onBlur={blur('billingMonths')}
          min={1}
          max={24}
          allowDecimal={false}
          error={errors.billingMonths}
          data-testid="edit-billing-months"
        />
        <Group justify="flex-end">
          <Button variant="default" component={Link} to={detailsPath(device)}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={update.isPending} data-testid="edit-save">
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
