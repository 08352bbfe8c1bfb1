import { type Location, TARIFF_GROUPS, type Tariff, type Zone } from '@kilowatch/core';
import {
  Alert,
  Autocomplete,
  Button,
  Card,
  Checkbox,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { type FormEvent, useMemo, useState } from 'react';
import { useLocation } from '../../api/locations/get-location.ts';
import { useTariff } from '../../api/locations/get-tariff.ts';
import { useSaveLocation } from '../../api/locations/save-location.ts';
import { useSaveTariff } from '../../api/locations/save-tariff.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { formatInZone } from '../../lib/time.ts';
import { DateField } from '../../ranges/DateField.tsx';
import type { FieldError } from '../../shared/forms/fields.ts';
import { ErrorState, RoutePending } from '../../shared/ui/RouteStates.tsx';
import { ScheduleGrid } from './ScheduleGrid.tsx';
import { holidayRow, scheduleGrid, zonesUsed } from './scheduleGrid.ts';
import {
  effectiveSchedule,
  isTariffGroup,
  type TariffField,
  type TariffValues,
  tariffRequest,
  tariffValues,
  validateTariff,
} from './tariffForm.ts';

/** The path segment that opens an empty form for a new tariff version. */
export const NEW_TARIFF = 'new';

const OPERATORS = ['PGE', 'Enea', 'Energa', 'E.ON', 'Tauron'];
const PRICE_FIELDS: Record<Zone, TariffField> = { 1: 'zone1Price', 2: 'zone2Price', 3: 'zone3Price' };

function TariffForm({ location, tariff }: { location: Location; tariff: Tariff | undefined }) {
  const { t } = useT();
  const locationId = String(location.id);
  const save = useSaveTariff(locationId, tariff ? String(tariff.id) : null);
  const saveLocation = useSaveLocation(locationId);
  const navigate = useNavigate();
  const [values, setValues] = useState<TariffValues>(() =>
    tariffValues(tariff, formatInZone(Date.now(), displayTimeZone(), 'YYYY-MM-DD')),
  );
  const [makeCurrent, setMakeCurrent] = useState(location.tariffId === null);
  const [touched, setTouched] = useState<Partial<Record<TariffField, boolean>>>({});
  const grid = useMemo(
    () =>
      scheduleGrid({
        group: values.group,
        operator: values.operator,
        schedule: effectiveSchedule(values, tariff),
      }),
    [values.group, values.operator, tariff, values],
  );
  const holiday = useMemo(
    () =>
      holidayRow({
        group: values.group,
        operator: values.operator,
        schedule: effectiveSchedule(values, tariff),
      }),
    [values, tariff],
  );
  const zones = zonesUsed(holiday ? [...grid, holiday] : grid);
  const errors = validateTariff(values, zones);

  const set = (k: TariffField, v: string) => {
    setValues((s) => ({ ...s, [k]: v }));
    setTouched((s) => ({ ...s, [k]: true }));
  };
  const blur = (k: TariffField) => () => setTouched((s) => ({ ...s, [k]: true }));
  const err = (k: TariffField) => {
    const e: FieldError | undefined = touched[k] ? errors[k] : undefined;
    return e ? t(e.id, e.values) : undefined;
  };
  const field = (k: TariffField) => ({
    value: values[k],
    onChange: (e: { currentTarget: { value: string } }) => set(k, e.currentTarget.value),
    onBlur: blur(k),
    error: err(k),
    'data-testid': `tariff-${k}`,
  });

  // Validity days typed or picked in the interface language's format, kept as `YYYY-MM-DD`.
  const dateField = (k: 'validFrom' | 'validTo') => ({
    value: values[k],
    onChange: (day: string) => set(k, day),
    onBlur: blur(k),
    error: err(k),
    testId: `tariff-${k}`,
  });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(Object.fromEntries(Object.keys(values).map((k) => [k, true])));
    if (Object.keys(errors).length) {
      notify({ color: 'red', message: t('msg.saveFailed') });
      return;
    }
    try {
      const saved = await save.mutateAsync(tariffRequest(values, tariff));
      if (makeCurrent && location.tariffId !== saved.id) {
        const { name, code, address, city, timezone } = location;
        await saveLocation.mutateAsync({ name, code, address, city, timezone, tariffId: saved.id });
      }
      notify({ color: 'green', message: t('msg.saved') });
      await navigate({ to: `/location/view/${locationId}` });
    } catch {
      notify({ color: 'red', message: t('msg.saveFailed') });
    }
  };

  return (
    <Card withBorder component="form" onSubmit={submit} noValidate>
      <Stack gap="sm">
        <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
          <TextInput label={t('col.name')} required {...field('name')} />
          <Select
            label={t('places.tariff.group')}
            required
            // The field shows the group's code and, below it, what the group is; the list names both.
            // The two in one line ("G12w — as G12, plus all weekend and holidays") did not fit a phone.
            data={TARIFF_GROUPS.map((g) => ({ value: g, label: g }))}
            renderOption={({ option }) =>
              `${option.value} — ${t(`places.group.${option.value}` as MessageId)}`
            }
            description={
              isTariffGroup(values.group) ? t(`places.group.${values.group}` as MessageId) : undefined
            }
            value={values.group}
            onChange={(v) => isTariffGroup(v) && set('group', v)}
            allowDeselect={false}
            error={err('group')}
            data-testid="tariff-group"
          />
          <Autocomplete
            label={t('places.tariff.operator')}
            data={OPERATORS}
            value={values.operator}
            onChange={(v) => set('operator', v)}
            onBlur={blur('operator')}
            error={err('operator')}
            data-testid="tariff-operator"
          />
          <TextInput
            label={t('places.tariff.currency')}
            required
            maxLength={3}
            {...field('currency')}
            onChange={(e) => set('currency', e.currentTarget.value.toUpperCase())}
          />
        </SimpleGrid>
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm">
          {zones.map((z) => (
            <TextInput
              key={z}
              label={
                values.group === 'dynamic'
                  ? t('places.tariff.priceOnMarket', { currency: values.currency })
                  : zones.length === 1
                    ? t('places.tariff.priceAllDay', { currency: values.currency })
                    : t('places.tariff.zonePrice', { zone: z, currency: values.currency })
              }
              description={zones.length === 1 ? undefined : t(`places.zone.${z}` as MessageId)}
              inputMode="decimal"
              required
              {...field(PRICE_FIELDS[z])}
            />
          ))}
          <TextInput
            label={t('places.tariff.fixedPrice', { currency: values.currency })}
            description={t('places.tariff.fixedHint')}
            inputMode="decimal"
            required
            {...field('fixedPrice')}
          />
        </SimpleGrid>
        <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm">
          <DateField label={t('places.tariff.validFrom')} withAsterisk {...dateField('validFrom')} />
          <DateField
            label={t('places.tariff.validTo')}
            description={t('places.tariff.validToHint')}
            clearable
            {...dateField('validTo')}
          />
        </SimpleGrid>
        <ScheduleGrid grid={grid} holiday={holiday} />
        {tariff && tariff.clockBasis === 'cet' && (
          <Text size="xs" c="dimmed">
            {t('places.tariff.cet')}
          </Text>
        )}
        <Checkbox
          label={t('places.tariff.makeCurrent', { location: location.name })}
          checked={makeCurrent || (tariff !== undefined && location.tariffId === tariff.id)}
          disabled={tariff !== undefined && location.tariffId === tariff.id}
          onChange={(e) => setMakeCurrent(e.currentTarget.checked)}
        />
        <Alert color="gray" variant="light" p="xs">
          <Text size="xs">{t('places.simulated')}</Text>
        </Alert>
        <Group justify="flex-end">
          <Button variant="default" component={Link} to={`/location/view/${locationId}`}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={save.isPending || saveLocation.isPending} data-testid="save-tariff">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

export default function TariffEditPage() {
  const { t } = useT();
  const { locationId, tariffId } = useParams({ strict: false }) as { locationId: string; tariffId: string };
  const isNew = tariffId === NEW_TARIFF;
  const location = useLocation(locationId);
  const tariff = useTariff(locationId, tariffId, !isNew);
  if (location.isPending || (!isNew && tariff.isPending)) return <RoutePending />;
  if (location.isError) return <ErrorState error={location.error} onRetry={() => void location.refetch()} />;
  if (!isNew && tariff.isError)
    return <ErrorState error={tariff.error} onRetry={() => void tariff.refetch()} />;
  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {isNew ? t('places.tariff.new') : `${t('page.tariffEdit')}: ${tariff.data?.name ?? ''}`}
      </Title>
      <Text c="dimmed" size="sm">
        {t('page.location')}: {location.data.name}
      </Text>
      <TariffForm key={tariffId} location={location.data} tariff={isNew ? undefined : tariff.data} />
    </Stack>
  );
}
